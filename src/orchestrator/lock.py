"""The run lock: one runner per run, and what that runner started. A lock whose owner is dead is
taken over, so a crash never blocks a resume: on the same host the owner is its PID *and* that
process's start time (a recycled PID is someone else), with the heartbeat's age deciding where no
start time is known; on another host the heartbeat's age decides.

The processes a runner starts are recorded here too (`record_process`) and killed by the next
runner (`reap_processes`) before anything runs again."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, bindparam, select, update

from orchestrator.agents import process
from orchestrator.models import UserError
from orchestrator.schema import attempts, runs
from orchestrator.storebase import StoreBase, hot

if TYPE_CHECKING:
    pass

logger = logging.getLogger("orchestrator.lock")

_OPEN = attempts.c.verdict.is_(None)
_RECORD_GROUP = update(attempts).where(attempts.c.run_id == bindparam("w_run"), _OPEN)
_RECORD_GROUP_OF = _RECORD_GROUP.where(
    attempts.c.task_id == bindparam("w_task"), attempts.c.number == bindparam("w_number")
)


class RunLocked(UserError):
    """Another live process is driving this run."""


_RELEASE = (
    update(runs)
    .where(runs.c.id == bindparam("w_run"), runs.c.lock_owner == bindparam("w_token"))
    .values(lock_owner=None, lock_pid=None, lock_host=None, lock_heartbeat=None, lock_started=None)
)
_RUN_STATUS = update(runs).where(runs.c.id == bindparam("w_run"))
"""Statements every run ends with, built once (`storebase.hot`)."""

STALE_AFTER = 120.0
"""A heartbeat older than this (seconds) means a dead owner where liveness cannot be proven."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunLock(StoreBase):
    """Mixed into the Store: the lock lives in the runs table, next to the run it guards."""

    @staticmethod
    def new_lock() -> tuple[str, dict[str, Any]]:
        """A token for this process and the run's lock columns holding it: what `acquire_lock`
        writes, and what `create_run(locked=True)` inserts with a new run."""
        host, pid = socket.gethostname(), os.getpid()
        token = f"{host}:{pid}:{uuid.uuid4().hex[:8]}"
        values = {
            "lock_owner": token,
            "lock_pid": pid,
            "lock_host": host,
            "lock_heartbeat": time.time(),
            "lock_started": process.stamp(pid),
        }
        return token, values

    def acquire_lock(self, run_id: str) -> str:
        token, held = self.new_lock()
        with self.tx() as conn:
            row = (
                conn.execute(
                    select(
                        runs.c.lock_owner,
                        runs.c.lock_pid,
                        runs.c.lock_host,
                        runs.c.lock_heartbeat,
                        runs.c.lock_started,
                    ).where(runs.c.id == run_id)
                )
                .mappings()
                .first()
            )
            if row is None:
                raise UserError(f"no run {run_id!r}; `orchestrator runs` lists them")
            if row["lock_owner"] and self._lock_live(row):
                raise RunLocked(
                    f"run {run_id} is already being driven by pid {row['lock_pid']} on {row['lock_host']}; "
                    "wait for it to finish or stop it (Ctrl-C) before resuming"
                )
            taken = conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .where(
                    runs.c.lock_owner.is_(None)
                    if row["lock_owner"] is None
                    else runs.c.lock_owner == row["lock_owner"]
                )
                .values(**held)
            ).rowcount
            if taken != 1:
                raise RunLocked(f"run {run_id} was taken by another runner just now; try again")
            if row["lock_owner"]:
                self._event(conn, run_id, "stale_lock_taken_over", {"previous": row["lock_owner"]})
        return token

    @staticmethod
    def _lock_live(row: Any, stale_after: float = STALE_AFTER) -> bool:
        fresh = (
            bool(row["lock_heartbeat"]) and time.time() - float(row["lock_heartbeat"]) < stale_after
        )
        if row["lock_host"] != socket.gethostname():
            return fresh
        pid = int(row["lock_pid"] or 0)
        if not pid or not _pid_alive(pid):
            return False
        now, then = process.stamp(pid), row["lock_started"]
        if now is not None and then is not None:
            return bool(now == then)  # the same process, not one that got its PID later
        return fresh  # no start time to compare: the heartbeat decides

    def heartbeat(self, run_id: str, token: str) -> None:
        with self.tx() as conn:
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id, runs.c.lock_owner == token)
                .values(lock_heartbeat=time.time())
            )

    def release_lock(self, run_id: str, token: str, status: str | None = None) -> None:
        """Lets go of the run; with `status`, records the run's new status in the same commit."""
        with self.tx() as conn:
            hot(conn, _RELEASE, {"w_run": run_id, "w_token": token})
            if status is not None:
                self._run_status(conn, run_id, status)

    def _run_status(self, conn: Connection, run_id: str, status: str, **payload: Any) -> None:
        """The run's status and its `run_status` event, inside the caller's transaction."""
        hot(conn, _RUN_STATUS, {"w_run": run_id, "status": status, "updated_at": time.time()})
        self._event(conn, run_id, "run_status", {"status": status, **payload})

    # -- what the runner started ------------------------------------------------------------------
    def process_mark(self, run_id: str) -> str:
        """What every process started for this run carries in its environment (`process.reap`)."""
        return f"{run_id}@{hashlib.sha256(self.url.encode()).hexdigest()[:10]}"

    def record_process(
        self, run_id: str, pgid: int, attempt: tuple[str, int] | None = None
    ) -> None:
        """The process group the open attempt just started, with its leader's stamp, so a runner
        killed from here on leaves it findable. `attempt` (task id, number) names that attempt
        (one row by its key); without it, every attempt of the run still open."""
        params: dict[str, Any] = {
            "w_run": run_id,
            "pgid": pgid,
            "pgid_started": process.stamp(pgid),
        }
        stmt = _RECORD_GROUP
        if attempt is not None:
            stmt = _RECORD_GROUP_OF
            params |= {"w_task": attempt[0], "w_number": attempt[1]}
        with self.quick_tx() as conn:  # only a runner's own death must not lose it
            hot(conn, stmt, params)

    def reap_processes(self, run_id: str) -> list[int]:
        """Kill what a cut-off runner started that still runs: the groups of attempts without a
        verdict, and every process carrying the run's mark (started before its group was recorded,
        or gone off on its own). Called before anything of the run runs again."""
        with self.tx() as conn:
            groups = [
                (int(r.pgid), r.pgid_started)
                for r in conn.execute(
                    select(attempts.c.pgid, attempts.c.pgid_started).where(
                        attempts.c.run_id == run_id,
                        attempts.c.verdict.is_(None),
                        attempts.c.pgid.is_not(None),
                    )
                )
            ]
        reaped = process.reap(self.process_mark(run_id), groups)
        if reaped:
            with self.tx() as conn:
                self._event(conn, run_id, "processes_reaped", {"pids": reaped})
        return reaped


class Heartbeat:
    """Keeps the run lock fresh during long attempts, so other hosts can tell a live runner from a
    dead one."""

    def __init__(self, store: RunLock, run_id: str, token: str, every: float = 30.0) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(store, run_id, token, every), daemon=True
        )
        self._thread.start()

    def _beat(self, store: RunLock, run_id: str, token: str, every: float) -> None:
        while not self._stop.wait(every):
            try:
                store.heartbeat(run_id, token)
            except Exception as exc:  # a missed heartbeat only makes the lock look older
                logger.debug("heartbeat failed: %s", exc)

    def stop(self) -> None:
        self._stop.set()
