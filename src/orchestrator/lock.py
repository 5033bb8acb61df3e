"""The run lock: one runner per run. A lock whose owner is dead (same host: its process is gone;
another host: its heartbeat is old) is taken over, so a crash never blocks a resume."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from orchestrator.models import UserError
from orchestrator.schema import runs

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlalchemy import Connection

logger = logging.getLogger("orchestrator.lock")


class RunLocked(UserError):
    """Another live process is driving this run."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunLock:
    """Mixed into the Store: the lock lives in the runs table, next to the run it guards."""

    if TYPE_CHECKING:

        def tx(self) -> AbstractContextManager[Connection]: ...

        @staticmethod
        def _event(
            conn: Connection,
            run_id: str,
            kind: str,
            payload: dict[str, Any],
            task_id: str | None = None,
        ) -> None: ...

    def acquire_lock(self, run_id: str) -> str:
        host, pid = socket.gethostname(), os.getpid()
        token = f"{host}:{pid}:{uuid.uuid4().hex[:8]}"
        with self.tx() as conn:
            row = (
                conn.execute(
                    select(
                        runs.c.lock_owner, runs.c.lock_pid, runs.c.lock_host, runs.c.lock_heartbeat
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
                .values(lock_owner=token, lock_pid=pid, lock_host=host, lock_heartbeat=time.time())
            ).rowcount
            if taken != 1:
                raise RunLocked(f"run {run_id} was taken by another runner just now; try again")
            if row["lock_owner"]:
                self._event(conn, run_id, "stale_lock_taken_over", {"previous": row["lock_owner"]})
        return token

    @staticmethod
    def _lock_live(row: Any, stale_after: float = 120.0) -> bool:
        if row["lock_host"] == socket.gethostname():
            return bool(row["lock_pid"]) and _pid_alive(int(row["lock_pid"]))
        return (
            bool(row["lock_heartbeat"]) and time.time() - float(row["lock_heartbeat"]) < stale_after
        )

    def heartbeat(self, run_id: str, token: str) -> None:
        with self.tx() as conn:
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id, runs.c.lock_owner == token)
                .values(lock_heartbeat=time.time())
            )

    def release_lock(self, run_id: str, token: str) -> None:
        with self.tx() as conn:
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id, runs.c.lock_owner == token)
                .values(lock_owner=None, lock_pid=None, lock_host=None, lock_heartbeat=None)
            )


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
