"""What the tools' own results in an output say: the last test, build or lint result a tool
printed (a runner's summary line, Codex's record of a command it ran, an edit tool's refusal), read
apart from what the agent claims about its work.
"""

from __future__ import annotations

import re
from typing import Literal

from orchestrator.interpret.phrases import (
    _RESULT_FAIL,
    _RESULT_OK,
    RESULT_LINE_FAIL,
    RESULT_LINE_OK,
)
from orchestrator.interpret.text import Line

__all__ = ["file_content", "output_status", "short_of_all"]

_CODE_LANG_NAMES = (
    "python py javascript js jsx typescript ts tsx java kotlin kt go golang rust rs c h cpp c++ "
    "cc hpp cs csharp ruby rb php swift elixir ex exs erlang scala dart vue svelte lua r julia "
    "haskell hs clojure ocaml fsharp perl groovy objc objective-c html css scss sass less json "
    "jsonc yaml yml toml ini xml sql graphql proto dockerfile makefile cmake terraform hcl nix "
    "diff patch markdown md mdx tex latex"
)
_CODE_LANGS = frozenset(_CODE_LANG_NAMES.split())
"""Fence languages of source, config or a diff: what the agent wrote or proposes, never a tool's
result (a `raise ValueError(...)` in a ```python block is no failed run)."""


_EXEC_END = re.compile(r" (?:succeeded|exited (\d+)) in [\d.]+m?s\b")
_EXEC_HEAD = re.compile(r"\b(?:bash|sh|zsh) -\w*c ['\"]|\bapply_patch\b")


def _command(text: str, head: re.Match[str]) -> str:
    """The command a record names from HEAD on: after `bash -lc '`; a patch record is its own."""
    return text[head.start() if head.group(0) == "apply_patch" else head.end() :]


def _exec_result(text: str) -> tuple[str, str | None] | None:
    """Codex's line for a command it ran (`bash -lc 'pytest -q' exited 1 in 2.1s:`,
    `apply_patch(…) exited 1 in 7ms:`): the command (without its shell) and its exit code (None:
    succeeded). The
    end is found first and the command read back from it, so a line is scanned once."""
    if " in " not in text or ("succeeded" not in text and "exited" not in text):
        return None  # most lines: no regex at all
    end = _EXEC_END.search(text)
    if end is None:
        return None
    heads = list(_EXEC_HEAD.finditer(text, 0, end.start()))
    if not heads:
        return None
    return _command(text[: end.start()], heads[-1]), end.group(1)


_CHECK_WORD = re.compile(
    r"(?:test|tests|pytest|jest|vitest|mocha|rspec|phpunit|ctest|tox|nox|build|compile|check|"
    r"clippy|lint|eslint|ruff|flake8|pylint|mypy|pyright|tsc|typecheck|vet|golangci-lint|mvn|gradle|"
    r"make|cargo|npm|pnpm|yarn|dotnet|xcodebuild|swift|go|bun|deno|gotestsum|prettier|black|gofmt|"
    r"rustfmt|stylelint|shellcheck|hadolint|markdownlint(?:-cli2)?|vale|biome)(?::\S*)?"
)
_WRAPPERS = frozenset(
    ["python", "python3", "-m", "npx", "uv", "poetry", "pipenv", "bunx", "exec", "run", "env"]
)
_SEPARATORS = re.compile(r"&&|\|\||[;|]")


def _is_check(cmd: str) -> bool:
    """A command whose exit says whether the work holds: a test, build, lint or type check run
    as the program or its subcommand (`pytest -q`, `npm run lint`, `cargo test`), not a word in
    a path (`cat build/out.txt`)."""
    for part in _SEPARATORS.split(cmd):
        words = [w.strip("'\"") for w in part.split()[:6]]
        while words[1:] and words[0] in _WRAPPERS:
            words.pop(0)  # `python -m pytest`, `uv run mypy`, `npx tsc`
        if any(_CHECK_WORD.fullmatch(w) for w in words[:1]) and (
            words[0] not in ("npm", "pnpm", "yarn", "bun", "go", "swift", "deno", "cargo", "dotnet")
            or any(_CHECK_WORD.fullmatch(w) or w == "run" for w in words[1:])
        ):
            return True
    return False


_APPLY_PATCH = re.compile(r"\bapply_patch\b")
_EXEC_END_ALONE = re.compile(r"^\s*(?:succeeded|exited (\d+)) in [\d.]+m?s:?\s*$")
_IN_CWD = re.compile(r"['\"]? in \S+\s*$")


def _record(lines: list[Line], k: int) -> tuple[str, str | None] | None:
    """Codex's record of a command at line K: on one line (`bash -lc 'pytest' exited 1 in 2.1s:`)
    or, in newer versions, the command on the line above its outcome (`bash -lc 'pytest -q' in
    /repo` then ` exited 5 in 0.6s:`)."""
    if (run := _exec_result(lines[k].text)) is not None:
        return run
    end = _EXEC_END_ALONE.match(lines[k].text) if " in " in lines[k].text else None
    if end is None:
        return None
    above = next((ln.text for ln in reversed(lines[max(0, k - 3) : k]) if ln.text.strip()), "")
    head = _EXEC_HEAD.search(above)
    if head is None:
        return None
    return _IN_CWD.sub("", _command(above, head)), end.group(1)


_WRITE_TOOL = re.compile(
    r"^[\s│|]*(?:[⏺●✔✓]\s*)?(?:Write|Update|Edit|MultiEdit|Create|WriteFile|NotebookEdit)\s*\(|"
    r"^[\s│|]*[✔✓]\s+(?:WriteFile|Edit)\b"
)
_TOOL_HEAD = re.compile(r"^\s*[⏺●╰╭]|^[\s│|]*[✔✓✗×]\s+[A-Z]")
_TOOL_ERROR = re.compile(r"^[\s│|⎿]*(?:Error|Failed|Interrupted)\b", re.I)


def file_content(lines: list[Line]) -> set[int]:
    """Lines a file-writing tool shows of what it wrote (Claude Code's `⏺ Write(docs/x.md)`
    preview under its `⎿ Wrote 120 lines` line, Gemini CLI's `✔ WriteFile` box): the file's
    content, never a result — a runbook quoting `API Error: 529` is not a failed run. A write the
    tool refused (`⎿ Error: String to replace not found`) showed no content."""
    state, out = 0, set()  # 0: outside, 1: after a write's head, 2: in what it wrote
    for ln in lines:
        if _WRITE_TOOL.match(ln.text):
            state = 1
        elif (ln.zone == "prose" and not ln.text.startswith((" ", "│", "|"))) or _TOOL_HEAD.match(
            ln.text
        ):
            state = 0
        elif state == 1 and ln.text.strip():
            state = 0 if _TOOL_ERROR.match(ln.text) else 2  # the tool's own result line
        elif state == 2 and ln.text.lstrip().startswith("⎿"):
            state = 0  # another record under it (`⎿ 5-hour limit reached`): the preview ended
        elif state == 2:
            out.add(ln.no)
    return out


def output_status(
    lines: list[Line],
) -> tuple[Literal["success", "failure"] | None, str | None, int]:
    """The last test/build result printed by a tool: success, failure, or None."""
    written = file_content(lines)
    for k in range(len(lines) - 1, -1, -1):
        ln = lines[k]
        if ln.no in written:
            continue
        if (run := _record(lines, k)) is not None:
            # Codex's record of a command: a check's exit says how the work stands; a patch that
            # did not apply is a failure; `git status` or `cat` succeeding says nothing
            cmd, code = run
            said = ln.text.strip() if cmd in ln.text else f"{cmd.strip()}: {ln.text.strip()}"
            if _APPLY_PATCH.search(cmd) and code and code != "0":
                return "failure", said, ln.no
            if _is_check(cmd):
                ok = code is None or code == "0"
                return ("success" if ok else "failure"), said, ln.no
            continue
        if ln.zone == "fence" and ln.lang in _CODE_LANGS:
            continue  # a ```python block is code the agent wrote or proposes, not a result
        if RESULT_LINE_FAIL.match(ln.text):
            return "failure", ln.text.strip(), ln.no  # a tool's line a log's layout left bare
        if ln.zone == "prose" and RESULT_LINE_OK.match(ln.text):
            return "success", ln.text.strip(), ln.no
        if ln.zone == "prose":
            continue
        text = ln.text
        if _RESULT_FAIL.search(text) and not re.search(r"\b0 failed\b|\bno errors\b", text, re.I):
            return "failure", text.strip(), ln.no
        if _RESULT_OK.search(text):
            return "success", text.strip(), ln.no
    return None, None, -1


_N_OF_M = re.compile(
    r"\b(\d[\d,]*)\s*(?:of|out of|/)\s*(\d[\d,]*)\s+(?:(?i:(?:unit |e2e |integration )?(?:tests?|specs?|"
    r"checks?|cases?|suites?))\s+)?(?:[Pp]ass(?:ed|es|ing)?|green|succeed(?:ed)?)\b"
)
"""A count of passes against a total in words; not dbt's progress line (`14 of 16 PASS name`)."""


def short_of_all(claims: str) -> bool:
    """The agent's own count of passes falls short of the total ("116 of 118 pass",
    "Tests: 7/9 passing"): some still fail, whatever else it claims."""
    for m in _N_OF_M.finditer(claims):
        passed, total = (int(g.replace(",", "")) for g in m.groups())
        if total > 0 and passed < total:
            return True
    return False
