"""What the orchestrator DOES with real agent outputs (`tests/corpus_real/`, issue 11 §3).

Each case is one verbatim output of a real coding agent (Claude Code, Codex, Gemini CLI, Copilot,
Aider, Cursor, Roo Code, Cline, OpenHands), labelled by what happened next in its public source
(see `tests/corpus_real/README.md`). It is scored by the decision a run makes after a first
attempt with no gates configured — the interpretation, then `Judge.decide`:

- decision: `proceed` (complete), `retry` (retry, consult, or a platform error the judge waits
  for or backs off from) or `escalate` (a human is asked, whatever the category);
- category: the escalation's category, or for a wait / back-off the platform kind's category
  (a usage limit is `external_service` even while the run waits for its reset); None otherwise;
- escalations caught: recall of `escalate`;
- false escalations on finished work: the share of `proceed` cases decided `escalate`.

The corpus is split by a hash of the file name into `tune/` and `holdback/`. The rules were tuned
on `tune/` only; `holdback/` was scored once, at the end (figures below). `pytest
tests/test_corpus_real.py -s` prints the tables (per half, per agent) and the rules' unsure rate.
Nothing is written anywhere.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.corpus_cases import SPLITS, Case, load_split, split_of, unsure_rates

from orchestrator.agents.base import AgentResult
from orchestrator.config import Settings
from orchestrator.interpret import Interpretation, interpret
from orchestrator.judge import Judge, TaskState
from orchestrator.models import Task
from orchestrator.rules.platform import KINDS

CORPUS = Path(__file__).parent / "corpus_real"
FOLDER = {"completed": "proceed", "failed": "retry", "needs_human": "escalate"}
CATEGORIES = ("ambiguous_requirements", "extreme_destructive", "external_service")
OUTCOME = {
    "complete": "proceed",
    "retry": "retry",
    "consult": "retry",
    "wait": "retry",
    "backoff": "retry",
    "escalate": "escalate",
}

# Which halves are scored. Only `tune` while the rules were being tuned; `holdback` was added
# once, at the end (2026-11-23 13:09 UTC), and nothing was tuned after.
SCORED = ("tune", "holdback")

# Measured figures: (decision, category, escalations caught, false escalations on finished work).
# tune, before any change (commit c5518fc): 0.542, 0.800, 0.526, 0.059 (155 cases).
# tune, after the general mechanisms:       0.832, 0.929, 0.930, 0.039.
# holdback, scored once at the end:         0.625, 0.780, 0.545, 0.107 (168 cases) — the gap to
# tune is what tuning on 155 cases bought in-sample; holdback is the honest figure.
# Unsure (LLM call rate with --llm): tune 78/155 = 50.3%, holdback 91/168 = 54.2%.
# Floors: measured - 0.10 (false escalations: measured + 0.10), against gross regressions only.
MEASURED: dict[str, tuple[float, float, float, float]] = {
    "tune": (0.832, 0.929, 0.930, 0.039),
    "holdback": (0.625, 0.780, 0.545, 0.107),
}
FLOOR = 0.10


def _floor(x: float) -> float:
    return math.floor((x - FLOOR) * 100) / 100


CASES = {split: load_split(CORPUS, split) for split in SPLITS}


@dataclass(frozen=True)
class Scored:
    case: Case
    interp: Interpretation
    decision: str
    category: str | None

    @property
    def expected(self) -> str:
        return str(self.case.meta["decision"])

    @property
    def agent(self) -> str:
        return str(self.case.meta["agent"])


def decide(text: str) -> tuple[Interpretation, str, str | None]:
    """The decision a run makes after a first attempt that printed `text`, no gates."""
    judge = Judge(Settings())
    d = judge.decide(Task(id="1", title="corpus case"), AgentResult(text, 0), [], TaskState([]))
    interp = d.interpretation or interpret(text)
    category: str | None = None
    if d.outcome == "escalate":
        category = d.escalation.category if d.escalation else None
    elif d.outcome in ("wait", "backoff") and interp.platform in KINDS:
        category = KINDS[interp.platform].category
    return interp, OUTCOME[d.outcome], category


def score(cases: list[Case]) -> list[Scored]:
    out = []
    for c in cases:
        interp, decision, category = decide(c.text)
        out.append(Scored(c, interp, decision, category))
    return out


@dataclass(frozen=True)
class Figures:
    n: int
    decision: float
    category: float
    caught: float
    false_escalations: float

    @classmethod
    def of(cls, rows: list[Scored]) -> Figures:
        n = len(rows)
        esc = [r for r in rows if r.expected == "escalate"]
        done = [r for r in rows if r.expected == "proceed"]
        return cls(
            n,
            sum(r.decision == r.expected for r in rows) / n if n else 1.0,
            sum(r.category == r.case.category for r in rows) / n if n else 1.0,
            sum(r.decision == "escalate" for r in esc) / len(esc) if esc else 1.0,
            sum(r.decision == "escalate" for r in done) / len(done) if done else 0.0,
        )

    def row(self, name: str) -> str:
        return (
            f"{name:<14}{self.n:>5}{self.decision:>10.3f}{self.category:>10.3f}"
            f"{self.caught:>9.3f}{self.false_escalations:>9.3f}"
        )


def table(split: str, rows: list[Scored]) -> str:
    out = [
        "",
        f"corpus_real/{split}",
        f"{'agent':<14}{'n':>5}{'decision':>10}{'category':>10}{'caught':>9}{'false esc':>9}",
        Figures.of(rows).row("all"),
    ]
    by_agent: dict[str, list[Scored]] = defaultdict(list)
    for r in rows:
        by_agent[r.agent].append(r)
    out += [Figures.of(by_agent[a]).row(a) for a in sorted(by_agent)]
    confusion = Counter((r.expected, r.decision) for r in rows if r.expected != r.decision)
    out.append(
        "confusion (expected -> got): "
        + ", ".join(f"{e}->{g}: {k}" for (e, g), k in sorted(confusion.items()))
    )
    return "\n".join(out)


def mistakes(rows: list[Scored]) -> str:
    return (
        "\n".join(
            f"  {r.case.path.parent.name}/{r.case.path.name}: expected {r.expected}/"
            f"{r.case.category}, got {r.decision}/{r.category} via {r.interp.source} "
            f"({str(r.interp.evidence)[:70]!r})"
            for r in rows
            if r.decision != r.expected or r.category != r.case.category
        )
        or "  none"
    )


def test_headers_agree_with_folders_and_split_rule() -> None:
    """Every file of both halves: the decision agrees with its folder, the split with the hash
    rule, and the header carries what the README says (only headers are read here)."""
    total = 0
    for split, cases in CASES.items():
        for c in cases:
            total += 1
            m = c.meta
            assert {"agent", "category", "decision", "action", "source", "label_from"} <= set(m), (
                c.path
            )
            assert m["decision"] == FOLDER[c.verdict], c.path
            assert split_of(c.path.stem) == split, f"{c.path}: belongs in {split_of(c.path.stem)}"
            assert c.path.stem.startswith(f"{m['agent']}_") or m["agent"] in c.path.stem, c.path
            assert m["category"] in (None, *CATEGORIES), c.path
            assert m["action"] in (None, "wait", "backoff"), c.path
            if m["action"] is not None:
                assert m["decision"] == "retry", c.path
            if m["decision"] == "proceed":
                assert m["category"] is None, c.path
    assert total >= 300


@pytest.mark.parametrize("split", SCORED)
def test_real_outputs(split: str) -> None:
    rows = score(CASES[split])
    got = Figures.of(rows)
    print(table(split, rows))
    print(unsure_rates([r.case for r in rows], [r.interp for r in rows]))
    if split == "tune":
        print("misjudged:\n" + mistakes(rows))
    if split in MEASURED:
        decision, category, caught, false_esc = MEASURED[split]
        assert _floor(decision) <= decision - FLOOR
        assert got.decision >= _floor(decision)
        assert got.category >= _floor(category)
        assert got.caught >= _floor(caught)
        assert got.false_escalations <= false_esc + FLOOR
