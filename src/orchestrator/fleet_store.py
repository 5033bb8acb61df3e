"""What the fleet reads and writes in the shared store, beside what a runner records.

A fleet run is a run with an `origin` (the repository its workers clone and push to). Each
attempt records the worker that ran it (`Worker`): the name shown by `status`, `escalations` and
the web page, and the host, PID and start time that tell whether that worker still lives. A task
is handled by one worker at a time (the engine's lock); a worker starting a task whose last
attempt has no verdict takes it over: that attempt becomes `interrupted` here, and its agent is
killed at once when its worker was on this machine and is dead, else when that machine's next
worker starts (`orphans`)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select, update

from orchestrator.agents import process
from orchestrator.lock import _pid_alive
from orchestrator.rows import DONE
from orchestrator.schema import attempts, runs
from orchestrator.store import Store


@dataclass(frozen=True)
class Worker:
    """Who runs an attempt: `name` as people see it; host, PID and start time to tell it alive."""

    name: str
    host: str
    pid: int
    started: str | None

    @classmethod
    def me(cls, name: str | None = None) -> Worker:
        host, pid = socket.gethostname(), os.getpid()
        return cls(name or f"{host}:{pid}", host, pid, process.stamp(pid))

    @property
    def mark(self) -> str:
        """What every process this worker starts carries (`process.supervised`)."""
        return f"worker:{self.host}:{self.pid}:{self.started}"

    def alive(self) -> bool:
        """Only answerable on its own host (elsewhere: assumed alive)."""
        if self.host != socket.gethostname():
            return True
        if not _pid_alive(self.pid):
            return False
        now = process.stamp(self.pid)
        return now is None or self.started is None or now == self.started


def _worker_of(row: Any) -> Worker | None:
    if row["worker_host"] is None or row["worker_pid"] is None:
        return None
    return Worker(row["worker"] or "", row["worker_host"], row["worker_pid"], row["worker_started"])


# -- runs --------------------------------------------------------------------------------------
def set_origin(store: Store, run_id: str, origin: str) -> None:
    with store.tx() as conn:
        conn.execute(update(runs).where(runs.c.id == run_id).values(origin=origin))


def origin(store: Store, run_id: str) -> str | None:
    with store.engine.connect() as conn:
        value = conn.execute(select(runs.c.origin).where(runs.c.id == run_id)).scalar()
    return str(value) if value else None


def settle(store: Store, run_id: str, order: list[Any]) -> tuple[str, list[str]]:
    """The run's status from its tasks' (recorded when it changed), and the tasks ready to run:
    PENDING with every dependency done, none once a task failed. A finished run stays as it is;
    a paused one (nothing ready or running) runs again as soon as a task is ready again."""
    run = store.run(run_id)
    assert run is not None
    statuses = {t["task_id"]: t["status"] for t in store.tasks(run_id)}
    if run["status"] in ("COMPLETED", "FAILED"):
        return run["status"], []
    ready: list[str] = []
    running = "RUNNING" in statuses.values()
    if "FAILED" in statuses.values():
        status = "RUNNING" if running else "FAILED"
    elif all(s in DONE for s in statuses.values()):
        status = "COMPLETED"
    else:
        ready = [
            t.id
            for t in order
            if statuses[t.id] == "PENDING" and all(statuses[d] in DONE for d in t.depends_on)
        ]
        status = "RUNNING" if ready or running else "PAUSED"
    if status != run["status"]:
        store.set_run_status(run_id, status)
    return status, ready


# -- attempts ------------------------------------------------------------------------------------
def record_worker(store: Store, run_id: str, task_id: str, number: int, worker: Worker) -> None:
    """The worker running this attempt (written as it starts, before its agent)."""
    with store.tx() as conn:
        conn.execute(
            update(attempts)
            .where(
                attempts.c.run_id == run_id,
                attempts.c.task_id == task_id,
                attempts.c.number == number,
            )
            .values(
                worker=worker.name,
                worker_host=worker.host,
                worker_pid=worker.pid,
                worker_started=worker.started,
            )
        )


def still_open(store: Store, run_id: str, task_id: str, number: int) -> bool:
    """The attempt has no verdict yet: no other worker took its task over."""
    with store.engine.connect() as conn:
        row = conn.execute(
            select(attempts.c.verdict).where(
                attempts.c.run_id == run_id,
                attempts.c.task_id == task_id,
                attempts.c.number == number,
            )
        ).first()
    return row is not None and row[0] is None


def take_over(store: Store, run_id: str, task_id: str, by: Worker) -> list[dict[str, Any]]:
    """The task's attempts without a verdict (their worker died, or was judged dead by the
    engine) become `interrupted` and the task PENDING, in one transaction; returns them."""
    with store.tx() as conn:
        return store._interrupt(conn, run_id, task_id, by=by.name)


def reap(store: Store, rows: list[dict[str, Any]]) -> list[int]:
    """Kill the agents of these attempts whose worker ran on this host and is dead (each
    group by its leader's stamp, and every process carrying that worker's mark); their
    groups are then forgotten. Returns the pids found."""
    found: list[int] = []
    for row in rows:
        worker = _worker_of(row)
        if worker is None or worker.host != socket.gethostname() or worker.alive():
            continue
        groups = [(int(row["pgid"]), row["pgid_started"])] if row["pgid"] is not None else []
        pids = process.reap(worker.mark, groups)
        found += pids
        with store.tx() as conn:
            conn.execute(update(attempts).where(attempts.c.id == row["id"]).values(pgid=None))
            if pids:
                payload = {"pids": pids, "worker": worker.name}
                store._event(conn, row["run_id"], "processes_reaped", payload, row["task_id"])
    return found


def orphans(store: Store, host: str) -> list[dict[str, Any]]:
    """Attempts run on `host` whose agent group may still live (no verdict, or cut off)."""
    with store.engine.connect() as conn:
        return [
            dict(r)
            for r in conn.execute(
                select(attempts).where(
                    attempts.c.worker_host == host,
                    attempts.c.pgid.is_not(None),
                    or_(attempts.c.verdict.is_(None), attempts.c.verdict == "interrupted"),
                )
            ).mappings()
        ]


def with_workers(store: Store, rows: list[Any]) -> list[Any]:
    """Escalation rows with the worker whose attempt asked (`worker`: None when none did)."""
    keys = {(r["run_id"], r["task_id"], r["attempt_number"]) for r in rows if r["attempt_number"]}
    found: dict[tuple[str, str, int], str] = {}
    if keys:
        runs_ = {k[0] for k in keys}
        with store.engine.connect() as conn:
            q = select(
                attempts.c.run_id, attempts.c.task_id, attempts.c.number, attempts.c.worker
            ).where(attempts.c.run_id.in_(runs_), attempts.c.worker.is_not(None))
            found = {(r[0], r[1], r[2]): r[3] for r in conn.execute(q)}
    for r in rows:
        r["worker"] = found.get((r["run_id"], r["task_id"], r["attempt_number"]))
    return rows
