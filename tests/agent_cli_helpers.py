"""Shared by the end-to-end tests of the CLI agents (codex, gemini, aider)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.agents._cli import LOCAL_BIN_DIRS, PROJECT_ROOT, find_cli
from orchestrator.agents.base import AgentEvent, AttemptContext
from orchestrator.models import Task


def require_cli(name: str, package: str) -> str:
    """The pinned CLI from `.ci/install-agents.sh`, else one on PATH, else skip saying why."""
    for sub in LOCAL_BIN_DIRS:
        pinned = PROJECT_ROOT / sub / name
        if pinned.is_file():
            return str(pinned)
    found = find_cli(name)
    if found is None:
        pytest.skip(
            f"{name} CLI not installed ({package}): run .ci/install-agents.sh "
            f"(looked on PATH, .agents/node_modules/.bin and .agents/bin)"
        )
    return found


def attempt(
    tmp: Path,
    prompt: str,
    *,
    files: list[str] | None = None,
    resume: str | None = None,
    timeout: float | None = 150,
    options: dict[str, object] | None = None,
    number: int = 1,
) -> tuple[AttemptContext, list[AgentEvent]]:
    workdir = tmp / "work"
    workdir.mkdir(exist_ok=True)
    artifacts = tmp / f"attempt-{number}"
    artifacts.mkdir(exist_ok=True)
    prompt_file = artifacts / "prompt.md"
    prompt_file.write_text(prompt, encoding="utf-8")
    seen: list[AgentEvent] = []
    ctx = AttemptContext(
        task=Task(id="1", title="hello", files=files or []),
        prompt=prompt,
        prompt_file=prompt_file,
        workdir=workdir,
        artifacts=artifacts,
        attempt=number,
        run_id="run-test",
        timeout=timeout,
        resume_session=resume,
        options=dict(options or {}),
        on_event=seen.append,
    )
    return ctx, seen
