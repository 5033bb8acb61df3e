"""What a consultant decision changes, as data: the task's new overrides and the revert target.

Pure, so the run loop applies it in one place (store the overrides, revert the workdir, set the
reverted tasks back to PENDING) and a test can check every field without a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orchestrator.consultant.decision import ConsultantDecision

__all__ = ["Applied", "apply_decision", "checkpoint_before"]


@dataclass(frozen=True)
class Applied:
    overrides: dict[str, Any] = field(default_factory=dict)
    """The task's overrides for its next attempts: `model` (when switched) and `hints` (the
    consultant's hints, then one `Acceptance criterion: …` per spec update)."""
    revert_to: str | None = None
    """The task to redo from (it and every later completed task), or None for no revert."""


def apply_decision(decision: ConsultantDecision, overrides: Mapping[str, Any]) -> Applied:
    """The task's overrides after `decision`, starting from its current `overrides`.

    The hints replace the earlier ones (the consultant saw every attempt, including those that
    had the earlier hints); a model switch replaces the model; other overrides are kept.

    >>> from orchestrator.consultant.decision import Analysis, DecisionBody, PlanRevert
    >>> d = ConsultantDecision(
    ...     analysis=Analysis(failure_summary="", root_cause="", attempts_analyzed=3),
    ...     decision=DecisionBody(
    ...         plan_revert=PlanRevert(enabled=True, revert_to_task="1.1", current_task="1.2"),
    ...         additional_hints=["Read the test"],
    ...         spec_updates={"implementation.acceptance_criteria": ["`pytest` must pass"]},
    ...     ),
    ...     expected_outcome="",
    ...     confidence=0.5,
    ... )
    >>> apply_decision(d, {"model": "a", "hints": ["old"]})
    Applied(overrides={'model': 'a', 'hints': ['Read the test', 'Acceptance criterion: `pytest` must pass']}, revert_to='1.1')
    """
    body = decision.decision
    out: dict[str, Any] = dict(overrides)
    if body.model_switch is not None:
        out["model"] = body.model_switch.to
    hints = list(body.additional_hints)
    for criteria in body.spec_updates.values():
        hints += [f"Acceptance criterion: {c}" for c in criteria]
    out["hints"] = hints
    revert = body.plan_revert
    target = revert.revert_to_task if revert.enabled and revert.revert_to_task else None
    return Applied(out, target)


def checkpoint_before(task_id: str, completed_tasks: Sequence[str]) -> str:
    """The checkpoint label to revert to so that `task_id` and later tasks are redone:
    the completed task right before it, or "start".

    >>> checkpoint_before("1.2", ["1.1", "1.2", "1.3"])
    '1.1'
    """
    order = list(completed_tasks)
    i = order.index(task_id) if task_id in order else len(order)
    return order[i - 1] if i > 0 else "start"
