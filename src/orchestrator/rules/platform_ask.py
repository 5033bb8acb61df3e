"""What a person is asked about an agent platform's own error (`rules.platform`): one plain
question per kind, the recommended answer, and seed 004's minimal choices."""

from __future__ import annotations

import time

from orchestrator.rules.platform import PlatformError

__all__ = ["ACTIONS", "OPTIONS", "question_for", "recommendation_for"]

_ASK: dict[str, str] = {
    "authentication": "{agent} cannot log in to its model API ({msg}). Will you renew the API key "
    "or log in again, then retry?",
    "permission": "{agent}'s account may not use this model or API ({msg}). Will you grant access "
    "or pick another model, then retry?",
    "billing": "{agent}'s account is out of credit ({msg}). Will you add credit or fix billing, "
    "then retry?",
    "usage_limit": "{agent} has reached its plan's usage limit ({msg}){reset}. Wait for the reset, "
    "or retry now with another account or plan?",
    "rate_limit": "{agent}'s model API is refusing requests with a rate limit ({msg}){reset}. Wait "
    "and retry, or raise the limit and retry now?",
    "quota": "{agent}'s model API quota is used up ({msg}){reset}. Wait for the reset, or raise "
    "the quota and retry now?",
}
_ASK_DEFAULT = "{agent}'s model API keeps failing ({msg}){reset}. Retry now, wait longer, or abort?"


def question_for(err: PlatformError, agent: str | None = None) -> str:
    """A real question for the person who can fix `err`."""
    msg = " ".join(err.message.split())
    msg = msg if len(msg) <= 200 else msg[:199] + "…"
    reset = ""
    if err.retry_at is not None:
        reset = f"; it resets at {time.strftime('%Y-%m-%d %H:%M', time.localtime(err.retry_at))}"
    who = agent or err.agent
    return _ASK.get(err.kind, _ASK_DEFAULT).format(agent=who, msg=msg, reset=reset)


def recommendation_for(err: PlatformError) -> str:
    return "Retry now"


OPTIONS = ("Retry now", "Skip this task", "Abort the run")
ACTIONS = ("retry", "skip", "abort")
"""Seed 004's minimal choices; each option's action for the answer (`detail.actions`)."""
