"""The result of interpreting one attempt's output, and the plain-language reasons shown to people."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.models import Category, Verdict

Source = Literal["marker", "heuristic", "category", "llm", "default"]

WHY: dict[Category, str] = {
    "ambiguous_requirements": "I found multiple valid approaches and need you to decide.",
    "extreme_destructive": "This fix would delete data. I need your approval before proceeding.",
    "external_service": "This looks like an authentication or network issue I can't fix.",
}
"""Seed 004's "Why I'm asking" line for each always-escalate category."""

WHY_GENERIC = "The agent asked something only you can answer."
WHY_VERIFY = "The agent needs you to check its work before it continues."
WHY_ACTION = "The agent needs you to do a step it cannot do itself."
WHY_BLOCKED = "The agent reports it is blocked and cannot continue on its own."


def why_sentence(why: str | None, category: str | None = None, default: str = WHY_GENERIC) -> str:
    """The "Why I'm asking" line: `why` when it is a plain sentence for a person, else the
    category's seed-004 sentence, else `default`. A label or a rule name ("Cache", "drops a
    database object") is not a sentence."""
    text = " ".join((why or "").split())
    if len(text.split()) >= 4 and text[0].isupper() and text[-1] in ".!?":
        return text
    return next((t for c, t in WHY.items() if c == category), default)


class Interpretation(BaseModel):
    """What an attempt's output says: done, needs a person, or failed — and why."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    category: Category | None = None
    question: str | None = None
    options: list[str] = Field(default_factory=list)
    recommendation: str | None = None
    why: str | None = None
    """One sentence for the human: why they are needed. None unless verdict is needs_human."""
    source: Source = "default"
    """The layer that decided: marker, heuristic, category, llm, or default (no signal)."""
    confident: bool = False
    """False when the rules are unsure; `interpret(..., llm=...)` asks the LLM only then."""
    error: str | None = None
    """For failed attempts: the most telling error line or sentence, for the retry guidance."""
    evidence: str | None = None
    """The line or sentence that decided the verdict (for logs and the `--json` output)."""
    platform: str | None = None
    """The agent platform's own error found in the text (`rules.platform.KINDS`: overloaded,
    usage_limit, authentication, ...); the judge acts on it through that table."""
    retry_at: float | None = None
    """When that platform limit resets (epoch seconds), when the text named a time."""

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
