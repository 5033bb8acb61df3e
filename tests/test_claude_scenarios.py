"""The judgment scenarios again, end to end: the orchestrator CLI drives the REAL bundled Claude Code
against a scripted Anthropic Messages API on 127.0.0.1 (no network, no key).

Each test writes a small plan into tmp_path, runs `python -m orchestrator run PLAN --agent claude`
as a subprocess with `server.claude_code_env(home)` in its environment, and asserts on what the
CLI printed, what `status`/`escalations --json` recorded, the files in the workdir, and what the
scripted server received (the prompts, the answers, the tool results).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import cli, cli_popen, needs_claude_binary, status_json

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

QUESTION = "Which cache?"
ASK = ToolCall(
    "AskUserQuestion",
    {
        "questions": [
            {
                "question": QUESTION,
                "header": "Cache",
                "options": [
                    {"label": "Redis", "description": "A shared server; survives restarts."},
                    {
                        "label": "In-memory",
                        "description": "A dict in the process; lost on restart.",
                    },
                ],
                "multiSelect": False,
            }
        ]
    },
)


def plan(tmp: Path, *tasks: tuple[str, str, str]) -> Path:
    """A milestone plan of (id, title, gate) tasks, the workdir `work/` beside it."""
    text = "# Cache\n"
    for task_id, title, gate in tasks:
        text += textwrap.dedent(f"""\
            ## Task {task_id}: {title}
            **Description:** {title}.
            **Tests:**
            ```bash
            {gate}
            ```
            """)
    (tmp / "plan.md").write_text(text)
    (tmp / "work").mkdir(exist_ok=True)
    return tmp / "plan.md"


CACHE_PLAN = (("1.1", "Add a cache in cache.py", "test -f cache.py"),)


def write(path: Path, content: str) -> ToolCall:
    return ToolCall("Write", {"file_path": str(path), "content": content})


def run(
    tmp: Path, server: AnthropicServer, *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return cli(tmp, *args, timeout=timeout, **server.claude_code_env(tmp / "home"))


def show(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def escalations(tmp: Path, *flags: str) -> list[dict[str, Any]]:
    proc = cli(tmp, "escalations", "--json", *flags)
    assert proc.returncode == 0, proc.stderr
    rows: list[dict[str, Any]] = json.loads(proc.stdout) if proc.stdout.strip() else []
    return rows


def wait_for_escalation(
    tmp: Path, runner: subprocess.Popen[str], timeout: float = 150
) -> dict[str, Any]:
    """Poll like a second human-facing process would, until the waiting runner has asked."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if runner.poll() is not None:
            out, err = runner.communicate()
            raise AssertionError(
                f"the runner exited {runner.returncode} before asking\n{out}\n{err}"
            )
        if (tmp / "state.db").exists():
            proc = cli(tmp, "escalations", "--json")
            if proc.returncode == 0 and proc.stdout.strip():
                rows = json.loads(proc.stdout)
                if rows:
                    return dict(rows[0])
        time.sleep(0.3)
    raise AssertionError("no escalation appeared")


def finish(runner: subprocess.Popen[str], timeout: float = 150) -> tuple[int, str, str]:
    try:
        out, err = runner.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        runner.kill()
        out, err = runner.communicate()
        raise AssertionError(f"the runner did not finish\n{out}\n{err}") from None
    return runner.returncode, out, err


def assistant_tool_names(req: RecordedRequest) -> list[str]:
    return [
        b.get("name", "")
        for m in req.body["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def session_header(req: RecordedRequest) -> str | None:
    return {k.lower(): v for k, v in req.headers.items()}.get("x-claude-code-session-id")


# -- A: the agent asks through AskUserQuestion ---------------------------------------------------
def test_a_no_wait_question_answer_then_resume_continues_the_same_session(tmp_path: Path) -> None:
    target = tmp_path / "work" / "cache.py"
    path = plan(tmp_path, *CACHE_PLAN)
    script = [ASK, write(target, "CACHE: dict[str, str] = {}\n"), "Added an in-memory cache."]
    with AnthropicServer(script) as server:
        first = run(
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
        assert "NEEDS HUMAN INPUT" in first.stdout
        assert len(server.model_requests) == 1 and not target.exists()

        [esc] = escalations(tmp_path)
        assert esc["question"] == QUESTION
        assert esc["options"] == ["Redis", "In-memory"]
        assert esc["category"] == "ambiguous_requirements"
        assert esc["detail"]["option_descriptions"] == {
            "Redis": "A shared server; survives restarts.",
            "In-memory": "A dict in the process; lost on restart.",
        }
        assert esc["detail"]["structured"] is True
        assert status_json(tmp_path)["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"

        ans = cli(tmp_path, "answer", str(esc["id"]), "--option", "B")
        assert ans.returncode == 0, show(ans)

        done = run(tmp_path, server, "resume", "--no-wait")
        assert done.returncode == 0, show(done)
        assert "Resuming Task 1.1 with guidance..." in done.stdout
        assert "Task 1.1: COMPLETED" in done.stdout

    assert target.read_text() == "CACHE: dict[str, str] = {}\n"
    resumed = server.model_requests[1]
    assert "AskUserQuestion" in assistant_tool_names(resumed)  # the earlier conversation is there
    assert resumed.contains("Add a cache in cache.py")  # the first prompt too
    assert resumed.contains("In-memory") and resumed.contains(QUESTION)  # and the answer
    assert session_header(resumed) == session_header(server.model_requests[0])
    data = status_json(tmp_path)
    attempts = data["attempts"]
    assert [a["verdict"] for a in attempts] == ["needs_human", "completed"]
    assert attempts[0]["session_id"] and attempts[0]["session_id"] == attempts[1]["session_id"]
    assert data["tasks"][0]["status"] == "COMPLETED"


def test_a2_wait_the_answer_goes_back_into_the_live_session(tmp_path: Path) -> None:
    target = tmp_path / "work" / "cache.py"
    path = plan(tmp_path, *CACHE_PLAN)
    script = [ASK, write(target, "CACHE: dict[str, str] = {}\n"), "Added an in-memory cache."]
    with AnthropicServer(script) as server:
        env = server.claude_code_env(tmp_path / "home")
        runner = cli_popen(
            tmp_path, "run", str(path), "--agent", "claude", "--workdir", "work", "--wait", **env
        )
        try:
            esc = wait_for_escalation(tmp_path, runner)
            assert esc["question"] == QUESTION and esc["options"] == ["Redis", "In-memory"]
            assert esc["detail"]["live"] is True
            assert len(server.model_requests) == 1  # the session waits, it did not go on
            ans = cli(tmp_path, "answer", str(esc["id"]), "--option", "B")
            assert ans.returncode == 0, show(ans)
            code, out, err = finish(runner)
        finally:
            if runner.poll() is None:
                runner.kill()
    assert code == 0, f"{out}\n{err}"
    assert "Task 1.1: COMPLETED" in out
    answered = tool_results(server.model_requests[1])
    assert len(answered) == 1 and not answered[0].get("is_error")
    assert "In-memory" in tool_result_text(answered[0])
    assert target.read_text() == "CACHE: dict[str, str] = {}\n"
    assert len({session_header(r) for r in server.model_requests}) == 1
    attempts = status_json(tmp_path)["attempts"]
    assert len(attempts) == 1 and attempts[0]["verdict"] == "completed"
    [row] = escalations(tmp_path, "--all")
    assert row["status"] == "answered" and row["channel"] == "cli"


# -- B: the agent keeps failing the gate ---------------------------------------------------------
def test_b_same_gate_failure_three_times_is_a_loop(tmp_path: Path) -> None:
    target = tmp_path / "work" / "cache.py"
    path = plan(tmp_path, ("1.1", "Add a cache in cache.py", "python3 cache.py"))
    broken = 'raise SystemExit("cache size must be 128, got 0")\n'
    script = [write(target, broken), "Added cache.py."] * 3
    with AnthropicServer(script) as server:
        proc = run(
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
    assert proc.returncode == 3, show(proc)
    assert "LOOP DETECTED: Task 1.1 failed 3 times with similar errors" in proc.stdout
    for n in (1, 2, 3):
        assert f"Task 1.1: FAILED (attempt {n}/3)" in proc.stdout
    data = status_json(tmp_path)
    assert [a["verdict"] for a in data["attempts"]] == ["failed"] * 3
    assert data["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"
    # each attempt is a fresh session; its first request carries the prompt
    firsts = [r for r in server.model_requests if not tool_results(r)]
    assert len(firsts) == 3
    assert not firsts[0].contains("cache size must be 128")
    for req in firsts[1:]:
        assert req.contains("What went wrong in earlier attempts")
        assert req.contains("cache size must be 128, got 0")  # the gate's output reached the agent
    assert len({session_header(r) for r in firsts}) == 3


# -- D: a destructive command is held before it runs --------------------------------------------
def data_folder(tmp: Path) -> Path:
    data = tmp / "data"
    data.mkdir()
    (data / "precious.db").write_text("rows")
    return data


def test_d_wait_destructive_command_is_held_and_denied_then_the_agent_finishes(
    tmp_path: Path,
) -> None:
    data = data_folder(tmp_path)
    target = tmp_path / "work" / "cache.py"
    command = f"rm -rf {data}"
    path = plan(tmp_path, *CACHE_PLAN)
    script = [
        ToolCall("Bash", {"command": command, "description": "Clean old data"}),
        write(target, "CACHE = {}\n"),
        "Left the data alone and added cache.py.",
    ]
    with AnthropicServer(script) as server:
        env = server.claude_code_env(tmp_path / "home")
        runner = cli_popen(
            tmp_path, "run", str(path), "--agent", "claude", "--workdir", "work", "--wait", **env
        )
        try:
            esc = wait_for_escalation(tmp_path, runner)
            assert esc["category"] == "extreme_destructive"
            assert esc["detail"]["command"] == command
            assert esc["options"] == ["Allow", "Deny"]
            assert (data / "precious.db").exists()  # held before it ran
            ans = cli(tmp_path, "answer", str(esc["id"]), "--option", "B")
            assert ans.returncode == 0, show(ans)
            code, out, err = finish(runner)
        finally:
            if runner.poll() is None:
                runner.kill()
    assert code == 0, f"{out}\n{err}"
    assert (data / "precious.db").read_text() == "rows"
    denied = tool_results(server.model_requests[1])
    assert len(denied) == 1 and denied[0].get("is_error")
    assert "Denied by a human" in tool_result_text(denied[0])
    assert target.read_text() == "CACHE = {}\n"
    data_ = status_json(tmp_path)
    assert data_["tasks"][0]["status"] == "COMPLETED" and len(data_["attempts"]) == 1


def test_d_no_wait_destructive_command_pauses_the_run_with_the_exact_command(
    tmp_path: Path,
) -> None:
    data = data_folder(tmp_path)
    command = f"rm -rf {data}"
    path = plan(tmp_path, *CACHE_PLAN)
    script = [
        ToolCall("Bash", {"command": command, "description": "Clean old data"}),
        "never asked for",
    ]
    with AnthropicServer(script) as server:
        proc = run(
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
        assert proc.returncode == 3, show(proc)
        assert len(server.model_requests) == 1 and server.turns_left == 1
    assert (data / "precious.db").read_text() == "rows"
    [esc] = escalations(tmp_path)
    assert esc["category"] == "extreme_destructive"
    assert esc["detail"]["command"] == command
    assert command in esc["question"]
    assert status_json(tmp_path)["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"


# -- E: no credentials ---------------------------------------------------------------------------
def test_e_no_api_key_fails_at_start_with_one_line(tmp_path: Path) -> None:
    path = plan(tmp_path, *CACHE_PLAN)
    home = tmp_path / "empty-home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "",
        "ANTHROPIC_AUTH_TOKEN": "",
        "CLAUDE_CODE_OAUTH_TOKEN": "",
        "CLAUDE_CONFIG_DIR": "",
        "CLAUDE_CODE_USE_BEDROCK": "",
        "CLAUDE_CODE_USE_VERTEX": "",
        "CLAUDE_CODE_USE_FOUNDRY": "",
    }
    proc = cli(
        tmp_path, "run", str(path), "--agent", "claude", "--workdir", "work", "--no-wait", **env
    )
    assert proc.returncode == 2, show(proc)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ANTHROPIC_API_KEY" in lines[0] and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert not (tmp_path / "runs").exists()
    runs = cli(tmp_path, "runs", "--json")
    assert runs.returncode == 0 and json.loads(runs.stdout) == []


# -- F: cost, tokens and turns; the run's budget ---------------------------------------------------
def test_f_costs_are_recorded_and_a_spent_budget_pauses_the_run(tmp_path: Path) -> None:
    first, second = tmp_path / "work" / "cache.py", tmp_path / "work" / "store.py"
    path = plan(
        tmp_path,
        ("1.1", "Add a cache in cache.py", "test -f cache.py"),
        ("1.2", "Add a store in store.py", "test -f store.py"),
    )
    script = [
        write(first, "CACHE = {}\n"),
        "Added cache.py.",
        write(second, "STORE = {}\n"),
        "Added store.py.",
    ]
    with AnthropicServer(script) as server:
        proc = run(
            tmp_path,
            server,
            "run",
            str(path),
            "--agent",
            "claude",
            "--workdir",
            "work",
            "--no-wait",
            "--max-budget-usd",
            "0.000001",
        )
        assert proc.returncode == 3, show(proc)
        assert len(server.model_requests) == 2  # the second task never reached the model
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "BUDGET REACHED" in proc.stdout
    assert first.exists() and not second.exists()
    data = status_json(tmp_path)
    [attempt] = data["attempts"]
    assert attempt["task_id"] == "1.1" and attempt["verdict"] == "completed"
    assert attempt["cost_usd"] is not None and attempt["cost_usd"] > 0
    assert attempt["tokens_in"] == 20 and attempt["tokens_out"] == 10  # two turns of 10 in / 5 out
    assert attempt["turns"] == 2
    statuses = {t["task_id"]: t["status"] for t in data["tasks"]}
    assert statuses == {"1.1": "COMPLETED", "1.2": "PAUSED_FOR_INTERVENTION"}
    [esc] = data["escalations"]
    assert esc["task_id"] == "1.2" and "budget" in esc["question"].lower()
    assert esc["detail"]["budget"] == "run" and esc["detail"]["spent_usd"] == attempt["cost_usd"]
