"""Run events: what the loop tells the world, as typed values.

The console, git checkpoints and seed 002's escalation files are observers of these events (and
telemetry, notifications and a web page can be): an observer receives each event, never the
runner, so none of them imports it. Events carry what an observer needs (question, options, wait
time, answer, cost, durations) so it never has to read the runner's state.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from orchestrator.agents.base import AgentEvent
from orchestrator.rows import EscalationRow, RunStatus, TaskStatusName

logger = logging.getLogger("orchestrator.events")


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    plan_path: str
    tasks: int
    agent: str
    resumed: bool


@dataclass(frozen=True)
class RunFinished:
    run_id: str
    status: RunStatus
    exit_code: int
    elapsed_s: float
    summary: list[dict[str, Any]]
    """One row per task: task_id, title, status, attempts, duration_s, cost_usd."""


@dataclass(frozen=True)
class TaskStarted:
    run_id: str
    task_id: str
    title: str


@dataclass(frozen=True)
class TaskFinished:
    run_id: str
    task_id: str
    title: str
    status: TaskStatusName
    reason: str
    duration_s: float = 0.0
    cost_usd: float | None = None


@dataclass(frozen=True)
class AttemptInterrupted:
    run_id: str
    task_id: str
    number: int


@dataclass(frozen=True)
class AttemptStarted:
    run_id: str
    task_id: str
    number: int
    agent: str
    model: str | None


@dataclass(frozen=True)
class AgentActivity:
    """Something the agent did mid-attempt (a tool call, a status line)."""

    run_id: str
    task_id: str
    number: int
    event: AgentEvent


@dataclass(frozen=True)
class GateFinished:
    run_id: str
    task_id: str
    number: int
    command: str
    exit_code: int | None
    passed: bool
    duration_s: float
    summary: str


@dataclass(frozen=True)
class AttemptFinished:
    run_id: str
    task_id: str
    number: int
    agent: str
    model: str | None
    verdict: str
    outcome: str
    reason: str
    error_summary: str | None
    guidance: str | None
    exit_code: int | None
    cost_usd: float | None
    tokens_in: int | None
    tokens_out: int | None
    turns: int | None
    duration_s: float
    level: int
    level_attempt: int
    """Failed attempts at this ladder level, this one included."""
    attempt_cap: int
    category: str | None = None
    asker: str | None = None
    """Who is asked to decide next, when the outcome is an escalation (`agent`: its own question)."""


@dataclass(frozen=True)
class LoopDetected:
    run_id: str
    task_id: str
    kind: str
    similarity: float
    reason: str
    similarity_line: str


@dataclass(frozen=True)
class LevelReached:
    """The ladder climbs (consultant, or a human after failures): seed 000's `ESCALATING` line."""

    run_id: str
    task_id: str
    headline: str


@dataclass(frozen=True)
class ConsultantActed:
    run_id: str
    task_id: str
    root_cause: str
    hints: list[str]
    model: str | None
    reverted_to: str | None
    redo: list[str]
    decision: dict[str, Any]
    trigger: dict[str, Any]


@dataclass(frozen=True)
class EscalationOpened:
    run_id: str
    task_id: str
    escalation: EscalationRow
    request: dict[str, Any]
    """Seed 002's hil-request: the question with what was spent, tried and learnt."""
    mode: str
    """How the run asks: `terminal` (a prompt now), `wait` (an answer from anywhere, the runner
    waits) or `no-wait` (the task pauses; `orchestrator resume` applies the answer)."""


@dataclass(frozen=True)
class EscalationAnswered:
    run_id: str
    task_id: str
    escalation_id: int
    response: str
    kind: str
    action: str
    """What the answer does: option, recommended or text (guidance for the next attempt), retry,
    skip, abort, done, or answer_agent (a question asked mid-attempt)."""
    responder: str | None
    channel: str | None
    wait_s: float | None


@dataclass(frozen=True)
class Waiting:
    """A rate limit with a known reset: the loop sleeps instead of burning attempts."""

    run_id: str
    task_id: str
    until: float
    reason: str


@dataclass(frozen=True)
class CheckpointMade:
    run_id: str
    task_id: str
    sha: str


@dataclass(frozen=True)
class Notice:
    """A line for whoever watches the run, that no other event carries (warnings, hints)."""

    run_id: str
    text: str
    style: str | None = None
    task_id: str | None = None


Event = (
    RunStarted
    | RunFinished
    | TaskStarted
    | TaskFinished
    | AttemptInterrupted
    | AttemptStarted
    | AgentActivity
    | GateFinished
    | AttemptFinished
    | LoopDetected
    | LevelReached
    | ConsultantActed
    | EscalationOpened
    | EscalationAnswered
    | Waiting
    | CheckpointMade
    | Notice
)


class Observer(Protocol):
    """Receives every run event in order; may ignore any."""

    def notify(self, event: Event) -> None: ...


@dataclass
class Bus:
    """Delivers events to observers in order. An observer that fails is logged and skipped, so a
    broken notifier never stops a run; `critical` observers (git checkpoints) raise."""

    observers: list[Observer] = field(default_factory=list)
    critical: list[Observer] = field(default_factory=list)

    def emit(self, event: Event) -> None:
        for obs in self.critical:
            obs.notify(event)
        for obs in self.observers:
            try:
                obs.notify(event)
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:
                logger.warning("observer %s failed on %s: %s", type(obs).__name__, event, exc)
