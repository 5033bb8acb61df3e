"""Gate commands out of plan text: shell fences, GSD `Run:` lines, backticked commands.

Gates run as argument lists (no shell), so a command here is one logical shell line: comments
are dropped, `\\` continuations joined, and a quoted string spanning lines (seed 001's
`python -c "..."`) stays one command.
"""

from __future__ import annotations

import re

from orchestrator.plans.fences import scan_fences

SHELL_LANGUAGES = frozenset(
    {"bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession", "terminal"}
)
_PROMPT_LANGUAGES = frozenset({"console", "shell-session", "shellsession", "terminal"})

KNOWN_TOOLS = frozenset(
    [
        "python",
        "python3",
        "uv",
        "uvx",
        "pytest",
        "pip",
        "pip3",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "node",
        "deno",
        "bun",
        "tsc",
        "jest",
        "vitest",
        "make",
        "cargo",
        "go",
        "rustc",
        "gcc",
        "grep",
        "rg",
        "test",
        "ls",
        "cat",
        "diff",
        "cmp",
        "find",
        "curl",
        "wget",
        "git",
        "bash",
        "sh",
        "ruff",
        "mypy",
        "black",
        "flake8",
        "eslint",
        "prettier",
        "docker",
        "kubectl",
        "java",
        "mvn",
        "gradle",
        "dotnet",
        "ruby",
        "bundle",
        "rake",
        "php",
        "composer",
        "echo",
        "wc",
        "head",
        "tail",
        "jq",
        "sqlite3",
        "psql",
        "true",
        "false",
        "env",
        "timeout",
        "stat",
        "file",
        "sed",
        "awk",
        "sort",
        "tree",
        "which",
        "orchestrator",
    ]
)

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_]\w*)\2")
_LIST_MARKER = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)")
_RUN = re.compile(r"^(?:run|command|cmd)\s*:\s*(.*)$", re.IGNORECASE)
_EXPECT = re.compile(r"^(?:expect(?:ed)?|expects)\s*:\s*(.*)$", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def _scan(line: str, quote: str | None) -> tuple[str, str | None, bool, list[tuple[str, bool]]]:
    """One physical line: (text without comment, open quote at end, ends with `\\`, heredocs)."""
    out: list[str] = []
    heredocs: list[tuple[str, bool]] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote == "'":
            out.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if quote == '"':
            if c == "\\" and i + 1 < n:
                out.append(line[i : i + 2])
                i += 2
                continue
            out.append(c)
            if c == '"':
                quote = None
            i += 1
            continue
        if c == "\\":
            if i + 1 == n:
                return "".join(out), None, True, heredocs
            out.append(line[i : i + 2])
            i += 2
            continue
        if c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            break
        elif line.startswith("<<", i) and not line.startswith("<<<", i):
            m = _HEREDOC.match(line, i)
            if m:
                heredocs.append((m.group(3), m.group(1) == "-"))
                out.append(m.group(0))
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out), quote, False, heredocs


def shell_commands(body: list[str], prompts: bool = False) -> list[str]:
    """The commands of one shell fence's lines (`prompts`: strip a leading `$ `)."""
    commands: list[str] = []
    current = ""
    mode = ""  # "" new command | "cont" after a trailing backslash | "quote" inside quotes
    quote: str | None = None
    pending: list[tuple[str, bool]] = []
    for raw in body:
        if pending:
            current += "\n" + raw
            delimiter, dash = pending[0]
            if (raw.lstrip("\t") if dash else raw).rstrip() == delimiter:
                pending.pop(0)
                if not pending:
                    commands.append(current.strip())
                    current, mode = "", ""
            continue
        line = raw
        if mode == "":
            stripped = line.strip()
            if prompts:  # a console transcript: only `$ ` lines are commands, the rest output
                if not stripped.startswith("$ "):
                    continue
                stripped = stripped[2:].strip()
            if not stripped or stripped.startswith("#"):
                continue
            line = stripped
        text, quote, continued, heredocs = _scan(line, quote)
        if mode == "":
            current = text
        elif mode == "cont":
            current = current.rstrip() + " " + text.lstrip()
        else:
            current += "\n" + text
        if quote is not None:
            mode = "quote"
        elif continued:
            mode = "cont"
        elif heredocs:
            pending = heredocs
        else:
            if current.strip():
                commands.append(current.strip())
            current, mode = "", ""
    if current.strip():
        commands.append(current.strip())
    return commands


def fenced_commands(lines: list[str], *, untyped: bool = False) -> list[str]:
    """Commands of every shell fence in `lines` (`untyped`: fences without a language too)."""
    commands: list[str] = []
    for fence in scan_fences(lines):
        lang = fence.language
        if lang in SHELL_LANGUAGES or (untyped and lang == ""):
            commands.extend(shell_commands(fence.body, prompts=lang in _PROMPT_LANGUAGES))
    return commands


def strip_code(text: str) -> str:
    """`Run: \\`grep x f\\`` → `grep x f`; text without backticks is kept as written."""
    text = text.strip()
    m = _CODE_SPAN.search(text)
    if m is None:
        return text
    return m.group(2).strip()


def looks_like_command(line: str) -> bool:
    """A plain line is a command only when it starts with a tool we know or a `./` path,
    so prose such as `1. recovery-agent.md has the table` never becomes a gate."""
    first = line.split()[0] if line.split() else ""
    return first in KNOWN_TOOLS or first.startswith(("./", "../"))


def verify_commands(text: str) -> tuple[list[str], list[str], list[str]]:
    """GSD `<verify>`/`<verification>` text → (commands, `Expect:` lines, other lines)."""
    lines = text.split("\n")
    commands: list[str] = []
    expects: list[str] = []
    notes: list[str] = []
    fences = scan_fences(lines)
    in_fence: set[int] = set()
    for fence in fences:
        in_fence.update(range(fence.start, fence.end + 1))
    commands_at: dict[int, list[str]] = {}
    for fence in fences:
        lang = fence.language
        if lang in SHELL_LANGUAGES or lang == "":
            found = shell_commands(fence.body, prompts=lang in _PROMPT_LANGUAGES)
            commands_at[fence.start] = found
    for i, raw in enumerate(lines):
        if i in commands_at:
            commands.extend(commands_at[i])
        if i in in_fence:
            continue
        line = _LIST_MARKER.sub("", raw.strip())
        if not line:
            continue
        run = _RUN.match(line)
        expect = _EXPECT.match(line)
        if run:
            command = strip_code(run.group(1))
            if command:
                commands.append(command)
        elif expect:
            expects.append(expect.group(1).strip())
        elif line.startswith("$ "):
            commands.append(line[2:].strip())
        elif (m := _CODE_SPAN.fullmatch(line)) is not None:
            commands.append(m.group(2).strip())
        elif looks_like_command(line):
            commands.append(line)
        else:
            notes.append(line)
    return [c for c in commands if c], expects, notes
