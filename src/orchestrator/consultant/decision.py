"""The consultant's decision, in seed 002's `consultant-decision.json` shape."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = [
    "ACCEPTANCE_KEY",
    "Analysis",
    "ConsultantDecision",
    "DecisionBody",
    "ModelSwitch",
    "PlanRevert",
    "now",
]

ACCEPTANCE_KEY = "implementation.acceptance_criteria"
"""The `spec_updates` key of seed 002 for tightened acceptance criteria."""


def now() -> str:
    """The current UTC time as seed 002's files write it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ModelSwitch(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    reasoning: str

    @model_serializer(mode="wrap")
    def _with_from_key(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`from` is a keyword in Python; the JSON key is `from` whatever `by_alias` says."""
        data: dict[str, Any] = handler(self)
        source = data.pop("from_", data.pop("from", self.from_))
        return {"from": source, "to": data["to"], "reasoning": data["reasoning"]}


class PlanRevert(BaseModel):
    enabled: bool = False
    revert_to_task: str | None = None
    """The earliest completed task whose work is implicated: it and every later task are redone,
    so the workdir goes back to the checkpoint *before* it (see `checkpoint_before`)."""
    current_task: str
    reasoning: str = ""


class DecisionBody(BaseModel):
    action: Literal["retry_with_changes"] = "retry_with_changes"
    model_switch: ModelSwitch | None = None
    plan_revert: PlanRevert
    additional_hints: list[str] = Field(default_factory=list)
    spec_updates: dict[str, list[str]] = Field(default_factory=dict)
    additional_skills: list[str] = Field(default_factory=list)


class Analysis(BaseModel):
    failure_summary: str
    root_cause: str
    attempts_analyzed: int


class ConsultantDecision(BaseModel):
    """Serialises (`model_dump(mode="json")`) to exactly seed 002's consultant-decision.json."""

    timestamp: str = Field(default_factory=now)
    analysis: Analysis
    decision: DecisionBody
    expected_outcome: str
    confidence: float = Field(ge=0.0, le=1.0)
    source: str = Field(default="rules", exclude=True)
    """Who decided: `rules`, `llm:<backend>` or `rules (llm failed)`; not part of the file."""
