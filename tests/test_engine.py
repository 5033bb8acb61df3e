"""Behaviour the reshaped engine fixed (issue 7 §7): each of these failed before.

Real CLI subprocesses, the replay agent writing real files, real gates and a real git workdir.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.helpers import cli, status_json


def _write(tmp: Path, plan: str, scenario: str) -> tuple[Path, Path]:
    (tmp / "plan.md").write_text(plan, encoding="utf-8")
    (tmp / "plan.replay.yaml").write_text(scenario, encoding="utf-8")
    return tmp / "plan.md", tmp / "plan.replay.yaml"


def _events(tmp: Path) -> list[dict[str, Any]]:
    import sqlite3

    con = sqlite3.connect(tmp / "state.db")
    rows = con.execute("SELECT kind, task_id, payload_json FROM events ORDER BY id").fetchall()
    con.close()
    return [{"kind": k, "task_id": t, "payload": json.loads(p)} for k, t, p in rows]


ONE_TASK = """# Milestone 1: Rate limits

## Task 1.1: Create hello.py
**File:** `hello.py`
**Description:** Write hello.py.
"""


def test_a_rate_limit_within_the_wait_is_slept_out_then_the_task_runs_again(tmp_path: Path) -> None:
    plan, _ = _write(
        tmp_path,
        ONE_TASK,
        "tasks:\n  '1.1':\n    - rate_limit: 1.5\n    - writes: {hello.py: 'print(1)'}\n"
        "      output: 'STATUS: completed'\n",
    )
    started = time.monotonic()
    proc = cli(tmp_path, "run", str(plan), "--agent", "replay", "--workdir", "w", "--no-wait")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - started >= 1.4
    assert "waiting" in proc.stdout and "instead of burning attempts" in proc.stdout
    data = status_json(tmp_path)
    assert [a["verdict"] for a in data["attempts"]] == ["rate_limited", "completed"]
    assert [t["status"] for t in data["tasks"]] == ["COMPLETED"]


def test_a_rate_limit_past_the_wait_pauses_with_an_escalation(tmp_path: Path) -> None:
    plan, _ = _write(tmp_path, ONE_TASK, "tasks:\n  '1.1':\n    - rate_limit: 3600\n")
    proc = cli(
        tmp_path,
        "run",
        str(plan),
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--no-wait",
        ORCHESTRATOR_RATE_LIMIT_WAIT="5",
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    data = status_json(tmp_path)
    assert [t["status"] for t in data["tasks"]] == ["PAUSED_FOR_INTERVENTION"]
    [esc] = data["escalations"]
    assert esc["category"] == "external_service" and esc["recommendation"] == "Wait and retry"
    run_dir = next((tmp_path / "runs").iterdir())
    assert (run_dir / "1.1" / "escalation" / "level-2" / "hil-request.json").is_file()


REVERT_PLAN = """# Milestone 1: Models then app

## Task 1.1: Create the model
**Files:** `src/models.py`
**Description:** Write src/models.py with OK = True.

## Task 1.2: Create the app
**Files:** `src/app.py`
**Depends on:** 1.1
**Description:** Write src/app.py that uses the model.
**Tests:**
```bash
python3 -B src/app.py
```
"""

REVERT_SCENARIO = """tasks:
  '1.1':
    - writes: {src/models.py: "OK = False\\n"}
      output: "STATUS: completed"
    - writes: {src/models.py: "OK = True\\n"}
      output: "STATUS: completed"
  '1.2':
    - writes: {src/app.py: "import sys; sys.path.insert(0, 'src'); import models\\nassert models.OK, 'models.OK is False in src/models.py'\\n"}
      output: "STATUS: completed"
"""


def test_after_a_revert_the_reverted_tasks_run_again_before_the_current_one(
    tmp_path: Path,
) -> None:
    plan, _ = _write(tmp_path, REVERT_PLAN, REVERT_SCENARIO)
    work = tmp_path / "w"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    proc = cli(
        tmp_path,
        "run",
        str(plan),
        "--agent",
        "replay",
        "--workdir",
        "w",
        "--no-wait",
        "--consultant",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    order = [
        (e["task_id"], e["payload"]["attempt"])
        for e in _events(tmp_path)
        if e["kind"] == "attempt_started"
    ]
    # three failures of 1.2 name src/models.py: the consultant reverts to before 1.1, which runs
    # again first; then 1.2 passes against the redone model
    assert order == [("1.1", 1), ("1.2", 1), ("1.2", 2), ("1.2", 3), ("1.1", 2), ("1.2", 4)]
    assert (work / "src" / "models.py").read_text() == "OK = True\n"
    reverted = [e for e in _events(tmp_path) if e["kind"] == "task_reverted"]
    assert [e["task_id"] for e in reverted] == ["1.1"]
    assert "redoing 1.1 first" in proc.stdout


CHECKPOINT_PLAN = """---
phase: 01-demo
plan: 01
type: execute
wave: 1
depends_on: []
files_modified: [db.txt, app.txt]
autonomous: false
---

<objective>Pick a database, then build on it.</objective>

<tasks>
<task type="checkpoint:decision" gate="blocking">
  <decision>Which database?</decision>
  <context>The app needs storage.</context>
  <options>
    <option id="postgres"><name>PostgreSQL</name><pros>robust</pros><cons>a server</cons></option>
    <option id="sqlite"><name>SQLite</name><pros>a file</pros><cons>one writer</cons></option>
  </options>
  <resume-signal>Select: postgres or sqlite</resume-signal>
</task>

<task type="auto">
  <name>Task 2: Use the database</name>
  <files>app.txt</files>
  <action>Write app.txt naming the database chosen.</action>
  <verify>test -f app.txt</verify>
  <done>app.txt exists</done>
</task>
</tasks>
"""


def test_a_gsd_decision_checkpoint_blocks_later_tasks_and_offers_its_options(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "PLAN.md"
    plan.write_text(CHECKPOINT_PLAN, encoding="utf-8")
    (tmp_path / "PLAN.replay.yaml").write_text(
        "tasks:\n  '2':\n    - writes: {app.txt: 'sqlite'}\n      output: 'STATUS: completed'\n",
        encoding="utf-8",
    )
    proc = cli(tmp_path, "run", str(plan), "--agent", "replay", "--workdir", "w", "--no-wait")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    data = status_json(tmp_path)
    statuses = {t["task_id"]: t["status"] for t in data["tasks"]}
    assert statuses == {"1": "PAUSED_FOR_INTERVENTION", "2": "PENDING"}  # task 2 waits
    [esc] = data["escalations"]
    assert esc["asker"] == "plan"
    assert esc["options"][:2] == ["PostgreSQL", "SQLite"] or any(
        "SQLite" in o for o in esc["options"][:2]
    )
    ans = cli(tmp_path, "answer", str(esc["id"]), "--option", "B")
    assert ans.returncode == 0, ans.stderr
    done = cli(tmp_path, "resume")
    assert done.returncode == 0, done.stdout + done.stderr
    prompt = next((tmp_path / "runs").iterdir()) / "2" / "attempt-1" / "prompt.md"
    assert "SQLite" in prompt.read_text()  # the decision reaches the task after the checkpoint


def test_a_resumed_run_keeps_the_agent_options_it_was_started_with(tmp_path: Path) -> None:
    from orchestrator.api import resume_settings
    from orchestrator.config import load_settings

    started, _ = load_settings(
        base=tmp_path, overrides={"agent": "replay", "agent_options.model": "m-1"}, env={}
    )
    meta = started.model_dump()
    again = resume_settings(meta, {})
    assert again.agent_options("1.1")["model"] == "m-1"
