"""GSD PLAN.md (seed 004): YAML frontmatter, then `<objective>`, `<tasks>`, `<verification>`...

Not XML: `<action>` holds free markdown with fences, `<` and half-closed code blocks, so an XML
parser would choke. A tolerant scanner finds elements at the tag level instead: at the top level
an element starts at the beginning of a line; inside a `<task>` each child runs to its own
closing tag and its content is never looked into.
"""

from __future__ import annotations

import bisect
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from orchestrator.models import Plan, PlanError, Task
from orchestrator.plans.commands import verify_commands
from orchestrator.plans.fences import closes, opening

TAG = re.compile(r"<([A-Za-z][\w.:-]*)((?:[ \t\r\n]+[^<>\n]*?)?)[ \t]*(/?)>")
TASK_LINE = re.compile(r"^[ \t]*<task[\s>/]", re.MULTILINE)
_ATTR = re.compile(r"([\w:.-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+))")
_NAME = re.compile(r"^\s*Task\s+(\d+(?:\.\d+)*[A-Za-z]?)(?![\w])\s*[:.\-–—]?\s*(.*)$", re.I | re.S)
_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_LIST_MARKER = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+)")
KNOWN_CHILDREN = frozenset({"name", "files", "action", "verify", "done"})


@dataclass
class _Element:
    tag: str
    attrs: dict[str, str]
    content: str
    line: int
    start: int
    end: int
    children: list[_Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


class _Scanner:
    def __init__(self, lines: list[str], start: int, path: str) -> None:
        self.text = "\n".join(lines)
        self.path = path
        self.starts = [0]
        for line in lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.begin = self.starts[start] if start < len(self.starts) else len(self.text)
        self._closers: dict[str, int] = {}

    def find_close(self, tag: str, pos: int) -> int:
        """Offset of the next `</tag>` at or after pos, or -1; cached per tag because scans
        only move forward (a file of 20,000 unclosed `<x>` lines would otherwise be quadratic)."""
        known = self._closers.get(tag)
        if known is not None and (known == -1 or known >= pos):
            return known
        found = self.text.find(f"</{tag}>", pos)
        self._closers[tag] = found
        return found

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def error(self, message: str, offset: int) -> PlanError:
        return PlanError(message, path=self.path, line=self.line_of(offset))

    def top_level(self) -> tuple[list[_Element], list[_Element], list[str]]:
        """(tasks, other top-level elements, plain text lines outside elements)."""
        text, n = self.text, len(self.text)
        tasks: list[_Element] = []
        others: list[_Element] = []
        prose: list[str] = []
        pos = self.begin
        fence: str | None = None
        while pos < n:
            eol = text.find("\n", pos)
            eol = n if eol == -1 else eol
            line = text[pos:eol]
            if fence is not None:
                if closes(line, fence):
                    fence = None
                pos = eol + 1
                continue
            opened = opening(line)
            if opened is not None:
                fence = opened[0]
                pos = eol + 1
                continue
            at = pos + len(line) - len(line.lstrip())
            if text.startswith("<!--", at):
                close = text.find("-->", at + 4)
                pos = n if close == -1 else close + 3
                continue
            if text.startswith(("</tasks>", "</task>"), at):
                pos = text.index(">", at) + 1
                continue
            m = TAG.match(text, at)
            if m is not None:
                tag = m.group(1)
                if tag == "tasks":
                    pos = m.end()
                    continue
                if tag == "task":
                    task = self.task(m)
                    tasks.append(task)
                    pos = task.end
                    continue
                closing = f"</{tag}>"
                close = self.find_close(tag, m.end()) if not m.group(3) else -1
                if close != -1:
                    others.append(self.element(m, close))
                    pos = close + len(closing)
                    continue
            prose.append(line)
            pos = eol + 1
        return tasks, others, prose

    def element(self, m: re.Match[str], close: int) -> _Element:
        return _Element(
            tag=m.group(1),
            attrs=attributes(m.group(2)),
            content=self.text[m.end() : close],
            line=self.line_of(m.start()),
            start=m.start(),
            end=close + len(m.group(1)) + 3,
        )

    def task(self, m: re.Match[str]) -> _Element:
        text, n = self.text, len(self.text)
        task = _Element("task", attributes(m.group(2)), "", self.line_of(m.start()), m.start(), 0)
        if m.group(3):  # <task .../>
            task.end = m.end()
            return task
        pos = m.end()
        while True:
            while pos < n and text[pos].isspace():
                pos += 1
            if pos >= n:
                raise self.error(
                    "<task> is never closed; add </task> after its last element", m.start()
                )
            if text.startswith("</task>", pos):
                task.end = pos + len("</task>")
                task.content = text[m.end() : pos]
                return task
            if text.startswith("<!--", pos):
                close = text.find("-->", pos + 4)
                pos = n if close == -1 else close + 3
                continue
            cm = TAG.match(text, pos)
            if cm is not None:
                tag = cm.group(1)
                if tag in ("task", "tasks"):
                    raise self.error(
                        f"<task> is not closed before the <{tag}> at line "
                        f"{self.line_of(pos)}; add </task> after its last element",
                        m.start(),
                    )
                if cm.group(3):
                    task.children.append(
                        _Element(tag, attributes(cm.group(2)), "", self.line_of(pos), pos, cm.end())
                    )
                    pos = cm.end()
                    continue
                closing = f"</{tag}>"
                close = self.find_close(tag, cm.end())
                if close != -1:
                    task.children.append(self.element(cm, close))
                    pos = close + len(closing)
                    continue
                if tag in KNOWN_CHILDREN:
                    raise self.error(f"<{tag}> is never closed; add {closing}", pos)
            if text.startswith("</tasks>", pos):
                raise self.error(
                    "<task> is not closed before </tasks>; add </task> after its last element",
                    m.start(),
                )
            eol = text.find("\n", pos)
            eol = n if eol == -1 else eol
            task.text.append(text[pos:eol].strip())
            pos = eol


def attributes(raw: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in _ATTR.finditer(raw or ""):
        value = next((g for g in m.groups()[1:] if g is not None), "")
        found[m.group(1)] = value
    return found


def clean(content: str) -> str:
    """Element content without the indentation and blank lines the XML layout adds."""
    return textwrap.dedent(content.strip("\n")).strip()


def has_task_tag(lines: list[str], start: int) -> int | None:
    """Index of the first line starting with a `<task` tag outside fenced code, if any."""
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is not None:
            if closes(line, fence):
                fence = None
            continue
        opened = opening(line)
        if opened is not None:
            fence = opened[0]
            continue
        if TASK_LINE.match(line):
            return i
    return None


def parse_gsd(lines: list[str], start: int, path: str, frontmatter: dict[str, Any]) -> Plan:
    scanner = _Scanner(lines, start, path)
    raw_tasks, others, prose = scanner.top_level()
    tasks = [_task(scanner, el, k, path) for k, el in enumerate(raw_tasks, 1)]
    _waves(tasks)
    _block_after_checkpoints(tasks)
    extra: dict[str, Any] = {}
    verification: list[str] = []
    for el in others:
        content = clean(el.content)
        extra[el.tag] = extra[el.tag] + "\n\n" + content if el.tag in extra else content
        if el.attrs:
            extra[f"{el.tag}_attributes"] = el.attrs
        if el.tag == "verification":
            verification.extend(verify_commands(content)[0])
    text = "\n".join(prose).strip()
    if text:
        extra["text"] = text
    return Plan(
        path=path,
        format="gsd",
        title=_title(prose, extra, frontmatter),
        frontmatter=frontmatter,
        tasks=tasks,
        verification=verification,
        extra=extra,
    )


def _title(prose: list[str], extra: dict[str, Any], frontmatter: dict[str, Any]) -> str:
    for line in prose:
        m = _H1.match(line)
        if m:
            return m.group(1).strip()
    objective = str(extra.get("objective", ""))
    first = next((ln.strip() for ln in objective.split("\n") if ln.strip()), "")
    if first:
        return first
    if "phase" in frontmatter:
        return f"Phase {frontmatter['phase']}, plan {frontmatter.get('plan', '?')}"
    return ""


def _waves(tasks: list[Task]) -> None:
    """GSD's `wave` and `depends_on` on a `<task>`: a task of wave k depends on every task of an
    earlier wave (so `--parallel` runs a wave only once the one before it is done), and on the
    tasks its `depends_on` names (ids, commas or spaces between them)."""
    waves: dict[str, int] = {}
    for task in tasks:
        attrs = task.extra.get("attributes") or {}
        wave = str(attrs.get("wave", "")).strip()
        if wave.isdigit():
            waves[task.id] = int(wave)
            task.extra["wave"] = int(wave)
        for dep in re.split(r"[\s,]+", str(attrs.get("depends_on", ""))):
            if dep and dep != task.id and dep not in task.depends_on:
                task.depends_on.append(dep)
    for task in tasks:
        if task.id in waves:
            for other, w in waves.items():
                if w < waves[task.id] and other not in task.depends_on:
                    task.depends_on.append(other)


def _block_after_checkpoints(tasks: list[Task]) -> None:
    """GSD runs a plan top to bottom and a `checkpoint:*` stops it until a person is done: every
    later task depends on the checkpoint, so a paused checkpoint is not run around."""
    for i, checkpoint in enumerate(tasks):
        if checkpoint.checkpoint:
            for later in tasks[i + 1 :]:
                if later.id != checkpoint.id and checkpoint.id not in later.depends_on:
                    later.depends_on.append(checkpoint.id)


_OPTION = re.compile(r"<option\b([^<>]*?)(/?)>(.*?)(?:</option>|(?=<option\b)|$)", re.S)
_OPTION_PART = re.compile(r"<(name|pros|cons|description)\b[^<>]*>(.*?)</\1>", re.S)
_LETTERED = re.compile(r"^(?:[A-Za-z][).:]|\(?[A-Za-z]\))\s+")
_RECOMMENDED = re.compile(r"\s*\((?:recommended|recommendation)\)\s*$", re.I)


def _words(text: str) -> str:
    return " ".join(text.split())


def decision_options(content: str) -> tuple[list[str], str | None, list[dict[str, str]]]:
    """A `checkpoint:decision`'s `<options>`: (option names, the recommended one, details).

    GSD writes `<option id="x"><name>…</name><pros>…</pros><cons>…</cons></option>`; a plain
    list (`- A) Supabase`, one per line) is read too. An option is recommended by a
    `recommended` attribute or a "(recommended)" after its name."""
    names: list[str] = []
    details: list[dict[str, str]] = []
    recommended: str | None = None
    found = list(_OPTION.finditer(content))
    if found:
        for m in found:
            attrs = attributes(m.group(1))
            parts = {k: _words(v) for k, v in _OPTION_PART.findall(m.group(3))}
            name = parts.get("name") or _words(re.sub(r"<[^<>]*>", " ", m.group(3)))
            name = name or attrs.get("id", "")
            if not name:
                continue
            flagged = "recommended" in attrs or bool(_RECOMMENDED.search(name))
            name = _RECOMMENDED.sub("", name)
            names.append(name)
            details.append({"id": attrs.get("id", ""), **parts, "name": name})
            if flagged and recommended is None:
                recommended = name
    else:
        lines = [ln.strip() for ln in content.split("\n") if ln.strip()]
        marked = [ln for ln in lines if _LIST_MARKER.match(ln) or _LETTERED.match(ln)]
        for line in marked or lines:
            item = _LETTERED.sub("", _LIST_MARKER.sub("", line)).strip()
            if not item:
                continue
            flagged = bool(_RECOMMENDED.search(item))
            item = _RECOMMENDED.sub("", item)
            names.append(item)
            details.append({"name": item})
            if flagged and recommended is None:
                recommended = item
    return names, recommended, details


def _recommendation(text: str, names: list[str], details: list[dict[str, str]]) -> str | None:
    """A `<recommendation>` naming an option (by id or name) is that option; other text stays."""
    said = _words(text)
    low = said.lower()
    for name, detail in zip(names, details, strict=True):
        if low in (name.lower(), detail.get("id", "").lower()) or low.startswith(name.lower()):
            return name
    return said or None


def _task(scanner: _Scanner, el: _Element, index: int, path: str) -> Task:
    parts: dict[str, str] = {}
    child_attrs: dict[str, dict[str, str]] = {}
    for child in el.children:
        content = clean(child.content)
        parts[child.tag] = parts[child.tag] + "\n\n" + content if child.tag in parts else content
        if child.attrs:
            child_attrs[f"{child.tag}_attributes"] = child.attrs
    name = " ".join(parts.pop("name", "").split())
    m = _NAME.match(name)
    task_id = m.group(1) if m else str(index)
    title = (m.group(2).strip() if m else name) or f"Task {task_id}"
    task_type = el.attrs.get("type", "auto")
    task = Task(
        id=task_id,
        title=title,
        type=task_type,
        body=textwrap.dedent(scanner.text[el.start : el.end]),
        checkpoint=task_type.lower().startswith("checkpoint"),
        source=path,
        line=el.line,
    )
    files = parts.pop("files", "")
    for item in re.split(r"[,\n]", files):
        item = _LIST_MARKER.sub("", item.strip()).strip("`*_ ")
        if item and item not in task.files:
            task.files.append(item)
    done = parts.pop("done", "")
    task.acceptance_criteria = [
        _LIST_MARKER.sub("", ln.strip()).strip() for ln in done.split("\n") if ln.strip()
    ]
    extra: dict[str, Any] = {}
    if "verify" in parts:
        verify = parts.pop("verify")
        commands, expects, notes = verify_commands(verify)
        task.verify = commands
        if expects:
            extra["expect"] = expects
        if notes:
            extra["verify_notes"] = notes
    attrs = {k: v for k, v in el.attrs.items() if k != "type"}
    if attrs:
        extra["attributes"] = attrs
    extra.update(parts)
    extra.update(child_attrs)
    if el.text:
        extra["text"] = "\n".join(t for t in el.text if t)
    if task_type.lower() == "checkpoint:decision" and "options" in parts:
        names, recommended, details = decision_options(parts["options"])
        if names:
            extra["checkpoint_options"] = names
            extra["checkpoint_option_details"] = details
            said = parts.get("recommendation")
            recommended = _recommendation(said, names, details) if said else recommended
            if recommended:
                extra["checkpoint_recommendation"] = recommended
    task.extra = extra
    return task
