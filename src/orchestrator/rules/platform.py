"""The agent platform's own errors — overloaded, rate and usage limits, bad keys, no credit, a
dropped stream, max turns — and what the orchestrator does about each: one table for the agent
adapters (which translate their agent's *structure* into a kind), the text interpreter (which
finds the same errors in final text copied without structure), the judge and the brain.

Actions:

- `wait`: a reset time is known and near (within `rate_limit_wait`): sleep until then; the
  attempt is not counted (the engine's `wait` outcome);
- `backoff`: a transient error (overloaded, a dropped stream or connection, a 5xx): sleep a
  little and run the attempt again without counting it, a few times (`transitions.BACKOFF`);
  when those run out, a person is asked (`external_service`);
- `retry`: an ordinary failed attempt with guidance (max turns: the agent goes on where it
  stopped; the ladder escalates if it keeps running out);
- `escalate`: only a person can fix it (a key, a login, credit, a quota with no reset):
  `external_service`, with one plain sentence saying why.

A kind whose `waits` is set turns into `wait` when a reset time is known and near, and into
`escalate` when the reset is further away than the run is allowed to sleep.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import Literal

from orchestrator.models import Category
from orchestrator.rules.failure import DOC_ENTRY, QUOTED_MESSAGE_ITEM, last_match
from orchestrator.rules.platform_words import CONTEXT_LIMIT, MUST_SET_KEY, PLATFORM_PHRASES
from orchestrator.rules.reset_time import reset_near, reset_time

__all__ = [
    "KINDS",
    "Action",
    "PlatformError",
    "PlatformKind",
    "action_for",
    "api_rejection",
    "find_platform_error",
    "kind_of",
    "kind_of_status",
    "reset_time",
]

Action = Literal["wait", "backoff", "retry", "escalate"]


@dataclass(frozen=True)
class PlatformKind:
    action: Action
    """What to do when no reset time is known."""
    category: Category | None
    why: str
    """One plain sentence for the person asked (seed 004's "Why I'm asking")."""
    waits: bool = False
    """A known reset time means: wait until then (escalate when it is too far away)."""
    guidance: str | None = None
    """For `retry`: what the next attempt is told."""
    transient: bool = False
    """Read from text alone, the attempt simply failed (it is backed off from or retried); the
    others read as needing a person (`external_service`), even when the judge first waits."""


KINDS: dict[str, PlatformKind] = {
    "authentication": PlatformKind(
        "escalate",
        "external_service",
        "The agent's API key or login token is invalid or has expired, and only you can renew it.",
    ),
    "permission": PlatformKind(
        "escalate",
        "external_service",
        "The agent's account is not allowed to use this model or API, and only you can change that.",
    ),
    "billing": PlatformKind(
        "escalate",
        "external_service",
        "The agent's account has run out of credit or has a billing problem, and only you can fix it.",
    ),
    "usage_limit": PlatformKind(
        "escalate",
        "external_service",
        "The agent's plan has reached its usage limit and no reset time soon enough is known.",
        waits=True,
    ),
    "quota": PlatformKind(
        "escalate",
        "external_service",
        "The model API's quota is used up and no reset time soon enough is known.",
        waits=True,
    ),
    "rate_limit": PlatformKind(
        "backoff",
        "external_service",
        "The model API kept refusing requests with a rate limit, even after backing off.",
        waits=True,
    ),
    "overloaded": PlatformKind(
        "backoff",
        "external_service",
        "The model API stayed overloaded, even after backing off and retrying.",
        waits=True,
        transient=True,
    ),
    "server_error": PlatformKind(
        "backoff",
        "external_service",
        "The model API kept failing with server errors, even after backing off and retrying.",
        waits=True,
        transient=True,
    ),
    "stream_disconnected": PlatformKind(
        "backoff",
        "external_service",
        "The connection to the model API kept dropping, even after backing off and retrying.",
        transient=True,
    ),
    "model_switched": PlatformKind(
        "backoff",
        "external_service",
        "The model's quota ran out and the agent switched to a fallback model, which kept failing.",
        transient=True,
    ),
    "max_turns": PlatformKind(
        "retry",
        None,
        "The agent ran out of turns before it finished.",
        guidance="The previous attempt ran out of turns before it finished: continue from where "
        "it stopped (the files it changed are still there), work in smaller steps and run the "
        "checks before finishing.",
        transient=True,
    ),
    "context_limit": PlatformKind(
        "retry",
        None,
        "The model ran out of context or output tokens before the agent finished.",
        guidance="The previous attempt ran out of the model's context or output tokens: continue "
        "from where it stopped with less in context (fewer files, shorter outputs), in smaller steps.",
        transient=True,
    ),
}
"""Kind → action, category and why. Max turns and a context or output token limit are retried (the work usually goes on fine in the
next attempt, and the ladder still escalates when it keeps running out)."""


@dataclass(frozen=True)
class PlatformError:
    """A platform error as the adapter or the text reported it."""

    kind: str
    message: str
    retry_at: float | None = None
    """Epoch seconds when the limit resets, when the platform said."""
    status: int | None = None
    source: str = "text"
    """Where it came from: `text`, or the structure (`claude result`, `codex event`, ...)."""
    agent: str = "The agent"
    """How a question names the agent (`Claude Code`, `Codex`)."""

    @property
    def spec(self) -> PlatformKind:
        return KINDS[self.kind]

    def with_reset(self, retry_at: float | None) -> PlatformError:
        return self if retry_at is None or self.retry_at else replace(self, retry_at=retry_at)


def action_for(err: PlatformError, *, wait_cap: float, now: float | None = None) -> Action:
    """What to do about `err`: a known reset within `wait_cap` seconds is waited for, one further
    away is a question for a person; otherwise the kind's own action."""
    spec = err.spec
    if spec.waits and err.retry_at is not None:
        now = time.time() if now is None else now
        return "wait" if err.retry_at - now <= wait_cap else "escalate"
    return spec.action


# -- kinds from structure ----------------------------------------------------------------------
STATUS_KINDS: dict[int, str] = {
    401: "authentication",
    402: "billing",
    403: "permission",
    408: "stream_disconnected",
    429: "rate_limit",
    500: "server_error",
    502: "server_error",
    503: "overloaded",
    499: "stream_disconnected",
    504: "server_error",
    529: "overloaded",
}


def kind_of_status(status: int | None) -> str | None:
    """The kind of a model API's HTTP status (None for statuses that say nothing)."""
    return STATUS_KINDS.get(status) if status is not None else None


def _code(status: str) -> str:
    """A status code where it reads as one: `status: 429`, `HTTP 503`, `API Error: 529`,
    `"code":429`, `(429)`, `401 Unauthorized` — not any number in a message."""
    return (
        rf"(?:\b(?:status(?: code)?|HTTP|code|API Error|[Ee]rror)\W{{0,4}}|\()(?:{status})\b|"
        rf"\b(?:{status})\s+(?-i:[A-Z][a-z])|\b(?:{status})\s+status code\b"
    )


_KIND_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # first: the platform wraps it in any error class (`BadRequestError`, `APIConnectionError`)
    ("context_limit", re.compile(CONTEXT_LIMIT, re.I)),
    (
        # the CLI fell back to another model for the rest of the session: ask again, now
        "model_switched",
        re.compile(
            r"submit a new (?:query|prompt|request) to continue with the [\w .-]{1,30} model|"
            r"switching (?:from [\w.-]+ )?to [\w.-]+ for the (?:remainder|rest) of (?:this|the) session",
            re.I,
        ),
    ),
    (
        "billing",
        re.compile(
            r"credit balance (?:is )?too low|insufficient (?:credits?|balance|funds)|out of (?:credits?|funds)\b|"
            r"(?<!with )billing(?:_error| details| issue| problem)?\b|payment required|\bbilling_not_active\b|"
            r"add (?:more )?credits|requires more credits|upgrade to a paid account|\bover budget\b|ExceededBudget|budget (?:has been |was |is )?exceeded|"
            r"\bspend(?:ing)? limit\b[^\n]{0,30}\b(?:reached|exceeded)|please re-?fill",
            re.I,
        ),
    ),
    (
        "authentication",
        re.compile(
            r"invalid[ _-]?(?:x-)?api[ _-]?key|incorrect api key|api key not valid|API_KEY_INVALID|"
            r"authentication_error|authentication_failed|AuthenticationError|UNAUTHENTICATED|"
            r"(?:oauth|access|auth(?:entication)?) token (?:has |is )?(?:expired|invalid|revoked)|"
            r"token (?:has )?expired|please run /login|run `?/login|not logged in|login required|"
            r"\bauthentication required\b|\bsession has expired or was revoked\b|"
            r"invalid bearer token|" + _code("401") + r"|Unauthori[sz]ed|could not authenticate|"
            r"failed to (?:refresh|authenticate|log ?in)|\btoken refresh failed\b|"
            r"\brun [`'\"]?(?:codex|claude|gemini|copilot) (?:login|auth)\b|"
            r"no (?:authentication|auth|credentials?) "
            r"(?:information )?(?:found|provided|configured)|no api keys? (?:were |was )?provided|"
            r"specify an? --model and an --api-key|\bLLM Provider NOT provided|"
            r"invalid --api-key|api[ _-]?key format\b|no (?:auth|authentication) credentials|"
            # a sign-in the platform tells the user to redo, or could not complete
            r"\b(?:log|sign) ?(?:out and (?:log|sign) ?)?in again\b|\bre-?authenticate\b|"
            r"\bfailed to sign ?in\b|\btoken could not be refreshed\b|\bset an auth method\b|"
            # no key or method to authenticate with at all
            r"\bcould not resolve authentication method\b|\bno api key available\b|"
            r"\benvironment variables? before running\b|" + MUST_SET_KEY,
            re.I,
        ),
    ),
    (
        "permission",
        re.compile(
            r"permission_error|PERMISSION_DENIED|PermissionDeniedError|" + _code("403") + r"|"
            r"(?:do|does)(?: not|n['’]t) have access to (?:the )?model|model_not_found|\bNotFoundError\b|"
            r"\bhas disabled\b[^\n]{0,60}\baccess\b|ask your admin(?:istrator)? to enable|"
            r"\bAccess denied by policy\b|\b(?:organization|administrator|admin) has disabled\b|"
            r"\bdisabled by (?:your |the )?(?:organization|administrator|admin)\w*|"
            r"\bmodel\b[^\n]{0,60}\bnot (?:supported|found|available)\b|"
            # the account itself must change (a plan with a tier for the model, a verified
            # organisation): waiting for a reset never clears it
            r"\b(?:doesn\\?['’]t|does not) have a free (?:quota )?tier\b|\bno free (?:quota )?tier\b|"
            r"\borganization must be verified\b|"
            # a request bigger than the account's tier allows at all: waiting never lets it through
            r"\bRequest too large for (?:model|gpt|claude|llama)|"
            r"\b(?:organization|account|workspace) (?:has been|is|was) (?:disabled|suspended|deactivated)\b|"
            # the provider does not serve the user's country: a network or account setting
            r"\b(?:doesn['’]t|does not) serve your region\b|\bnot available in your (?:region|country)\b|"
            r"\bunsupported_country_region_territory\b|\bCountry, region, or territory not supported\b|"
            # the platform blocked the account or address: its support or an admin must lift it
            r"\b(?:request|account|access) (?:has been|was|is) (?:temporarily )?blocked\b|"
            r"\bsuspicious activity\b[^\n]{0,60}\b(?:account|ip)\b",
            re.I,
        ),
    ),
    (
        "usage_limit",
        re.compile(
            r"usage limit|(?:session|weekly|daily|monthly|opus|\d+[- ]hour) limit (?:reached|hit|exceeded)|"
            r"hit your (?:usage |session |weekly |daily |monthly )?limit|limit (?:reached|hit)\b[^\n]{0,40}\breset|"
            r"usage_limit_reached|out of (?:usage|messages)|\bAPI call limit (?:reached|hit|exceeded)\b|"
            r"\b(?:reached|hit|used up) your (?:[\w-]+ ){0,4}(?<!rate )(?:quota|allowance|limit)\b|"
            r"\ballowance\b[^\n.]{0,30}?\b(?:is |has been |was )+(?:used up|exhausted|exceeded|reached)\b",
            re.I,
        ),
    ),
    (
        "quota",
        re.compile(
            r"insufficient_quota|exceeded your current quota|quota[ _](?:exceeded|exhausted)|"
            r"\b(?:have|has) no (?:remaining |more )?quota\b|"
            r"\bquota\b(?:[^\n.]|\.(?=\w)){0,60}?\b(?:is |are |still |remains |has been |was )+(?:exhausted|used up|gone)\b|"
            r"exhausted (?:your|the) (?:\w+ )?quota|"
            r"Quota exceeded|quota metric|RESOURCE_EXHAUSTED|ResourceExhausted|\bquota limit\b",
            re.I,
        ),
    ),
    (
        "rate_limit",
        re.compile(
            _code("429")
            + r"|rate[ _-]?limit(?:ed|_error|_exceeded)?\b|Too Many Requests|RateLimitError",
            re.I,
        ),
    ),
    (
        "overloaded",
        re.compile(
            _code("529|503")
            + r"|overloaded|Service ?Unavailable|(?-i:UNAVAILABLE)|experiencing high demand|no healthy upstream|"
            r"temporar(?:y|ily) (?:errors?|unavailable)|capacity constraints",
            re.I,
        ),
    ),
    (
        "stream_disconnected",
        re.compile(
            r"stream disconnected|stream (?:error|closed)|streaming failed|connection (?:was )?(?:reset|closed|aborted|"
            r"dropped|error)|ECONNRESET|socket hang up|premature close|APIConnectionError|"
            r"fetch failed|network error|Request timed out|APITimeoutError|connection failed|"
            r"network disconnected|connection to [\w-]+ (?:was )?lost",
            re.I,
        ),
    ),
    (
        "server_error",
        re.compile(
            _code("50[024]")
            + r"|Internal Server Error|InternalServerError|Bad Gateway|api_error\b|"
            r"server_error|did not provide any assistant messages",
            re.I,
        ),
    ),
    (
        "max_turns",
        re.compile(
            r"error_max_turns|(?:reached|hit|exceeded) (?:the )?max(?:imum)?[ _-]?(?:turns|iterations?|loops)|"
            r"max(?:imum)? (?:session )?(?:turns|iterations|loops) (?:reached|exceeded)|"
            r"turn limit (?:reached|exceeded)|"
            r"session turn limit|maximum number of turns|^\W*Continue to iterate\?|"
            r"\bIt can continue to iterate\b",
            re.I,
        ),
    ),
)


_NEGATED = re.compile(
    r"\b(?:not|isn['’]t|is not)\s+(?:your|an?|the)\s+(?:[\w-]+\s+){0,2}?(?:limit|quota|billing|credits?)\b",
    re.I,
)
"""A kind the message rules out (`temporarily limiting requests (not your usage limit)`)."""


def kind_of(message: str | None, *, status: int | None = None) -> str | None:
    """The kind of a model-API error from its message (first match in the table's order: a 429
    saying "usage limit" is a usage limit), else from its HTTP status.

    >>> kind_of("API Error: 529 Overloaded"), kind_of("boom", status=401)
    ('overloaded', 'authentication')
    """
    # a link is no message: ".../settings/billing" under a rate limit is where to upgrade
    message = _NEGATED.sub(" ", _LINK.sub(" ", message)) if message else message
    for kind, pattern in _KIND_WORDS if message else ():
        if pattern.search(message or ""):
            if (
                (kind == "quota" or (kind == "billing" and "quota" in (message or "").lower()))
                and _PER_MINUTE.search(message or "")
                and not _NO_ALLOWANCE.search(message or "")
            ):
                # a per-minute quota refills by itself, whatever "check your plan and billing
                # details" the provider appends: back off (unless its limit is 0: no free tier)
                return "rate_limit"
            return kind
    return kind_of_status(status)


_NO_ALLOWANCE = re.compile(r"\blimit\W{1,4}0\b", re.I)
_LINK = re.compile(r"\bhttps?://[^\s\"'<>()\[\]]+")
_PER_MINUTE = re.compile(
    r"\bper (?:minute|second)\b|\brequests? per min\b|\b[RT]PM\b|PerMinute|PerSecond", re.I
)


# -- platform errors in final text --------------------------------------------------------------
_ERROR_SHAPE = re.compile(
    r"^\W{0,4}(?:error|ERROR|Error|fatal|Fatal|✕|✗|×|⎿|stream error|request failed|"
    r"\w+Error|API request failed|API Request Failed)\b[^\n]{0,80}?"
    r"(?:\b(?:status(?: code)?|HTTP|code)\W{0,3}\d{3}\b|\(\d{3}\)|\b\d{3}\b\s+[A-Z][a-z]+|\b\d{3} status code\b)",
)
"""A bare error line with a status (`Error: 429 Too Many Requests`, `✕ HTTP 503`)."""
_NOT_OURS = re.compile(
    r"\b(?:handl(?:e|es|ed|ing)|retr(?:y|ies) on|mock\w*|assert\w*|expect\w*|test(?:s|ed|ing)? (?:for|that)|"
    r"(?<!\.)example|such as|documented|docs?\b|README|when (?:the|an?) (?:API|server)|if (?:the|an?) "
    r"(?:API|server|request))\b|\be\.g\.(?!\w)|"
    # an entry of a list of quoted messages with their fixes: "- `FATAL: quota exceeded` → ask …"
    r"^\s*" + QUOTED_MESSAGE_ITEM,
    re.I,
)
"""A line *about* such errors (code that handles 429s, docs, tests), not one reporting one."""
_DOC_LINE = re.compile(DOC_ENTRY, re.I)
"""A doc's heading or a runbook's entry, read on the whole line: "… billing errors. Action: …"."""
_OWN_EXAMPLE = re.compile(r"\(e\.g\. check quota\)", re.I)
"""Google's own words in a quota error ("Resource has been exhausted (e.g. check quota)"): not a
line about such errors."""
_RETRYING = re.compile(r"\b(?:retrying|reconnecting)\b[^\n]{0,20}\d+\s*/\s*\d+", re.I)
"""`Reconnecting... 2/5`, `retrying 1/5 in 200ms`: the platform's own retry, still going on —
unless it is the last thing printed (the session ended while it was still failing)."""
_URL = re.compile(r"\bhttps?://\S+")
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z])")


def _sentence_at(line: str, hit: re.Match[str]) -> str:
    """The sentence of LINE the match is in: a chat export glues the platform's notice onto the
    agent's last sentence ("… better error handling: Copilot has been working on this problem
    for a while. It can continue to iterate …"), whose words are not the notice's."""
    start = 0
    for m in _SENTENCE_END.finditer(line):
        if m.end() > hit.start():
            break
        start = m.end()
    after = _SENTENCE_END.search(line, hit.end())
    return line[start : after.start() + 1 if after else len(line)]


TAIL_LINES = 8


def _tail_start(lines: list[str], tail: int) -> int:
    """Where the last `tail` lines start, moved back to the opening line of an error body (JSON)
    the output ends inside, so a status printed at its top is read too (up to 40 lines more)."""
    start = max(0, len(lines) - tail)
    depth = sum(
        ln.count("}") + ln.count("]") - ln.count("{") - ln.count("[") for ln in lines[start:]
    )
    while depth > 0 and start > 0 and start > len(lines) - tail - 40:
        start -= 1
        depth += lines[start].count("}") + lines[start].count("]")
        depth -= lines[start].count("{") + lines[start].count("[")
    return start


def find_platform_error(
    text: str, *, now: float | None = None, tail: int | None = TAIL_LINES
) -> PlatformError | None:
    """The agent platform's own error in the last `tail` lines of an output (where a platform
    prints it when the session ends; None: anywhere, for an error summary), with its reset time
    when the text names one; None otherwise."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    while lines and _CHROME.search(lines[-1]):
        lines.pop()  # the CLI's input box and status bar under its last message
    lines = lines[_tail_start(lines, tail) :] if tail else lines
    found: PlatformError | None = None
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k]
        hit = PLATFORM_PHRASES.search(line) or _ERROR_SHAPE.search(line)
        if hit is None:
            continue
        if (
            _NOT_OURS.search(_URL.sub(" ", _OWN_EXAMPLE.sub(" ", _sentence_at(line, hit))))
            or (_DOC_LINE.search(line))
            or (
                _RETRYING.search(line)
                and k < len(lines) - 1
                # the retries under a CLI's closing 429 still say which 429 it was
                and not (found is not None and found.kind == "rate_limit")
            )
        ):
            continue
        status = _status(line)
        after = " ".join(lines[k : k + 3])
        # a message wrapped over lines: its code may be on the next one; a status line followed
        # by the API's JSON body is read with it (`429 Too Many Requests: {` … `"code":
        # "insufficient_quota"`: the body's quota outranks the status's rate limit)
        body = _json_body(lines, k)
        if _BODY_LINE.match(line) and k > 0 and not _JSON_EVENT.match(line):
            # the tail of a message wrapped over lines (`"status":"RESOURCE_EXHAUSTED"}}]`): read
            # with the lines above it, whose words ("requests per minute") name the limit
            line = " ".join(lines[max(0, k - 3) : k + 1])
        kind = (
            kind_of(f"{line} {body}", status=status) if body else kind_of(line, status=status)
        ) or kind_of(after, status=status)
        if kind is None:
            continue
        reset = reset_near(lines, k, now=now)
        err = PlatformError(kind, line[:500], retry_at=reset, status=status, source="text")
        if err.kind == "rate_limit" and found is None:
            # a CLI's closing "exceeded retry limit, last status: 429" over the 429's own body
            # ("insufficient_quota"): the body says which 429 it was
            found = err
            continue
        if not err.spec.transient:
            if found is not None and found.kind == "rate_limit" and err.kind not in _PAYS:
                return found
            return err  # a bad key or no credit explains the dropped stream printed after it
        if err.kind == "model_switched" and found is None:
            return err  # the platform already answered the quota printed before: another model
        found = found or err
    return found


_PAYS = frozenset({"quota", "billing", "usage_limit"})
"""Kinds a 429 can be, named in its body, that outrank the rate limit a CLI reports it as."""
_CHROME = re.compile(
    r"^[╭╰]─+[╮╯]$|^│\s*>\s+Type your message|\(\d+% context left\)\s*$|^\?\s+for shortcuts\b|"
    r"^Total (?:usage est|duration \((?:API|wall)\)|code changes):|^Usage by model:|"
    r"^[\w.-]+\s+[\d.]+[kM]? input, [\d.]+[kM]? output\b"
)
"""Gemini CLI's input box and status bar, which stand under its last message in a screen copy;
Copilot CLI's usage footer under its last message."""
_BODY_LINE = re.compile(r"^\s*(?:[{}\]\"]|\[(?!\d{4}-|\d\d:\d\d|[A-Z]+\]))")
"""A line of a JSON body; not a log line's `[2026-11-24 15:59:12]` or `[WARN]` prefix."""


_JSON_EVENT = re.compile(r"^\{\s*\"\w+\"\s*:.*\}$")
"""A whole JSON record on its line (a headless CLI's event): read alone, not with the records
above it, whose file paths (`src/billing/period.ts`) are not the error's words."""


def _json_body(lines: list[str], k: int) -> str:
    """The JSON body printed under line K (up to 15 lines that look like JSON), or ""."""
    if not lines[k].rstrip().endswith(("{", "[", ":")):
        return ""
    body = []
    for line in lines[k + 1 : k + 16]:
        if not _BODY_LINE.match(line):
            break
        body.append(line)
    return " ".join(body)


_STATUS = re.compile(
    r"(?:API Error:?\s*|status(?: code)?\W{0,3}|HTTP\W{0,2}|\"(?:code|status)\"\s*:\s*|\()([1-5]\d\d)\b|"
    r"\b([1-5]\d\d) status code\b",
    re.I,
)


def _status(line: str) -> int | None:
    m = _STATUS.search(line)
    return int(m.group(1) or m.group(2)) if m else None


_REJECTION = re.compile(r"^\W{0,6}(?:API )?Error:?\s*(4(?:00|04|13|22))\b[^\n]*", re.M)
"""The model API refusing the request itself (`API Error: 400 {…invalid_request_error…}`,
`Error: 404 404 page not found`): not a limit that passes, not the code under test."""


def api_rejection(text: str) -> tuple[int, str] | None:
    """The status and line of the model API's last refusal of the request itself in TEXT's last
    lines (a bad endpoint or model name, a corrupted or oversized conversation), None if none.
    Once is an ordinary failure; the same refusal again means a retry sends the same request."""
    last = last_match(_REJECTION, text[-4000:])
    return (int(last.group(1)), last.group(0).strip()) if last else None
