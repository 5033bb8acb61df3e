"""Seed 000's heuristic question fallback (issue 11 §4): output with uncertainty and no question
sentence still gives the person a real question, built from the sentence — never "see its
output". Unit cases, then a whole run (the CLI, the replay agent) whose escalation row asks it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import cli, status_json

from orchestrator.interpret import interpret
from orchestrator.interpret.uncertain import fallback_question, question_from_uncertainty


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        (
            "I'm not sure whether the dates should be UTC or local time.",
            "Should the dates be UTC or local time?",
        ),
        (
            "I'm not sure whether to use Redis or an in-memory dict, since the task doesn't say.",
            "Should I use Redis or an in-memory dict?",
        ),
        (
            "I couldn't determine if the endpoint needs auth.",
            "Can you confirm whether the endpoint needs auth?",
        ),
        (
            "It's unclear whether the export should include archived rows.",
            "Should the export include archived rows?",
        ),
        ("It's unclear which cache to use here.", "Which cache should I use here?"),
        ("I'm not sure how to handle deleted users.", "How should I handle deleted users?"),
        (
            "The spec doesn't specify whether prices are gross or net.",
            "Are prices gross or net?",
        ),
        ("I'm not sure if this is the intended behaviour.", "Is this the intended behaviour?"),
        ("I'm not sure what the retry limit should be.", "What should the retry limit be?"),
        ("I'm not sure which approach is better.", "Which approach is better?"),
        (
            "I couldn't determine which timezone the report uses.",
            "Can you tell me which timezone the report uses?",
        ),
    ],
)
def test_a_question_is_built_from_the_sentence(sentence: str, question: str) -> None:
    assert question_from_uncertainty(sentence) == question


def test_no_question_from_a_sentence_without_uncertainty() -> None:
    assert question_from_uncertainty("I'm not sure this works.") is None
    assert question_from_uncertainty("All tests pass.") is None


def test_the_interpreter_asks_it() -> None:
    r = interpret(
        "I read the report module and the tests.\n\n"
        "I'm not sure whether the totals should include tax, so I've left them unchanged."
    )
    assert r.verdict == "needs_human"
    assert r.question == "Should the totals include tax?"


def test_seed_000_order_last_question_then_uncertainty_then_a_plain_question() -> None:
    assert fallback_question("Done with A. Which one next? I paused.") == "Which one next?"
    assert fallback_question("It's unclear whether to keep v1.") == "Should I keep v1?"
    plain = fallback_question("Stopped.")
    assert plain.endswith("?") and "output" not in plain


def test_a_run_escalates_with_the_built_question(tmp_path: Path) -> None:
    (tmp_path / "plan.md").write_text(
        "# Milestone 1: Report\n\n## Task 1.1: Format the report dates\n"
        "**File:** `report.py`\n**Description:** Format the dates in the report.\n",
        encoding="utf-8",
    )
    (tmp_path / "plan.replay.yaml").write_text(
        "tasks:\n  '1.1':\n    - output: |\n        I looked at report.py and its callers.\n\n"
        "        I'm not sure whether the dates should be UTC or local time, so I've left the"
        " formatting as it is for now.\n",
        encoding="utf-8",
    )
    run = "run", str(tmp_path / "plan.md"), "--agent", "replay", "--workdir", "w", "--no-wait"
    proc = cli(tmp_path, *run)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    [esc] = status_json(tmp_path)["escalations"]
    assert esc["question"] == "Should the dates be UTC or local time?"
    assert esc["category"] == "ambiguous_requirements"
    assert "Should the dates be UTC or local time?" in proc.stdout
