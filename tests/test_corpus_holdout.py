"""Out-of-sample accuracy of the rule-based interpreter on a HELD-OUT corpus.

`tests/corpus_holdout/<verdict>/<name>.txt` uses the same format as `tests/corpus/` (YAML header
between `---` lines: `agent`, `category`, optional `options`/`recommendation`/`language`/`note`,
then the agent output verbatim). The 80 cases were written and labelled by the issue's
definitions, and committed, before the interpreter was ever run on them.

This set is held out: NEVER use it to tune rules (no reading misjudged cases to add patterns, no
relabelling after a run). Once rules have been tuned on anything derived from it, it is in-sample
and a new held-out set must be written to get an honest figure again.

The floors below sit well under what the rules measured when the set was first scored; they guard
against gross regressions only. `pytest tests/test_corpus_holdout.py -s` prints the table and the
misjudged cases. Nothing is written anywhere.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.corpus_cases import Case, load_cases, unsure_rates

from orchestrator.interpret import Interpretation, interpret

CORPUS = Path(__file__).parent / "corpus_holdout"
CLASSES = ("completed", "needs_human", "failed")
CATEGORIES = ("ambiguous_requirements", "extreme_destructive", "external_service")

# First scoring, before any tuning: verdict 0.925 (74/80), category 0.975 (78/80).
# Floors = measured - 0.10, rounded down to two decimals.
MEASURED_VERDICT_ACCURACY = 0.925
MEASURED_CATEGORY_ACCURACY = 0.975
MIN_VERDICT_ACCURACY = math.floor((MEASURED_VERDICT_ACCURACY - 0.10) * 100) / 100
MIN_CATEGORY_ACCURACY = math.floor((MEASURED_CATEGORY_ACCURACY - 0.10) * 100) / 100


CASES = load_cases(CORPUS)


@dataclass(frozen=True)
class Scores:
    pairs: list[tuple[Case, Interpretation]]

    @property
    def verdict_accuracy(self) -> float:
        return sum(c.verdict == g.verdict for c, g in self.pairs) / len(self.pairs)

    @property
    def category_accuracy(self) -> float:
        return sum(c.category == g.category for c, g in self.pairs) / len(self.pairs)

    def precision_recall(
        self, predicted: list[str | None], expected: list[str | None], label: str
    ) -> tuple[float, float, int]:
        tp = sum(p == label and e == label for p, e in zip(predicted, expected, strict=True))
        flagged = sum(p == label for p in predicted)
        support = sum(e == label for e in expected)
        precision = tp / flagged if flagged else 1.0
        recall = tp / support if support else 1.0
        return precision, recall, support

    def table(self) -> str:
        got_v: list[str | None] = [g.verdict for _, g in self.pairs]
        exp_v: list[str | None] = [c.verdict for c, _ in self.pairs]
        got_c: list[str | None] = [g.category for _, g in self.pairs]
        exp_c: list[str | None] = [c.category for c, _ in self.pairs]
        rows = [
            "",
            "HELD-OUT corpus (out-of-sample)",
            f"{'class':<26}{'n':>4}{'precision':>11}{'recall':>9}",
        ]
        for cls in CLASSES:
            p, r, n = self.precision_recall(got_v, exp_v, cls)
            rows.append(f"{cls:<26}{n:>4}{p:>11.3f}{r:>9.3f}")
        for cat in CATEGORIES:
            p, r, n = self.precision_recall(got_c, exp_c, cat)
            rows.append(f"{cat:<26}{n:>4}{p:>11.3f}{r:>9.3f}")
        n = len(self.pairs)
        rows.append(f"verdict accuracy   {self.verdict_accuracy:.3f}  ({n} cases)")
        rows.append(
            f"category accuracy  {self.category_accuracy:.3f}  (exact category, None included)"
        )
        confusion = Counter((c.verdict, g.verdict) for c, g in self.pairs)
        rows.append(
            "confusion (expected -> got): "
            + ", ".join(f"{e}->{g}: {k}" for (e, g), k in sorted(confusion.items()) if e != g)
        )
        return "\n".join(rows)

    def mistakes(self) -> str:
        out = [
            f"  {c.path.parent.name}/{c.path.name}: expected {c.verdict}/{c.category}, "
            f"got {g.verdict}/{g.category} via {g.source}"
            for c, g in self.pairs
            if c.verdict != g.verdict or c.category != g.category
        ]
        return "\n".join(out) or "  none"

    def extraction(self) -> tuple[int, int, list[str]]:
        checks = ok = 0
        misses: list[str] = []
        for c, g in self.pairs:
            if c.verdict != "needs_human" or g.verdict != "needs_human":
                continue
            if "options" in c.meta:
                checks += 1
                if len(g.options) == c.meta["options"]:
                    ok += 1
                else:
                    misses.append(
                        f"  {c.path.name}: {len(g.options)} options, expected {c.meta['options']}"
                    )
            if "recommendation" in c.meta:
                checks += 1
                want = str(c.meta["recommendation"]).lower()
                if g.recommendation and want in g.recommendation.lower():
                    ok += 1
                else:
                    misses.append(
                        f"  {c.path.name}: recommendation {g.recommendation!r}, expected ~{want!r}"
                    )
        return ok, checks, misses


@pytest.fixture(scope="module")
def scores() -> Scores:
    return Scores([(c, interpret(c.text)) for c in CASES])


def test_holdout_shape() -> None:
    counts = Counter(c.verdict for c in CASES)
    assert len(CASES) == 80
    assert counts["completed"] >= 25 and counts["needs_human"] >= 28 and counts["failed"] >= 20
    cats = Counter(c.category for c in CASES if c.verdict == "needs_human")
    assert all(cats[cat] >= 6 for cat in CATEGORIES), cats
    assert all((c.category is not None) == (c.verdict == "needs_human") for c in CASES)
    assert sum(c.meta.get("language") == "de" for c in CASES) >= 8
    assert sum(c.text.count("\n") >= 150 for c in CASES) >= 6
    assert {c.meta.get("agent") for c in CASES} == {"claude-code", "codex", "aider", "gemini"}


def test_holdout_accuracy(scores: Scores) -> None:
    ok, checks, misses = scores.extraction()
    print(scores.table())
    print(
        f"extraction (cases judged needs_human): {ok}/{checks} option counts/recommendations right"
    )
    print("\n".join(misses))
    print(unsure_rates([c for c, _ in scores.pairs], [g for _, g in scores.pairs]))
    print("misjudged:\n" + scores.mistakes())
    assert MIN_VERDICT_ACCURACY <= MEASURED_VERDICT_ACCURACY - 0.10
    assert scores.verdict_accuracy >= MIN_VERDICT_ACCURACY, scores.mistakes()
    assert scores.category_accuracy >= MIN_CATEGORY_ACCURACY, scores.mistakes()
