"""The one interface every agent adapter implements, and what an attempt hands back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from orchestrator.models import Category, Task
from orchestrator.rules.platform import PlatformError


class AgentOptions(BaseModel, extra="forbid"):
    """Base of every adapter's options model (its `[name]` section and `[tasks."ID"]` overrides):
    an option the adapter does not read is refused, never passed on to be silently ignored."""


@dataclass
class AgentEvent:
    """Something the agent did, for the live progress line (`→ Reading src/cache.py`)."""

    kind: str  # "tool" | "text" | "status" | ...
    summary: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class HumanQuestion:
    """A question raised by the agent itself mid-attempt (AskUserQuestion, a held command)."""

    question: str
    options: list[str] = field(default_factory=list)
    recommendation: str | None = None
    category: Category | None = None
    why: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class AttemptContext:
    task: Task
    prompt: str
    prompt_file: Path
    workdir: Path
    artifacts: Path
    """This attempt's folder: transcript, output and logs go here."""
    attempt: int
    run_id: str
    timeout: float | None = None
    resume_session: str | None = None
    """An agent session to continue (the agent keeps its context after a human answered)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Agent-specific settings (model, permission mode, max turns, ...)."""
    on_event: Callable[[AgentEvent], None] = lambda _e: None
    ask_human: Callable[[HumanQuestion], str | None] | None = None
    """Answers a question while the agent waits; None (or returning None) means nobody waits."""


@dataclass
class StatusReport:
    """How the agent says the task ended, through the `report_status` tool (`agent_mcp`)."""

    status: Literal["completed", "blocked", "failed"]
    summary: str = ""


@dataclass
class AgentResult:
    output: str
    exit_code: int = 0
    transcript_path: Path | None = None
    session_id: str | None = None
    cost_usd: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    turns: int | None = None
    duration_s: float = 0.0
    error: str | None = None
    """Why the agent itself failed (crash, timeout, API error), distinct from gate failures."""
    events: list[dict[str, Any]] = field(default_factory=list)
    question: HumanQuestion | None = None
    """Set when the agent stopped to ask a human (structured, no regex needed)."""
    platform: PlatformError | None = None
    """The agent platform's own error as its structure reported it (result subtype, API status,
    error event, exit code): the judge acts on it through `rules.platform.KINDS`."""
    reported_status: StatusReport | None = None
    """What the agent said through the orchestrator's `report_status` tool, if it called it."""


class Agent(Protocol):
    name: str

    def run(self, ctx: AttemptContext) -> AgentResult: ...
