"""A held destructive command that a human ALLOWS, end to end with the real bundled Claude Code
against the scripted Anthropic server on 127.0.0.1 (no network, no key).

`--no-wait`: the model's `rm -rf <data folder outside the workdir>` is held (exit 3, an
`extreme_destructive` escalation with the exact command) → `orchestrator answer ID --option A`
(Allow) → `orchestrator resume` continues the SAME Claude Code session, the runner passes the
command in `options["approved_commands"]`, so this time it runs: the folder is really gone. The
approval is for that exact command only: a different destructive command in the resumed session
is held again (exit 3); after a Deny the session goes on, writes the task's file, the gate
passes, exit 0.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import cli, needs_claude_binary, status_json

from orchestrator.testing import (
    AnthropicServer,
    RecordedRequest,
    ToolCall,
    tool_result_text,
    tool_results,
)

pytestmark = [
    pytest.mark.claude,
    pytest.mark.timeout(240),
    needs_claude_binary,
]


def make_plan(tmp: Path) -> Path:
    (tmp / "plan.md").write_text(
        textwrap.dedent("""\
            # Cache

            ## Task 1.1: Add a cache in cache.py
            **Description:** Clean up old data, then add a cache in cache.py.
            **Tests:**
            ```bash
            test -f cache.py
            ```
            """),
        encoding="utf-8",
    )
    (tmp / "work").mkdir(exist_ok=True)
    return tmp / "plan.md"


def folder_with_data(tmp: Path, name: str) -> Path:
    """A sibling of the workdir, so `rm -rf` of it is outside the workdir (held by the policy)."""
    folder = tmp / name
    folder.mkdir()
    (folder / "precious.db").write_text("rows", encoding="utf-8")
    return folder


def bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "Clean old data"})


def orchestrate(tmp: Path, server: AnthropicServer, *args: str) -> subprocess.CompletedProcess[str]:
    return cli(tmp, *args, timeout=180, **server.claude_code_env(tmp / "home"))


def show(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def open_escalations(tmp: Path) -> list[dict[str, Any]]:
    proc = cli(tmp, "escalations", "--json")
    assert proc.returncode == 0, show(proc)
    rows: list[dict[str, Any]] = json.loads(proc.stdout) if proc.stdout.strip() else []
    return rows


def session_header(req: RecordedRequest) -> str | None:
    return {k.lower(): v for k, v in req.headers.items()}.get("x-claude-code-session-id")


def held(tmp: Path, command: str) -> dict[str, Any]:
    [esc] = open_escalations(tmp)
    assert esc["category"] == "extreme_destructive"
    assert esc["detail"]["command"] == command
    assert command in esc["question"]
    assert esc["options"] == ["Allow", "Deny"]
    return esc


def test_allowed_command_runs_in_the_resumed_session_and_only_that_command(
    tmp_path: Path,
) -> None:
    data = folder_with_data(tmp_path, "data")
    backup = folder_with_data(tmp_path, "backup")
    allowed, other = f"rm -rf {data}", f"rm -rf {backup}"
    target = tmp_path / "work" / "cache.py"
    path = make_plan(tmp_path)
    script = [
        bash(allowed),  # attempt 1: held, the session stops
        bash(allowed),  # attempt 2 (resumed): the same command, now approved, runs
        bash(other),  # a different destructive command: held again
        ToolCall("Write", {"file_path": str(target), "content": "CACHE = {}\n"}),  # attempt 3
        "Removed the old data and added cache.py.",
    ]
    with AnthropicServer(script) as server:
        # 1. held before it runs, the run pauses
        first = orchestrate(
            tmp_path,
            server,
            "run",
            str(path),
            "--agent",
            "claude",
            "--workdir",
            "work",
            "--no-wait",
        )
        assert first.returncode == 3, show(first)
        assert len(server.model_requests) == 1
        assert (data / "precious.db").read_text() == "rows"
        esc = held(tmp_path, allowed)
        assert status_json(tmp_path)["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"

        # 2. a human allows it; the same session continues and the command really runs
        ans = cli(tmp_path, "answer", str(esc["id"]), "--option", "A")
        assert ans.returncode == 0, show(ans)
        second = orchestrate(tmp_path, server, "resume", "--no-wait")
        assert second.returncode == 3, show(second)  # paused again, by the OTHER command
        assert not data.exists()  # the approved command ran
        assert (backup / "precious.db").read_text() == "rows"  # the other one did not
        esc2 = held(tmp_path, other)
        assert esc2["id"] != esc["id"]
        assert len(server.model_requests) == 3

        # 3. a human denies the other command; the session goes on and finishes the task
        ans2 = cli(tmp_path, "answer", str(esc2["id"]), "--option", "B")
        assert ans2.returncode == 0, show(ans2)
        third = orchestrate(tmp_path, server, "resume", "--no-wait")
        assert third.returncode == 0, show(third)
        assert "Task 1.1: COMPLETED" in third.stdout

    assert target.read_text() == "CACHE = {}\n"
    assert (backup / "precious.db").read_text() == "rows"
    reqs = server.model_requests
    assert len(reqs) == 5 and server.turns_left == 0

    # one Claude Code session from the first request to the last
    assert len({session_header(r) for r in reqs}) == 1
    resumed = reqs[1]
    assert resumed.contains("Add a cache in cache.py")  # the first prompt is still there
    assert resumed.contains("Allow")  # and the human's answer
    # the approved command's result went back to the model without an error
    [ran] = tool_results(reqs[2])
    assert not ran.get("is_error"), tool_result_text(ran)
    assert "Held for a human" not in tool_result_text(ran)
    assert reqs[3].contains("Deny")  # the second answer reached the same session

    data_ = status_json(tmp_path)
    assert data_["tasks"][0]["status"] == "COMPLETED"
    attempts = data_["attempts"]
    assert [a["verdict"] for a in attempts] == ["needs_human", "needs_human", "completed"]
    assert len({a["session_id"] for a in attempts}) == 1 and attempts[0]["session_id"]
    run_dir = tmp_path / "runs" / data_["run"]["id"] / "1.1"
    transcript = (run_dir / "attempt-2" / "transcript.jsonl").read_text()
    held_events = [
        json.loads(line)
        for line in transcript.splitlines()
        if '"event": "held"' in line or '"event":"held"' in line
    ]
    assert [e["hit"]["command"] for e in held_events] == [other]  # only the other one was held
