"""What happens next, as data: every outcome the loop can meet maps to the task's new status, the
change of its counters and the effect the loop carries out. The runner applies this table in one
place (`Runner.transition`) and branches on nothing else.

Outcomes come from the judge (after an attempt), from the loop itself (a spent budget, a plan
checkpoint, a question asked mid-attempt, a task's work that does not merge into the run branch
under `--parallel`) and from a human's answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from orchestrator.rows import TaskRow, TaskStatusName

Outcome = Literal[
    # the judge, after an attempt
    "complete",
    "retry",
    "consult",
    "escalate",
    "wait",
    "backoff",
    # the loop itself
    "budget_task",
    "budget_run",
    "checkpoint",
    "live_question",
    "merge_conflict",
    "worker_error",
    # a human's answer
    "answer_guidance",
    "answer_retry",
    "answer_skip",
    "answer_abort",
    "answer_done",
]

Counters = Literal["keep", "count_failure", "next_level", "reset"]
"""`count_failure`: one more failed attempt (when the attempt failed) at this ladder level;
`next_level`: the same, then climb one level with a fresh count (the consultant's turn);
`reset`: a human answered, so the hard cap and the ladder start again."""

Effect = Literal[
    "next_task",
    "attempt_again",
    "consult",
    "ask_human",
    "pause",
    "sleep",
    "stop_run",
    "answer_agent",
]
"""`ask_human` waits for an answer where someone can give one; `pause` only announces the question
(a spent budget: answering at once would change nothing before the cap is raised)."""

Guidance = Literal["keep", "add", "clear"]


@dataclass(frozen=True)
class Transition:
    status: TaskStatusName | None
    """The task's status afterwards; None leaves it as it is (a question asked mid-attempt)."""
    counters: Counters
    then: Effect
    guidance: Guidance = "keep"
    session_from_attempt: bool = False
    """The agent session to resume is the attempt's own when it stopped to ask; else none."""
    stops_run: bool = False


TABLE: dict[Outcome, Transition] = {
    "complete": Transition("COMPLETED", "keep", "next_task", session_from_attempt=True),
    "retry": Transition("PENDING", "count_failure", "attempt_again", session_from_attempt=True),
    "consult": Transition("PENDING", "next_level", "consult", session_from_attempt=True),
    "escalate": Transition(
        "PAUSED_FOR_INTERVENTION", "count_failure", "ask_human", session_from_attempt=True
    ),
    "wait": Transition("PENDING", "keep", "sleep", session_from_attempt=True),
    "backoff": Transition("PENDING", "keep", "sleep", session_from_attempt=True),
    "budget_task": Transition("PAUSED_FOR_INTERVENTION", "keep", "pause"),
    "budget_run": Transition("PAUSED_FOR_INTERVENTION", "keep", "pause", stops_run=True),
    "checkpoint": Transition("PAUSED_FOR_INTERVENTION", "keep", "ask_human"),
    "live_question": Transition(None, "keep", "answer_agent"),
    "merge_conflict": Transition("PAUSED_FOR_INTERVENTION", "keep", "ask_human"),
    "worker_error": Transition("PAUSED_FOR_INTERVENTION", "keep", "pause"),
    "answer_guidance": Transition("PENDING", "reset", "attempt_again", guidance="add"),
    "answer_retry": Transition("PENDING", "reset", "attempt_again"),
    "answer_skip": Transition("SKIPPED", "reset", "next_task", guidance="clear"),
    "answer_abort": Transition("FAILED", "reset", "stop_run", guidance="clear", stops_run=True),
    "answer_done": Transition("COMPLETED", "reset", "next_task", guidance="add"),
}

BACKOFF: tuple[float, ...] = (15.0, 60.0, 240.0)
"""Seconds slept before each attempt run again after a transient platform error (overloaded, a
dropped stream, a 5xx, a rate limit with no reset time): `backoff` keeps the counters, so these
attempts are not spent. When they run out, a person is asked (`external_service`)."""

ANSWER_OUTCOMES: dict[str, Outcome] = {
    "option": "answer_guidance",
    "recommended": "answer_guidance",
    "text": "answer_guidance",
    "retry": "answer_retry",
    "skip": "answer_skip",
    "abort": "answer_abort",
    "done": "answer_done",
}
"""A recorded answer's kind → its outcome (an option whose action is retry/skip/abort/done is
resolved to that kind before it gets here)."""


def task_values(
    outcome: Outcome,
    row: TaskRow,
    *,
    failed: bool = False,
    guidance: str | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """The task row's new values for an outcome: status, counters, guidance, session."""
    t = TABLE[outcome]
    values: dict[str, Any] = {}
    if t.status is not None:
        values["status"] = t.status
    step = 1 if failed else 0
    if t.counters == "count_failure":
        values["attempts_since_resume"] = row["attempts_since_resume"] + step
        values["level_attempts"] = row["level_attempts"] + step
    elif t.counters == "next_level":
        values["attempts_since_resume"] = row["attempts_since_resume"] + step
        values["level"] = row["level"] + 1
        values["level_attempts"] = 0
    elif t.counters == "reset":
        values["attempts_since_resume"] = 0
        values["level"] = 0
        values["level_attempts"] = 0
    if t.guidance == "add":
        values["guidance"] = "\n".join(x for x in (row["guidance"], guidance) if x) or None
    elif t.guidance == "clear":
        values["guidance"] = None
    if t.session_from_attempt:
        values["session_id"] = session_id
    return values
