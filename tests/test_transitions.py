"""The decision table: every outcome's status, counters, guidance and effect (issue 7 §1)."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.rows import TaskRow
from orchestrator.transitions import ANSWER_OUTCOMES, TABLE, Outcome, task_values


def _row(**kw: Any) -> TaskRow:
    base: dict[str, Any] = {
        "run_id": "r",
        "task_id": "1.1",
        "seq": 0,
        "title": "t",
        "status": "RUNNING",
        "attempts_since_resume": 2,
        "level": 0,
        "level_attempts": 2,
        "guidance": "earlier answer",
        "session_id": "s-old",
        "updated_at": 0.0,
        "overrides": {},
    }
    return TaskRow(**(base | kw))  # type: ignore[typeddict-item]


# outcome, failed, expected status, (since_resume, level, level_attempts), guidance, effect
CASES: list[tuple[Outcome, bool, str | None, tuple[int, int, int], str | None, str]] = [
    ("complete", False, "COMPLETED", (2, 0, 2), "earlier answer", "next_task"),
    ("retry", True, "PENDING", (3, 0, 3), "earlier answer", "attempt_again"),
    ("consult", True, "PENDING", (3, 1, 0), "earlier answer", "consult"),
    ("escalate", True, "PAUSED_FOR_INTERVENTION", (3, 0, 3), "earlier answer", "ask_human"),
    ("escalate", False, "PAUSED_FOR_INTERVENTION", (2, 0, 2), "earlier answer", "ask_human"),
    ("wait", False, "PENDING", (2, 0, 2), "earlier answer", "sleep"),
    ("backoff", False, "PENDING", (2, 0, 2), "earlier answer", "sleep"),
    ("budget_task", False, "PAUSED_FOR_INTERVENTION", (2, 0, 2), "earlier answer", "pause"),
    ("budget_run", False, "PAUSED_FOR_INTERVENTION", (2, 0, 2), "earlier answer", "pause"),
    ("checkpoint", False, "PAUSED_FOR_INTERVENTION", (2, 0, 2), "earlier answer", "ask_human"),
    ("live_question", False, None, (2, 0, 2), "earlier answer", "answer_agent"),
    ("merge_conflict", False, "PAUSED_FOR_INTERVENTION", (2, 0, 2), "earlier answer", "ask_human"),
    ("worker_error", False, "PAUSED_FOR_INTERVENTION", (2, 0, 2), "earlier answer", "pause"),
    ("answer_guidance", False, "PENDING", (0, 0, 0), "earlier answer\nuse B", "attempt_again"),
    ("answer_retry", False, "PENDING", (0, 0, 0), "earlier answer", "attempt_again"),
    ("answer_skip", False, "SKIPPED", (0, 0, 0), None, "next_task"),
    ("answer_abort", False, "FAILED", (0, 0, 0), None, "stop_run"),
    ("answer_done", False, "COMPLETED", (0, 0, 0), "earlier answer\nuse B", "next_task"),
]


def test_every_outcome_has_a_case() -> None:
    assert {c[0] for c in CASES} == set(TABLE)


@pytest.mark.parametrize(("outcome", "failed", "status", "counters", "guidance", "effect"), CASES)
def test_transition(
    outcome: Outcome,
    failed: bool,
    status: str | None,
    counters: tuple[int, int, int],
    guidance: str | None,
    effect: str,
) -> None:
    row = _row()
    values = task_values(outcome, row, failed=failed, guidance="use B", session_id="s-new")
    merged = {**row, **values}
    assert values.get("status") == status
    if status is None:
        assert merged["status"] == "RUNNING"  # a question mid-attempt leaves the attempt running
    got = (merged["attempts_since_resume"], merged["level"], merged["level_attempts"])
    assert got == counters
    assert merged["guidance"] == guidance
    assert TABLE[outcome].then == effect


def test_the_session_to_resume_comes_from_the_attempt_only_after_an_attempt() -> None:
    assert task_values("escalate", _row(), session_id="s-new")["session_id"] == "s-new"
    assert task_values("retry", _row(), session_id=None)["session_id"] is None
    assert "session_id" not in task_values("answer_guidance", _row(), guidance="x")


def test_only_abort_and_a_spent_run_budget_stop_the_run() -> None:
    assert {o for o, t in TABLE.items() if t.stops_run} == {"answer_abort", "budget_run"}


def test_every_answer_kind_maps_to_an_answer_outcome() -> None:
    for kind in ("option", "recommended", "text", "retry", "skip", "abort", "done"):
        assert ANSWER_OUTCOMES[kind].startswith("answer_")
