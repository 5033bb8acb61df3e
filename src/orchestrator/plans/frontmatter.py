"""YAML frontmatter: the `---` block at the very top of a plan file."""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml

from orchestrator.models import PlanError

_MAX_NODES = 50_000
"""YAML aliases can make a tiny file expand into a huge tree; refuse instead of hanging."""


def split_frontmatter(lines: list[str], path: str) -> tuple[dict[str, Any], int]:
    """Return the frontmatter mapping and the index of the first line after it."""
    if not lines or lines[0].rstrip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        raise PlanError(
            "frontmatter opened with '---' is never closed; add a '---' line after it",
            path=path,
            line=1,
        )
    raw = "\n".join(lines[1:end])
    try:
        data = yaml.safe_load(raw)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = 2 + mark.line if mark is not None else 1
        problem = exc.problem or exc.context or "syntax error"
        raise PlanError(
            f"invalid YAML frontmatter: {_one_line(problem)}; fix the YAML between the '---' lines",
            path=path,
            line=line,
        ) from None
    except Exception as exc:  # pyyaml raises ValueError, RecursionError, ... on odd input
        raise PlanError(
            f"invalid YAML frontmatter: {_one_line(str(exc)) or type(exc).__name__}; "
            "fix the YAML between the '---' lines",
            path=path,
            line=1,
        ) from None
    if data is None:
        return {}, end + 1
    if not isinstance(data, dict):
        raise PlanError(
            "frontmatter must be a YAML mapping (`key: value` lines)", path=path, line=2
        )
    budget = [_MAX_NODES]
    clean = _plain(data, budget, set())
    if budget[0] < 0 or not isinstance(clean, dict):
        raise PlanError(
            "frontmatter is too large or self-referencing; simplify its YAML", path=path, line=2
        )
    return clean, end + 1


def _plain(value: Any, budget: list[int], active: set[int]) -> Any:
    """Turn YAML values into JSON-friendly ones so `plan show --json` never fails."""
    budget[0] -= 1
    if budget[0] < 0:
        return None
    if isinstance(value, dict | list | tuple | set | frozenset):
        if id(value) in active:  # `&a [*a]`
            budget[0] = -1
            return None
        active.add(id(value))
        try:
            if isinstance(value, dict):
                return {str(k): _plain(v, budget, active) for k, v in value.items()}
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            return [_plain(v, budget, active) for v in items]
        finally:
            active.discard(id(value))
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _one_line(text: str) -> str:
    return " ".join(text.split())
