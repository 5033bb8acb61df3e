"""Resuming a run in the background after an answer given from elsewhere (the web page, MCP, a
notification's button): when no runner holds the run, `orchestrator resume RUN` is started as its
own process, logging to a file in the run's folder, so the person who answered from a phone sees
the work go on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.artifacts import run_folder
from orchestrator.models import UserError
from orchestrator.store import Store


def held(store: Store, run_id: str) -> bool:
    """A live runner holds this run's lock (its own process on this host, or a fresh heartbeat)."""
    row = store.run(run_id)
    if row is None:
        raise UserError(f"no run {run_id!r}; `orchestrator runs` lists them")
    return bool(row["lock_owner"]) and store._lock_live(row)


def start_resume(store: Store, run_id: str, *, db_url: str | None = None) -> Path | None:
    """Start `orchestrator resume RUN --no-wait` detached, unless a runner holds the run; returns
    the log file, or None when a runner already holds it (it picks the answer up by itself)."""
    if held(store, run_id):
        return None
    row = store.run(run_id)
    assert row is not None
    folder = run_folder(json.loads(row["settings_json"]), run_id)
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"resume-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    env = dict(os.environ)
    if db_url:
        env["ORCHESTRATOR_DB"] = db_url
    with log.open("ab") as out:
        subprocess.Popen(  # an argument list, no shell; run_id comes from the store
            [sys.executable, "-m", "orchestrator", "resume", run_id, "--no-wait"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=row["workdir"] if Path(row["workdir"]).is_dir() else None,
            env=env,
            start_new_session=True,
        )
    store.add_event(run_id, "resume_started", {"log": str(log)})
    return log
