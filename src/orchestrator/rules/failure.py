"""Reading a failure text: normalise it, find the line that says what went wrong, and name the
failing tests and gates.

One definition for every reader — the loop detector compares normalised texts and their key
lines, the brain quotes the key line in its guidance, the consultant groups attempts by it — so
they never disagree about what an attempt's error was.
"""

from __future__ import annotations

import re

__all__ = [
    "TAIL_CHARS",
    "compiler_errors",
    "error_signature",
    "failing_gates",
    "failing_names",
    "failing_test_ids",
    "failing_tests",
    "key_error_line",
    "key_lines",
    "last_match",
    "normalise_error",
    "normalised_tail",
    "signature_of_key_lines",
]


def last_match(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of RX in TEXT (None if none): outputs end on what decides them."""
    last = None
    for last in rx.finditer(text):  # noqa: B007 - only the last one is wanted
        pass
    return last


TAIL_CHARS = 8_192
"""Characters of *normalised* text compared or searched (about the last 100 log lines)."""

_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"

# Order matters: colour codes first (they split tokens), temp paths before line numbers
# (`/tmp/x/app.py:3:1`), timestamps before times and durations, UUIDs before hashes.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"), ""),
    (re.compile(r"\r(?!\n)"), "\n"),
    # the box a CLI draws around a tool's output (Gemini CLI's `│ FAIL … │`)
    (re.compile(r"^[ \t]*│[ \t]?|[ \t]*│[ \t]*$", re.M), ""),
    (
        re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
        "<uuid>",
    ),
    # Temp locations, keeping what follows the per-run random directory.
    (
        re.compile(
            r"(?:/private)?/var/folders/[\w.-]+/[\w.-]+/T/(?:pytest-of-[^/\s]+/pytest-\d+|[^/\s'\")]+)"
            r"|/(?:tmp|dev/shm)/(?:pytest-of-[^/\s]+/pytest-\d+|[^/\s'\")]+)"
            r"|pytest-of-[^/\\\s]+[/\\]pytest-\d+"
            r"|\\AppData\\Local\\Temp\\[^\\\s'\")]+",
            re.IGNORECASE,
        ),
        "<tmp>",
    ),
    (re.compile(r"\btmp[a-z0-9_]{6,}\b"), "<tmp>"),
    # Timestamps: ISO 8601 / RFC 3339, then syslog dates, then bare clock times.
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        ),
        "<ts>",
    ),
    (re.compile(rf"\b(?:{_MONTHS})\s+\d{{1,2}}\b"), "<date>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (re.compile(r"\b1[5-9]\d{8}(?:\.\d+)?\b"), "<epoch>"),
    # Addresses, network ports, long hex hashes (need a digit and a letter: not English words).
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x<addr>"),
    (re.compile(r"\b((?:\d{1,3}\.){3}\d{1,3}|localhost):\d{2,5}\b"), r"\1:<port>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"), "<hash>"),
    (re.compile(r"\b(?=[0-9A-F]*\d)(?=[0-9A-F]*[A-F])[0-9A-F]{16,}\b"), "<hash>"),
    # Line and column numbers.
    (re.compile(r"\b(line|lineno|ln|col|column)([ =:]+)\d+", re.IGNORECASE), r"\1\2<n>"),
    (re.compile(r"(\.[A-Za-z]\w*)(?::\d+){1,2}\b"), r"\1:<n>"),
    (re.compile(r"(\.[A-Za-z]\w*)\(\d+(?:,\s*\d+)?\)"), r"\1(<n>)"),
    (re.compile(r":\d+:"), ":<n>:"),
    # Process ids.
    (re.compile(r"\b(pid|process|thread|tid)([ =:#]+)\d+", re.IGNORECASE), r"\1\2<n>"),
    (re.compile(r"\[\d{2,7}\]"), "[<n>]"),
    # Durations: 0.53s, 12ms, 1.2 seconds, 0m1.234s.
    (re.compile(r"\b\d+m\d+(?:\.\d+)?s\b"), "<dur>"),
    (
        re.compile(
            r"\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b",
            re.IGNORECASE,
        ),
        "<dur>",
    ),
    # Whitespace last: one space between words, no blank lines, no indentation.
    (re.compile(r"[^\S\n]+"), " "),
    (re.compile(r" ?\n[\s]*"), "\n"),
)


def normalise_error(text: str, *, max_chars: int | None = None) -> str:
    """Strip what varies between two runs of the same failure, so that they compare equal.

    `max_chars` keeps only the raw text's last `max_chars` characters (from a line start)
    before normalising; by default the whole text is normalised.

    >>> normalise_error("2024-05-01 12:00:03 [4242] app.py:42: TypeError in 0.53s at 0x7f3a")
    '<ts> [<n>] app.py:<n>: TypeError in <dur> at 0x<addr>'
    """
    if max_chars is not None and len(text) > max_chars:
        text = _from_line_start(text[-max_chars:])
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text.strip()


def _from_line_start(chunk: str) -> str:
    """Drop the partial first line of a tail cut, unless that would drop nearly everything."""
    cut = chunk.find("\n")
    return chunk[cut + 1 :] if 0 <= cut < len(chunk) // 2 else chunk


def normalised_tail(text: str, tail_chars: int = TAIL_CHARS) -> str:
    """The last `tail_chars` characters of the normalised text (megabyte logs stay cheap: only
    four times that much raw text is normalised; runners put the failure at the end)."""
    normalised = normalise_error(text, max_chars=4 * tail_chars)
    if len(normalised) > tail_chars:
        normalised = _from_line_start(normalised[-tail_chars:])
    return normalised


# -- key lines ------------------------------------------------------------------------------------
# A line that states what went wrong, as opposed to context (commands, frames, source lines).
_KEY_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b|\bFAILED\b|\bFAIL\b|\berror\b"
    r"|^E |\bpanic(?:ked)?\b|\bfatal\b|\bassert|\bcannot\b|\bcould not\b|\bnot found\b"
    r"|\bTraceback\b",
    re.IGNORECASE | re.MULTILINE,
)
_BOILERPLATE = re.compile(r"^Traceback \(most recent call last\):$|^During handling of", re.I)
_ERROR_NAME = re.compile(
    r"\b([A-Z]\w*(?:Error|Exception))\b|\b(E\d{3,4}|TS\d{4}|[A-Z]{1,3}\d{3})\b"
)


def key_lines(normalised: str, keep: int = 20) -> str:
    """The last `keep` lines of a normalised text that say what went wrong (the loop detector
    weighs these more than the shared context around them)."""
    lines = [
        line
        for line in normalised.split("\n")
        if _KEY_LINE.search(line) and not _BOILERPLATE.search(line)
    ]
    return "\n".join(lines[-keep:])


def error_signature(text: str, tail_chars: int = TAIL_CHARS) -> str | None:
    """The name of the last error class or code in `text` (`TypeError`, `E501`, `TS2345`).

    >>> error_signature("src/a.py:1:1: E501 line too long")
    'E501'
    """
    last: str | None = None
    for match in _ERROR_NAME.finditer(normalised_tail(text, tail_chars)):
        last = match.group(1) or match.group(2)
    return last


def signature_of_key_lines(key: str) -> str | None:
    """`error_signature` of text that is already normalised key lines."""
    last: str | None = None
    for match in _ERROR_NAME.finditer(key):
        last = match.group(1) or match.group(2)
    return last


_PYTEST_E = re.compile(r"^E\s{2,}(\S.*)$")
_EXCEPTION = re.compile(r"^\s*((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure))\b(:.*)?$")
_SUMMARY = re.compile(r"^(?:FAILED|ERROR)\s+(\S+?)(?:::(\S+))?(?:\s+-\s+(.*))?$")
_ERROR_WORD = re.compile(
    r"^\s*(?:error(?:\[\w+\])?|fatal|panic|FAIL)\b[:\s]|\b(?:TS\d{4}|E\d{3,4})\b|\berror:",
    re.IGNORECASE,
)
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_SCAN_CHARS = 65_536
_TAIL_LINES = 400


def _clean(line: str, limit: int) -> str:
    line = " ".join(line.strip().split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def key_error_line(text: str, limit: int = 200) -> str | None:
    """The line of an error text that says what went wrong: pytest's first `E` line (the failing
    assertion or the exception), else the last exception line, the last summary's message, the
    last error-looking line, the last line; None for an empty text.

    >>> key_error_line("tests/test_a.py:3: in test_x\\nE       assert 1 == 2\\nFAILED t.py::x")
    'assert 1 == 2'
    """
    tail = ANSI.sub("", text[-_SCAN_CHARS:])
    lines = [ln for ln in tail.splitlines()[-_TAIL_LINES:] if ln.strip()]
    if not lines:
        return None
    for ln in lines:  # pytest's first `E` line is the assertion or the exception itself
        m = _PYTEST_E.match(ln)
        if m and not m.group(1).startswith(("+", "-", "?", "At index", "Full diff", "Use -v")):
            return _clean(m.group(1), limit)
    for ln in reversed(lines):
        if _EXCEPTION.match(ln):
            return _clean(ln, limit)
    for ln in reversed(lines):
        m = _SUMMARY.match(ln.strip())
        if m and m.group(3):
            return _clean(m.group(3), limit)
    for ln in reversed(lines):
        if _ERROR_WORD.search(ln) and not ln.startswith("Gate `"):
            return _clean(ln, limit)
    last = lines[-1]
    return None if last.startswith("Gate `") else _clean(last, limit)


# -- what a test expected ---------------------------------------------------------------------
# A line of a test's expectation: the assertion, what was expected and what came instead (a
# diff of the two), pytest's display of a variable, a test's title (passed, or jest's `●` over
# a failure). A 401 or "permission denied" there is the behaviour under test, not trouble of the
# environment the run is in.
_EXPECTATION = re.compile(
    r"\bexpect\(|\bexpected\s*[:=<(]|^\s*(?:Expected|Actual|Received)\b|\bexpected\s+['\"\d<\[{]|"
    r"\bassert\w*\b|\bto(?:Equal|Be|Match|Have|Contain|Throw)\w*\b|"
    r"^E\s+(?:[\w.\[\]'\"]+ = |where |\+ |- |[^\n]*\s(?:!=|==)\s)|^\s*(?:✓|✔|√|●)\s|"
    # Go's `x_test.go:77: got 500, want 401`, unittest's `FAIL: test_viewer_gets_permission_denied`
    r"^\s*\w+_test\.go:\d+:|\bgot\b[^\n]{0,60}\bwant\b|^(?:FAIL|ERROR): test\w*|^_{3,} \S*test\w*",
    re.I | re.M,
)
_DIFF_ROW = re.compile(r"^\s*[-+]")


def without_expectations(text: str) -> str:
    """TEXT with the lines of tests' expectations blanked (kept as empty lines, so line
    neighbourhoods stay as they were): an expectation line, and the `-`/`+` rows of the diff of
    expected and received right below it."""
    kept: list[str] = []
    in_diff = False
    for line in text.split("\n"):
        if _EXPECTATION.search(line):
            kept.append("")
            in_diff = True
        elif in_diff and (_DIFF_ROW.match(line) or not line.strip() or line.startswith("    ")):
            kept.append("")
        else:
            kept.append(line)
            in_diff = False
    return "\n".join(kept)


# -- failing tests and gates ----------------------------------------------------------------------
_GATE = re.compile(r"^Gate `(.+?)` failed \((.+?)\)", re.MULTILINE)
_FAILED_NODE = re.compile(r"^(?:FAILED|ERROR)\s+(\S+?\.py)::(\S+)", re.MULTILINE)
_FAILED_ID = re.compile(r"^FAILED\s+(\S+::\S+)", re.MULTILINE)
_JS_FAIL = re.compile(r"^\s*FAIL\s+(\S+\.(?:[cm]?[jt]sx?))\b", re.MULTILINE)


def failing_gates(text: str) -> list[str]:
    """Gate commands reported as failed in an error summary (`Gate `cmd` failed (exit 1):`)."""
    return list(dict.fromkeys(m.group(1) for m in _GATE.finditer(text)))


def failing_tests(text: str) -> list[str]:
    """Test files named by the runner's failure lines (pytest `FAILED x::y`, jest/vitest `FAIL x`)."""
    found = [m.group(1) for m in _FAILED_NODE.finditer(text)]
    found += [m.group(1) for m in _JS_FAIL.finditer(text)]
    return list(dict.fromkeys(found))


def failing_test_ids(text: str) -> list[str]:
    """The pytest node ids of `FAILED file::test` summary lines, in order, once each."""
    return list(dict.fromkeys(_FAILED_ID.findall(text)))


# The test a runner names as failing in normalised text (`<dur>` for a duration): pytest
# `FAILED file::test - msg`, jest / vitest `FAIL file` and `● suite › test`, playwright
# `1) [chromium] › file:<n> › test` or `✘ 7 [chromium] › file:<n> › test`, `✕ test`, Go `--- FAIL:
# TestX`, .NET `Failed Ns.Class.Test [<dur>]`, Rust `test mod::test ... FAILED`, RSpec `rspec
# ./spec/x_spec.rb:<n>`, Maven Surefire `[ERROR] pkg.Class.test -- Time elapsed: … <<< FAILURE!`.
_FAILING_NAME = re.compile(
    r"^\s*(?:FAILED (\S+::\S+)(?: - .*)?|FAIL (\S.*)|\d+\) \[[\w ]+\] › (.+?)|● (.+?)|"
    r"(?:✘|✕|×) \d+ \[[\w ]+\] › (.+?)|(?:✕|×) (.+?)|"
    r"--- FAIL: (\S+)|Failed (\S+) \[.*|test (\S+) \.\.\. FAILED|rspec (\./\S+?)(?: #.*)?|"
    r"\[ERROR\] ([\w$]+(?:\.[\w$]+)+) -- Time elapsed.*)"
    r"(?: \(<dur>\))?\s*$",
    re.M,
)
_TEST_FILE = re.compile(r"^\S+\.\w{1,4}(?::<n>)?(?: <dur>)?$|^\S+/\S+ <dur>$")
# RSpec and Mocha number their failures: `  1) Subscription#renew! charges …` over the error
_NUMBERED_FAILURE = re.compile(
    r"^\s*\d+\) (\S[^\n]*)\n\s*(?:Failure/Error:|Failed asserting\b|\w*Error\b)", re.M
)


def failing_names(normalised: str) -> frozenset[str]:
    """The tests the runner names as failing, in any of the formats above: which tests fail, for
    telling one failure from another (loop detection). Where tests are named one by one, those
    names; the files or packages they are in only when nothing finer is named (two runs failing
    other tests in the same file are other failures)."""
    names = {next(g for g in m.groups() if g).strip() for m in _FAILING_NAME.finditer(normalised)}
    names |= {m.group(1).strip() for m in _NUMBERED_FAILURE.finditer(normalised)}
    finer = {n for n in names if not _TEST_FILE.match(n)}
    return frozenset(finer or names)


_SOURCE_AT = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:rs|pyi?|[cm]?[jt]sx?|go|java|kt|swift|cs|rb|php|"
    r"c|cc|cpp|h|hpp|scala|exs?|dart|vue))(?::\d+|\(\d+,)"
)
_ERROR_CODE = re.compile(
    r"\berror\s*\[?\s*((?:E|TS|CS|FS|C)\d{4})\b|\berror:.*\[([a-z]+(?:-[a-z]+)+)\]\s*$", re.I | re.M
)
_ERROR_COUNT = re.compile(
    r"^Found (\d+) errors? in \d+ files?\b|\bdue to (\d+) previous errors?\b|"
    r"^(\d+) errors? generated\b",
    re.M,
)


def compiler_errors(text: str) -> tuple[frozenset[str], frozenset[str], int | None]:
    """Where a compiler or type checker points in TEXT (raw, its last 4 000 characters): the
    source files it names with a line (`src/cache.rs:47`, `Repo.cs(12,5)`), the error codes it
    gives (rustc `error[E0502]`, tsc `error TS2344`, C# `error CS0103`, mypy's `[arg-type]`),
    and its error count (`Found 9 errors in 2 files`, `due to 3 previous errors`), if any."""
    text = text[-4000:]
    files = frozenset(m.group(1).rsplit("/", 1)[-1] for m in _SOURCE_AT.finditer(text))
    codes = frozenset((m.group(1) or m.group(2)).upper() for m in _ERROR_CODE.finditer(text))
    counts = [next(g for g in m.groups() if g) for m in _ERROR_COUNT.finditer(text)]
    return files, codes, int(counts[-1]) if counts else None


DOC_ENTRY = r"^\W{0,3}#{1,6}\s|\b(?:Symptom|Action)s?:"
"""A heading of a document about errors ("## Symptom: `API Error: 529`") or an entry of a runbook
("… billing errors. Action: page the owner"): errors written about, not one that happened."""
QUOTED_MESSAGE_ITEM = r"(?:[-*•]|\d{1,2}[.)])\s+`[^`\n]+`\s*(?:\([^)\n]{0,40}\)\s*)?(?:→|->|—|–)\s"
"""An entry of a list of quoted messages with their fixes ("- `FATAL: quota exceeded` → ask an
admin", "1. `429 RESOURCE_EXHAUSTED` (render quota) — explains the backoff"): documentation of
errors, not one that happened."""
FINAL_FAILURE = re.compile(
    r"\b(?:encountered an? (?:error|issue|problem)|something went wrong|"
    r"(?:request|execution|task|workflow|run|action|conversation|session|process) (?:has been |was )?"
    r"(?:halted|aborted|failed|cancell?ed|interrupted|terminated)|loop (?:was )?detected|"
    r"stuck in a loop|failed to (?:create|return|apply|generate|complete|produce|parse)|"
    r"(?:Runtime|Agent|Tool|Command)\w*(?:Timeout|Error)\b|timeout of \d+|"
    r"out of memory|heap limit|FatalProcessOutOfMemory|\bFATAL ERROR\b|Model call failed|"
    r"did not use a tool|is malformed|(?:don't|do not|does not) match anything|"
    r"AgentState\.ERROR|Invalid API Response|empty or unparsable|without value for required|"
    r"(?:Roo|Cline|Kilo|Kilo Code) (?:is having trouble|encountered a problem))\b|"
    r"\bfailure in the model['’]s thought process\b|"
    # GSD's plan checker sending the plans back: "Returning to planner for revision (iteration 1/3)"
    r"\bReturning to planner for revision\b|"
    # a loop runner's own verdict on the agent's run: "execution timed out after 15 minutes"
    r"\btimed out after \d+\s*(?:ms|s|secs?|seconds?|m|mins?|minutes?|h|hours?)\b|"
    r"\bcounting (?:it )?as (?:a )?failed\b|"
    # Aider: the edits it applied left every tracked file as it was
    r"\bNo changes made to git tracked files\b|"
    # Roo's banners in Chinese (no word boundary between CJK characters)
    r"响应不完整|未使用任何工具|模型思维过程失败|无法正确使用工具|"
    r"(?:^|\n)\s*(?:\[ERROR\]|ERROR:|x Error\b|✗|✕|■|</?error(?:_details)?>)",
    re.I,
)
"""A harness's or a tool's failure banner where the output ends (a crash, a halted loop, a
malformed tool call, an agent that stopped with an error state): the run did not finish,
whatever the agent said earlier."""


WHICH_QUESTION = re.compile(r"^\W*(?:so\s+|and\s+|now\s+)?(?:which|welche\w*)\b[^?]*\?\s*$", re.I)
CLI_PROMPT = re.compile(r"\?\s*\(Y\)es/\(N\)o[^\n]*\[\w+\]:\s*$")
"""A CLI's yes/no prompt left unanswered at the very end (`Add file to the chat? (Y)es/(N)o [Yes]:`)."""


PROPOSED = re.compile(r"\b(?:this|these|it|them|now(?! that)|start|apply|implement)\b", re.I)
"""What the agent just proposed ("Want me to set this up now?", "Should I apply this change?")."""
LABELLED_QUESTION = re.compile(r"\W*(?:Q\d+|Question \d+|#+)\s*[:.)]?\s", re.I)
"""A question as a label or heading ("Q2: De novo or pre-existing?") that the text answers."""


FINAL_LINES = 6


def final_failure(lines: list[str], ok: re.Pattern[str]) -> str | None:
    """A failure banner in the last few non-blank lines, in any zone (harnesses print them
    outside prose), unless the very end reports success (`ok` matches the last line)."""
    last = [ln for ln in lines if ln.strip()][-FINAL_LINES:]
    m = FINAL_FAILURE.search("\n".join(last))
    if m is None or (ok.search(last[-1]) if last else False):
        return None
    return next((ln.strip() for ln in last if FINAL_FAILURE.search(ln)), m.group(0))


INTENT = re.compile(
    r"\b(?:I['’]ll|I will|I['’]m (?:going to|continuing|starting|now going)|I am (?:going to|continuing)|"
    r"Let me|Next,? I(?:['’]ll| will)|Now I(?:['’]ll| will)|I['’]m about to|"
    # the same in the languages agents answer in: pt, es, de, fr
    r"Vou|Irei|Voy a|Ich werde|Ich mache (?:jetzt|mich)|Je vais)\b[^.!?]*[.!:]?\s*$",
    re.I,
)
"""The last sentence is an intention, not a result: the turn ended before the work it announces."""


PENDING_TOOL = re.compile(
    r"\s*</(?:use_mcp_tool|execute_command|write_to_file|apply_diff|replace_in_file|insert_content|"
    r"search_and_replace|browser_action|access_mcp_resource|new_task|switch_mode)>\s*$"
)
"""Roo Code / Cline output ending on a tool call with no result after it: the call waits for
the user's approval (attempt_completion and ask_followup_question are read elsewhere)."""
