"""The rules brain on real attempt histories (`tests/corpus_brain/`, its README).

Each case is the failure output of 2-5 consecutive failed attempts at one task by a real coding
agent (Cursor, Cline, Claude Code, Codex CLI), oldest first, labelled `retry` or `escalate` by what
happened next in its public source. Each is decided by
`rules_decision(stem, "corpus case", attempts, len(attempts))` and scored per split:

- decision: accuracy of retry / escalate;
- caught: recall of `escalate`;
- false esc.: the share of `retry` cases decided `escalate`;
- category: the share of `escalate` cases decided `escalate` with the labelled category (null = a
  plain loop, no category);
- unsure: the share of decisions the rules were not confident of (`confident=False`, the LLM call
  rate of `--brain auto`).

`pytest tests/test_corpus_brain.py -s` prints the tables (per split, per kind, per agent). Only
gross floors are asserted (the figures last measured, `MEASURED`, less 0.10), so the test
fails on a regression, not on small moves. `holdback/` must not be tuned on.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.brain import RetryDecision, rules_decision

CORPUS = Path(__file__).parent / "corpus_brain"
SPLITS = ("tune", "holdback", "holdback2", "holdback3")
STYLES_CORPUS = Path(__file__).parent / "corpus_brain_styles"
STYLES = tuple(sorted(p.name for p in STYLES_CORPUS.iterdir() if p.is_dir()))
"""Realistic attempt histories written blind by helper sessions (`corpus_brain_styles/README.md`)."""
LABELS = ("retry", "escalate")
FIELDS = ("agent", "source", "label_from", "decision", "category", "kind", "attempts")
AGENTS = (
    "cursor",
    "cline",
    "claude",
    "codex",
    "aider",
    "copilot",
    "gemini",
    "openhands",
    "roo",
    # the loop runners and frameworks of the realistic sets bstyles24-29
    "ralph",
    "gsd",
    "taskmaster",
    "bmad",
)
CATEGORIES = (None, "external_service", "ambiguous_requirements", "extreme_destructive")
KINDS = (
    "loop_same",
    "loop_paraphrased",
    "progress",
    "credentials",
    "external_later",
    "transient",
    "other",
)
MAX_ATTEMPT_BYTES = 8_000
REGISTRY_HOSTS = re.compile(
    r"registry\.npmjs|npmjs\.(com|org)|pypi\.org|pythonhosted\.org|crates\.io|rubygems\.org|"
    r"proxy\.golang\.org|yarnpkg\.com|nuget\.org",
    re.I,
)
EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")

# Measured first at collection (2026-11-23, src/ at commit 881954d), after every label was frozen
# (commit b1c5578) and before any tuning on this corpus:
# split -> (decision, caught, false escalations, category, unsure).
# tune 35 cases (8 escalate, 27 retry): 24/35, 5/8, 8/27, 4/8, 16/35.
# holdback 41 cases (12 escalate, 29 retry): 29/41, 6/12, 6/29, 5/12, 20/41.
# The escalate counts are small: one case moves caught / category by 0.08-0.125.
# Round 1 of tuning on tune/ only (commits 756c283..ec13edf: a check that could not start is left
# out of the comparison, fewer failing tests is progress, a bare failure count makes no A-B-A or
# paraphrase, disjoint failing tests are different failures, an app error blaming a credential in
# a later attempt escalates as external_service):
# tune 0.686 -> 0.886 decision (31/35), caught 0.625 -> 0.750 (6/8), false esc. 0.296 -> 0.074
# (2/27), category 0.500 -> 0.625 (5/8), unsure 0.457 -> 0.600 (21/35: more retries past
# max_task_attempts, which are unsure by design).
# holdback scored once after the round: 0.707 decision (29/41, unchanged), caught 0.417 (5/12,
# was 0.500), false esc. 0.172 (5/29, was 0.207), category 0.333 (4/12, was 0.417), unsure 0.537
# (22/41, was 0.488): the round did not carry over as a whole.
# holdback2: 45 more histories collected apart on 2026-11-24 by a session that read neither the
# brain nor the tests (its SOURCES.md: Claude Code 34, others 11; 22 escalate, 23 retry), scored
# once at 10:00 UTC with the brain of this day's rules: 0.667 decision (30/45), caught 0.455
# (10/22), false esc. 0.130 (3/23), category 0.455, unsure 0.467. The brain of the session
# before (commit d35326e), scored at the same time: the same figures. Credentials are the worst
# kind: 7 of 12 caught. Then, with holdback2 spent, the platform rules learnt what its misses
# showed (no authentication method or API key at all, a disabled organisation, a credential not
# configured as a secret): holdback2 0.778, caught 0.682, false esc. 0.130 (in-sample now); tune
# and holdback unchanged.
MEASURED: dict[str, tuple[float, float, float, float, float]] = {
    "tune": (0.886, 0.750, 0.074, 0.625, 0.600),
    # 0.707 when scored once; 0.732 since the third session's round on realistic histories,
    # which was written on none of these splits (holdback3: 0.762 -> 0.810 the same way)
    "holdback": (0.732, 0.500, 0.172, 0.333, 0.512),
    # scored once at 0.667; in-sample since: 0.778 after the platform rules, 0.867 after a
    # refusal of the request itself repeated (or the context running out twice) escalates
    "holdback2": (0.867, 0.864, 0.130, 0.864, 0.267),
    # 21 histories collected blind on 2026-11-24 (aider 15, claude 4, copilot 2; 10 escalate,
    # 11 retry), scored once at 13:33 UTC with the brain of the session's start (683f17a) and of
    # commit d1effe8 alike: 0.571, 0.700, 0.545, 0.700, 0.095 — the repeated-refusal rule found
    # nothing there; 6 of its 11 retries are rate limits that cleared by themselves. Then, in-sample:
    # a link is no message (".../settings/billing"), a quota "per minute" stays a rate limit
    # whatever billing advice follows, and a rate limit that resets within minutes is retried.
    "holdback3": (0.810, 0.800, 0.182, 0.800, 0.048),
}
# Realistic histories (`corpus_brain_styles/`), each written blind and scored once before any
# rule was written on it (the README's table); since then in-sample, with the rules of this row.
# Scored once (session start 0a05942 → the commit it was first scored at): bstyles1 0.783 and
# bstyles2 0.783 at the start; bstyles4 0.650 → 0.717 (9c2aea6); bstyles6 0.650 → 0.767
# (58c4dd0); bstyles7 0.667 → 0.817 (4b36d9f); bstyles8 0.733 → 0.833 and bstyles9 0.717 →
# 0.767 (3557c5b); bstyles3 0.667 → 0.783 and bstyles5 0.717 → 0.900 (07d3074); bstyles10
# 0.867 → 0.883 and bstyles11 0.667 → 0.833 (2a1777d); bstyles12 0.817 → 0.917 and bstyles13
# 0.700 → 0.717 (03dc077). 2026-11-25 (session start e66940b → the commit first scored at):
# bstyles15 0.867 → 0.900 and bstyles17 0.800 → 0.800 (d6559e7); bstyles16 0.783 → 0.817 and
# bstyles14 0.817 → 0.850 (19c32d7); bstyles18 0.883 → 0.967, bstyles19 0.800 → 0.833 and
# bstyles20 0.833 → 0.867 (0116517); bstyles21 0.800 → 0.867 and bstyles23 0.883 → 0.933
# (b1ad09d); bstyles22 0.783 → 0.800 (ba36faa). 2026-11-25, second session (start d56aa7a →
# the commit first scored at): bstyles24 0.900 → 0.900, bstyles25 0.900 → 0.917 and bstyles26
# 0.883 → 0.883 (6811adf), written on after; bstyles27 0.850 → 0.883, bstyles28 0.800 → 0.800
# and bstyles29 0.883 → 0.883 (88cb81f), written at the start of the session and scored once at
# its end. The figures below are in-sample, at the session's last rules.
MEASURED_STYLES: dict[str, tuple[float, float, float, float, float]] = {
    "bstyles1": (0.983, 0.969, 0.000, 0.906, 0.300),
    "bstyles2": (0.967, 0.933, 0.000, 0.900, 0.367),
    "bstyles3": (0.900, 0.900, 0.100, 0.800, 0.300),
    "bstyles4": (1.000, 1.000, 0.000, 0.967, 0.400),
    "bstyles5": (0.933, 0.900, 0.033, 0.867, 0.367),
    "bstyles6": (0.950, 0.900, 0.000, 0.867, 0.550),
    "bstyles7": (0.983, 1.000, 0.033, 0.867, 0.283),
    "bstyles8": (0.900, 0.833, 0.033, 0.767, 0.333),
    "bstyles9": (0.933, 0.933, 0.067, 0.867, 0.300),
    "bstyles10": (0.917, 0.900, 0.067, 0.800, 0.383),
    "bstyles11": (0.933, 0.867, 0.000, 0.833, 0.300),
    "bstyles12": (0.933, 0.900, 0.033, 0.767, 0.267),
    "bstyles13": (0.783, 0.700, 0.133, 0.633, 0.417),
    "bstyles14": (0.883, 0.800, 0.033, 0.700, 0.450),
    "bstyles15": (0.950, 0.933, 0.033, 0.900, 0.250),
    "bstyles16": (0.917, 0.867, 0.033, 0.867, 0.283),
    "bstyles17": (0.917, 0.967, 0.133, 0.967, 0.267),
    "bstyles18": (0.967, 0.967, 0.033, 0.967, 0.300),
    "bstyles19": (0.900, 0.800, 0.000, 0.767, 0.283),
    "bstyles20": (0.950, 0.900, 0.000, 0.900, 0.350),
    "bstyles21": (0.900, 0.867, 0.067, 0.833, 0.350),
    "bstyles22": (0.883, 0.800, 0.033, 0.733, 0.417),
    "bstyles23": (0.967, 0.933, 0.000, 0.933, 0.300),
    "bstyles24": (0.933, 0.967, 0.100, 0.933, 0.433),
    "bstyles25": (0.967, 0.933, 0.000, 0.933, 0.283),
    "bstyles26": (0.950, 0.967, 0.067, 0.933, 0.267),
    "bstyles27": (0.883, 0.833, 0.067, 0.700, 0.400),
    "bstyles28": (0.817, 0.733, 0.100, 0.700, 0.300),
    "bstyles29": (0.883, 0.800, 0.033, 0.767, 0.400),
}
MARGIN = 0.10


@dataclass(frozen=True)
class BrainCase:
    path: Path
    split: str
    label: str
    meta: dict[str, Any]

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def attempts(self) -> list[str]:
        return list(self.meta["attempts"])


def split_of(stem: str) -> str:
    """The README's split rule, fixed by the file name before anything was scored."""
    digest = int(hashlib.sha256(f"brain:{stem}".encode()).hexdigest(), 16)
    return "tune" if digest % 2 == 0 else "holdback"


def load(split: str) -> list[BrainCase]:
    cases = []
    root = STYLES_CORPUS if split in STYLES else CORPUS
    for path in sorted((root / split).glob("*/*.yaml")):
        meta = yaml.safe_load(path.read_text(encoding="utf-8"))
        cases.append(BrainCase(path, split, path.parent.name, meta))
    return cases


ALL = [case for split in SPLITS for case in load(split)]
ALL_STYLES = [case for split in STYLES for case in load(split)]


def decide(case: BrainCase) -> RetryDecision:
    return rules_decision(case.stem, "corpus case", case.attempts, len(case.attempts))


@dataclass
class Score:
    n: int = 0
    right: int = 0
    esc: int = 0
    caught: int = 0
    cat_right: int = 0
    ret: int = 0
    false_esc: int = 0
    unsure: int = 0

    def add(self, case: BrainCase, got: RetryDecision) -> None:
        self.n += 1
        self.right += got.decision == case.label
        self.unsure += not got.confident
        if case.label == "escalate":
            self.esc += 1
            self.caught += got.decision == "escalate"
            self.cat_right += got.decision == "escalate" and got.category == case.meta["category"]
        else:
            self.ret += 1
            self.false_esc += got.decision == "escalate"

    def figures(self) -> tuple[float, float, float, float, float]:
        def rate(a: int, b: int) -> float:
            return a / b if b else 0.0

        return (
            rate(self.right, self.n),
            rate(self.caught, self.esc),
            rate(self.false_esc, self.ret),
            rate(self.cat_right, self.esc),
            rate(self.unsure, self.n),
        )

    def row(self, name: str) -> str:
        d, c, f, k, u = self.figures()
        return (
            f"{name:<22} n={self.n:>3} (esc {self.esc:>2}, retry {self.ret:>2})  decision {d:.3f}"
            f"  caught {c:.3f}  false esc. {f:.3f}  category {k:.3f}  unsure {u:.3f}"
        )


def score(cases: list[BrainCase]) -> tuple[Score, dict[str, Score], dict[str, Score], list[str]]:
    total, by_kind, by_agent = Score(), defaultdict(Score), defaultdict(Score)
    misses = []
    for case in cases:
        got = decide(case)
        total.add(case, got)
        by_kind[f"{case.label}/{case.meta['kind']}"].add(case, got)
        by_agent[case.meta["agent"]].add(case, got)
        if got.decision != case.label or (
            case.label == "escalate" and got.category != case.meta["category"]
        ):
            misses.append(
                f"  {case.split}/{case.label}/{case.stem}: got {got.decision}"
                f" ({got.category}) — {got.reason[:110]}"
            )
    return total, dict(by_kind), dict(by_agent), misses


def test_corpus_brain_headers() -> None:
    assert len(ALL) >= 40
    assert {c.split for c in ALL} == set(SPLITS)
    assert len(ALL_STYLES) >= 300 and set(MEASURED_STYLES) == set(STYLES)
    for case in ALL + ALL_STYLES:
        meta, where = case.meta, case.path.relative_to(CORPUS.parent)
        assert tuple(meta) == FIELDS, f"{where}: fields {tuple(meta)}"
        assert case.label in LABELS, where
        assert meta["decision"] == case.label, f"{where}: decision disagrees with its folder"
        # holdback2 and holdback3 were collected later, apart, as wholes: no hash decides them
        assert (
            case.split in ("holdback2", "holdback3", *STYLES) or split_of(case.stem) == case.split
        ), where
        assert meta["agent"] in AGENTS and case.stem.startswith(f"{meta['agent']}_"), where
        assert meta["category"] in CATEGORIES, where
        assert meta["decision"] == "escalate" or meta["category"] is None, where
        assert meta["kind"] in KINDS, where
        assert isinstance(meta["source"], str) and meta["source"].strip(), where
        assert isinstance(meta["label_from"], str) and meta["label_from"].strip(), where
        attempts = meta["attempts"]
        assert isinstance(attempts, list) and 2 <= len(attempts) <= 5, where
        for text in attempts:
            assert isinstance(text, str) and text.strip(), where
            assert len(text.encode("utf-8")) <= MAX_ATTEMPT_BYTES, where
            assert not REGISTRY_HOSTS.search(text), f"{where}: a package registry host"
            assert not EMAIL.search(text), f"{where}: an e-mail address"


@pytest.mark.parametrize("split", SPLITS + STYLES)
def test_corpus_brain_scores(split: str) -> None:
    cases = [c for c in ALL + ALL_STYLES if c.split == split]
    total, by_kind, by_agent, misses = score(cases)
    print(f"\n{total.row(split)}")
    for name in sorted(by_kind):
        print(by_kind[name].row(f"  {name}"))
    for name in sorted(by_agent):
        print(by_agent[name].row(f"  agent {name}"))
    print(f"misses ({len(misses)}):")
    print("\n".join(misses))
    decision, caught, false_esc, category, unsure = total.figures()
    m_decision, m_caught, m_false, m_category, m_unsure = {**MEASURED, **MEASURED_STYLES}[split]
    assert decision >= m_decision - MARGIN
    assert caught >= m_caught - MARGIN
    assert false_esc <= m_false + MARGIN
    assert category >= m_category - MARGIN
    assert unsure <= m_unsure + MARGIN
