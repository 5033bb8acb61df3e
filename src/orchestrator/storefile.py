"""What a store file must be before it is opened, and one line for each way it cannot be.

A store file that is there must be a SQLite database holding a store: an empty, damaged or foreign
file is never silently made into a new, empty store (that would hide every run it should hold),
and is read only read-only before the store's own connection (WAL, migrations) touches it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from orchestrator.models import UserError
from orchestrator.redaction import redact_text

SQLITE_HEADER = b"SQLite format 3\x00"
ELSEWHERE = "or pass --db with the right one"


@contextlib.contextmanager
def first_use(path: Path | None) -> Iterator[None]:
    """One process at a time checks, creates and migrates a SQLite store (a lock on its folder,
    held for those few milliseconds): two commands started together on a new store otherwise
    both create its tables ('table runs already exists'), or one finds the other's new, still
    empty file and refuses it as damaged."""
    if path is None:
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # the check that follows says what is wrong, in one line
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and the lock with it


def check_sqlite_file(path: Path) -> None:
    """Its folder is made; a file that is there must be a SQLite database of a store."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            return
        if path.is_dir():
            raise UserError("is a directory, not a store; pass --db with a file", path=str(path))
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise UserError(
            f"cannot open the state database: {exc.strerror or exc}; check --db / ORCHESTRATOR_DB",
            path=str(path),
        ) from None
    wal = path.with_name(path.name + "-wal")
    if not head and not (wal.is_file() and wal.stat().st_size):
        raise UserError(
            "the state database is empty (0 bytes): it holds no runs; delete it to start a new "
            f"store there, {ELSEWHERE}",
            path=str(path),
        )
    if head and head != SQLITE_HEADER:
        raise UserError(
            "not a SQLite database (damaged, or another file); move it away to start a new "
            f"store there, {ELSEWHERE}",
            path=str(path),
        )
    if head:
        _check_own_tables(path)


def _check_own_tables(path: Path) -> None:
    """A SQLite file holding someone else's tables is neither switched to WAL nor migrated."""
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise UserError(
                f"damaged SQLite database ({exc}); move it away to start a new store there, "
                f"{ELSEWHERE}",
                path=str(path),
            ) from None
        return  # busy, or read-only needs a -shm that is not there: the store's open decides
    names = {str(r[0]) for r in rows}
    if names and not names & {"alembic_version", "runs"}:
        shown = ", ".join(sorted(names)[:3])
        raise UserError(f"holds other tables ({shown}), not a store; {ELSEWHERE}", path=str(path))


def open_error(exc: Exception, url: str) -> UserError:
    """The one line for a store that cannot be opened or migrated."""
    reason = str(getattr(exc, "orig", None) or exc).strip().split("\n")[0] or repr(exc)
    todo = "check --db / ORCHESTRATOR_DB"
    if isinstance(exc, ImportError):
        reason, todo = (
            f"its driver is not installed ({exc})",
            "install it, or use sqlite/postgresql",
        )
    elif "not a database" in reason or "malformed" in reason:
        todo = f"it is damaged or not a store: move it away (a new store starts empty), {ELSEWHERE}"
    elif "Can't locate revision" in reason:
        todo = "it was written by a newer orchestrator: upgrade orchestrator"
    return UserError(redact_text(f"cannot open the state database {url!r}: {reason}; {todo}"))
