"""The brain: after a failed attempt, retry with guidance that helps, or escalate to a human.

Seed 001's interface (`should_retry_or_escalate` -> `RetryDecision`) with a deterministic rules
backend as the default, and seed 001's LLM prompt for the `claude` / `openai` backends.
Whatever the backend, two guardrails hold (DESIGN.md): a loop (the same error
`max_task_attempts` times, or A-B-A) and external-service trouble always escalate.
An LLM that fails or answers nonsense never decides: the rules' answer stands.
The patterns it reads failures with live in `orchestrator.rules` (external services, hints,
escalation signals), shared with the interpreter, the consultant and the agent adapters.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from orchestrator.agent_words import (
    asks_the_person,
    data_at_stake,
    destroys,
    final_words,
    names_destruction,
    ran_destructive,
)
from orchestrator.interpret.structured import unwrap
from orchestrator.llm import LLMBackend, extract_json, get_backend
from orchestrator.loops import LoopDetector, LoopDetectorConfig, paraphrased_loop, similarity
from orchestrator.models import Category, ConfigError
from orchestrator.rules.external import external_line
from orchestrator.rules.failure import without_expectations
from orchestrator.rules.hints import SCAN_CHARS, guidance_for, quote, tail
from orchestrator.rules.platform import api_rejection, find_platform_error
from orchestrator.rules.reset_time import delay_named, resets_within_hours
from orchestrator.rules.signals import ESCALATIONS
from orchestrator.rules.subject import about_the_code
from orchestrator.rules.summaries import is_summary, says_again

__all__ = [
    "BRAIN_BACKENDS",
    "RETRY_ESCALATE_PROMPT",
    "Brain",
    "BrainBackend",
    "RetryDecision",
    "guidance_for",
    "rules_decision",
]

logger = logging.getLogger("orchestrator.brain")

BrainBackend = Literal["rules", "claude", "openai", "auto"]
BRAIN_BACKENDS: tuple[BrainBackend, ...] = ("rules", "claude", "openai", "auto")


@dataclass
class RetryDecision:
    decision: Literal["retry", "escalate"]
    reason: str
    guidance_for_retry: str | None  # Suggestion for next attempt
    confident: bool = True
    """False when the rules only guessed (unknown error shape): `auto` then asks the LLM."""
    source: str = "rules"
    """Who decided: `rules`, `llm:<backend>`, or `rules (llm failed)`."""
    category: Category | None = None
    """Set when an always-escalate category (seed 004) caused the escalation."""


# Seed 001, Task 3.1, verbatim.
RETRY_ESCALATE_PROMPT = """You are deciding whether to retry a failed task or escalate to a human.

Task: {task_id} - {task_title}

Attempt history:
{attempt_history}

Current attempt count: {attempt_count}

Decide: Should we retry or escalate?

RETRY when:
- The error is different from previous attempts (making progress)
- The error seems transient or fixable (import errors, typos, missing files)
- Only 1-2 attempts so far and the errors aren't identical

ESCALATE when:
- Same or very similar error 3+ times (stuck in a loop)
- The error indicates a design/architecture issue, not a coding bug
- Claude explicitly said it needs human input or is confused
- The error is about something Claude can't fix (permissions, external service, missing context)

Return a JSON object:
{{
  "decision": "retry" | "escalate",
  "reason": "Brief explanation of why",
  "guidance_for_retry": "If retrying, what to tell Claude differently (null if escalating)"
}}

Return ONLY the JSON, no other text.
"""

PROMPT_ENTRY_CHARS = 2_000
"""Each attempt's text in the LLM prompt is cut to its tail, so megabyte logs stay cheap."""


# ---------------------------------------------------------------------------------------------
# The rules backend.


def _rules(
    task_id: str,
    attempt_history: Sequence[str],
    attempt_count: int,
    config: LoopDetectorConfig,
    loops_checked: bool = False,
) -> tuple[RetryDecision, bool]:
    """The rules' decision, and whether a guardrail (loop, external service) forced it.

    `loops_checked`: the caller (the judge) already ran the loop detector on this history and
    found no loop, and read the latest output with the interpreter and found no question for
    the person, so neither is done again; the last two errors are still compared, to tell the
    agent when it repeated itself."""
    if not attempt_history:
        return (
            RetryDecision(
                "retry",
                "No failure is recorded for this task yet",
                "Re-read the task and its acceptance criteria, make the change, and run the "
                "task's checks yourself before finishing.",
                confident=False,
            ),
            False,
        )
    # a runner's summary line (seed 001: `Failed: <error>`) starts with its own word, not the error's
    # a headless CLI's JSON events are read as the console transcript they stand for
    attempt_history = [_SUMMARY_HEAD.sub("", unwrap(text)) for text in attempt_history]
    latest = tail(attempt_history[-1], SCAN_CHARS)
    loop = None if loops_checked else LoopDetector(config).check(attempt_history, task_id=task_id)

    before = tail(attempt_history[-2], SCAN_CHARS) if len(attempt_history) > 1 else None
    platform = _platform(latest, before)
    if platform is not None and platform.decision == "escalate":
        return platform, True  # a key, credit or quota: the table's own why and category
    stuck = _stuck_on_the_platform(before, latest)
    if stuck is not None:
        return stuck, True
    if platform is not None:
        return platform, False
    if before is not None and is_summary(latest) and says_again(latest):
        prior = _platform(before)  # "same premium-request limit; resets in 12 days"
        if prior is not None and prior.decision == "escalate":
            return replace(prior, reason=f"The same as the attempt before: {prior.reason}"), True

    ran = ran_destructive(latest)
    if ran is not None:
        reason = (
            f"The agent ran a command that destroys data or shared history (`{quote(ran, 120)}`): "
            "a person has to decide how to go on"
        )
        return RetryDecision("escalate", reason, None, category="extreme_destructive"), True

    asked = None if loops_checked else asks_the_person(attempt_history[-1])
    unanswered = False
    if asked is None and not loops_checked and len(attempt_history) > 1:
        # the attempt before asked the person to choose, and nobody answered
        earlier = asks_the_person(attempt_history[-2])
        asked = earlier if earlier is not None and earlier.category is not None else None
        unanswered = True
    named = names_destruction(latest)
    if asked is not None:
        reason = f"The agent asked for a decision only a person can make (`{asked.said}`)" + (
            " in the attempt before, and nobody has answered" if unanswered else ""
        )
        # the go-ahead it waits for is for a step that destroys data or shared history
        at_stake = asked.category is None and (named or data_at_stake(asked.said))
        category = "extreme_destructive" if at_stake and not unanswered else asked.category
        return RetryDecision("escalate", reason, None, category=category), True
    if named is not None:
        reason = (
            f"The agent's last words name a step that destroys data or shared history "
            f"(`{quote(named, 120)}`), taken or next: a person has to look before anything else runs"
        )
        return RetryDecision("escalate", reason, None, category="extreme_destructive"), True

    # what a test expected, or what the agent says it changed, is not what happened
    observed = _observed(latest)
    external = external_line(observed) or _later_trouble(attempt_history)
    blip = None  # a connection that failed once: retried unless something else decides
    if external is not None and about_the_code(attempt_history[-1][-20000:], external):
        external = None  # a test of the rate limiter expecting `quota exceeded`
    if external is not None and _passing_network_trouble(external, before):
        blip, external = external, None
    if external is not None:
        reason = (
            f"An external service is failing (`{quote(external, 160)}`): a retry cannot fix "
            "credentials, quotas or a remote outage"
        )
        return RetryDecision("escalate", reason, None, category="external_service"), True

    for pattern, why, category in ESCALATIONS:
        match = pattern.search(observed)
        if match:
            reason = f"{why} (`{quote(match.group(0), 120)}`)"
            if category == "ambiguous_requirements" and destroys(final_words(latest) or latest):
                category = "extreme_destructive"  # the choice it asks for would lose data
            return RetryDecision("escalate", reason, None, category=category), loop is not None

    if loop is not None:
        reason = f"{loop.message} ({loop.similarity_line})"
        return RetryDecision("escalate", reason, None), True

    repeat = min(3, config.max_task_attempts)
    # the judge's detector found no loop (`loops_checked`): the brain trusts it, as above
    alike = (
        paraphrased_loop(attempt_history, repeat=repeat)
        if repeat >= 2 and not loops_checked
        else None
    )
    if alike is not None:
        reason = (
            f"The same failure in other words {repeat} times in a row ({alike:.0%} alike once "
            "numbers, paths and timestamps are set aside): retrying is not converging"
        )
        return RetryDecision("escalate", reason, None), True

    if blip is not None:
        reason = (
            f"A remote service's connection failed once (`{quote(blip, 160)}`): a network blip "
            "or a 5xx usually clears; the same trouble twice in a row would need a person"
        )
        guidance = (
            "The previous attempt was cut off by a remote service's connection error, not by "
            "the code: run the same step again and go on from where it stopped."
        )
        return RetryDecision("retry", reason, guidance), False
    guidance, label, confident = guidance_for(latest)
    threshold = config.error_similarity_threshold
    if len(attempt_history) == 1:
        reason = f"First failure, and it looks fixable: {label}"
    else:
        sim = similarity(attempt_history[-2], attempt_history[-1])
        if sim >= threshold:
            reason = (
                f"Same error as the previous attempt ({sim:.0%} similar): one more try with a "
                "different approach before escalating"
            )
            guidance = (
                "The previous attempt ended with the same error, so that approach does not "
                "work: try a different one. " + guidance
            )
        else:
            reason = (
                f"The error changed since the previous attempt ({sim:.0%} similar): making "
                f"progress; now {label}"
            )
            if sim >= threshold - 0.15:
                confident = False  # borderline: neither clearly new nor clearly the same
    if attempt_count >= config.max_task_attempts:
        confident = False
        reason += f"; attempt {attempt_count} reached max_task_attempts={config.max_task_attempts}"
    return RetryDecision("retry", reason, guidance, confident=confident), False


_CHANGE_MADE = re.compile(
    r"^[ \t>*✦⏺•-]*(?:I(?:'ve| have)?\s+)?(?:now\s+)?(?:added|implemented|introduced|changed|updated|"
    r"switched|replaced|converted|wrapped|rewrote|made|fixed|raise|return)\b[^\n]*$|"
    r"^[^\n]*\b(?:are|is) now (?:converted|returned|raised|mapped|handled)\b[^\n]*$",
    re.I | re.M,
)
"""A line in which the agent tells what it changed ("Added a distinct `token expired` message"):
the code it wrote, not an error that happened."""
_SUMMARY_HEAD = re.compile(r"^[ \t]*Failed:[ \t]+(?=\D)", re.M)


_LOG_NOTICE = re.compile(
    r"^.*(?:(?<![\w-])(?-i:WARN|WARNING|INFO|DEBUG|NOTICE|TRACE)(?![\w-])|\blevel=(?:warn|warning|info|debug)\b|"
    r"\"level\":\s*\"(?:warn|warning|info|debug)\").*$\n?",
    re.I | re.M,
)
"""A log record below error level (`WARN c.a.billing.InvoiceSync upstream 401`, Go's `level=WARN
msg="upstream rate limited"`, Django's `WARNING … Forbidden`): what the code under test logged
about its own dependencies while the tests ran, not what stopped the attempt."""


def _observed(text: str) -> str:
    """TEXT without what a test expected, what the agent says it changed, and the code's own log
    notices: what is left is what happened to the attempt."""
    return _LOG_NOTICE.sub("", _CHANGE_MADE.sub("", without_expectations(text)))


_PASSING_NETWORK = re.compile(
    r"\bECONNRESET\b|\bETIMEDOUT\b|\bEAI_AGAIN\b|socket hang up|connection (?:was )?(?:reset|closed)|"
    r"\b(?:recv|read|send)\b[^\n]{0,20}\bclosed\b|\btimed? ?out\b|\bReadTimeout\b|\bConnectTimeout\b|"
    r"\b50[234]\b|Service Unavailable|Bad Gateway|Gateway Time-?out|temporarily unavailable|"
    r"Provider returned error",
    re.I,
)
_NEEDS_A_PERSON = re.compile(
    r"\b40[123]\b|unauthori[sz]ed|forbidden|credential|api[ _-]?key|token|quota|billing|credit|"
    r"permission|denied|expired|revoked|suspended|invalid|login|password|allow ?list|firewall|"
    r"maintenance|outage|status page|deprecated|retired|shut ?down|paused",
    re.I,
)


def _passing_network_trouble(external: str, before: str | None) -> bool:
    """The external trouble is a connection that failed or a 5xx (a network blip), nothing a
    person must renew or grant, and the attempt before showed no external trouble: the first
    such failure is retried, as a rate limit hit once is."""
    if not _PASSING_NETWORK.search(external) or _NEEDS_A_PERSON.search(external):
        return False
    return before is None or external_line(_observed(before)) is None


def _later_trouble(attempt_history: Sequence[str]) -> str | None:
    """External-service or credential trouble in a later attempt that is not at the tail of its
    failure text: anywhere in its last 20 000 characters (a bad key or an exhausted quota above
    a long test log, which the tail scan misses)."""
    latest = _observed(attempt_history[-1][-20000:])
    err = find_platform_error(latest, tail=None)
    if err is not None and not err.spec.transient:
        return err.message
    return external_line(latest) or (
        _credential_fault(latest) if len(attempt_history) > 1 else None
    )


_CREDENTIAL = re.compile(
    r"\b(?:api[ _-]?key|apikey|secret[ _-]?key|client[ _-]secret|access[ _-]?token|auth[ _-]?token|"
    r"bearer token|service[ _-]role(?: key)?|credentials?)\b",
    re.I,
)
_FAULT = re.compile(
    r"\b(?:invalid|missing|malformed|not set|not defined|undefined|empty|expired|revoked|rejected|"
    r"not (?:valid|found|configured|provided))\b",
    re.I,
)
_ERROR_SHAPE = re.compile(
    r"\berror\b|\bfailed\b|\bexception\b|\bdenied\b|\bcould(?: not|n't)\b|\bunable to\b", re.I
)
_IN_A_TEST = re.compile(r"\bexpect\(|\bassert|\bshould\b|\btoBe\w*\(|\btest\b", re.I)


def _credential_fault(text: str) -> str | None:
    """An error line of the application under test (a later attempt got past the code to run
    it) that blames a credential it was given: a key, a token or a secret that is missing,
    empty, malformed or rejected. Only the person holds the real one."""
    for line in reversed(text.splitlines()[-60:]):
        if (
            _CREDENTIAL.search(line)
            and _FAULT.search(line)
            and _ERROR_SHAPE.search(line)
            and not _IN_A_TEST.search(line)
        ):
            return line.strip()[:300]
    return None


def _stuck_on_the_platform(before: str | None, latest: str) -> RetryDecision | None:
    """The last two attempts (the tails of their failure texts; BEFORE is None after one) ended
    on the same refusal of the model API (the same 4xx to the request itself) or both ran out of
    context: the next attempt would send the same request, so someone has to change the
    endpoint, the model or the conversation."""
    if before is None:
        return None
    now, then = api_rejection(latest), api_rejection(before)
    if now is not None and then is not None and now[0] == then[0]:
        return RetryDecision(
            "escalate",
            f"The model API refused the request itself with the same status ({now[0]}) in two "
            f"attempts in a row (`{quote(now[1], 160)}`): a retry sends the same request",
            None,
            # a 404: the endpoint or the model is not there, a setting of the remote service
            category="external_service" if now[0] == 404 else None,
        )
    errs = [find_platform_error(a) for a in (before, latest)]
    if all(e is not None and e.kind == "context_limit" for e in errs):
        return RetryDecision(
            "escalate",
            "The conversation ran out of the model's context twice in a row (compacting did "
            f"not help: `{quote(errs[-1].message if errs[-1] else '', 160)}`)",
            None,
        )
    return None


def _platform(latest: str, before: str | None = None) -> RetryDecision | None:
    """The agent platform's own error (`rules.platform`, the table the judge and the adapters
    use): a key, credit, a quota, a rate or usage limit (the judge waits or backs off before the
    brain is asked) → escalate with the table's why; a transient one (overloaded, a dropped
    stream, a 5xx) or max turns → retry."""
    said_by_agent = re.search(r"^Agent error: (.+?)(?:\n\n|\Z)", latest, re.M | re.S)
    if said_by_agent:  # the judge's failure text: the agent's own error, not the gates' logs
        err = find_platform_error(said_by_agent.group(1), tail=None)
    else:
        err = find_platform_error(latest)
    if err is None or about_the_code(latest, err.message):
        return None
    spec, said = err.spec, quote(err.message, 160)
    # only a wait named relative to now ("try again in 9 minutes"): a clock time or an epoch
    # would make the decision depend on the hour the rules run
    window = _after(latest, err.message)
    delay = delay_named(window)
    soon = delay is not None and delay <= 600
    first = before is None or _platform_kind(before) != "rate_limit"
    if err.kind == "rate_limit" and (soon or first):
        # the API named a short wait ("Please try again in 40s"), or the limit was hit for the
        # first time: a rate limit clears by itself; the same limit twice in a row does not
        when = "that resets within minutes" if soon else "hit for the first time in a row"
        return RetryDecision(
            "retry",
            f"A rate limit of the agent's model API {when} (`{said}`)",
            "The previous attempt was stopped by the model API's rate limit, not by the code: "
            "continue the task from where it stopped (its changes are still there).",
        )
    if spec.waits and resets_within_hours(window):
        # a usage window or a quota that resets within hours: the run waits for it, no person
        when = f"in {_hours(delay)}" if delay is not None else "later today"
        return RetryDecision(
            "retry",
            f"A usage limit of the agent's platform that resets {when} (`{said}`)",
            "The previous attempt was stopped by the platform's usage limit, not by the code: "
            "continue the task from where it stopped (its changes are still there).",
        )
    if not spec.transient:
        return RetryDecision("escalate", f"{spec.why} (`{said}`)", None, category=spec.category)
    if spec.guidance:
        return RetryDecision("retry", f"{spec.why} (`{said}`)", spec.guidance)
    return RetryDecision(
        "retry",
        f"A temporary error of the agent's model API, not of the code (`{said}`)",
        "The previous attempt was cut off by a temporary error of the model API, not by the "
        "code: continue the task from where it stopped (its changes are still there).",
    )


def _after(text: str, message: str) -> str:
    """The platform's MESSAGE in TEXT and the few lines under it (where a reset is named)."""
    at = text.rfind(message[:80])
    return text[at : at + len(message) + 300] if at >= 0 else message


def _hours(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def _platform_kind(text: str) -> str | None:
    err = find_platform_error(text)
    return err.kind if err is not None else None


def rules_decision(
    task_id: str,
    task_title: str,
    attempt_history: Sequence[str],
    attempt_count: int,
    *,
    config: LoopDetectorConfig | None = None,
    loops_checked: bool = False,
) -> RetryDecision:
    """The deterministic decision (offline, no LLM); `Brain(backend="rules")` returns this."""
    del task_title  # the rules judge the errors, not the wording of the task
    config = config or LoopDetectorConfig()
    decision, _ = _rules(task_id, attempt_history, attempt_count, config, loops_checked)
    return decision


# ---------------------------------------------------------------------------------------------
# The brain.


class Brain:
    """Decide retry-or-escalate after a failed attempt.

    `backend`: `rules` (default, offline), `claude` / `openai` (seed 001's prompt; the
    guardrails still escalate loops and external-service trouble without asking), or `auto`
    (the LLM only where the rules are unsure). `llm` is the backend object to use; without
    it one is made by `orchestrator.llm.get_backend(name, **llm_opts)`, where name is the
    backend, or `llm_backend` for `auto`.
    """

    def __init__(
        self,
        backend: BrainBackend = "rules",
        llm: LLMBackend | None = None,
        *,
        llm_backend: str = "claude",
        config: LoopDetectorConfig | None = None,
        timeout: float = 60.0,
        **llm_opts: Any,
    ) -> None:
        if backend not in BRAIN_BACKENDS:
            raise ConfigError(
                f"unknown brain backend {backend!r}; use one of: {', '.join(BRAIN_BACKENDS)}"
            )
        self.backend: BrainBackend = backend
        self.config = config or LoopDetectorConfig()
        self.timeout = timeout
        self.llm: LLMBackend | None = llm
        if backend != "rules" and llm is None:
            # built now, so that a misconfigured backend is a one-line error at start-up
            self.llm = get_backend(backend if backend != "auto" else llm_backend, **llm_opts)

    def should_retry_or_escalate(
        self,
        task_id: str,
        task_title: str,
        attempt_history: list[str],
        attempt_count: int,
        *,
        loops_checked: bool = False,
    ) -> RetryDecision:
        """Decide whether to retry a failed task or escalate to human.

        Returns guidance_for_retry when retrying to help the next attempt. `loops_checked=True`
        when the caller already ran the loop detector (the judge does): it is not run twice.
        """
        rules, guarded = _rules(task_id, attempt_history, attempt_count, self.config, loops_checked)
        if self.backend == "rules" or guarded:
            return rules
        if self.backend == "auto" and rules.confident:
            return rules
        return self._ask_llm(task_id, task_title, attempt_history, attempt_count, rules)

    def _ask_llm(
        self,
        task_id: str,
        task_title: str,
        attempt_history: Sequence[str],
        attempt_count: int,
        rules: RetryDecision,
    ) -> RetryDecision:
        prompt = RETRY_ESCALATE_PROMPT.format(
            task_id=task_id,
            task_title=task_title,
            attempt_history="\n".join(
                f"Attempt {i + 1}: {tail(h, PROMPT_ENTRY_CHARS)}"
                for i, h in enumerate(attempt_history)
            ),
            attempt_count=attempt_count,
        )
        llm = self.llm
        if llm is None:  # only the rules backend has none
            return rules
        name = llm.name
        try:
            return _parse_llm_decision(llm.complete(prompt, timeout=self.timeout), rules, name)
        except Exception as exc:  # any LLM trouble: the rules' decision stands
            logger.warning(
                "brain: LLM backend %s failed for task %s (%s: %s); using the rules' decision",
                name,
                task_id,
                type(exc).__name__,
                quote(str(exc), 200),
            )
            return replace(rules, source="rules (llm failed)")


def _parse_llm_decision(text: str, rules: RetryDecision, name: str) -> RetryDecision:
    data = extract_json(text)
    decision = data.get("decision")
    if decision not in ("retry", "escalate"):
        raise ValueError(f"decision must be retry or escalate, got {decision!r}")
    reason = data.get("reason")
    reason = reason.strip() if isinstance(reason, str) and reason.strip() else "(no reason given)"
    guidance: str | None = None
    if decision == "retry":
        raw = data.get("guidance_for_retry")
        guidance = raw.strip() if isinstance(raw, str) and raw.strip() else None
        # Seed 001: a retry always carries guidance; the rules' is better than none.
        guidance = guidance or rules.guidance_for_retry
        return RetryDecision("retry", reason, guidance, source=f"llm:{name}")
    category = rules.category if rules.decision == "escalate" else None
    return RetryDecision("escalate", reason, None, source=f"llm:{name}", category=category)
