"""Seed 000's three E2E scenarios (and the ladder around them) with the replay agent, through the CLI."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import textwrap
import time
from pathlib import Path

from tests.helpers import EXAMPLES, cli, cli_popen, status_json, terminal

AMBIGUOUS = str(EXAMPLES / "ambiguous_task.md")


def _run_dir(tmp: Path) -> Path:
    run_id = status_json(tmp)["run"]["id"]
    return tmp / "runs" / run_id


def test_scenario_a_in_a_terminal(tmp_path: Path) -> None:
    """A real pseudo-terminal: the panel, the prompt, the answer B, then completion."""
    term = terminal(
        tmp_path,
        ["run", AMBIGUOUS, "--agent", "replay", "--workdir", "w"],
        [(b"Your response (or 'skip' for recommendation)", b"B")],
    )
    text = term.text
    assert term.code == 0, text
    assert "NEEDS HUMAN INPUT" in text
    assert "Redis (distributed, persistent)" in text and "Recommendation:" in text
    assert "Why I'm asking:" in text
    assert "Resuming Task 1.1 with guidance..." in text
    assert "Task 1.1: COMPLETED" in text
    assert "attempt 1" in text and "→ " in text  # the live line while the agent works
    prompt2 = (_run_dir(tmp_path) / "1.1" / "attempt-2" / "prompt.md").read_text()
    assert "In-memory (fast, local only)" in prompt2
    esc = json.loads(cli(tmp_path, "escalations", "--all", "--json").stdout)[0]
    assert (esc["channel"], esc["response_kind"], esc["status"]) == (
        "terminal",
        "option",
        "answered",
    )
    assert esc["wait_s"] is not None


def test_scenario_a_no_wait_answer_then_resume(tmp_path: Path) -> None:
    first = cli(tmp_path, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--no-wait")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "NEEDS HUMAN INPUT" in first.stdout and "orchestrator answer" in first.stdout
    hil = json.loads(
        (_run_dir(tmp_path) / "1.1" / "escalation" / "level-2" / "hil-request.json").read_text()
    )
    assert hil["question_for_user"].startswith("The task says to add caching")
    escs = json.loads(cli(tmp_path, "escalations", "--json").stdout)
    assert len(escs) == 1 and escs[0]["recommendation"] == "B for simplicity"
    assert escs[0]["category"] == "ambiguous_requirements"
    ans = cli(tmp_path, "answer", str(escs[0]["id"]), "--option", "B")
    assert ans.returncode == 0, ans.stderr
    again = cli(tmp_path, "answer", str(escs[0]["id"]), "--option", "A")
    assert (
        again.returncode == 2 and "already answered" in again.stderr and "In-memory" in again.stderr
    )
    done = cli(tmp_path, "resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Resuming Task 1.1 with guidance..." in done.stdout
    assert (tmp_path / "w" / "orchestrator" / "cache.py").exists()
    decision = _run_dir(tmp_path) / "1.1" / "escalation" / "level-2" / "user-decision.json"
    assert json.loads(decision.read_text())["chosen_option"] == "B"
    resolution = json.loads((decision.parent / "resolution.json").read_text())
    assert resolution["action"] == "option" and resolution["response"].startswith("B) In-memory")
    events = [e["kind"] for e in _events(tmp_path)]
    assert "escalation" in events and "task_resumed" in events


def _events(tmp: Path) -> list[dict[str, object]]:
    with sqlite3.connect(tmp / "state.db") as conn:
        return [
            {"kind": k, "payload": json.loads(p)}
            for k, p in conn.execute("SELECT kind, payload_json FROM events ORDER BY id")
        ]


def test_wait_mode_continues_within_a_second_of_an_answer_from_another_process(
    tmp_path: Path,
) -> None:
    proc = cli_popen(tmp_path, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--wait")
    deadline = time.monotonic() + 60
    esc_id = None
    while time.monotonic() < deadline and esc_id is None:
        time.sleep(0.2)
        out = cli(tmp_path, "escalations", "--json")
        rows = json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else []
        esc_id = rows[0]["id"] if rows else None
    assert esc_id is not None, _stopped(proc, out)
    assert cli(tmp_path, "answer", str(esc_id), "--recommended").returncode == 0
    assert proc.wait(timeout=60) == 0
    with sqlite3.connect(tmp_path / "state.db") as conn:
        answered = conn.execute(
            "SELECT answered_at FROM escalations WHERE id = ?", (esc_id,)
        ).fetchone()[0]
        started = conn.execute("SELECT started_at FROM attempts WHERE number = 2").fetchone()[0]
    assert 0 <= started - answered < 1.0


def _stopped(proc: subprocess.Popen[str], last: subprocess.CompletedProcess[str]) -> str:
    """Why a runner showed no escalation: what it and the last `escalations` printed."""
    proc.kill()
    stdout, stderr = proc.communicate()
    return f"runner:\n{stdout[-3000:]}\n{stderr[-3000:]}\nescalations:\n{last.stdout}{last.stderr}"


def _plan(tmp: Path, scenario: str, body: str = "") -> Path:
    (tmp / "p.md").write_text(
        textwrap.dedent("""\
        # P
        ## Task 1.1: Parse the config
        **Tests:**
        ```bash
        test -f done.txt
        ```
        """)
        + body
    )
    (tmp / "p.replay.yaml").write_text(textwrap.dedent(scenario))
    return tmp / "p.md"


def test_scenario_c_guidance_does_not_help_loop_after_three_more(tmp_path: Path) -> None:
    _plan(
        tmp_path,
        """\
        tasks:
          "1.1":
            - output: "STATUS: needs_human\\nQUESTION: YAML or TOML?\\nOPTIONS:\\nA) YAML\\nB) TOML\\nRECOMMENDATION: A"
            - output: "Tried.\\nTraceback (most recent call last):\\nValueError: cannot parse line 3 of config.yaml"
        """,
    )
    first = cli(tmp_path, "run", "p.md", "--agent", "replay", "--workdir", "w", "--no-wait")
    assert first.returncode == 3
    esc = json.loads(cli(tmp_path, "escalations", "--json").stdout)[0]["id"]
    assert cli(tmp_path, "answer", str(esc), "Use TOML with tomllib").returncode == 0
    second = cli(tmp_path, "resume", "--no-wait")
    assert second.returncode == 3, second.stdout
    assert "LOOP DETECTED: Task 1.1 failed 3 times with similar errors" in second.stdout
    data = status_json(tmp_path)
    # the question was escalated, but its attempt left the gate failing: agent text outranks no gate
    assert [a["verdict"] for a in data["attempts"]] == ["failed", "failed", "failed", "failed"]
    assert [a["decision"] for a in data["attempts"]] == ["escalate", "retry", "retry", "escalate"]
    for n in (2, 3, 4):
        prompt = (_run_dir(tmp_path) / "1.1" / f"attempt-{n}" / "prompt.md").read_text()
        assert "Use TOML with tomllib" in prompt


def test_paused_task_does_not_block_independent_tasks(tmp_path: Path) -> None:
    _plan(
        tmp_path,
        """\
        tasks:
          "1.1": [{output: "STATUS: needs_human\\nQUESTION: Which one?\\nOPTIONS:\\nA) x\\nB) y"}]
          "1.2": [{output: done, writes: {other.txt: ok}}]
          "1.3": [{output: done}]
        """,
        body=textwrap.dedent("""\
        ## Task 1.2: Independent
        **Description:** other work
        ## Task 1.3: Needs 1.1
        **Depends on:** Task 1.1
        """),
    )
    proc = cli(tmp_path, "run", "p.md", "--agent", "replay", "--workdir", "w", "--no-wait")
    assert proc.returncode == 3
    statuses = {t["task_id"]: t["status"] for t in status_json(tmp_path)["tasks"]}
    assert statuses == {"1.1": "PAUSED_FOR_INTERVENTION", "1.2": "COMPLETED", "1.3": "PENDING"}


def test_always_escalate_category_never_retries(tmp_path: Path) -> None:
    _plan(
        tmp_path,
        """\
        tasks:
          "1.1": [{output: "Deploy failed: 401 Unauthorized from the Stripe API (invalid API key).", exit_code: 1}]
        """,
    )
    proc = cli(tmp_path, "run", "p.md", "--agent", "replay", "--workdir", "w", "--no-wait")
    assert proc.returncode == 3
    data = status_json(tmp_path)
    assert len(data["attempts"]) == 1
    assert data["escalations"][0]["category"] == "external_service"
    assert (
        "authentication" in data["escalations"][0]["why"].lower()
        or "network" in data["escalations"][0]["why"]
    )


def test_hard_cap_pauses_and_records_the_seed_003_event(tmp_path: Path) -> None:
    _plan(
        tmp_path,
        """\
        tasks:
          "1.1":
            - output: "ImportError: No module named 'yaml'"
            - output: "TypeError: expected str, got int"
            - output: "KeyError: 'name'"
        """,
    )
    proc = cli(
        tmp_path,
        "run",
        "p.md",
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--no-wait",
        ORCHESTRATOR_MAX_TOTAL_ATTEMPTS="2",
        ORCHESTRATOR_MAX_ATTEMPTS="5",
    )
    assert proc.returncode == 3, proc.stdout
    assert "ATTEMPT CAP REACHED" in proc.stdout
    assert len(status_json(tmp_path)["attempts"]) == 2
    seed003 = [e["payload"] for e in _events(tmp_path) if e["kind"] == "escalation"]
    assert seed003 == [{"task_id": "1.1", "attempt_count": 2, "state": "PAUSED_FOR_INTERVENTION"}]


def test_consultant_level_1_then_level_2_files(tmp_path: Path) -> None:
    proc = cli(
        tmp_path,
        "run",
        str(EXAMPLES / "doomed_to_fail.md"),
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--no-wait",
        "--consultant",
    )
    assert proc.returncode == 3, proc.stdout
    esc = _run_dir(tmp_path) / "1.1" / "escalation"
    assert {p.name for p in (esc / "level-1").iterdir()} >= {
        "trigger.json",
        "consultant-decision.json",
        "updated-config.yaml",
    }
    decision = json.loads((esc / "level-1" / "consultant-decision.json").read_text())
    assert (
        decision["decision"]["action"] == "retry_with_changes"
        and decision["decision"]["additional_hints"]
    )
    hil = json.loads((esc / "level-2" / "hil-request.json").read_text())
    assert hil["summary"]["total_attempts"] == 6 and hil["summary"]["level_1_interventions"] == 1
    assert len(status_json(tmp_path)["attempts"]) == 6
    assert "FAILED (attempt 3/3, after the consultant)" in proc.stdout
    assert (
        "Spent: 6 attempts" in proc.stdout and "Learning:" in proc.stdout
    )  # seed 002's level-2 summary
    prompt4 = (_run_dir(tmp_path) / "1.1" / "attempt-4" / "prompt.md").read_text()
    assert decision["decision"]["additional_hints"][0][:40] in prompt4


def test_user_decision_file_answers_like_the_cli(tmp_path: Path) -> None:
    assert (
        cli(
            tmp_path, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w", "--no-wait"
        ).returncode
        == 3
    )
    decision = _run_dir(tmp_path) / "1.1" / "escalation" / "level-2" / "user-decision.json"
    decision.write_text(json.dumps({"chosen_option": "B", "user_comment": "keep it simple"}))
    done = cli(tmp_path, "resume")
    assert done.returncode == 0, done.stdout
    esc = json.loads(cli(tmp_path, "escalations", "--all", "--json").stdout)[0]
    assert esc["channel"] == "file" and esc["response"].startswith("B) In-memory")


def _milestone(tmp: Path, e2e_attempts: str) -> None:
    (tmp / "m.md").write_text(
        textwrap.dedent("""\
        # M
        ## Task 1.1: Build
        **Description:** build it
        ## Milestone Verification
        ```bash
        test -f final.txt
        python3 -B -c "import pathlib; assert pathlib.Path('final.txt').read_text() == 'ok', 'final.txt is wrong'"
        ```
        """)
    )
    (tmp / "m.replay.yaml").write_text(
        "tasks:\n  '1.1': [{output: built, writes: {a.txt: a}}]\n  E2E:\n" + e2e_attempts
    )


def test_milestone_verification_failure_gets_fix_attempts(tmp_path: Path) -> None:
    _milestone(tmp_path, "    - {output: fixed, writes: {final.txt: ok}}\n")
    proc = cli(tmp_path, "run", "m.md", "--agent", "replay", "--workdir", "w", "--no-wait")
    assert proc.returncode == 0, proc.stdout
    assert "Milestone verification: FAILED (2 of 2 checks)" in proc.stdout
    data = status_json(tmp_path)
    assert {t["task_id"]: t["status"] for t in data["tasks"]} == {
        "1.1": "COMPLETED",
        "E2E": "COMPLETED",
    }
    prompt = (_run_dir(tmp_path) / "E2E" / "attempt-1" / "prompt.md").read_text()
    assert "test -f final.txt" in prompt


def test_milestone_verification_oscillation_escalates(tmp_path: Path) -> None:
    _milestone(
        tmp_path,
        textwrap.indent(
            textwrap.dedent("""\
        - {output: "try 1", writes: {other.txt: x}}
        - {output: "try 2", writes: {final.txt: wrong}}
        - {output: "try 3", deletes: [final.txt]}
        """),
            "    ",
        ),
    )
    proc = cli(tmp_path, "run", "m.md", "--agent", "replay", "--workdir", "w", "--no-wait")
    assert proc.returncode == 3, proc.stdout
    assert "LOOP DETECTED" in proc.stdout
    attempts = [a for a in status_json(tmp_path)["attempts"] if a["task_id"] == "E2E"]
    assert len(attempts) == 3  # A-B-A stopped it before the cap of 5


def test_gsd_human_checkpoint_waits_for_a_person(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text(
        textwrap.dedent("""\
        ---
        phase: 01-demo
        plan: 01
        autonomous: false
        ---
        <tasks>
        <task type="auto">
          <name>Task 1: Write notes</name>
          <files>notes.txt</files>
          <action>Write notes.txt</action>
          <verify>Run: `test -f notes.txt`</verify>
          <done>notes.txt exists</done>
        </task>
        <task type="checkpoint:human-verify">
          <name>Task 2: Check the notes read well</name>
          <action>Read notes.txt</action>
        </task>
        </tasks>
        """)
    )
    (tmp_path / "PLAN.replay.yaml").write_text(
        "tasks:\n  '1': [{output: done, writes: {notes.txt: hi}}]\n"
    )
    first = cli(tmp_path, "run", "PLAN.md", "--agent", "replay", "--workdir", "w", "--no-wait")
    assert first.returncode == 3, first.stdout + first.stderr
    esc = json.loads(cli(tmp_path, "escalations", "--json").stdout)[0]
    assert esc["task_id"] == "2" and esc["question"].startswith("Human checkpoint: Check the notes")
    assert cli(tmp_path, "answer", str(esc["id"]), "--option", "A").returncode == 0
    done = cli(tmp_path, "resume")
    assert done.returncode == 0, done.stdout
    data = status_json(tmp_path)
    assert {t["task_id"]: t["status"] for t in data["tasks"]} == {
        "1": "COMPLETED",
        "2": "COMPLETED",
    }
    assert [a["task_id"] for a in data["attempts"]] == ["1"]  # no agent ran for the checkpoint
