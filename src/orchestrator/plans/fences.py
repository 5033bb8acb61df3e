"""Fenced code blocks, found line by line the way CommonMark does (lenient about indentation).

Plans carry whole documents inside fences (seed 000 Task 4.7 holds a plan), so every structural
scan must know which lines are code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orchestrator.models import PlanError

_OPEN = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")


@dataclass
class Fence:
    start: int
    """Index of the opening fence line."""
    end: int
    """Index of the closing fence line, or len(lines) when the fence is never closed."""
    info: str
    body: list[str]
    marker: str = "```"

    @property
    def language(self) -> str:
        return self.info.split()[0].lower() if self.info.split() else ""


def opening(line: str) -> tuple[str, str] | None:
    """The fence marker and info string when `line` opens a fence."""
    m = _OPEN.match(line)
    if m is None:
        return None
    marker, info = m.group(1), m.group(2).strip()
    if marker[0] == "`" and "`" in info:
        return None
    return marker, info


def closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return (
        len(stripped) >= len(marker)
        and stripped[0] == marker[0]
        and stripped == stripped[0] * len(stripped)
    )


def scan_fences(lines: list[str], start: int = 0, end: int | None = None) -> list[Fence]:
    stop = len(lines) if end is None else end
    fences: list[Fence] = []
    i = start
    while i < stop:
        opened = opening(lines[i])
        if opened is None:
            i += 1
            continue
        marker, info = opened
        j = i + 1
        while j < stop and not closes(lines[j], marker):
            j += 1
        fences.append(Fence(i, j, info, lines[i + 1 : j], marker))
        i = j + 1
    return fences


def fenced_mask(lines: list[str], start: int = 0, end: int | None = None) -> list[bool]:
    """mask[i] is True when line i is a fence line or inside a fence."""
    mask = [False] * len(lines)
    stop = len(lines) if end is None else end
    for fence in scan_fences(lines, start, stop):
        for k in range(fence.start, min(fence.end + 1, stop)):
            mask[k] = True
    return mask


def unclosed(lines: list[str], start: int = 0) -> Fence | None:
    """The fence that is never closed, if any: it runs to the end of the file (CommonMark), so
    in a plan it silently turns every later task heading into code."""
    fences = scan_fences(lines, start)
    return fences[-1] if fences and fences[-1].end >= len(lines) else None


def unclosed_error(lines: list[str], start: int, path: str) -> PlanError | None:
    """The error for a fence never closed: file:line of its opening, and what to add."""
    fence = unclosed(lines, start)
    if fence is None:
        return None
    return PlanError(
        f"code fence {fence.marker} opened here is never closed, so the rest of the file "
        f"(later tasks too) would be code; add a closing {fence.marker} line",
        path=path,
        line=fence.start + 1,
    )
