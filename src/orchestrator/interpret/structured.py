"""An agent's structured output captured as text, read as the console transcript it stands for.

A person may run an agent headless with JSON output through the `command` agent, or paste what a
wrapper captured: Claude Code's `--output-format json` / `stream-json` lines, `codex exec --json`
events, Gemini CLI's `--output-format json` object or `stream-json` lines. The agent's words and
its tools' results are then JSON strings (`"result": "…\\nWhich one do you want?"`), which no
rule reads. `unwrap` rewrites each such record as the line(s) the console would have shown — the
agent's message as prose, a tool call as `⏺ Bash(cmd)` with its output under it, an error as
`API Error: …` or `ERROR: …` — and leaves every other line as it was, so the interpreter's rules (and its
platform table) read structure and text alike. Text with no such record is returned unchanged.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

__all__ = ["unwrap"]

_MAX_RECORD = 1_000_000
"""A record longer than this is left as text: parsing it would cost more than it could tell."""


def unwrap(text: str) -> str:
    """TEXT with every structured record of an agent CLI rewritten as its console lines."""
    if '{"' not in text and "{\n" not in text:
        return text
    out: list[str] = []
    changed = False
    for raw, record in _records(text):
        shown = _shown(record) if record is not None else None
        if shown is None:
            out.append(raw)
        else:
            out.extend(shown)
            changed = True
    return "\n".join(out) if changed else text


def _records(text: str) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Each line, or each multi-line JSON object (a `{` line up to its `}` line), with the object
    it parses to (None when it is no JSON object)."""
    lines = text.split("\n")
    closers = [j for j, ln in enumerate(lines) if ln.rstrip() == "}"]
    tried = -1  # each closing `}` line is tried once, so nested or unclosed `{` lines cost nothing
    k = 0
    while k < len(lines):
        line = lines[k]
        stripped = line.strip()
        if stripped == "{":  # a pretty-printed object (Gemini CLI's `--output-format json`)
            at = bisect_right(closers, k)
            end = closers[at] if at < len(closers) else None
            if end is not None and end != tried:
                tried = end
                chunk = "\n".join(lines[k : end + 1])
                obj = _parse(chunk)
                if obj is not None:
                    yield chunk, obj
                    k = end + 1
                    continue
        yield line, _parse(stripped) if stripped.startswith('{"') else None
        k += 1


def _parse(chunk: str) -> dict[str, Any] | None:
    if len(chunk) > _MAX_RECORD:
        return None
    try:
        obj = json.loads(chunk)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _shown(rec: dict[str, Any]) -> list[str] | None:
    """The console lines for one record, [] for bookkeeping (usage, ids), None if unknown."""
    kind = rec.get("type")
    if kind in ("assistant", "user") and isinstance(rec.get("message"), dict):
        return _claude_message(rec["message"])
    if kind == "result":
        return _result(rec)
    if kind in ("item.completed", "item.started", "item.updated") and isinstance(
        rec.get("item"), dict
    ):
        return _codex_item(rec["item"], done=kind == "item.completed")
    if kind in ("error", "turn.failed"):
        return _error(rec.get("error") if isinstance(rec.get("error"), dict) else rec)
    if kind == "message" and rec.get("role") == "assistant":  # Gemini CLI's stream-json
        return _text_lines(_str(rec.get("content")), "✦ ")
    if isinstance(rec.get("part"), dict):  # OpenCode's `run --format json` events
        return _opencode_part(rec["part"])
    if kind == "tool_use" and "tool_name" in rec:
        return [f"⏺ {rec.get('tool_name')}({_args(rec.get('parameters'))})"]
    if kind == "tool_result" and "tool_id" in rec:
        return _tool_output(_str(rec.get("output")) or _str(rec.get("error")))
    if kind in ("system", "init", "thread.started", "turn.started", "turn.completed"):
        return []
    if "response" in rec and ("stats" in rec or "error" in rec or len(rec) <= 3):
        # Gemini CLI's `--output-format json`: the answer, or the error it ended on
        lines = _text_lines(_str(rec.get("response")), "")
        if isinstance(rec.get("error"), dict):
            lines += _error(rec["error"]) or []
        return lines
    if isinstance(rec.get("error"), dict) and len(rec) <= 3:
        return _error(rec["error"])
    return None


def _claude_message(msg: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    content = msg.get("content")
    if isinstance(content, str):
        return _text_lines(content, "⏺ ")
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            lines += _text_lines(_str(part.get("text")), "⏺ ")
        elif part.get("type") == "tool_use":
            lines.append(f"⏺ {part.get('name')}({_args(part.get('input'))})")
        elif part.get("type") == "tool_result":
            body = part.get("content")
            if isinstance(body, list):
                body = "\n".join(_str(x.get("text")) for x in body if isinstance(x, dict))
            lines += _tool_output(_str(body))
    return lines


def _result(rec: dict[str, Any]) -> list[str]:
    """Claude Code's closing record (`stream-json`'s last line, `json`'s only object): its final
    text, and the error it ended on (`error_max_turns`, `is_error`)."""
    lines = _text_lines(_str(rec.get("result")), "")
    subtype = _str(rec.get("subtype"))
    if subtype.startswith("error"):
        lines.append(f"Error: {subtype}")
    elif rec.get("is_error") and not lines:
        lines.append("Error: the agent's run ended with an error")
    if isinstance(rec.get("error"), (dict, str)):
        lines += _error(rec["error"] if isinstance(rec["error"], dict) else rec) or []
    return lines


_CODEX_TS = "[1970-01-01T00:00:00]"
"""`codex exec`'s console header stamp; the events carry none, the header's shape is what counts."""


def _codex_item(item: dict[str, Any], *, done: bool) -> list[str]:
    """A `codex exec --json` item as `codex exec` prints it without `--json`."""
    kind = item.get("type") or item.get("item_type")
    if not done:
        return []
    if kind == "agent_message":
        return [f"{_CODEX_TS} codex", *_text_lines(_str(item.get("text")), "")]
    if kind == "command_execution":
        cmd, code = _str(item.get("command")), item.get("exit_code")
        said = "succeeded" if code == 0 else f"exited {code}" if code is not None else "exited 1"
        return [
            f"{_CODEX_TS} exec {cmd}",
            f"{_CODEX_TS} {cmd} {said} in 0ms:",
            *_text_lines(_str(item.get("aggregated_output")).rstrip("\n"), ""),
        ]
    if kind == "file_change":
        changes = item.get("changes")
        paths = [_str(c.get("path")) for c in changes if isinstance(c, dict)] if changes else []
        return [
            f"{_CODEX_TS} apply_patch(auto_approved=true) exited 0 in 0ms:",
            "Success. Updated the following files:",
            *[f"M {p}" for p in paths],
        ]
    if kind == "error":
        return [f"{_CODEX_TS} ERROR: {_str(item.get('message'))}"]
    if kind == "reasoning":
        return [f"{_CODEX_TS} thinking", *_text_lines(_str(item.get("text")), "")]
    return []


def _opencode_part(part: dict[str, Any]) -> list[str]:
    """An OpenCode event's part as its console shows it: text as the agent's words, a tool call
    with its input and its output (or error), steps as bookkeeping."""
    kind = part.get("type")
    if kind == "text":
        return _text_lines(_str(part.get("text")), "⏺ ")
    if kind == "tool":
        state: dict[str, Any] = part["state"] if isinstance(part.get("state"), dict) else {}
        shown = [f"⏺ {_str(part.get('tool')).capitalize()}({_args(state.get('input'))})"]
        return shown + _tool_output(_str(state.get("output")) or _str(state.get("error")))
    return []


def _error(err: dict[str, Any] | None) -> list[str] | None:
    """An error record as its CLI prints it: a model API's own error body (`{"type":
    "overloaded_error", "message": "Overloaded"}`) as `API Error: overloaded_error: Overloaded`,
    anything else (`codex exec`'s error event) as `ERROR: <message>`."""
    if not isinstance(err, dict):
        return None
    inner = err.get("error")
    body: dict[str, Any] = inner if isinstance(inner, dict) else err
    kind, message = _str(body.get("type")), _str(body.get("message")) or _str(err.get("message"))
    status = err.get("status") or err.get("code") or body.get("status") or body.get("code")
    code = f"{status} " if isinstance(status, int) else ""
    if kind.endswith("_error"):
        return [f"API Error: {code}{kind}: {message}".rstrip(": ")]
    # the body's own type or code stays with it ("insufficient_quota" says which 429 it was)
    tag = kind or (_str(body.get("code")) if not isinstance(body.get("code"), int) else "")
    said = f"{message} [{tag}]" if tag and tag != "error" and tag not in message else message
    return [f"ERROR: {code}{said}"] if message else None


def _tool_output(body: str) -> list[str]:
    return _text_lines(body, "  ⎿  ", more="     ")


def _text_lines(text: str, first: str, *, more: str | None = None) -> list[str]:
    parts = text.split("\n") if text else []
    rest = more if more is not None else (" " * len(first) if first.strip() else first)
    return [(first if k == 0 else rest) + p for k, p in enumerate(parts)]


def _args(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("command", "file_path", "path", "pattern", "url", "query"):
            if key in value:
                return _str(value[key])
        return ", ".join(f"{k}={_str(v)[:60]}" for k, v in list(value.items())[:3])
    return _str(value)


def _str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
