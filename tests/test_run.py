"""The run loop end to end through the real CLI: replay and command agents, gates, resume after kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.helpers import EXAMPLES, cli, cli_popen, status_json


def test_hello_demo_retries_once_then_completes(tmp_path: Path) -> None:
    proc = cli(
        tmp_path, "run", str(EXAMPLES / "hello.md"), "--agent", "replay", "--workdir", "work"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "Task 1.1: Create hello.py" in out
    assert "Invoking replay..." in out
    assert "→ Writing greeting.py" in out  # the agent's actions, as plain lines off a terminal
    assert "Task 1.2: FAILED (attempt 1/3)" in out
    assert "Retrying Task 1.2..." in out
    assert "Task 1.3: COMPLETED" in out
    assert "Run summary" in out
    data = status_json(tmp_path)
    # the plan's Milestone Verification runs last as task E2E; it passes without an agent attempt
    assert [(t["task_id"], t["status"]) for t in data["tasks"]] == [
        ("1.1", "COMPLETED"),
        ("1.2", "COMPLETED"),
        ("1.3", "COMPLETED"),
        ("E2E", "COMPLETED"),
    ]
    assert "Milestone verification: PASSED (2 checks)" in out
    assert [a["task_id"] for a in data["attempts"]] == ["1.1", "1.2", "1.2", "1.3"]
    assert (tmp_path / "work" / "hello.py").read_text().startswith("import sys")
    # the retry's prompt carries the failing gate's output
    run_id = data["run"]["id"]
    prompt2 = (tmp_path / "runs" / run_id / "1.2" / "attempt-2" / "prompt.md").read_text()
    assert "What went wrong in earlier attempts" in prompt2
    assert "Hello Ada" in prompt2
    # artifacts of every attempt: prompt, transcript, output, gate logs
    a1 = tmp_path / "runs" / run_id / "1.2" / "attempt-1"
    assert {"prompt.md", "transcript.jsonl", "output.txt"} <= {p.name for p in a1.iterdir()}
    assert (a1 / "gates" / "gate-1.log").exists()
    # the judge's decision and the gates it read are recorded with the attempt's verdict
    with sqlite3.connect(tmp_path / "state.db") as conn:
        payload = json.loads(
            conn.execute(
                "SELECT payload_json FROM events WHERE kind = 'attempt_finished' AND task_id = '1.2'"
                " ORDER BY id LIMIT 1"
            ).fetchone()[0]
        )
    assert payload["verdict"] == "failed" and payload["action"] == "retry", payload
    assert payload["reason"]
    assert payload["gates"] and all(g["exit_code"] != 0 for g in payload["gates"])
    assert payload["gates"][0]["log"].endswith("attempt-1/gates/gate-1.log")


def test_doomed_plan_stops_after_three_similar_failures(tmp_path: Path) -> None:
    proc = cli(
        tmp_path,
        "run",
        str(EXAMPLES / "doomed_to_fail.md"),
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--no-wait",
    )
    out = proc.stdout
    assert proc.returncode == 3, out + proc.stderr
    for n in (1, 2, 3):
        assert f"Task 1.1: FAILED (attempt {n}/3)" in out
    assert "LOOP DETECTED: Task 1.1 failed 3 times with similar errors" in out
    assert "Stopping to prevent resource waste." in out
    assert "Error similarity:" in out
    data = status_json(tmp_path)
    assert len(data["attempts"]) == 3
    assert data["tasks"][0]["status"] == "PAUSED_FOR_INTERVENTION"
    assert len(data["escalations"]) == 1
    run_id = data["run"]["id"]
    for n in (2, 3):
        prompt = (tmp_path / "runs" / run_id / "1.1" / f"attempt-{n}" / "prompt.md").read_text()
        assert "expected 100 lines" in prompt or "100" in prompt
        assert "What went wrong in earlier attempts" in prompt
    # aborting the escalation ends the task FAILED, exit 1
    esc = data["escalations"][0]["id"]
    assert cli(tmp_path, "answer", str(esc), "--abort").returncode == 0
    proc = cli(tmp_path, "resume", run_id)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert status_json(tmp_path)["tasks"][0]["status"] == "FAILED"


def _slow_scenario(tmp: Path, delay: float = 30) -> Path:
    (tmp / "plan.md").write_text(
        textwrap.dedent("""\
        # Slow
        ## Task 1.1: First
        **Description:** write a
        ## Task 1.2: Second
        **Description:** write b
        **Depends on:** Task 1.1
        ## Task 1.3: Third
        **Description:** write c
        """)
    )
    (tmp / "plan.replay.yaml").write_text(
        textwrap.dedent(f"""\
        tasks:
          "1.1": [{{output: done, writes: {{a.txt: a}}}}]
          "1.2": [{{output: done, writes: {{b.txt: b}}, delay: {delay}}}]
          "1.3": [{{output: done, writes: {{c.txt: c}}}}]
        """)
    )
    return tmp / "plan.md"


def _wait_for_attempt(db: Path, task_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    row = conn.execute(
                        "SELECT count(*) FROM attempts WHERE task_id = ? AND verdict IS NULL",
                        (task_id,),
                    ).fetchone()
                if row and row[0]:
                    return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.1)
    raise AssertionError(f"no running attempt for {task_id}")


def test_kill_9_mid_attempt_then_resume_finishes_without_rerunning(tmp_path: Path) -> None:
    plan = _slow_scenario(tmp_path)
    proc = cli_popen(tmp_path, "run", str(plan), "--agent", "replay", "--workdir", "w")
    _wait_for_attempt(tmp_path / "state.db", "1.2")
    # a second runner on the same live run is refused
    run_id = status_json(tmp_path)["run"]["id"]
    second = cli(tmp_path, "resume", run_id)
    assert second.returncode == 2
    assert "already being driven" in second.stderr
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    # the lock left by the dead process does not block resume; make the slow step fast now
    (tmp_path / "plan.replay.yaml").write_text(
        (tmp_path / "plan.replay.yaml").read_text().replace("delay: 30", "delay: 0")
    )
    done = cli(tmp_path, "resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "interrupted" in done.stdout
    data = status_json(tmp_path, run_id)
    assert [t["status"] for t in data["tasks"]] == ["COMPLETED"] * 3
    by_task = [(a["task_id"], a["verdict"]) for a in data["attempts"]]
    assert by_task.count(("1.1", "completed")) == 1  # never run twice
    assert ("1.2", "interrupted") in by_task and ("1.2", "completed") in by_task


def test_ctrl_c_exits_130_and_resume_continues(tmp_path: Path) -> None:
    plan = _slow_scenario(tmp_path)
    proc = cli_popen(tmp_path, "run", str(plan), "--agent", "replay", "--workdir", "w")
    _wait_for_attempt(tmp_path / "state.db", "1.2")
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    assert proc.returncode == 130
    data = status_json(tmp_path)
    assert data["run"]["status"] == "INTERRUPTED"
    assert data["attempts"][-1]["verdict"] == "interrupted"


def test_command_agent_runs_a_real_program(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        textwrap.dedent("""\
        import pathlib, sys
        prompt = pathlib.Path(sys.argv[1]).read_text()
        assert "Task 1.1" in prompt
        pathlib.Path("out.txt").write_text("made by " + sys.argv[2])
        print("STATUS: completed")
        """)
    )
    (tmp_path / "p.md").write_text(
        "## Task 1.1: Make out.txt\n**Tests:**\n```bash\ntest -f out.txt\n```\n"
    )
    proc = cli(
        tmp_path,
        "run",
        "p.md",
        "--agent",
        "command",
        "--workdir",
        "w",
        "--agent-cmd",
        f"{sys.executable} {agent} {{prompt_file}} {{task_id}}",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "w" / "out.txt").read_text() == "made by 1.1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("# nothing here\n", "no tasks"),
        ("## Task 1.1: A\n## Task 1.1: B\n", "duplicate"),
        ("## Task 1.1: A\n**Depends on:** Task 9.9\n", "9.9"),
    ],
)
def test_bad_plan_is_one_line_exit_2(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "bad.md").write_text(content)
    proc = cli(tmp_path, "run", "bad.md", "--agent", "replay")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.md" in lines[0] and message in lines[0].lower()


def test_invalid_config_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text("max_attempts = 'many'\n")
    proc = cli(tmp_path, "config", "show")
    assert proc.returncode == 2
    assert "max_attempts" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "orchestrator.toml").write_text("max_attempts = 5\n[gates]\ncommands = ['true']\n")
    proc = cli(tmp_path, "config", "show", "--json", ORCHESTRATOR_BRAIN="auto")
    assert proc.returncode == 0, proc.stderr
    settings = json.loads(proc.stdout)["settings"]
    assert settings["max_attempts"] == {"value": 5, "source": str(tmp_path / "orchestrator.toml")}
    assert settings["gates.commands"]["value"] == ["true"]
    assert settings["brain"] == {"value": "auto", "source": "environment"}
    assert settings["agent"]["source"] == "default"


def test_version_and_module_entry_point(tmp_path: Path) -> None:
    proc = cli(tmp_path, "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("orchestrator ")


def test_secrets_in_settings_never_reach_the_store_or_artifacts(tmp_path: Path) -> None:
    secret = "sk-test-0123456789abcdef"
    (tmp_path / "orchestrator.toml").write_text(
        f'[codex]\nmodel = "m"\nenv = {{ OPENAI_API_KEY = "{secret}" }}\n'
    )
    proc = cli(tmp_path, "run", str(EXAMPLES / "hello.md"), "--agent", "replay", "--workdir", "w")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = cli(tmp_path, "config", "show", "--json")
    assert secret not in shown.stdout and "<redacted>" in shown.stdout
    for path in [tmp_path / "state.db", *(tmp_path / "runs").rglob("*")]:
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    # a resumed run gets the secret from the config again, not from the store
    from orchestrator.api import open_store, resume_settings

    run_id = status_json(tmp_path)["run"]["id"]
    run = open_store(f"sqlite:///{tmp_path / 'state.db'}").run(run_id)
    assert run is not None
    meta = json.loads(run["settings_json"])
    assert meta["codex"]["env"]["OPENAI_API_KEY"] == "<redacted>"
    settings = resume_settings(
        meta, {"max_attempts": 4}, config_file=tmp_path / "orchestrator.toml"
    )
    assert settings.codex == {"model": "m", "env": {"OPENAI_API_KEY": secret}}
    assert settings.max_attempts == 4 and settings.agent == "replay"
