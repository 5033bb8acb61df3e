"""Typed rows of the store and the names of every state, so a status is a checked `Literal`, not a
string spelled anew in each module."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

TaskStatusName = Literal[
    "PENDING", "RUNNING", "COMPLETED", "FAILED", "PAUSED_FOR_INTERVENTION", "SKIPPED"
]
RunStatus = Literal["RUNNING", "COMPLETED", "FAILED", "PAUSED", "INTERRUPTED"]
AttemptVerdict = Literal["completed", "needs_human", "failed", "rate_limited", "interrupted"]
Asker = Literal["agent", "orchestrator", "plan", "budget"]
"""Who asked the human: the agent itself, the orchestrator after failures, a plan checkpoint, or a
spending cap."""
EscalationStatus = Literal["open", "answered"]

DONE: frozenset[str] = frozenset({"COMPLETED", "SKIPPED"})
"""Statuses that let the tasks depending on a task start."""

ASKER_NAMES: dict[str, str] = {
    "agent": "The agent",
    "orchestrator": "The orchestrator",
    "plan": "The plan",
    "budget": "The orchestrator",
}
"""How the question panel names who is asking."""


class RunRow(TypedDict):
    id: str
    plan_path: str
    plan_json: str
    workdir: str
    agent: str
    settings_json: str
    status: str
    created_at: float
    updated_at: float
    lock_owner: str | None
    lock_pid: int | None
    lock_host: str | None
    lock_heartbeat: float | None
    lock_started: str | None
    origin: str | None
    """A fleet run's repository, which its workers clone and push to (None: one runner)."""


class TaskRow(TypedDict):
    run_id: str
    task_id: str
    seq: int
    title: str
    status: TaskStatusName
    attempts_since_resume: int
    level: int
    level_attempts: int
    guidance: str | None
    session_id: str | None
    updated_at: float
    overrides: dict[str, Any]
    """The consultant's changes for this task (model, hints), kept as their own data."""


class AttemptRow(TypedDict):
    id: int
    run_id: str
    task_id: str
    number: int
    verdict: AttemptVerdict | None
    error_summary: str | None
    exit_code: int | None
    started_at: float
    ended_at: float | None
    duration_s: float | None
    cost_usd: float | None
    tokens_in: int | None
    tokens_out: int | None
    turns: int | None
    session_id: str | None
    agent: str | None
    model: str | None
    decision: str | None
    guidance: str | None
    artifact_dir: str
    pgid: int | None
    """The agent's process group, killed on recovery if it outlived a crash."""
    pgid_started: str | None
    """Boot id and start time of the group's leader, so a recycled PID is never mistaken."""
    worker: str | None
    """The fleet worker that ran it (`--name`, else host:pid); None outside the fleet."""
    worker_host: str | None
    worker_pid: int | None
    worker_started: str | None


class EscalationRow(TypedDict):
    id: int
    run_id: str
    task_id: str
    attempt_number: int | None
    level: int
    category: str | None
    question: str
    options: list[str]
    recommendation: str | None
    why: str | None
    detail: dict[str, Any]
    asker: Asker
    status: EscalationStatus
    response: str | None
    response_kind: str | None
    responder: str | None
    channel: str | None
    created_at: float
    answered_at: float | None
    wait_s: float | None


class EventRow(TypedDict):
    id: int
    run_id: str
    task_id: str | None
    ts: float
    kind: str
    payload: dict[str, Any]
