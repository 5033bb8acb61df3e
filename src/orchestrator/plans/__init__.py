"""Plan files → one Plan model, whichever format they are written in.

>>> plan = parse_plan("## Task 1.1: Say hello\\n**File:** `hello.py`\\n", "p.md")
>>> plan.format, [(t.id, t.title, t.files) for t in plan.tasks]
('milestone', [('1.1', 'Say hello', ['hello.py'])])
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Literal

from orchestrator.models import Plan, PlanError
from orchestrator.plans.fences import fenced_mask, unclosed_error
from orchestrator.plans.frontmatter import split_frontmatter
from orchestrator.plans.graph import check_dependencies, check_ids, find_cycle, order
from orchestrator.plans.gsd import TASK_LINE, has_task_tag, parse_gsd
from orchestrator.plans.milestone import has_task_heading, parse_milestone

__all__ = [
    "PlanError",
    "check_dependencies",
    "detect_format",
    "find_cycle",
    "load_plan",
    "order",
    "parse_plan",
]

PlanFormat = Literal["milestone", "gsd"]
MAX_PLAN_BYTES = 16 * 1024 * 1024
"""Far above any real plan; a bigger file is the wrong path (a log, a disk image), not a plan."""


def load_plan(path: str | Path) -> Plan:
    """Read and parse a plan file; every problem is a PlanError naming file:line."""
    where = str(path)
    try:
        info = Path(path).stat()
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(info.st_mode):  # /dev/zero or a FIFO would be read forever
            raise PlanError("not a regular file; pass the plan file itself", path=where)
        if info.st_size > MAX_PLAN_BYTES:
            raise PlanError(
                f"too large for a plan ({info.st_size:,} bytes, at most {MAX_PLAN_BYTES:,}); "
                "check the path",
                path=where,
            )
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise PlanError("file not found; check the plan path", path=where) from None
    except IsADirectoryError:
        raise PlanError(
            "is a directory; pass the plan file itself (e.g. PLAN.md)", path=where
        ) from None
    except PermissionError:
        raise PlanError("permission denied; make the plan file readable", path=where) from None
    except OSError as exc:
        raise PlanError(f"cannot read the plan: {exc.strerror or exc}", path=where) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise PlanError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column}); "
            "save the file as UTF-8",
            path=where,
            line=line,
        ) from None
    return parse_plan(text, where)


def parse_plan(text: str, path: str | Path = "<plan>") -> Plan:
    """Parse plan text; the format is detected from the content (see detect_format)."""
    where = str(path)
    lines = _lines(text)
    frontmatter, start = split_frontmatter(lines, where)
    fmt = _detect(lines, start)
    if fmt is None:
        if (error := unclosed_error(lines, start, where)) is not None:
            raise error  # every task heading is inside it
        raise PlanError(
            "no tasks found; add '## Task 1.1: Title' headings or GSD <task> blocks", path=where
        )
    if fmt == "gsd":
        plan = parse_gsd(lines, start, where, frontmatter)
    else:
        plan = parse_milestone(lines, start, where, frontmatter)
    if not plan.tasks:
        raise PlanError(
            "no tasks found; add '## Task 1.1: Title' headings or GSD <task> blocks", path=where
        )
    check_ids(plan)
    check_dependencies(plan)
    return plan


def detect_format(text: str) -> PlanFormat | None:
    """'gsd' when a `<task` tag starts a line, 'milestone' for `Task N.M:` headings (the earlier
    one wins), outside fenced code; None when neither is there."""
    lines = _lines(text)
    start = 0
    if lines and lines[0].rstrip() == "---":
        start = next(
            (i + 1 for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), 0
        )
    return _detect(lines, start)


def _detect(lines: list[str], start: int) -> PlanFormat | None:
    gsd = has_task_tag(lines, start)
    milestone = has_task_heading(lines, start, fenced_mask(lines, start))
    if gsd is not None and (milestone is None or gsd < milestone):
        return "gsd"
    if milestone is not None:
        return "milestone"
    if TASK_LINE.search("\n".join(lines[start:])):
        return "gsd"  # a <task> after an unclosed fence: let the GSD scanner judge it
    return None


def _lines(text: str) -> list[str]:
    """Split on \\n only: str.splitlines also breaks on \\x0c, \\u2028, ... and would shift
    every line number after them."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
