"""Validate, lock, then write: a resume that is refused records nothing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import textwrap
import time
from pathlib import Path
from typing import Any

from tests.helpers import EXAMPLES, cli, cli_popen, status_json

AMBIGUOUS_PLAN = str(EXAMPLES / "ambiguous_task.md")


def _row(db: Path, run_id: str) -> dict[str, Any]:
    """What a resume may change: the run's row (but its heartbeat), its tasks and events."""
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        run = dict(conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone())
        run.pop("lock_heartbeat", None)
        tasks = [tuple(r) for r in conn.execute("SELECT * FROM tasks WHERE run_id = ?", (run_id,))]
        n_events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return {"run": run, "tasks": tasks, "events": n_events}


def test_a_refused_resume_records_nothing_and_the_next_plain_resume_works(tmp_path: Path) -> None:
    first = cli(tmp_path, "run", AMBIGUOUS_PLAN, "--agent", "replay", "--workdir", "w")
    assert first.returncode == 3, first.stdout + first.stderr
    run_id = status_json(tmp_path)["run"]["id"]
    [esc] = json.loads(cli(tmp_path, "escalations", "--json").stdout)
    assert cli(tmp_path, "answer", str(esc["id"]), "--option", "B").returncode == 0
    before = _row(tmp_path / "state.db", run_id)
    for bad in (
        ("--agent", "bogus"),  # an unknown agent: refused by the settings
        ("--agent", "command"),  # a known agent that cannot start (no --agent-cmd)
        ("--max-attempts", "0"),
    ):
        proc = cli(tmp_path, "resume", run_id, *bad)
        assert proc.returncode == 2, (bad, proc.stdout + proc.stderr)
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert _row(tmp_path / "state.db", run_id) == before, bad
    done = cli(tmp_path, "resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert status_json(tmp_path, run_id)["run"]["status"] == "COMPLETED"


def test_a_resume_of_a_locked_run_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "plan.md").write_text("## Task 1.1: Slow\n**Description:** wait\n")
    (tmp_path / "plan.replay.yaml").write_text(
        textwrap.dedent("""\
        tasks:
          "1.1": [{output: done, writes: {a.txt: a}, delay: 30}]
        """)
    )
    proc = cli_popen(tmp_path, "run", "plan.md", "--agent", "replay", "--workdir", "w")
    try:
        deadline = time.monotonic() + 60
        run_id = None
        while time.monotonic() < deadline and run_id is None:
            time.sleep(0.2)
            try:
                with sqlite3.connect(f"file:{tmp_path / 'state.db'}?mode=ro", uri=True) as conn:
                    row = conn.execute(
                        "SELECT run_id FROM attempts WHERE verdict IS NULL"
                    ).fetchone()
            except sqlite3.OperationalError:  # not created or migrated yet
                continue
            run_id = row[0] if row else None
        assert run_id is not None, "the run never started its attempt"
        before = _row(tmp_path / "state.db", run_id)
        again = cli(tmp_path, "resume", run_id, "--max-attempts", "9", "--no-checkpoints")
        assert again.returncode == 2 and "already being driven" in again.stderr, again.stderr
        after = _row(tmp_path / "state.db", run_id)
        assert after == before
        assert json.loads(after["run"]["settings_json"])["max_attempts"] == 3
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
