"""Running the real CLI in a subprocess, the way a user would."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
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


ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class TerminalRun:
    code: int
    text: str
    """Everything the terminal showed, without ANSI escapes."""
    typed_at: list[float] = field(default_factory=list)
    """Wall-clock time (time.time()) of each reply typed."""


def terminal(
    tmp: Path,
    args: list[str],
    replies: list[tuple[bytes, bytes]],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 90,
) -> TerminalRun:
    """Run the CLI on a real pseudo-terminal; each time the next prompt appears (once more than
    it had when the previous reply was typed), type its reply and Enter."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=tmp,
        env=env if env is not None else cli_env(tmp),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen, typed_at, pending = b"", [], list(replies)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.3)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            if pending and ANSI.sub(b"", seen).count(pending[0][0]) > len(typed_at):
                os.write(master, pending.pop(0)[1] + b"\n")
                typed_at.append(time.time())
            if proc.poll() is not None and not ready:
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(master)
    text = ANSI.sub(b"", seen).decode("utf-8", errors="replace")
    return TerminalRun(proc.wait(timeout=10), text, typed_at)
