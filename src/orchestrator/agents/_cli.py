"""What the CLI-driven adapters (codex, gemini, aider) share: finding the binary, the child's
environment, and recognising model-API errors that retrying cannot fix (`external_service`)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.agents.base import HumanQuestion

PROJECT_ROOT = Path(__file__).resolve().parents[3]
"""The source checkout when installed editable; `.ci/install-agents.sh` installs CLIs under it."""

LOCAL_BIN_DIRS = (Path(".agents/node_modules/.bin"), Path(".agents/bin"))


def find_cli(name: str, explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The CLI to run: `explicit` (a path or a name), else PATH, else a project-local `.agents/`."""
    if explicit:
        found = shutil.which(str(explicit))
        return found or (str(explicit) if Path(explicit).is_file() else None)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    for base in (Path.cwd(), PROJECT_ROOT):
        for sub in LOCAL_BIN_DIRS:
            candidate = base / sub / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def child_env(overrides: Mapping[str, Any] | None) -> dict[str, str]:
    """`os.environ` with `overrides` on top; an override of None removes the variable."""
    env = dict(os.environ)
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def unwrap_shell(command: str) -> str:
    """`/bin/bash -lc "pytest -q"` → `pytest -q`, for the live line; anything else unchanged."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if len(argv) == 3 and Path(argv[0]).name in ("bash", "sh", "zsh") and argv[1] in ("-c", "-lc"):
        return argv[2]
    return command


def short(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "quota",
        re.compile(
            r"insufficient_quota|exceeded your current quota|quota exceeded|usage limit|"
            r"RESOURCE_EXHAUSTED.*quota|quota.*RESOURCE_EXHAUSTED|billing|credit balance",
            re.I,
        ),
    ),
    (
        "authentication",
        re.compile(
            r"\b401\b|unauthori[sz]ed|UNAUTHENTICATED|invalid[_ ]api[_ ]key|incorrect api key|"
            r"api key not valid|AuthenticationError|not able to authenticate",
            re.I,
        ),
    ),
    ("permission", re.compile(r"\b403\b|forbidden|PERMISSION_DENIED|PermissionDeniedError", re.I)),
)


def service_error_kind(message: str) -> str | None:
    """`authentication`, `permission` or `quota` when `message` is a model-API error of that kind."""
    for kind, pattern in _KINDS:
        if pattern.search(message):
            return kind
    return None


def external_question(agent: str, error: str, kind: str) -> HumanQuestion:
    """The escalation for an error only a person can fix (a key, an account, a quota)."""
    return HumanQuestion(
        question=f"{agent} cannot use the model API ({kind}): {short(error, 300)}. "
        "Fix the key or account, then resume.",
        options=["Retry now", "Wait and retry", "Abort the run"],
        recommendation="Retry now",
        category="external_service",
        why="Retrying without a change cannot fix this (key, permission or quota).",
        detail={"agent": agent, "kind": kind, "error": error[:2000]},
    )
