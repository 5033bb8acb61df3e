"""The vocabulary shared by every module: plans, tasks, verdicts and task states."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

Verdict = Literal["completed", "needs_human", "failed"]
Category = Literal["ambiguous_requirements", "extreme_destructive", "external_service"]
CATEGORIES: tuple[Category, ...] = (
    "ambiguous_requirements",
    "extreme_destructive",
    "external_service",
)


VERIFICATION_KIND = "milestone_verification"


class TaskStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    PAUSED_FOR_INTERVENTION = "PAUSED_FOR_INTERVENTION"
    SKIPPED = "SKIPPED"


class Task(BaseModel):
    """One item of a plan, whatever format it was written in."""

    id: str
    title: str
    type: str = "CODING"
    body: str = ""
    files: list[str] = Field(default_factory=list)
    acceptance_criteria: list[str] = Field(default_factory=list)
    verify: list[str] = Field(default_factory=list)
    """Gate commands that belong to this task (GSD `<verify>`, a bash block under Tests/Verify)."""
    depends_on: list[str] = Field(default_factory=list)
    checkpoint: bool = False
    """A human checkpoint (GSD `checkpoint:*`): a person, not an agent, completes it."""
    source: str = ""
    line: int = 0
    extra: dict[str, Any] = Field(default_factory=dict)
    """Every other section or element of the task, kept verbatim so nothing is dropped."""

    @property
    def is_verification(self) -> bool:
        """The plan's milestone verification, run as a last task (see runner.with_verification)."""
        return self.extra.get("kind") == VERIFICATION_KIND


class Plan(BaseModel):
    path: str
    format: Literal["milestone", "gsd"]
    title: str = ""
    frontmatter: dict[str, Any] = Field(default_factory=dict)
    tasks: list[Task]
    verification: list[str] = Field(default_factory=list)
    """Milestone-level commands (E2E Test Scenario / Milestone Verification / GSD <verification>)."""
    extra: dict[str, Any] = Field(default_factory=dict)

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)


class UserError(Exception):
    """Bad input from a person: shown as one line, exit code 2, never a traceback."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return f"{where}{self.message}"


class PlanError(UserError):
    """A plan file that cannot be turned into tasks."""


class ConfigError(UserError):
    """Invalid configuration."""
