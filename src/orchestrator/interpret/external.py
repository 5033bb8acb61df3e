"""Recognising external-service trouble (seed 004) in an agent's output: the rules are
`orchestrator.rules.external`'s (shared with the brain and the agent adapters); this module only
turns the interpreter's lines into units, so a phrase wrapped across prose lines is read whole.
"""

from __future__ import annotations

import re

from orchestrator.interpret.model import Interpretation
from orchestrator.interpret.text import Line
from orchestrator.rules.external import external_trouble
from orchestrator.rules.platform import TAIL_LINES, PlatformError, find_platform_error, kind_of
from orchestrator.rules.platform_ask import OPTIONS, question_for, recommendation_for


def _units(lines: list[Line]) -> list[str]:
    """Prose paragraphs joined into one string (phrases wrap across lines); other lines as they are."""
    units: list[str] = []
    para: list[str] = []
    for ln in lines:
        if ln.zone == "prose" and ln.text.strip():
            para.append(ln.text.strip())
            continue
        if para:
            units.append(" ".join(para))
            para = []
        if ln.text.strip():
            units.append(ln.text)
    if para:
        units.append(" ".join(para))
    return units


def find_external_trouble(lines: list[Line]) -> str | None:
    """The line showing an auth, quota or network failure of a remote service, or None."""
    return external_trouble(_units(lines))


BLOCKER = re.compile(
    r"\bI\s+(?:can(?:no|')t|could(?:n't| not)|am unable|was unable|wasn't able|have no access)|"
    r"\b(?:can(?:no|')t|couldn't|could not)\s+(?:run|fix|finish|complete|fetch|reach|connect|create|log in|"
    r"change|proceed|continue)|\bunable to\b|\bblocked\b|\bstuck\b|\bneeds? (?:someone|you|a (?:valid|new|higher))|"
    r"\bplease\s+(?:provide|renew|regenerate|refresh|check|add|put|verify|rotate|update|raise|create|issue)|"
    r"\bcould you\b|\bsomeone (?:with|needs)|\bkann ich nicht|\bkonnte\b.{0,40}\bnicht|\bbitte\b|"
    r"\bnicht (?:erreichbar|beheben)",
    re.I,
)


def platform_reading(text: str) -> Interpretation | None:
    """The agent platform's own error at the end of the output (overloaded, a usage limit, a bad
    key, ...), as the table in `rules.platform` reads it: a key, credit, a quota or a rate or
    usage limit needs a person (`external_service`; the judge first waits for a near reset or
    backs off); a transient error or max turns is a failed attempt the judge backs off from or
    retries."""
    err = find_platform_error(text) or _before_the_runs_end(text)
    if err is None:
        return None
    spec = err.spec
    if not spec.transient:
        return Interpretation(
            verdict="needs_human",
            category="external_service",
            question=question_for(err),
            options=list(OPTIONS),
            recommendation=recommendation_for(err),
            why=spec.why,
            source="category",
            confident=True,
            evidence=err.message,
            platform=err.kind,
            retry_at=err.retry_at,
        )
    return Interpretation(
        verdict="failed",
        source="heuristic",
        confident=True,
        evidence=err.message,
        error=err.message,
        platform=err.kind,
        retry_at=err.retry_at,
    )


_RUN_FAILED = re.compile(
    r"\bexit(?:ed)?(?: with)?(?: code| status)?:?\s+[1-9]\d*\b|\bstatus:\s*(?:failed|error)\b|"
    r"\bTask ended\b|\bfailed after \d+ (?:retries|attempts)\b|\bexceeded retry limit\b|"
    # a loop runner stopping on it: "Stopping.", "No response received, exiting.", "Ralph exited:
    # api_limit", its status file's `"status":"error"`
    r"\bStopping\.|\bexiting\b|\bstopped after \d+\b|\bexited: \w+|\"status\"\s*:\s*\"error\"|"
    r"\bFinal state: AgentState\.ERROR\b",
    re.I,
)
"""The run's own end says it failed: an exit status, a runner's `status: failed`, a CLI's
"Task ended: API request failed after 3 retries"."""


_REPORT_LINES = 30
"""How far above the end a runner's report may push the platform's error."""
_REPORT_TAIL_CHARS = 8_000


def _before_the_runs_end(text: str) -> PlatformError | None:
    """The platform's error above what a runner printed after the session (its report, the
    agent's plan, notes), when the run's end says it failed: the error is where it ended."""
    if text.count("\n", -_REPORT_TAIL_CHARS) <= TAIL_LINES:
        return None  # the first reading saw these lines already
    err = find_platform_error(text, tail=_REPORT_LINES)
    if err is None:
        return None
    at = text.rfind(err.message[:60])
    return err if at >= 0 and _RUN_FAILED.search(text, at) else None


_MODEL_PROVIDER = re.compile(
    r"\b(?:API Error|AI service|model|(?:model|AI|LLM) provider|Provider:|LLM|anthropic|openai|"
    r"gemini|claude|perplexity|mistral|bedrock|vertex)\b",
    re.I,
)
"""The agent's own model provider; a payment sandbox answering 500 is someone else's incident."""


def passing_trouble(evidence: str | None) -> Interpretation | None:
    """External trouble that passes by itself — the model provider overloaded (529) or answering
    503 — found anywhere in the output, not only where the platform prints its own errors: the
    attempt failed and is backed off from, nobody has to act."""
    kind = kind_of(evidence) if evidence else None
    if not evidence or not (
        kind == "overloaded" or (kind == "server_error" and _MODEL_PROVIDER.search(evidence))
    ):
        return None
    return Interpretation(
        verdict="failed",
        source="heuristic",
        confident=True,
        evidence=evidence,
        error=evidence,
        platform=kind,
    )
