"""Error → what to tell the agent: one table read by the brain (full guidance built from the
error line itself) and by the consultant (one short hint per kind of error).

Each entry has the line pattern the brain searches from the end of a failure text, the guidance
it builds from the match, a label, whether the rules trust it (False: the brain's `auto` backend
asks an LLM), and — for the kinds the consultant advises on — the error names it looks for in
the attempts' key error line and its hint.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from orchestrator.rules.failure import ANSI, failing_test_ids, key_error_line

__all__ = ["HINTS", "SCAN_CHARS", "Hint", "consultant_hint", "guidance_for", "quote", "tail"]

SCAN_CHARS = 16_384
"""Only the tail of an attempt's failure text is scanned: that is where errors end up."""


def tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text` without colour codes (`…` marks a cut)."""
    text = ANSI.sub("", text[-2 * limit :])
    return text if len(text) <= limit else "…" + text[-limit:]


def quote(text: str, limit: int = 240) -> str:
    """`text` on one line, cut to `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


Guide = Callable[["re.Match[str]", str], str]
"""Guidance from the match on the error's line and the whole (tail of the) text."""


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
        f"Fix the {m.group(1)}{where} ({quote(m.group(2) or 'invalid syntax', 120)}); compile "
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
        f"Check the types at the failing call: {quote(m.group(1), 200)}. Convert the value, or "
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
        f"The key {quote(m.group(1), 80)} is missing where it is read: check where it should be "
        "set, or handle its absence if it is optional."
    )


def _g_index(m: re.Match[str], _: str) -> str:
    return (
        f"An index is out of range ({quote(m.group(1), 120)}): check the length before "
        "indexing, and the off-by-one at the failing line."
    )


def _g_assert(m: re.Match[str], text: str) -> str:
    groups = m.groupdict()
    test = groups.get("test")
    message = quote(groups.get("msg") or groups.get("msg2") or "", 200)
    if not test:
        header = re.findall(r"^_{3,} (\S+) _{3,}$", text, re.M)
        test = header[-1] if header else None
    what = f"`{message}`" if message else "an assertion"
    if test:
        return f"The test `{test}` asserts {what}; make the code satisfy it, do not edit the test."
    return f"An assertion fails: {what}; make the code satisfy it, do not edit the test."


def _g_lint(m: re.Match[str], _: str) -> str:
    return (
        f"Fix what the linter/type checker reports, e.g. `{quote(m.group(0), 200)}`; run it "
        "again yourself before finishing."
    )


def _g_compile(m: re.Match[str], _: str) -> str:
    return f"Fix the compile error `{quote(m.group(0), 200)}` and build again before finishing."


def _g_python_error(m: re.Match[str], _: str) -> str:
    return (
        f"Fix the {m.group(1)} at the failing line: {quote(m.group(2), 200)}. Read the "
        "traceback's last frame in your own code first."
    )


@dataclass(frozen=True)
class Hint:
    pattern: re.Pattern[str]
    """Searched in one line of the failure text."""
    guide: Guide
    label: str
    """What kind of error, for the brain's reason (`a missing module`)."""
    confident: bool
    names: re.Pattern[str] | None = None
    """Searched in the consultant's error signature and key line (`ModuleNotFoundError`)."""
    hint: str | None = None
    """The consultant's hint for this kind of error."""


_IMPORT_HINT = (
    "Fix the import first: check the module path and that the module exists in this "
    "project or is a declared dependency."
)

# Checked line by line from the end of the text, in this order on each line: the first hit
# on the latest line wins, because the error a run ends with is the one that stopped it.
HINTS: tuple[Hint, ...] = (
    Hint(
        re.compile(r"\bno module named\s+['\"`]?([\w.\-]+)", re.I),
        _g_no_module,
        "a missing module",
        True,
        names=re.compile(r"ModuleNotFoundError|ImportError|Cannot find module"),
        hint=_IMPORT_HINT,
    ),
    Hint(
        re.compile(
            r"cannot find module ['\"]([^'\"]+)['\"]|can't resolve ['\"]([^'\"]+)['\"]", re.I
        ),
        _g_js_module,
        "a missing module",
        True,
    ),
    Hint(
        re.compile(r"cannot import name ['\"]?(\w+)['\"]? from ['\"]?([\w.]+)", re.I),
        _g_cannot_import,
        "a broken import",
        True,
    ),
    Hint(
        re.compile(r"\bcircular import\b", re.I), lambda m, t: _CIRCULAR, "a circular import", True
    ),
    Hint(
        re.compile(r"\b(SyntaxError|IndentationError|TabError)\b(?:\s*[:\-]\s*(.*))?"),
        _g_syntax,
        "a syntax error",
        True,
        names=re.compile(r"SyntaxError|IndentationError"),
        hint=(
            "The code does not parse: run the file through the interpreter or compiler before "
            "running the tests."
        ),
    ),
    Hint(
        re.compile(r"\bNameError\b.*?name ['\"]?(\w+)['\"]? is not defined"),
        _g_name,
        "an undefined name",
        True,
        names=re.compile(r"NameError|is not defined"),
        hint="A name is used but never defined or imported: check spelling and imports.",
    ),
    Hint(
        re.compile(
            r"\bAttributeError\b.*?(?:module '([\w.]+)'|'(\w+)' object) has no attribute '(\w+)'"
        ),
        _g_attribute,
        "a missing attribute",
        True,
        names=re.compile(r"AttributeError"),
        hint=(
            "An object lacks the attribute the code expects: check the real API (read its "
            "source or docs) instead of guessing."
        ),
    ),
    Hint(
        re.compile(r"\bTypeError\b\s*[:\-]\s*(.+)"),
        _g_type,
        "a type error",
        True,
        names=re.compile(r"TypeError"),
        hint="Check the signatures: a function is called with arguments or types it does not take.",
    ),
    Hint(
        re.compile(
            r"(?:FileNotFoundError|No such file or directory|ENOENT)\b[^'\"]*?"
            r"(?:['\"]([^'\"]+)['\"]|:\s*(\S+))?\s*$",
            re.I,
        ),
        _g_file,
        "a missing file",
        True,
        names=re.compile(r"FileNotFoundError|No such file"),
        hint=(
            "A file the code or a test needs does not exist where it is looked for: check the "
            "path relative to the working directory."
        ),
    ),
    Hint(
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
    Hint(
        re.compile(
            r"\b(?:TimeoutError|TimeoutExpired|timed out|deadline exceeded)\b"
            r"|\bTimeout\s*(?:>|of\b|after\b|expired\b|exceeded\b)|\bexceeded\b.{0,20}\btimeout\b",
            re.I,
        ),
        _g_timeout,
        "a timeout",
        True,
        names=re.compile(r"timed out|TimeoutError|Timeout"),
        hint=(
            "The command timed out: look for an infinite loop, a blocking call or input being "
            "waited for."
        ),
    ),
    Hint(
        re.compile(
            r"(?:ECONNREFUSED|connection refused)\b(?:.*?\b((?:localhost|127(?:\.\d+){3}|0\.0\.0\.0)"
            r"(?::\d+)?))?",
            re.I,
        ),
        _g_refused,
        "a refused local connection",
        True,
    ),
    Hint(re.compile(r"\bKeyError\b\s*[:\-]?\s*(.+)"), _g_key, "a missing key", True),
    Hint(re.compile(r"\bIndexError\b\s*[:\-]?\s*(.+)"), _g_index, "an index error", True),
    Hint(
        re.compile(r"^FAILED\s+(?P<test>\S+::\S+)(?:\s+-\s+(?P<msg>.*))?$"),
        _g_assert,
        "a failing test",
        True,
    ),
    Hint(re.compile(r"^FAIL:\s+(?P<test>\w+\s+\([\w.]+\))"), _g_assert, "a failing test", True),
    Hint(
        re.compile(
            r"^E\s+(?P<msg>(?:assert|AssertionError)\b.*)$"
            r"|\bAssertionError\b\s*[:\-]?\s*(?P<msg2>.*)"
        ),
        _g_assert,
        "a failing assertion",
        True,
    ),
    Hint(
        re.compile(r"^\S+:\d+:\d+: [A-Z]{1,3}\d{3,4}\b.*|^\S+:\d+: error: .*\[[\w-]+\]$"),
        _g_lint,
        "lint/type errors",
        True,
        names=re.compile(r"\b(?:E\d{3}|F\d{3}|W\d{3}|TS\d{4})\b"),
        hint="Run the linter or type checker yourself and fix every report before finishing.",
    ),
    Hint(
        re.compile(r"\berror(?:\[E\d+\])?: .+|\berror TS\d+: .+"),
        _g_compile,
        "a compile error",
        True,
    ),
    Hint(
        re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b\s*[:\-]\s*(.+)"),
        _g_python_error,
        "an exception",
        False,
    ),
)


def guidance_for(text: str) -> tuple[str, str, bool]:
    """Guidance for the error `text` ends with: (guidance, what kind of error, confident)."""
    end = tail(text, SCAN_CHARS)
    for line in reversed([line.strip() for line in end.splitlines()]):
        if not line:
            continue
        for entry in HINTS:
            match = entry.pattern.search(line)
            if match:
                return entry.guide(match, end) + _failing_tests(end), entry.label, entry.confident
    key = quote(key_error_line(end) or "(no output)")
    return (
        f"The last attempt failed with: `{key}`. Address that error directly, "
        "then run the task's checks yourself before finishing." + _failing_tests(end),
        "an unrecognised failure",
        False,
    )


def consultant_hint(signature: str | None, key_line: str | None) -> str | None:
    """The consultant's hint for the kind of error its attempts show, or None.

    >>> consultant_hint("NameError", None)
    'A name is used but never defined or imported: check spelling and imports.'
    """
    text = f"{signature or ''} {key_line or ''}"
    for entry in HINTS:
        if entry.names is not None and entry.hint and entry.names.search(text):
            return entry.hint
    return None


def _failing_tests(text: str) -> str:
    tests = failing_test_ids(text)
    if len(tests) < 2:
        return ""
    shown = ", ".join(f"`{t}`" for t in tests[:5])
    more = f" and {len(tests) - 5} more" if len(tests) > 5 else ""
    return f" Failing tests: {shown}{more}."
