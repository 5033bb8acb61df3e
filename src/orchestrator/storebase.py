"""What every part of the store shares: its URL and engine, a transaction, and the event row each
change writes inside its own transaction. The Store and its table mixins (run lock, escalations)
all build on it, so none of them restates another's methods.

Statements a run executes on every step are built once (module constants with bind parameters)
and run through `hot`: compiled once per dialect and set of parameters, then executed on the
driver's own cursor inside the caller's transaction. Building a Core statement costs ~100 µs and
SQLAlchemy's execution context another ~20-40 µs a statement, several times SQLite's own work; a
step's ten statements would cost more than its two fsyncs. (They bypass SQLAlchemy's
`before_cursor_execute` events: nothing here listens to them.)"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from sqlalchemy import Connection, Engine, insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import Executable

from orchestrator.schema import events

_INSERT_EVENT = insert(events)
_Plan = tuple[str, tuple[tuple[str, Any, Any], ...], bool] | None
"""Compiled SQL; its parameters in order (name, default, type processor); positional? None: no
fast path."""
_plans: dict[tuple[type, str, int, tuple[str, ...]], tuple[Executable, _Plan]] = {}
"""By statement identity; each entry holds its statement, so no other can take its id."""


def _plan(conn: Connection, stmt: Executable, keys: tuple[str, ...]) -> _Plan:
    dialect = conn.dialect
    key = (type(dialect), dialect.paramstyle, id(stmt), keys)
    if key not in _plans:
        if len(_plans) > 1000:
            raise RuntimeError("hot() is for module-constant statements, built once")
        compiled: Any = cast(Any, stmt).compile(dialect=dialect, column_keys=list(keys))
        names = compiled.positiontup or list(compiled.binds)
        plain = not (
            compiled.literal_execute_params
            or compiled.post_compile_params  # expanding (IN lists), rendered per execution
            or compiled.escaped_bind_names
        )
        procs = compiled._bind_processors
        params = tuple((n, compiled.binds[n].value, procs.get(n)) for n in names)
        plan = (str(compiled), params, compiled.positiontup is not None) if plain else None
        _plans[key] = (stmt, plan)
    return _plans[key][1]


def hot(conn: Connection, stmt: Executable, params: dict[str, Any]) -> Any:
    """Execute a module-constant statement with `params` (its bind names, and the columns to
    set or insert) on the driver's cursor, with the dialect's type processors applied; returns
    that cursor (`rowcount`, `rows`). A statement SQLAlchemy must render per execution
    (expanding or escaped parameters) goes through `conn.execute` (its result) instead."""
    return hot_many(conn, stmt, [params])


def hot_many(conn: Connection, stmt: Executable, many: list[dict[str, Any]]) -> Any:
    """`hot` for several rows of the same keys (an INSERT of a plan's tasks): one executemany."""
    if not many:
        raise ValueError("hot_many() needs at least one row")
    if getattr(stmt, "is_dml", False) and not conn.in_transaction():
        # the driver's cursor does not autobegin SQLAlchemy's transaction: commit() would not
        # commit this write
        raise RuntimeError("hot() writes belong inside tx() or conn.begin()")
    plan = _plan(conn, stmt, tuple(many[0]))
    if plan is None:
        return conn.execute(stmt, many[0] if len(many) == 1 else many)
    sql, binds, positional = plan
    names = [b[0] for b in binds]
    args: list[Any] = []
    for params in many:
        values = [
            v if proc is None or v is None else proc(v)
            for n, default, proc in binds
            for v in (params.get(n, default),)
        ]
        args.append(values if positional else dict(zip(names, values, strict=True)))
    driver: Any = conn.connection.driver_connection
    cursor = driver.cursor()
    error = conn.dialect.loaded_dbapi.Error
    try:
        if len(args) == 1:
            cursor.execute(sql, args[0])
        else:
            cursor.executemany(sql, args)
    except error as exc:  # raised as SQLAlchemy raises it: IntegrityError, OperationalError, …
        raise DBAPIError.instance(sql, args[0], exc, error, dialect=conn.dialect) from exc
    return cursor


def rows(cursor: Any) -> list[dict[str, Any]]:
    """The rows a `hot` SELECT returned, as mappings."""
    if hasattr(cursor, "mappings"):  # a SQLAlchemy result: no fast path
        return [dict(r) for r in cursor.mappings()]
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


_HELD_LOCK = threading.Lock()


class StoreBase:
    url: str
    engine: Engine
    _held: threading.local | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """While inside, this thread's transactions and reads on a SQLite store reuse one
        connection instead of checking one out of the pool and back each time (~30 µs of
        SQLAlchemy's pool and Connection machinery, three times a step). For a thread that drives
        a run; other threads (the heartbeat, a web page's) keep using the pool."""
        if not self.url.startswith("sqlite") or self._mine() is not None:
            yield
            return
        with _HELD_LOCK:  # two threads' first held() must not each make their own
            if self._held is None:
                self._held = threading.local()
        local = self._held
        outer = getattr(local, "conn", None), getattr(local, "pid", None)  # inside its transaction
        conn = self.engine.connect()
        local.conn, local.pid = conn, os.getpid()
        try:
            yield
        finally:
            local.conn, local.pid = outer
            conn.close()

    def _mine(self) -> Connection | None:
        """This thread's held connection, when it is free for a new transaction or read."""
        local = self._held
        if local is None:
            return None
        conn: Connection | None = getattr(local, "conn", None)
        if conn is None or local.pid != os.getpid() or conn.in_transaction():
            return None  # a forked child's copy, or a transaction inside a transaction
        return conn

    @contextmanager
    def tx(self) -> Iterator[Connection]:
        with self.reading() as conn, conn.begin():  # the pool's: what engine.begin() does
            yield conn

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection to read with (the held one, else one from the pool)."""
        conn = self._mine()
        if conn is None:
            with self.engine.connect() as conn:
                yield conn
            return
        try:
            yield conn
        finally:
            if conn.in_transaction():  # SQLAlchemy began one for a read: end it, as close() does
                conn.rollback()

    @contextmanager
    def quick_tx(self) -> Iterator[Connection]:
        """A transaction only the death of this process must not lose: on SQLite committed to
        the WAL without an fsync (the OS keeps it through a kill; a power cut may take it), so
        it costs no third sync per attempt. What it records must be recoverable otherwise (a
        process group is also found by its mark; a checkpoint is in git)."""
        if not self.url.startswith("sqlite"):
            with self.tx() as conn:
                yield conn
            return
        with self.reading() as conn:
            driver: Any = conn.connection.driver_connection  # the PRAGMAs open no transaction
            driver.execute("PRAGMA synchronous=NORMAL")
            try:
                with conn.begin():
                    yield conn
            finally:
                driver.execute("PRAGMA synchronous=FULL")

    def close(self) -> None:
        self.engine.dispose()

    @staticmethod
    def _event(
        conn: Connection,
        run_id: str,
        kind: str,
        payload: dict[str, Any],
        task_id: str | None = None,
    ) -> None:
        hot(
            conn,
            _INSERT_EVENT,
            {
                "run_id": run_id,
                "task_id": task_id,
                "ts": time.time(),
                "kind": kind,
                "payload_json": json.dumps(payload, default=str),
            },
        )
