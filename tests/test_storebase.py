"""`storebase.hot` and `hot_many`: statements built once, run on the driver's cursor, against a
real SQLite file and a real PostgreSQL (the `store` fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import bindparam, insert, select
from sqlalchemy.exc import IntegrityError

from orchestrator.models import Plan, Task
from orchestrator.schema import tasks
from orchestrator.store import Store
from orchestrator.storebase import hot, hot_many, rows

_INSERT = insert(tasks)
_BY_RUN = select(tasks.c.task_id, tasks.c.seq).where(tasks.c.run_id == bindparam("run_id"))
_IN = select(tasks.c.task_id).where(tasks.c.task_id.in_(bindparam("ids", expanding=True)))


def _row(run_id: str, seq: int) -> dict[str, object]:
    return {
        "run_id": run_id,
        "task_id": f"t{seq}",
        "seq": seq,
        "title": f"task {seq}",
        "status": "PENDING",
        "attempts_since_resume": 0,
        "level": 0,
        "level_attempts": 0,
        "updated_at": 1.0,
    }


def test_hot_many_inserts_every_row_and_errors_are_sqlalchemys(
    store: Store, tmp_path: Path
) -> None:
    store.create_run("r1", Plan(path="p.md", format="milestone", tasks=[]), tmp_path, "x", {})
    with store.tx() as conn:
        hot_many(conn, _INSERT, [_row("r1", i) for i in range(50)])
    with store.engine.connect() as conn:
        found = rows(hot(conn, _BY_RUN, {"run_id": "r1"}))
    assert sorted(r["seq"] for r in found) == list(range(50))
    with pytest.raises(IntegrityError), store.tx() as conn:  # t3 exists: the unique key
        hot_many(conn, _INSERT, [_row("r1", 60), _row("r1", 3)])
    assert len(store.tasks("r1")) == 50  # the failed batch left nothing


def test_a_write_outside_a_transaction_is_refused(store: Store) -> None:
    with store.engine.connect() as conn, pytest.raises(RuntimeError, match="inside tx"):
        hot(conn, _INSERT, _row("r1", 1))


def test_a_statement_rendered_per_execution_goes_through_sqlalchemy(
    store: Store, tmp_path: Path
) -> None:
    plan = Plan(
        path="p.md", format="milestone", tasks=[Task(id="a", title="A"), Task(id="b", title="B")]
    )
    store.create_run("r1", plan, tmp_path, "x", {})
    with store.engine.connect() as conn:
        found = rows(hot(conn, _IN, {"ids": ["a", "b", "zz"]}))
    assert sorted(r["task_id"] for r in found) == ["a", "b"]


def test_a_held_connection_serves_this_threads_transactions_and_reads_only(
    store: Store, tmp_path: Path
) -> None:
    """Inside `held()` (SQLite), the thread's transactions and reads reuse one connection; a
    transaction inside a transaction, another thread and a failed transaction get the pool's,
    and the held one stays usable. PostgreSQL keeps using the pool."""
    import threading

    store.create_run("r1", Plan(path="p.md", format="milestone", tasks=[]), tmp_path, "x", {})
    sqlite = store.url.startswith("sqlite")
    with store.held():
        with store.tx() as a, store.reading() as inner:
            assert inner is not a  # a's transaction is open: the pool's connection
        with store.tx() as b:
            pass
        with store.reading() as c:
            pass
        assert (a is b) == sqlite and (b is c) == sqlite
        other: list[object] = []

        def elsewhere() -> None:
            with store.tx() as x:
                other.append(x)

        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
        assert other[0] is not a
        with pytest.raises(IntegrityError), store.tx() as conn:
            hot_many(conn, _INSERT, [_row("r1", 1), _row("r1", 1)])
        with store.tx() as d:
            hot(d, _INSERT, _row("r1", 2))
        assert (d is a) == sqlite and not d.in_transaction()
    assert [t["task_id"] for t in store.tasks("r1")] == ["t2"]
    with store.tx() as e:
        assert e is not a  # after held(): the pool's again


def test_held_inside_a_transaction_of_the_held_connection_gives_it_back_after(
    store: Store,
) -> None:
    if not store.url.startswith("sqlite"):
        pytest.skip("held() is for SQLite stores")
    with store.held():
        with store.tx() as a, store.held(), store.reading() as inner:
            assert inner is not a  # a's transaction is open: a connection of its own
        with store.reading() as again:
            assert again is a  # the outer held connection serves again
