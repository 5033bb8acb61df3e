"""`orchestrator mcp` (seed 003): a real MCP client session from the SDK over stdio, spawning
`python -m orchestrator mcp` on the test's own store, calls every tool on real runs (the replay
agent): answers resume the paused run in the background, a waiting runner picks an MCP answer up,
a task is resumed with guidance, a finished run is rewound to a task's git checkpoint."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from tests.helpers import CLAUDE_BINARY, EXAMPLES, cli, cli_env, cli_popen, needs_claude_binary

from orchestrator.store import Store
from orchestrator.testing import AnthropicServer, Text, ToolCall, tool_result_text, tool_results

pytestmark = pytest.mark.timeout(120)
AMBIGUOUS = str(EXAMPLES / "ambiguous_task.md")


def paused_run(tmp: Path, name: str = "work") -> str:
    """Scenario A paused at its question (no runner left), and its run id."""
    proc = cli(
        tmp, "run", AMBIGUOUS, "--agent", "replay", "--no-wait", "--workdir", str(tmp / name)
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    return newest_run(tmp)


def newest_run(tmp: Path) -> str:
    store = Store(f"sqlite:///{tmp / 'state.db'}")
    try:
        run_id = store.latest_run_id()
    finally:
        store.close()
    assert run_id is not None
    return run_id


def wait_until_done(tmp: Path, run_id: str, timeout: float = 60) -> dict[str, str]:
    """Poll the store until the run is COMPLETED and no runner holds it; the task statuses."""
    store = Store(f"sqlite:///{tmp / 'state.db'}")
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            run = store.run(run_id)
            assert run is not None
            if run["status"] == "COMPLETED" and not run["lock_owner"]:
                return {t["task_id"]: t["status"] for t in store.tasks(run_id)}
            time.sleep(0.2)
        logs = "\n".join(p.read_text() for p in (tmp / "runs" / run_id).glob("resume-*.log"))
        raise AssertionError(f"run {run_id} is {run['status']}, not COMPLETED\n{logs}")
    finally:
        store.close()


def session(tmp: Path, body: Callable[[Client], Awaitable[None]]) -> None:
    """Run `body` against `python -m orchestrator mcp` spawned over stdio on the test's store."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "orchestrator", "mcp"], env=cli_env(tmp), cwd=tmp
    )

    async def main() -> None:
        async with Client(params) as client:
            await body(client)

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:  # the task groups' wrapping: show the failure itself
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from None


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def error(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_every_tool_over_stdio_answer_and_resume_task_complete_paused_runs(tmp_path: Path) -> None:
    first, second = paused_run(tmp_path, "one"), paused_run(tmp_path, "two")

    async def body(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names >= {
            "list_runs",
            "run_status",
            "list_escalations",
            "answer_escalation",
            "resume_task",
            "rewind_to_task",
        }
        runs = (await call(client, "list_runs"))["runs"]
        assert {r["id"]: r["status"] for r in runs} == {first: "PAUSED", second: "PAUSED"}
        status = await call(client, "run_status", run_id=first)
        assert status["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"
        assert "no run 'nope'" in await error(client, "run_status", run_id="nope")
        inbox = (await call(client, "list_escalations"))["escalations"]
        assert {e["run_id"] for e in inbox} == {first, second}
        esc = next(e for e in inbox if e["run_id"] == first)
        assert esc["options"][1].startswith("In-memory")
        assert "exactly one" in await error(
            client, "answer_escalation", escalation_id=esc["id"], option="B", text="both"
        )

        # answer → recorded with channel mcp → the paused run resumes in the background
        out = await call(client, "answer_escalation", escalation_id=esc["id"], option="B")
        assert out["escalation"]["channel"] == "mcp"
        assert out["escalation"]["response"].startswith("B")
        assert out["resume"]["started"] is True
        assert wait_until_done(tmp_path, first) == {"1.1": "COMPLETED"}
        again = await error(client, "answer_escalation", escalation_id=esc["id"], action="retry")
        assert "already answered" in again and "via mcp" in again
        assert "COMPLETED" in await error(client, "resume_task", run_id=first, task_id="1.1")

        # seed 003: resume_task resets the counters, sets PENDING, closes the question, resumes
        out = await call(
            client, "resume_task", run_id=second, task_id="1.1", guidance="Use an in-memory LRU"
        )
        task = out["task"]
        assert (task["status"], task["attempts_since_resume"], task["level"]) == ("PENDING", 0, 0)
        assert "in-memory LRU" in task["guidance"]
        assert out["resume"]["started"] is True
        assert wait_until_done(tmp_path, second) == {"1.1": "COMPLETED"}
        answered = (await call(client, "list_escalations", run_id=second, all=True))["escalations"]
        assert [(e["status"], e["channel"]) for e in answered] == [("answered", "mcp")]
        assert (await call(client, "list_escalations"))["escalations"] == []

    session(tmp_path, body)
    assert (tmp_path / "two" / "orchestrator" / "cache.py").is_file()
    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    kinds = [e["kind"] for e in store.events(second)]
    store.close()
    assert "task_resumed" in kinds and "resume_started" in kinds


def test_a_waiting_runner_takes_the_mcp_answer_and_refuses_a_resume_task(tmp_path: Path) -> None:
    runner = cli_popen(
        tmp_path, "run", AMBIGUOUS, "--agent", "replay", "--wait", "--workdir", str(tmp_path / "w")
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "state.db").exists() or not _open_ids(tmp_path):
            assert runner.poll() is None, runner.communicate()
            assert time.monotonic() < deadline, "the runner never asked"
            time.sleep(0.2)
        run_id, esc_id = newest_run(tmp_path), _open_ids(tmp_path)[0]

        async def body(client: Client) -> None:
            held = await error(client, "resume_task", run_id=run_id, task_id="1.1")
            assert "a runner holds run" in held
            assert "a runner holds run" in await error(
                client, "rewind_to_task", run_id=run_id, task_id="1.1"
            )
            out = await call(
                client, "answer_escalation", escalation_id=esc_id, action="recommended"
            )
            assert out["resume"]["started"] is False  # the runner holding the run goes on

        session(tmp_path, body)
        out, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    assert runner.returncode == 0, out + err
    assert wait_until_done(tmp_path, run_id) == {"1.1": "COMPLETED"}


def _open_ids(tmp: Path) -> list[int]:
    store = Store(f"sqlite:///{tmp / 'state.db'}")
    try:
        return [e["id"] for e in store.escalations(open_only=True)]
    finally:
        store.close()


def test_rewind_to_task_reverts_the_git_workdir_and_requeues_the_rest(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (work / "README.md").write_text("demo\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    proc = cli(
        tmp_path, "run", str(EXAMPLES / "hello.md"), "--agent", "replay", "--workdir", str(work)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_id = newest_run(tmp_path)
    assert (work / "greeting.py").is_file()

    async def body(client: Client) -> None:
        assert "no task '9.9'" in await error(
            client, "rewind_to_task", run_id=run_id, task_id="9.9"
        )
        out = await call(client, "rewind_to_task", run_id=run_id, task_id="1.3", resume=False)
        assert (out["reverted_to"], out["requeued"]) == ("1.2", ["1.3", "E2E"])
        assert out["resume"]["started"] is False
        assert (work / "hello.py").read_text() == 'print("Hello, world!")\n'  # 1.3's work gone
        assert (work / "greeting.py").is_file()  # 1.2's kept
        status = await call(client, "run_status", run_id=run_id)
        assert status["run"]["status"] == "PAUSED"
        assert {t["task_id"]: t["status"] for t in status["tasks"]} == {
            "1.1": "COMPLETED",
            "1.2": "COMPLETED",
            "1.3": "PENDING",
            "E2E": "PENDING",
        }
        # resuming a PENDING task resumes the run, which redoes the rest
        out = await call(client, "resume_task", run_id=run_id, task_id="1.3")
        assert out["resume"]["started"] is True

    session(tmp_path, body)
    assert set(wait_until_done(tmp_path, run_id).values()) == {"COMPLETED"}
    assert "greet" in (work / "hello.py").read_text()
    branch = subprocess.run(
        [*git, "log", "--format=%s", f"orchestrator/{run_id}"], capture_output=True, text=True
    ).stdout
    assert "Revert workdir to checkpoint 1.2" in branch


@pytest.mark.claude
@needs_claude_binary
def test_claude_code_answers_the_question_through_orchestrator_mcp(tmp_path: Path) -> None:
    """A person's own Claude Code, with `orchestrator mcp` added as a server, answers the paused
    run's question (the real bundled binary; its model turn scripted on 127.0.0.1)."""
    run_id = paused_run(tmp_path)
    esc_id = _open_ids(tmp_path)[0]
    env = cli_env(tmp_path)
    config = tmp_path / "mcp.json"
    server_env = {k: env[k] for k in ("ORCHESTRATOR_DB", "ORCHESTRATOR_HOME")}
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "orchestrator": {
                        "command": sys.executable,
                        "args": ["-m", "orchestrator", "mcp"],
                        "env": server_env,
                    }
                }
            }
        )
    )
    tool = "mcp__orchestrator__answer_escalation"
    script = [ToolCall(tool, {"escalation_id": esc_id, "option": "B"}), Text("Answered: B.")]
    with AnthropicServer(script) as model:
        proc = subprocess.run(
            [
                str(CLAUDE_BINARY),
                "-p",
                "Answer the orchestrator's open question: B, the in-memory cache.",
                *("--mcp-config", str(config), "--strict-mcp-config"),
                *("--allowedTools", tool, "--output-format", "json"),
            ],
            env=model.claude_code_env(tmp_path / "home"),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=90,
        )
        results = [tool_result_text(r) for req in model.requests for r in tool_results(req)]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["result"] == "Answered: B."
    assert len(results) == 1 and '"channel":"mcp"' in results[0], results
    store = Store(f"sqlite:///{tmp_path / 'state.db'}")
    esc = store.escalation(esc_id)
    store.close()
    assert esc is not None
    assert (esc["status"], esc["channel"], esc["response_kind"]) == ("answered", "mcp", "option")
    assert esc["wait_s"] is not None and esc["wait_s"] > 0
    assert wait_until_done(tmp_path, run_id) == {"1.1": "COMPLETED"}  # resumed in the background


def test_serve_exposes_the_tools_at_mcp_behind_its_token(tmp_path: Path) -> None:
    """`orchestrator serve` mounts the same server (streamable HTTP) at /mcp/, behind the page's
    token: refused without it, answers with it (channel mcp) and the run resumes."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    run_id = paused_run(tmp_path)
    token = "mcp-test-token"
    proc = cli_popen(tmp_path, "serve", "--port", "0", ORCHESTRATOR_SERVE_TOKEN=token)
    try:
        assert proc.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:\d+/", proc.stdout.readline())
        assert match, proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
        url = match.group(0) + "mcp/"
        refused = httpx.post(url, json={}, trust_env=False)
        assert refused.status_code == 401, refused.text

        async def main() -> None:
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                create_mcp_http_client(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                inbox = (await call(client, "list_escalations", run_id=run_id))["escalations"]
                out = await call(
                    client, "answer_escalation", escalation_id=inbox[0]["id"], text="B"
                )
                assert out["escalation"]["channel"] == "mcp"
                assert out["resume"]["started"] is True

        anyio.run(main)
        assert wait_until_done(tmp_path, run_id) == {"1.1": "COMPLETED"}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
