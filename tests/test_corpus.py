"""Accuracy of the rule-based interpreter on the labelled corpus in tests/corpus/.

Each case is `tests/corpus/<verdict>/<name>.txt`: a YAML header between `---` lines (category,
and where relevant `options` = expected number of options, `recommendation` = a substring of the
expected recommendation, `note` = why the label is what it is), then the agent output verbatim.

`pytest tests/test_corpus.py -s` prints the table. Nothing is written anywhere.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.corpus_cases import Case, load_cases, unsure_rates

from orchestrator.interpret import Interpretation, interpret

CORPUS = Path(__file__).parent / "corpus"
CLASSES = ("completed", "needs_human", "failed")
CATEGORIES = ("ambiguous_requirements", "extreme_destructive", "external_service")

# Just under what the rules achieve (see the report in the README); at least 0.85 each.
MIN_RECALL = {"completed": 0.95, "needs_human": 0.95, "failed": 0.95}
MIN_CATEGORY_ACCURACY = 0.93
MIN_EXTRACTION_ACCURACY = 0.90


CASES = load_cases(CORPUS)


@dataclass
class Results:
    cases: list[Case]
    got: list[Interpretation]


@pytest.fixture(scope="module")
def results() -> Results:
    return Results(CASES, [interpret(c.text) for c in CASES])


def test_corpus_shape() -> None:
    counts = Counter(c.verdict for c in CASES)
    assert set(counts) == set(CLASSES)
    assert len(CASES) >= 150
    assert counts["completed"] >= 40 and counts["needs_human"] >= 40 and counts["failed"] >= 30
    cats = Counter(c.meta.get("category") for c in CASES if c.verdict == "needs_human")
    for cat in CATEGORIES:
        assert cats[cat] >= 10, f"only {cats[cat]} cases of {cat}"
    long_logs = [c for c in CASES if c.text.count("\n") >= 200]
    assert len(long_logs) >= 8
    assert sum(1 for c in CASES if c.meta.get("language") == "de") >= 10
    for c in CASES:
        if c.verdict != "needs_human":
            assert not c.meta.get("category"), f"{c.path}: only needs_human cases carry a category"


def _table(results: Results) -> tuple[str, dict[str, float], float, float]:
    rows = ["", f"{'class':<14}{'n':>5}{'precision':>11}{'recall':>9}{'accuracy*':>11}"]
    recall: dict[str, float] = {}
    n = len(results.cases)
    for cls in CLASSES:
        tp = sum(
            1
            for c, g in zip(results.cases, results.got, strict=True)
            if c.verdict == cls and g.verdict == cls
        )
        fp = sum(
            1
            for c, g in zip(results.cases, results.got, strict=True)
            if c.verdict != cls and g.verdict == cls
        )
        fn = sum(
            1
            for c, g in zip(results.cases, results.got, strict=True)
            if c.verdict == cls and g.verdict != cls
        )
        tn = n - tp - fp - fn
        support = tp + fn
        recall[cls] = tp / support if support else 1.0
        precision = tp / (tp + fp) if tp + fp else 1.0
        rows.append(
            f"{cls:<14}{support:>5}{precision:>11.3f}{recall[cls]:>9.3f}{(tp + tn) / n:>11.3f}"
        )
    overall = (
        sum(1 for c, g in zip(results.cases, results.got, strict=True) if c.verdict == g.verdict)
        / n
    )
    cat_ok = sum(
        1
        for c, g in zip(results.cases, results.got, strict=True)
        if (c.meta.get("category") or None) == g.category
    )
    rows.append(f"{'all':<14}{n:>5}{'':>11}{'':>9}{overall:>11.3f}   (verdict accuracy)")
    rows.append(
        f"{'category':<14}{n:>5}{'':>11}{'':>9}{cat_ok / n:>11.3f}   (exact category, None included)"
    )
    for cat in CATEGORIES:
        members = [
            (c, g)
            for c, g in zip(results.cases, results.got, strict=True)
            if c.meta.get("category") == cat
        ]
        hit = sum(1 for c, g in members if g.category == cat)
        flagged = sum(1 for g in results.got if g.category == cat)
        prec = (
            sum(
                1
                for c, g in zip(results.cases, results.got, strict=True)
                if g.category == cat and c.meta.get("category") == cat
            )
            / flagged
            if flagged
            else 1.0
        )
        rows.append(
            f"  {cat:<24}{len(members):>4}  precision {prec:.3f}  recall {hit / len(members):.3f}"
        )
    rows.append(
        "* accuracy = one-vs-rest accuracy over all cases; recall = share of the class judged right"
    )
    return "\n".join(rows), recall, overall, cat_ok / n


def _mistakes(results: Results) -> str:
    out = []
    for c, g in zip(results.cases, results.got, strict=True):
        if c.verdict != g.verdict or (c.meta.get("category") or None) != g.category:
            out.append(
                f"  {c.path.parent.name}/{c.path.name}: got {g.verdict}/{g.category} via {g.source} "
                f"(evidence: {str(g.evidence)[:80]!r})"
            )
    return "\n".join(out) or "  none"


def test_per_class_accuracy(results: Results) -> None:
    table, recall, _overall, _cat = _table(results)
    print(table)
    print(unsure_rates(results.cases, results.got))
    print("misjudged:\n" + _mistakes(results))
    for cls, minimum in MIN_RECALL.items():
        assert minimum >= 0.85
        assert recall[cls] >= minimum, f"{cls}: {recall[cls]:.3f} < {minimum}\n{_mistakes(results)}"


def test_category_accuracy(results: Results) -> None:
    _table_text, _recall, _overall, cat_acc = _table(results)
    assert cat_acc >= MIN_CATEGORY_ACCURACY, _mistakes(results)


def test_every_needs_human_says_why(results: Results) -> None:
    for c, g in zip(results.cases, results.got, strict=True):
        if g.verdict == "needs_human":
            assert g.why and g.question, f"{c.path.name}: needs_human without why/question"
        else:
            assert g.why is None and g.category is None


def test_extraction_of_options_and_recommendation(results: Results) -> None:
    checks = ok = 0
    failures = []
    for c, g in zip(results.cases, results.got, strict=True):
        if "options" in c.meta:
            checks += 1
            if len(g.options) == c.meta["options"]:
                ok += 1
            else:
                failures.append(
                    f"{c.path.name}: {len(g.options)} options, expected {c.meta['options']}"
                )
        if "recommendation" in c.meta:
            checks += 1
            if g.recommendation and c.meta["recommendation"].lower() in g.recommendation.lower():
                ok += 1
            else:
                failures.append(f"{c.path.name}: recommendation {g.recommendation!r}")
    print(f"\nextraction: {ok}/{checks} option counts and recommendations right")
    assert checks >= 25
    assert ok / checks >= MIN_EXTRACTION_ACCURACY, "\n".join(failures)
