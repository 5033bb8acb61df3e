"""The brain: after a failed attempt, retry with guidance that helps, or escalate to a human.

Seed 001's interface (`should_retry_or_escalate` -> `RetryDecision`) with a deterministic rules
backend as the default, and seed 001's LLM prompt for the `claude` / `openai` backends.
Whatever the backend, two guardrails hold (DESIGN.md): a loop (the same error
`max_task_attempts` times, or A-B-A) and external-service trouble always escalate.
An LLM that fails or answers nonsense never decides: the rules' answer stands.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from orchestrator.llm import LLMBackend, extract_json, get_backend
from orchestrator.loops import LoopDetector, LoopDetectorConfig, similarity
from orchestrator.models import Category, ConfigError

__all__ = [
    "BRAIN_BACKENDS",
    "RETRY_ESCALATE_PROMPT",
    "Brain",
    "BrainBackend",
    "RetryDecision",
    "guidance_for",
    "key_error_line",
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

SCAN_CHARS = 16_384
"""Only the tail of an attempt's failure text is scanned: that is where errors end up."""

PROMPT_ENTRY_CHARS = 2_000
"""Each attempt's text in the LLM prompt is cut to its tail, so megabyte logs stay cheap."""

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _tail(text: str, limit: int) -> str:
    text = _ANSI.sub("", text[-2 * limit :])
    return text if len(text) <= limit else "…" + text[-limit:]


def _quote(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------
# Escalation signals: what a retry cannot fix.

_NOT_ABOUT_REMOTE = re.compile(r"\bassert|\bFAILED\b|\bexpected\b|==|\btest_\w+", re.I)
_EXTERNAL = re.compile(
    r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?:[ _]code)?|response|error|code)[\s:=(]*(?:401|403|429)\b"
    r"|\b401\s+Unauthori[sz]ed|\b403\s+Forbidden|\b429\b.{0,20}Too\s+Many\s+Requests"
    r"|\bToo\s+Many\s+Requests\b|\brate[\s_-]?limit(?:ed)?[\s_-]+(?:exceeded|reached|hit)\b"
    r"|\brate_limit_error\b|\bquota\b.{0,40}\b(?:exceeded|exhausted|reached)\b"
    r"|\binsufficient_quota\b|\bexceeded\b.{0,30}\bquota\b"
    r"|\b(?:invalid|expired|revoked|incorrect)\s+(?:api[\s_-]?key|access[\s_-]?token"
    r"|auth(?:entication)?\s+token|credentials?)\b"
    r"|\bapi[\s_-]?key\b.{0,30}\b(?:invalid|expired|not\s+valid|revoked)\b"
    r"|\bauthentication_error\b|\bENOTFOUND\b|\bEAI_AGAIN\b|Name or service not known"
    r"|Temporary failure in name resolution|Could not resolve host|getaddrinfo failed"
    r"|nodename nor servname",
    re.I,
)
_REFUSED = re.compile(r"\bECONNREFUSED\b|\bconnection refused\b|\bECONNRESET\b", re.I)
_HOST = re.compile(
    r"(?:(?<=//)|(?<=@)|(?<=\s)|(?<=\()|(?<=')|(?<=\"))"
    r"((?:\d{1,3}\.){3}\d{1,3}|\[?::1\]?|localhost|(?:[a-z0-9-]+\.)+[a-z]{2,})(?::\d+)?\b",
    re.I,
)
_LOCAL_HOSTS = re.compile(r"^(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[?::1\]?)$", re.I)

_PERMISSION = re.compile(
    r"\bEACCES\b|\bEPERM\b|\bEROFS\b|\bpermission denied\b|\boperation not permitted\b"
    r"|\bPermissionError\b|\baccess (?:is )?denied\b|\bread-only file ?system\b",
    re.I,
)
_CLARIFICATION = re.compile(
    r"\bneeds?\s+(?:human\s+)?(?:input|clarification|guidance|a\s+decision)\b"
    r"|\bI\s+need\s+(?:clarification|more\s+(?:information|context|details))\b"
    r"|\b(?:unclear|ambiguous|underspecified|vague)\s+(?:requirements?|spec(?:ification)?s?"
    r"|instructions?|task)\b"
    r"|\brequirements?\s+(?:are|is)\s+(?:unclear|ambiguous|underspecified|vague)\b"
    r"|\bplease\s+clarify\b|\bclarification\s+(?:is\s+)?(?:needed|required)\b"
    r"|\b(?:I'?m|I\s+am)\s+(?:confused|unsure|not\s+sure)\s+(?:about|what|which|how|whether)\b"
    r"|\bcannot\s+proceed\s+without\b|\bNEEDS_HUMAN\b|\bSTATUS:\s*needs_human\b"
    r"|\bwhich\s+(?:option|approach)\s+(?:do|would)\s+you\s+(?:prefer|like)\b",
    re.I,
)
_DESIGN = re.compile(
    r"\barchitectur(?:e|al)\s+(?:issue|problem|flaw|change|decision|question|concern"
    r"|limitation|rework)s?\b"
    r"|\b(?:requires?|needs?|calls?\s+for)\s+(?:an?\s+)?(?:architectural|design|structural)"
    r"\s+(?:change|decision|rework)s?\b"
    r"|\bdesign\s+(?:issue|problem|flaw|decision|question)s?\b"
    r"|\b(?:current|existing)\s+(?:architecture|design)\s+(?:does\s*n[o']t|cannot|can'?t|won'?t)\b"
    r"|\bconflicting\s+(?:requirements?|constraints?|acceptance\s+criteria)\b"
    r"|\brequirements?\s+(?:conflict|contradict)"
    r"|\b(?:contradictory|mutually\s+exclusive|incompatible)\s+(?:requirements?|constraints?"
    r"|criteria)\b"
    r"|\b(?:requirements?|criteria|constraints?)\s+(?:are|is)\s+(?:contradictory|conflicting"
    r"|mutually\s+exclusive|impossible|incompatible)\b"
    r"|\bimpossible\s+(?:task|requirements?)\b|\b(?:task|this)\s+is\s+impossible\b"
    r"|\bimpossible\s+to\s+satisfy\b|\bcannot\s+(?:all\s+|both\s+)?be\s+satisfied\b"
    r"|\b(?:must|needs?\s+to|has\s+to|would\s+have\s+to)\s+be\s+(?:restructured|redesigned"
    r"|re-?architected)\b"
    r"|\bcircular\s+(?:import|dependenc(?:y|ies))\b.{0,160}?\b(?:restructur|redesign"
    r"|re-?architect|architectur)",
    re.I | re.S,
)


def _remote_refusal(text: str) -> str | None:
    for line in text.splitlines():
        if not _REFUSED.search(line) or _NOT_ABOUT_REMOTE.search(line):
            continue
        for host in _HOST.findall(line):
            if not _LOCAL_HOSTS.match(host):
                return line
    return None


def _external_line(text: str) -> str | None:
    for line in text.splitlines():
        if _EXTERNAL.search(line) and not _NOT_ABOUT_REMOTE.search(line):
            return line
    return _remote_refusal(text)


# ---------------------------------------------------------------------------------------------
# Guidance: what to tell the agent differently, drawn from the error itself.

Guide = Callable[["re.Match[str]", str], str]


def _dependency(name: str) -> str:
    top = name.split(".")[0] if not name.startswith(".") else name
    return (
        f"Install or add the missing dependency `{top}` (or avoid it) before using it: "
        f"declare it in the project's dependency file and install it (e.g. `uv add {top}`); "
        f"if `{name}` is meant to be a module of this project, create it or fix the import path."
    )


def _g_no_module(m: re.Match[str], _: str) -> str:
    return _dependency(m.group(1).strip("'\"`"))


def _g_js_module(m: re.Match[str], _: str) -> str:
    name = m.group(1) or m.group(2)
    if name.startswith((".", "/")):
        return (
            f"The imported file `{name}` does not exist: create it, or fix the relative path "
            "and the file extension in the import."
        )
    return (
        f"Install or add the missing dependency `{name}` (or avoid it) before using it: add it "
        "to package.json with the project's package manager."
    )


def _g_cannot_import(m: re.Match[str], text: str) -> str:
    name, module = m.group(1), m.group(2)
    if re.search(r"partially initiali[sz]ed|circular import", text, re.I):
        return _CIRCULAR
    return (
        f"`{module}` does not define `{name}`: check the spelling, define `{name}` there, or "
        "import it from the module where it really lives."
    )


_CIRCULAR = (
    "Break the circular import: move the import inside the function that needs it, import the "
    "module instead of the name, or extract the shared code into a third module both can import."
)


def _g_syntax(m: re.Match[str], text: str) -> str:
    where = ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', text)
    if frames:
        where = f" in `{frames[-1][0]}` line {frames[-1][1]}"
    return (
        f"Fix the {m.group(1)}{where} ({_quote(m.group(2) or 'invalid syntax', 120)}); compile "
        "every file you changed (e.g. `python -m py_compile FILE`) before finishing."
    )


def _g_name(m: re.Match[str], _: str) -> str:
    name = m.group(1)
    return (
        f"`{name}` is used but never defined or imported where it is used: define it or add the "
        "missing import (check for a typo in the name)."
    )


def _g_attribute(m: re.Match[str], _: str) -> str:
    module, owner, attr = m.group(1), m.group(2), m.group(3)
    if module:
        return (
            f"Module `{module}` has no attribute `{attr}`: check the API of the installed "
            f"version of `{module}`, and that no local file named `{module}.py` shadows it."
        )
    return (
        f"`{owner}` objects have no attribute `{attr}`: check the spelling and the object's real "
        "type at that point (it may be None or a different class than expected)."
    )


def _g_type(m: re.Match[str], _: str) -> str:
    return (
        f"Check the types at the failing call: {_quote(m.group(1), 200)}. Convert the value, or "
        "fix the signature so that caller and callee agree."
    )


def _g_file(m: re.Match[str], _: str) -> str:
    path = (m.group(1) or m.group(2) or "the file").strip("'\"`")
    return (
        f"`{path}` does not exist when the code runs: create it, or fix the path (relative paths "
        "resolve from the working directory, not from the source file)."
    )


def _g_command(m: re.Match[str], _: str) -> str:
    cmd = next(g for g in m.groups() if g)
    return (
        f"The command `{cmd}` is not available here: use a tool that is installed, or add it "
        "through the project's dependency manager instead of assuming it exists."
    )


def _g_timeout(m: re.Match[str], _: str) -> str:
    return (
        "The attempt timed out: look for an infinite loop, a command waiting for input, or a "
        "server or watcher that never exits; keep every command non-interactive and bounded."
    )


def _g_refused(m: re.Match[str], _: str) -> str:
    where = f" (`{m.group(1)}`)" if m.group(1) else ""
    return (
        f"A local service{where} refused the connection: start it first (or in a test "
        "fixture), check host and port, or do not depend on it."
    )


def _g_key(m: re.Match[str], _: str) -> str:
    return (
        f"The key {_quote(m.group(1), 80)} is missing where it is read: check where it should be "
        "set, or handle its absence if it is optional."
    )


def _g_index(m: re.Match[str], _: str) -> str:
    return (
        f"An index is out of range ({_quote(m.group(1), 120)}): check the length before "
        "indexing, and the off-by-one at the failing line."
    )


def _g_assert(m: re.Match[str], text: str) -> str:
    groups = m.groupdict()
    test = groups.get("test")
    message = _quote(groups.get("msg") or groups.get("msg2") or "", 200)
    if not test:
        header = re.findall(r"^_{3,} (\S+) _{3,}$", text, re.M)
        test = header[-1] if header else None
    what = f"`{message}`" if message else "an assertion"
    if test:
        return f"The test `{test}` asserts {what}; make the code satisfy it, do not edit the test."
    return f"An assertion fails: {what}; make the code satisfy it, do not edit the test."


def _g_lint(m: re.Match[str], _: str) -> str:
    return (
        f"Fix what the linter/type checker reports, e.g. `{_quote(m.group(0), 200)}`; run it "
        "again yourself before finishing."
    )


def _g_compile(m: re.Match[str], _: str) -> str:
    return f"Fix the compile error `{_quote(m.group(0), 200)}` and build again before finishing."


def _g_python_error(m: re.Match[str], _: str) -> str:
    return (
        f"Fix the {m.group(1)} at the failing line: {_quote(m.group(2), 200)}. Read the "
        "traceback's last frame in your own code first."
    )


# Checked line by line from the end of the text, in this order on each line: the first hit
# on the latest line wins, because the error a run ends with is the one that stopped it.
# The flag says whether the rules trust the guidance (False: `auto` asks the LLM).
_GUIDES: tuple[tuple[re.Pattern[str], Guide, str, bool], ...] = (
    (
        re.compile(r"\bno module named\s+['\"`]?([\w.\-]+)", re.I),
        _g_no_module,
        "a missing module",
        True,
    ),
    (
        re.compile(
            r"cannot find module ['\"]([^'\"]+)['\"]|can't resolve ['\"]([^'\"]+)['\"]", re.I
        ),
        _g_js_module,
        "a missing module",
        True,
    ),
    (
        re.compile(r"cannot import name ['\"]?(\w+)['\"]? from ['\"]?([\w.]+)", re.I),
        _g_cannot_import,
        "a broken import",
        True,
    ),
    (re.compile(r"\bcircular import\b", re.I), lambda m, t: _CIRCULAR, "a circular import", True),
    (
        re.compile(r"\b(SyntaxError|IndentationError|TabError)\b(?:\s*[:\-]\s*(.*))?"),
        _g_syntax,
        "a syntax error",
        True,
    ),
    (
        re.compile(r"\bNameError\b.*?name ['\"]?(\w+)['\"]? is not defined"),
        _g_name,
        "an undefined name",
        True,
    ),
    (
        re.compile(
            r"\bAttributeError\b.*?(?:module '([\w.]+)'|'(\w+)' object) has no attribute '(\w+)'"
        ),
        _g_attribute,
        "a missing attribute",
        True,
    ),
    (re.compile(r"\bTypeError\b\s*[:\-]\s*(.+)"), _g_type, "a type error", True),
    (
        re.compile(
            r"(?:FileNotFoundError|No such file or directory|ENOENT)\b[^'\"]*?"
            r"(?:['\"]([^'\"]+)['\"]|:\s*(\S+))?\s*$",
            re.I,
        ),
        _g_file,
        "a missing file",
        True,
    ),
    (
        re.compile(
            r"(?<![\w./-])([\w./-]+): (?:command )?not found\s*$"
            r"|'([\w.-]+)' is not recognized as an internal or external command"
            r"|executable file not found.*?\"([\w./-]+)\"",
            re.I,
        ),
        _g_command,
        "a missing command",
        True,
    ),
    (
        re.compile(
            r"\b(?:TimeoutError|TimeoutExpired|timed out|deadline exceeded)\b"
            r"|\bTimeout\s*(?:>|of\b|after\b|expired\b|exceeded\b)|\bexceeded\b.{0,20}\btimeout\b",
            re.I,
        ),
        _g_timeout,
        "a timeout",
        True,
    ),
    (
        re.compile(
            r"(?:ECONNREFUSED|connection refused)\b(?:.*?\b((?:localhost|127(?:\.\d+){3}|0\.0\.0\.0)"
            r"(?::\d+)?))?",
            re.I,
        ),
        _g_refused,
        "a refused local connection",
        True,
    ),
    (re.compile(r"\bKeyError\b\s*[:\-]?\s*(.+)"), _g_key, "a missing key", True),
    (re.compile(r"\bIndexError\b\s*[:\-]?\s*(.+)"), _g_index, "an index error", True),
    (
        re.compile(r"^FAILED\s+(?P<test>\S+::\S+)(?:\s+-\s+(?P<msg>.*))?$"),
        _g_assert,
        "a failing test",
        True,
    ),
    (re.compile(r"^FAIL:\s+(?P<test>\w+\s+\([\w.]+\))"), _g_assert, "a failing test", True),
    (
        re.compile(
            r"^E\s+(?P<msg>(?:assert|AssertionError)\b.*)$"
            r"|\bAssertionError\b\s*[:\-]?\s*(?P<msg2>.*)"
        ),
        _g_assert,
        "a failing assertion",
        True,
    ),
    (
        re.compile(r"^\S+:\d+:\d+: [A-Z]{1,3}\d{3,4}\b.*|^\S+:\d+: error: .*\[[\w-]+\]$"),
        _g_lint,
        "lint/type errors",
        True,
    ),
    (
        re.compile(r"\berror(?:\[E\d+\])?: .+|\berror TS\d+: .+"),
        _g_compile,
        "a compile error",
        True,
    ),
    (
        re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b\s*[:\-]\s*(.+)"),
        _g_python_error,
        "an exception",
        False,
    ),
)

_KEY_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b|\bFAILED\b|\berror\b|^E\s|\bpanic|\bfatal\b|\bfailed\b",
    re.I,
)
_FAILED_TEST = re.compile(r"^FAILED\s+(\S+::\S+)", re.M)


def key_error_line(text: str) -> str:
    """The line that best says what went wrong: the last error-looking line, else the last."""
    lines = [line.strip() for line in _tail(text, SCAN_CHARS).splitlines() if line.strip()]
    for line in reversed(lines):
        if _KEY_LINE.search(line) and not line.startswith("Traceback (most recent"):
            return _quote(line)
    return _quote(lines[-1]) if lines else "(no output)"


def guidance_for(text: str) -> tuple[str, str, bool]:
    """Guidance for the error `text` ends with: (guidance, what kind of error, confident)."""
    tail = _tail(text, SCAN_CHARS)
    for line in reversed([line.strip() for line in tail.splitlines()]):
        if not line:
            continue
        for pattern, guide, label, confident in _GUIDES:
            match = pattern.search(line)
            if match:
                return guide(match, tail) + _failing_tests(tail), label, confident
    return (
        f"The last attempt failed with: `{key_error_line(tail)}`. Address that error directly, "
        "then run the task's checks yourself before finishing." + _failing_tests(tail),
        "an unrecognised failure",
        False,
    )


def _failing_tests(text: str) -> str:
    tests = list(dict.fromkeys(_FAILED_TEST.findall(text)))
    if len(tests) < 2:
        return ""
    shown = ", ".join(f"`{t}`" for t in tests[:5])
    more = f" and {len(tests) - 5} more" if len(tests) > 5 else ""
    return f" Failing tests: {shown}{more}."


# ---------------------------------------------------------------------------------------------
# The rules backend.


def _rules(
    task_id: str,
    attempt_history: Sequence[str],
    attempt_count: int,
    config: LoopDetectorConfig,
) -> tuple[RetryDecision, bool]:
    """The rules' decision, and whether a guardrail (loop, external service) forced it."""
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
    latest = _tail(attempt_history[-1], SCAN_CHARS)
    loop = LoopDetector(config).check(attempt_history, task_id=task_id)

    external = _external_line(latest)
    if external is not None:
        reason = (
            f"An external service is failing (`{_quote(external, 160)}`): a retry cannot fix "
            "credentials, quotas or a remote outage"
        )
        return RetryDecision("escalate", reason, None, category="external_service"), True

    for pattern, why, category in _ESCALATIONS:
        match = pattern.search(latest)
        if match:
            reason = f"{why} (`{_quote(match.group(0), 120)}`)"
            return RetryDecision("escalate", reason, None, category=category), loop is not None

    if loop is not None:
        reason = f"{loop.message} ({loop.similarity_line})"
        return RetryDecision("escalate", reason, None), True

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


_ESCALATIONS: tuple[tuple[re.Pattern[str], str, Category | None], ...] = (
    (
        _PERMISSION,
        "The agent lacks a permission (files, system or credentials) it cannot grant itself",
        None,
    ),
    (
        _CLARIFICATION,
        "The agent needs clarification: the requirements are unclear to it",
        "ambiguous_requirements",
    ),
    (
        _DESIGN,
        "A design/architecture problem, not a coding bug: a person has to decide",
        "ambiguous_requirements",
    ),
)


def rules_decision(
    task_id: str,
    task_title: str,
    attempt_history: Sequence[str],
    attempt_count: int,
    *,
    config: LoopDetectorConfig | None = None,
) -> RetryDecision:
    """The deterministic decision (offline, no LLM); `Brain(backend="rules")` returns this."""
    del task_title  # the rules judge the errors, not the wording of the task
    decision, _ = _rules(task_id, attempt_history, attempt_count, config or LoopDetectorConfig())
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
    ) -> RetryDecision:
        """Decide whether to retry a failed task or escalate to human.

        Returns guidance_for_retry when retrying to help the next attempt.
        """
        rules, guarded = _rules(task_id, attempt_history, attempt_count, self.config)
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
                f"Attempt {i + 1}: {_tail(h, PROMPT_ENTRY_CHARS)}"
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
                _quote(str(exc), 200),
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
