"""Running the real CLI in a subprocess, the way a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

CLAUDE_BINARY = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
needs_claude_binary = pytest.mark.skipif(
    not CLAUDE_BINARY.is_file(),
    reason=f"the Claude Code binary bundled with claude-agent-sdk is missing ({CLAUDE_BINARY})",
)


def cli_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The test's own store (`tmp/state.db`, run files in `tmp/runs/`) and home (`tmp`): no test
    ever writes into the real home store. `ORCHESTRATOR_DB=""` leaves the choice to the home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORCHESTRATOR_")}
    env.update(
        ORCHESTRATOR_DB=f"sqlite:///{tmp / 'state.db'}",
        ORCHESTRATOR_HOME=str(tmp),
        COLUMNS="120",
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def cli(
    tmp: Path, *args: str, timeout: float = 120, input: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=tmp,
        env=cli_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )


def cli_popen(tmp: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=tmp,
        env=cli_env(tmp, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def run_dir(tmp: Path, run_id: str | None = None) -> Path:
    """A run's files (beside the test's store); without RUN_ID the only run there is."""
    runs = tmp / "runs"
    return runs / run_id if run_id else next(runs.iterdir())


def status_json(tmp: Path, run_id: str | None = None) -> dict[str, Any]:
    proc = cli(tmp, "status", *([run_id] if run_id else []), "--json")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data
