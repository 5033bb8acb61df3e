"""Milestone markdown (seeds 000/001): `### Task N.M: Title` headings and `**Label:**` sections.

The file is cut into segments at task headings and at top-level headings, skipping fenced code,
so a plan quoted inside a fence (seed 000 Task 4.7) is content, not tasks. Inside a task, every
`**Label:**` line starts a section; known labels fill Task fields, the rest go to Task.extra.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from orchestrator.models import Plan, Task
from orchestrator.plans.commands import fenced_commands
from orchestrator.plans.fences import fenced_mask, unclosed_error

TASK_ID = r"\d+(?:\.\d+)*[A-Za-z]?(?![\w])"
TASK_HEADING = re.compile(
    rf"^ {{0,3}}(#{{2,4}})[ \t]+Task[ \t]+({TASK_ID})[ \t]*(?:[:.\-–—][ \t]*(.*?))?(?:[ \t]+#+)?[ \t]*$",
    re.IGNORECASE,
)
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
LABEL = re.compile(
    r"^ {0,3}\*\*(?P<a>[^*\n]{1,60}?)[ \t]*:[ \t]*\*\*(?P<ra>.*)$"
    r"|^ {0,3}\*\*(?P<b>[^*\n]{1,60}?)\*\*[ \t]*:(?P<rb>.*)$"
)
_RULE = re.compile(r"^ {0,3}(?:-{3,}|\*{3,}|_{3,})[ \t]*$")
_CHECKBOX = re.compile(r"^\s*[-*+][ \t]+\[[ xX]\][ \t]*(.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])[ \t]+(.*)$")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_VERIFY_TITLE = re.compile(r"\b(e2e|end[- ]to[- ]end|verification|verify)\b", re.IGNORECASE)
_NONE = re.compile(r"^\s*(none|n/?a|-|—|nothing|no dependencies|no deps)?\.?\s*$", re.IGNORECASE)
_DEP_START = re.compile(rf"^(?:task[ \t]+)?({TASK_ID})", re.IGNORECASE)
_DEP_ANY = re.compile(rf"\btask[ \t]+({TASK_ID})", re.IGNORECASE)

FILES_KEYS = frozenset({"file", "files", "file_s"})
TYPE_KEYS = frozenset({"type"})
DEPENDS_KEYS = frozenset(
    {"dependencies", "dependency", "depends_on", "depends", "deps", "blocked_by"}
)
CRITERIA_KEYS = frozenset(
    {"acceptance_criteria", "success_criteria", "done_when", "definition_of_done"}
)
TEST_KEYS = frozenset(
    {
        "tests",
        "test",
        "test_steps",
        "testing",
        "verify",
        "verification",
        "test_commands",
        "verify_commands",
        "verification_steps",
    }
)
_SINGLE_VALUE = FILES_KEYS | TYPE_KEYS | DEPENDS_KEYS
_HEADING_LABELS = (
    FILES_KEYS
    | DEPENDS_KEYS
    | CRITERIA_KEYS
    | TEST_KEYS
    | {
        "description",
        "implementation_notes",
    }
)


def key_of(label: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", label.lower()).strip("_") or "section"


@dataclass
class _Segment:
    start: int  # heading line index, or first line when there is no heading
    end: int
    kind: str  # "task" | "section" | "preamble"
    level: int = 0
    title: str = ""
    task_id: str = ""


def has_task_heading(lines: list[str], start: int, mask: list[bool]) -> int | None:
    for i in range(start, len(lines)):
        if not mask[i] and TASK_HEADING.match(lines[i]):
            return i
    return None


def parse_milestone(lines: list[str], start: int, path: str, frontmatter: dict[str, Any]) -> Plan:
    if (error := unclosed_error(lines, start, path)) is not None:
        raise error
    mask = fenced_mask(lines, start)
    segments = _segments(lines, start, mask)
    tasks: list[Task] = []
    title = ""
    extra: dict[str, Any] = {}
    verification: list[str] = []
    for seg in segments:
        if seg.kind == "task":
            tasks.append(_task(lines, mask, seg, path))
            continue
        if seg.kind == "section" and seg.level == 1 and not title:
            title = seg.title
            key = "preamble"
        elif seg.kind == "preamble":
            key = "preamble"
        else:
            key = key_of(seg.title)
        first = seg.start + 1 if seg.kind == "section" else seg.start
        end = _trim_end(lines, mask, first, seg.end)
        text = "\n".join(lines[first:end]).strip("\n")
        if not text.strip():
            continue
        commands = fenced_commands(lines[first:end])
        if key == "preamble" and key in extra:
            extra[key]["text"] = (extra[key]["text"] + "\n\n" + text).strip("\n")
            continue
        while key in extra:
            key += "_"
        entry: dict[str, Any] = {
            "title": seg.title,
            "line": seg.start + 1,
            "text": text,
            "commands": commands,
        }
        extra[key] = entry
        if seg.kind == "section" and _VERIFY_TITLE.search(seg.title):
            verification.extend(commands)
    return Plan(
        path=path,
        format="milestone",
        title=title,
        frontmatter=frontmatter,
        tasks=tasks,
        verification=verification,
        extra=extra,
    )


def _segments(lines: list[str], start: int, mask: list[bool]) -> list[_Segment]:
    """Cut the file at task headings, top-level headings and headings that close a task."""
    cuts: list[_Segment] = []
    task_level: int | None = None
    for i in range(start, len(lines)):
        if mask[i]:
            continue
        tm = TASK_HEADING.match(lines[i])
        if tm:
            level = len(tm.group(1))
            cuts.append(_Segment(i, 0, "task", level, (tm.group(3) or "").strip(), tm.group(2)))
            task_level = level
            continue
        hm = HEADING.match(lines[i])
        if hm is None:
            continue
        level = len(hm.group(1))
        if level <= 2 or (task_level is not None and level <= task_level):
            cuts.append(_Segment(i, 0, "section", level, (hm.group(2) or "").strip()))
            task_level = None
    segments: list[_Segment] = []
    first_cut = cuts[0].start if cuts else len(lines)
    if first_cut > start:
        segments.append(_Segment(start, first_cut, "preamble"))
    for k, seg in enumerate(cuts):
        seg.end = cuts[k + 1].start if k + 1 < len(cuts) else len(lines)
        segments.append(seg)
    return segments


def _trim_end(lines: list[str], mask: list[bool], first: int, end: int) -> int:
    """Drop the blank lines and `---` rules that separate one task from the next."""
    while (
        end > first
        and not mask[end - 1]
        and (not lines[end - 1].strip() or _RULE.match(lines[end - 1]))
    ):
        end -= 1
    return end


def _task(lines: list[str], mask: list[bool], seg: _Segment, path: str) -> Task:
    end = _trim_end(lines, mask, seg.start + 1, seg.end)
    sections: list[tuple[str, list[str]]] = [("", [])]
    target = sections[0][1]
    one_liner = False  # `**Type:** CODING`: a blank line after it ends the section
    for i in range(seg.start + 1, end):
        line = lines[i]
        if not mask[i]:
            lm = LABEL.match(line)
            if lm:
                label = lm.group("a") or lm.group("b") or ""
                rest = (lm.group("ra") if lm.group("a") else lm.group("rb")).strip()
                key = key_of(label)
                sections.append((key, [rest] if rest else []))
                target = sections[-1][1]
                one_liner = bool(rest) and key in _SINGLE_VALUE
                continue
            hm = HEADING.match(line)
            if hm and len(hm.group(1)) > seg.level:
                key = key_of((hm.group(2) or "").rstrip(":"))
                if key in _HEADING_LABELS:
                    sections.append((key, []))
                    target = sections[-1][1]
                    one_liner = False
                    continue
            if one_liner and not line.strip():
                target = sections[0][1]
                one_liner = False
        target.append(line)

    task = Task(
        id=seg.task_id,
        title=seg.title or f"Task {seg.task_id}",
        body="\n".join(lines[seg.start : end]).strip("\n"),
        source=path,
        line=seg.start + 1,
    )
    extra: dict[str, Any] = {}
    for key, body in sections[1:]:
        text = "\n".join(body).strip("\n")
        if key in FILES_KEYS:
            task.files.extend(f for f in _files(body) if f not in task.files)
        elif key in TYPE_KEYS:
            first = next((ln.strip() for ln in body if ln.strip()), "")
            task.type = first.strip("`*_ ") or task.type
        elif key in DEPENDS_KEYS:
            task.depends_on.extend(d for d in _dependencies(body) if d not in task.depends_on)
        elif key in CRITERIA_KEYS:
            task.acceptance_criteria.extend(_criteria(body))
        else:
            if key in TEST_KEYS:
                task.verify.extend(fenced_commands(body))
            _put(extra, key, text)
    lead = "\n".join(sections[0][1]).strip("\n")
    if lead.strip():
        _put(extra, "description" if "description" not in extra else "preamble", lead)
    task.extra = extra
    return task


def _put(extra: dict[str, Any], key: str, text: str) -> None:
    if extra.get(key):
        extra[key] = extra[key] + "\n\n" + text
    else:
        extra[key] = text


def _plain_lines(body: list[str]) -> list[str]:
    mask = fenced_mask(body)
    return [line for line, fenced in zip(body, mask, strict=True) if not fenced]


def _files(body: list[str]) -> list[str]:
    files: list[str] = []
    for raw in _plain_lines(body):
        line = _BULLET.sub(r"\1", raw).strip()
        spans = _CODE_SPAN.findall(line)
        if spans:
            files.extend(s.strip() for s in spans if s.strip())
            continue
        for item in line.split(","):
            words = item.strip().strip("*_").split()
            if words and not _NONE.match(words[0]):
                files.append(words[0])
    return list(dict.fromkeys(files))


def _dependencies(body: list[str]) -> list[str]:
    text = "\n".join(_plain_lines(body))
    if _NONE.match(text.replace("*", "")):
        return []
    found: list[str] = []
    for item in re.split(r",|;|\n|\band\b|&", text):
        item = _BULLET.sub(r"\1", item).strip().strip("`*_()[] ")
        m = _DEP_START.match(item)
        if m:
            found.append(m.group(1))
        else:
            found.extend(_DEP_ANY.findall(item))
    return list(dict.fromkeys(found))


def _criteria(body: list[str]) -> list[str]:
    plain = _plain_lines(body)
    for pattern in (_CHECKBOX, _BULLET):
        items: list[str] = []
        for line in plain:
            m = pattern.match(line)
            if m:
                items.append(m.group(1).strip())
            elif items and line.strip() and line[:1] in (" ", "\t") and not _BULLET.match(line):
                items[-1] = (items[-1] + " " + line.strip()).strip()
        items = [i for i in items if i]
        if items:
            return items
    text = " ".join(line.strip() for line in plain if line.strip())
    return [text] if text else []
