"""Every question put to a human, whoever asks: the agent (mid-attempt or in its output), the
orchestrator after failures, a plan checkpoint, or a spending cap. Each is drafted here and opened
through the runner's one `escalate` path, so each gets its record, its files and its events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.agents.base import HumanQuestion
from orchestrator.interpret import WHY
from orchestrator.interpret.model import why_sentence
from orchestrator.models import Task
from orchestrator.rows import Asker

RETRY_SKIP_ABORT = [
    "Retry with guidance (type it as your answer)",
    "Skip this task",
    "Abort the run",
]
ACTIONS = ["retry", "skip", "abort"]


def why_for(category: str | None) -> str | None:
    """Seed 004's plain-language reason for an always-escalate category."""
    return next((text for cat, text in WHY.items() if cat == category), None)


@dataclass
class EscalationDraft:
    question: str
    asker: Asker
    options: list[str] = field(default_factory=list)
    recommendation: str | None = None
    category: str | None = None
    why: str | None = None
    level: int = 2
    detail: dict[str, Any] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "asker": self.asker,
            "options": self.options,
            "recommendation": self.recommendation,
            "category": self.category,
            "why": self.why,
            "level": self.level,
            "detail": self.detail,
        }


def agent_question(q: HumanQuestion, **detail: Any) -> EscalationDraft:
    """A question the agent raised itself (AskUserQuestion, a held command, a rate limit)."""
    return EscalationDraft(
        question=q.question,
        asker="agent",
        options=list(q.options),
        recommendation=q.recommendation,
        category=q.category,
        why=why_sentence(q.why, q.category),
        detail={**q.detail, **detail},
    )


def after_failures(
    reason: str,
    error: str,
    *,
    category: str | None = None,
    loop_kind: str | None = None,
    similarity: float | None = None,
) -> EscalationDraft:
    """Level 2 after failed attempts: retry with guidance, skip or abort."""
    similar = f" Error similarity: {similarity:.0%}." if similarity is not None else ""
    last = "\n".join(error.strip().splitlines()[-8:])
    return EscalationDraft(
        question=f"{reason}.{similar} How should I proceed?\n\nLast error:\n{last}",
        asker="orchestrator",
        options=list(RETRY_SKIP_ABORT),
        category=category,
        why=why_for(category),
        detail={"actions": list(ACTIONS), "loop": loop_kind, "similarity": similarity},
    )


def budget_spent(scope: str, spent: float, cap: float, fmt: str, fmt_spent: str) -> EscalationDraft:
    return EscalationDraft(
        question=f"The {scope} budget of {fmt} is spent ({fmt_spent} recorded). "
        "Raise it and retry, skip this task, or abort?",
        asker="budget",
        options=list(RETRY_SKIP_ABORT),
        why="Spending more money needs your approval.",
        detail={"actions": list(ACTIONS), "budget": scope, "spent_usd": spent, "cap_usd": cap},
    )


def plan_checkpoint(task: Task) -> EscalationDraft:
    """GSD `checkpoint:*`: a person does this task. A `checkpoint:decision` offers its own options."""
    own = [str(o) for o in task.extra.get("checkpoint_options") or []]
    if own:
        return EscalationDraft(
            question=f"Decision checkpoint: {task.title}\n\n{task.body.strip()[:1500]}",
            asker="plan",
            options=[*own, "Skip this task", "Abort the run"],
            recommendation=task.extra.get("checkpoint_recommendation"),
            why="The plan asks a person to make this decision before the work goes on.",
            detail={"actions": [*(["done"] * len(own)), "skip", "abort"], "decision": True},
        )
    return EscalationDraft(
        question=f"Human checkpoint: {task.title}\n\n{task.body.strip()[:1500]}",
        asker="plan",
        options=["Done - continue", "Skip this task", "Abort the run"],
        why="The plan marks this task as one a person does before the work goes on.",
        detail={"actions": ["done", "skip", "abort"]},
    )


def merge_conflict(task: Task, files: list[str], branch: str) -> EscalationDraft:
    """`--parallel`: a task's gates passed in its worktree, but its work conflicts with what
    other tasks merged into the run branch meanwhile (also after the one retry on the new head)."""
    shown = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
    return EscalationDraft(
        question=f"Task {task.id} passed its gates, but its work conflicts with the run branch in: "
        f"{shown}. Its work is kept on the branch {branch}. Run it again on the run branch as it "
        "is now, skip it, or abort?",
        asker="orchestrator",
        options=["Run it again on the current run branch", "Skip this task", "Abort the run"],
        category="merge_conflict",
        why="Tasks run side by side changed the same lines; git cannot choose between them.",
        detail={"actions": list(ACTIONS), "conflicts": files, "branch": branch},
    )
