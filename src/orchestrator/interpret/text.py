"""Splitting an agent's output into what the agent *said* and what its tools *printed*.

Every later layer needs that split: a question mark inside a code block is not a question, a
traceback from an earlier run is not the verdict, and the agent's last paragraph matters most.
Each line gets a zone:

- `prose`: the agent's own words (Claude Code text, `codex` messages, Gemini `✦` lines);
- `fence`: inside a ``` block (with its language, so a ```sql file is not a ```bash command);
- `output`: tool output outside fences (codex `exec` blocks, `$ cmd` runs, Gemini tool boxes,
  diffs, tracebacks, timestamped log lines, Aider status lines), and quoted lines: a line that
  starts with `>` is not the agent's own voice (Aider's `> ` tool lines, Claude Code's `> ` user
  prompt, a quoted message or help text). When (nearly) all of the text is quoted (a whole
  transcript pasted as a quote), the quote marks are dropped and the text read as usual.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Literal

Zone = Literal["prose", "fence", "output"]

SHELL_LANGS = frozenset(
    {
        "",
        "bash",
        "sh",
        "shell",
        "zsh",
        "console",
        "shell-session",
        "terminal",
        "cmd",
        "powershell",
        "ps1",
        "fish",
        "text",
        "txt",
        "plaintext",
        "output",
        "log",
    }
)
SQL_LANGS = frozenset({"sql", "psql", "mysql", "pgsql", "plpgsql", "sqlite"})


@dataclass(frozen=True)
class Line:
    no: int
    text: str
    zone: Zone
    lang: str = ""
    """Fence language (lower case) for `fence` lines."""
    final: bool = True
    """False for prose that cannot be the agent's last word (codex `thinking`, prose before the
    last `codex` message)."""


_CODEX_HEADER = re.compile(r"^\[\d{4}-\d\d-\d\dT[\d:.]+Z?\]\s+(\S+)")
_BOX = re.compile(r"^\s*[╭│╰┌└├]")
_GEMINI_SAY = re.compile(r"^\s*✦")
_FENCE = re.compile(r"^\s*(?:[│|]\s*)?(`{3,}|~{3,})\s*([\w+.#-]*)")
_DIFF_START = re.compile(r"^(diff --git |--- a/|\+\+\+ b/|@@ -\d)")
_DIFF_LINE = re.compile(r"^([+\- \\]|@@|index [0-9a-f]|new file mode|deleted file mode|diff --git)")
# The indent is taken once (`\s*+`; `(?<=\s)` where one is required): a `\s*` in front of
# each alternative would rescan a long indent at every position (quadratic).
_LOG_LINE = re.compile(
    r"^\s*+(\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[\d\d:\d\d:\d\d\]|npm (WARN|ERR!|notice)|ELIFECYCLE|"
    r"Compiling \S+ v\d|Updating |Downloading |Collecting |Installing |Requirement already|"
    r"[\w/.-]+\.\w+::\S+ (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)|[.FEsxX]{8,}\s*(\[\s*\d+%\])?$|"
    r"(PASS|FAIL|ok|FAIL:|---) [\w./-]+|=+ .* =+$|_{5,} .* _{5,}$|(warning|error)(\[\w+\])?: |"
    r"(?<=\s)--> \S+:\d+|\d+\s+\|\s|(?<=\s)\|\s*$|(?<=\s)\|\s+[\^~-]+|"
    # test runners' and checkers' summaries and diagnostics, printed without a fence
    r"(?:Tests|Test Suites|Test Files|Snapshots):\s+\d+ |✖ \d+ problems? \(|"
    r"\d+ errors?, \d+ warnings?\b|[\w./\\-]+\.\w+[:(]\d+[:,]\d+\)?:? -? ?(?:error|warning)\b|"
    # pytest's short summary and final count, printed without a fence
    r"(?:FAILED|ERROR) [\w/.-]+\.\w+::\S|\d+ (?:failed|passed|errors?)(?:, \d+ \w+)* in [\d.]+s\b|"
    # a program's log line: a level or a source tag before the message (`BROWSER LOG: …`)
    r"(?:[A-Z]+ )?LOG: |\[?(?:INFO|DEBUG|TRACE|WARN|WARNING)\]?:? )"
)
_AIDER_STATUS = re.compile(
    r"^(Tokens: [\d.]+k? sent|Applied edit to |Commit [0-9a-f]{7} |Added .* to the chat|"
    r"Aider v\d|Main model:|Weak model:|Editor model:|Git repo:|Repo-map:|"
    # aider's `Running pytest -q`, not the agent's "Running this on production removes …"
    r"Running:? (?!(?:this|that|these|those|it|them|the|a|an|on|in|against|every|all)\b)|"
    r"Add [\d.]+k? tokens of command output|.*\(Y\)es/\(N\)o|# \d+ SEARCH/REPLACE block|"
    r"Only \d+ reflections allowed|Use /help|Use /run|Use /drop)"
)
_TRACEBACK = re.compile(
    r"^\s*(Traceback \(most recent call last\)|Fatal Python error|"
    r"thread '.*' panicked at|node:internal|panic: )"
)
_TOOL_CALL = re.compile(
    r"^\s*[⏺●•]\s+(?:Ran\s+\S|(?:Bash|Read|Update|Edit|Write|MultiEdit|Search|Grep|Glob|List|Task|"
    r"WebFetch|Fetch|Shell|NotebookEdit)\()"
)
_AGENT_SAYS = re.compile(r"^[⏺●•]\s+(?!Ran\s)\S")
_PROMPT = re.compile(r"^\s*(?:\$|❯|>\s*\$|PS [^>]*>)\s+\S")
_ERROR_LINE = re.compile(r"^[\w.]*(Error|Exception)(\s*\[[\w-]+\])?:\s")
_ERRORISH = re.compile(
    r"^(?:[\w.]*(?:Error|Exception|Warning)\b|E\s{2,}|ERROR\b|FAILED\b|FAIL\b|\d+ (?:passed|failed|errors?)\b)"
)
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{6}")
_CJK_CLAUSE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af，、]{12}")


def _cjk_sentence(s: str) -> bool:
    """A sentence in Japanese, Chinese or Korean, which put no spaces between words to count: a
    run of their characters ending in their full stop, or a long clause (each check one pass)."""
    return bool((s[-1:] in "。！？：" and _CJK_RUN.search(s)) or _CJK_CLAUSE.search(s))


_PROSE_START = re.compile(r"^([A-Z\"'`*(\[]|[-*•] |\d+\. )")


def _looks_like_prose(raw: str) -> bool:
    """A line an agent wrote rather than a tool printed (ends a run of tool output)."""
    if (
        raw[:1] in (" ", "\t")
        or _LOG_LINE.match(raw)
        or _ERROR_LINE.match(raw)
        or _ERRORISH.match(raw)
    ):
        return False
    s = raw.strip()
    words = s.split()
    if _cjk_sentence(s):
        return True
    return (
        len(words) >= 6 and bool(_PROSE_START.match(s)) and (s[-1] in ".:?!)" or len(words) >= 12)
    )


_QUOTE = re.compile(r"^[ \t]{0,3}>(?:[ \t]|$)")
"""A quoted line: `> text` (not `>>>` of a REPL or `>\\s*$` prompt, see `_PROMPT`)."""


def _dequote(raw: list[str]) -> list[str] | None:
    """The lines without their quote marks when nearly all of them are quoted, else None."""
    filled = [r for r in raw if r.strip()]
    quoted = sum(1 for r in filled if _QUOTE.match(r))
    if filled and quoted * 10 >= len(filled) * 9 and _QUOTE.match(filled[0]):
        return [_QUOTE.sub("", r, count=1) if _QUOTE.match(r) else r for r in raw]
    return None


def _opened_before(raw: list[str]) -> int:
    """The line of a bare fence that closes a block opened before the excerpt began (an output
    copied from its middle: indented code, then ```` ``` ````, then prose): the fences are odd in
    number and the first one has no language and code before it. Else -1."""
    marks = [no for no, r in enumerate(raw) if _FENCE.match(r)]
    if len(marks) % 2 == 0:
        return -1
    first = marks[0]
    m = _FENCE.match(raw[first])
    before = [r for r in raw[:first] if r.strip()]
    if m is None or m.group(2) or not before or not all(r[:1] in (" ", "\t") for r in before):
        return -1
    return first


def split_lines(text: str) -> list[Line]:
    """Label every line of TEXT with its zone (see the module docstring)."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    raw = _dequote(raw) or raw
    codex = sum(1 for r in raw if _CODEX_HEADER.match(r)) >= 2
    lines: list[Line] = []
    fence: str | None = None
    lang = ""
    mode: Literal["prose", "output", "diff", "traceback", "codex_out", "thinking"] = "prose"
    opened_before = _opened_before(raw)
    for no, r in enumerate(raw):
        stripped = r.strip()
        if no <= opened_before:
            lines.append(Line(no, r, "fence"))
            continue
        fm = _FENCE.match(r)
        if fence is not None:
            if (
                fm
                and fm.group(1)[0] == fence[0]
                and len(fm.group(1)) >= len(fence)
                and not fm.group(2)
            ):
                fence = None
            lines.append(Line(no, r, "fence", lang))
            continue
        if fm:
            fence, lang = fm.group(1), fm.group(2).lower()
            lines.append(Line(no, r, "fence", lang))
            continue

        if codex:
            hm = _CODEX_HEADER.match(r)
            if hm:
                word = hm.group(1).lower()
                if word == "codex":
                    mode = "prose"
                elif word == "thinking":
                    mode = "thinking"
                else:
                    mode = "codex_out"
                lines.append(Line(no, r, "output"))
                continue
            if mode == "codex_out":
                lines.append(Line(no, r, "output"))
                continue
            if mode == "thinking":
                lines.append(Line(no, r, "prose", final=False))
                continue

        if not stripped:
            if mode == "diff":
                mode = "prose"
            lines.append(Line(no, r, "prose" if mode == "prose" else "output"))
            continue
        if _QUOTE.match(r) and not _PROMPT.match(r):
            # not the agent's voice; kept without the mark so tool-result patterns still match
            lines.append(Line(no, _QUOTE.sub("", r, count=1), "output"))
            continue
        if mode in ("output", "traceback") and _looks_like_prose(r):
            mode = "prose"
        if mode == "diff":
            if _DIFF_LINE.match(r):
                lines.append(Line(no, r, "output"))
                continue
            mode = "prose"
        if _DIFF_START.match(r):
            mode = "diff"
            lines.append(Line(no, r, "output"))
            continue
        if _TRACEBACK.match(r):
            mode = "traceback"
            lines.append(Line(no, r, "output"))
            continue
        if _GEMINI_SAY.match(r):
            mode = "prose"
            lines.append(Line(no, r, "prose"))
            continue
        if _TOOL_CALL.match(r):
            # Claude Code's `⏺ Bash(npm test)`, Codex's `• Ran pytest`: what follows is its result
            mode = "output"
            lines.append(Line(no, r, "output"))
            continue
        if mode == "output" and _AGENT_SAYS.match(r):
            mode = "prose"  # the agent's next message (`⏺ I've updated…`) ends the tool's result
        if _BOX.match(r) and not stripped.startswith("|"):
            lines.append(Line(no, r, "output"))
            continue
        if _PROMPT.match(r):
            mode = "output"
            lines.append(Line(no, r, "output"))
            continue
        if _AIDER_STATUS.match(r):
            if r.startswith(("Running ", "Running: ")):
                mode = "output"
            lines.append(Line(no, r, "output"))
            continue
        if mode in ("output", "traceback") or _LOG_LINE.match(r) or _ERROR_LINE.match(r):
            lines.append(Line(no, r, "output"))
            continue
        lines.append(Line(no, r, "prose"))

    if codex:
        # only the last `codex` message is the agent's final word
        last_msg = max(
            (
                ln.no
                for ln in lines
                if (m := _CODEX_HEADER.match(ln.text)) and m.group(1) == "codex"
            ),
            default=-1,
        )
        lines = [
            Line(ln.no, ln.text, ln.zone, ln.lang, final=ln.final and ln.no > last_msg)
            if ln.zone == "prose"
            else ln
            for ln in lines
        ]
    return lines


def final_prose(lines: list[Line], limit: int = 30) -> list[Line]:
    """The agent's last words: up to LIMIT non-blank prose lines from the end."""
    out: list[Line] = []
    for ln in reversed(lines):
        if ln.zone != "prose" or not ln.final or not ln.text.strip():
            continue
        out.append(ln)
        if len(out) >= limit:
            break
    out.reverse()
    return out


def tail_text(lines: list[Line], tail: list[Line]) -> str:
    """The final prose as text, paragraph breaks kept (code and tool output become breaks)."""
    if not tail:
        return ""
    out: list[str] = []
    for ln in lines:
        if ln.no < tail[0].no:
            continue
        text = ln.text if ln.zone == "prose" and ln.final else ""
        if text.strip() or (out and out[-1] != ""):
            out.append(text if text.strip() else "")
    return "\n".join(out).strip("\n")


def join(lines: list[Line]) -> str:
    return "\n".join(ln.text for ln in lines)


class LineFinder:
    """Which line of a paragraph a sentence came from: the first whose whitespace-normalised text
    contains a piece of it. Lines are normalised once and answers remembered, so a long line of
    many sentences costs one pass instead of one per sentence (which was quadratic)."""

    def __init__(self, para: list[Line]) -> None:
        self._nos = [ln.no for ln in para]
        self._starts: list[int] = []
        pos = 0
        for ln in para:
            self._starts.append(pos)
            pos += len(" ".join(ln.text.split())) + 1
        self._joined = "\n".join(" ".join(ln.text.split()) for ln in para)
        self._memo: dict[str, int | None] = {}

    def first(self, piece: str) -> int | None:
        """The number of the first line containing PIECE (no newline in it), None if none does."""
        if not piece:
            return None
        if piece not in self._memo:
            at = self._joined.find(piece)  # never spans lines: PIECE has no newline
            self._memo[piece] = self._nos[bisect_right(self._starts, at) - 1] if at >= 0 else None
        return self._memo[piece]


_SENT_SPLIT = re.compile(
    r"(?<=[.!?])\s+(?=[\"'(*`\w\[])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)]|[A-Za-z][.)])\s)"
)


_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|vs|cf|approx|z\.\s?B|d\.\s?h|p\.\s?ex|bzw)\.", re.I)


def sentences(text: str) -> list[str]:
    """Rough sentence split that keeps list items and paragraphs apart."""
    text = re.sub(
        r"`[^`\n]*`", lambda m: m.group(0).replace(".", "\u2024").replace("?", "\uff1f"), text
    )
    # a predicate method named the Ruby way (`Invoice#overdue?`) asks nothing
    text = re.sub(r"\b\w+#\w+\?", lambda m: m.group(0).replace("?", "\uff1f"), text)
    # an abbreviation's dots end no sentence ("or hold it back (e.g. rename the tables first)?")
    text = _ABBREVIATION.sub(lambda m: m.group(0).replace(".", "\u2024"), text)
    parts = [p.strip() for p in _SENT_SPLIT.split(text)]
    out = []
    for p in parts:
        if not p:
            continue
        p = " ".join(p.split())
        out.append(p.replace("\u2024", ".").replace("\uff1f", "?"))
    return out


def strip_md(s: str) -> str:
    """Drop markdown emphasis and surrounding punctuation from a short label."""
    s = re.sub(r"\*\*(.+?)\*\*", r"\1", s)
    s = re.sub(r"(?<!\w)__(.+?)__(?!\w)", r"\1", s)
    s = re.sub(r"(?<![\w*])\*(?!\s)([^*]+?)(?<!\s)\*(?![\w*])", r"\1", s)
    s = s.replace("**", "")
    return s.strip().lstrip("✦").strip().strip("-–—:").strip()
