"""Every test gets its own orchestrator home: nothing, in-process or not, touches the real one.
`store` is a fresh store on SQLite and, where reachable, on PostgreSQL (its own schema)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from orchestrator.store import Store


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("orchestrator-home")
    monkeypatch.setenv("ORCHESTRATOR_HOME", str(home))
    return home


PG_URL = os.environ.get("ORCHESTRATOR_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _pg_reachable() -> str | None:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    try:
        engine = create_engine(
            PG_URL.replace("postgresql://", "postgresql+psycopg://", 1),
            connect_args={"connect_timeout": 3},
        )
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
    except Exception as exc:
        return f"no PostgreSQL reachable at {PG_URL} ({type(exc).__name__}); set ORCHESTRATOR_TEST_PG_URL"
    return None


@contextlib.contextmanager
def pg_schema(prefix: str) -> Iterator[str]:
    """A store URL on the test server in a schema of its own, dropped afterwards; skips where no
    server is reachable (fails instead on CI, where one is promised)."""
    reason = _pg_reachable()
    if reason:
        if os.environ.get("CI") == "true" and os.environ.get("ORCHESTRATOR_TEST_PG_URL"):
            pytest.fail(reason)
        pytest.skip(reason)
    schema = prefix + uuid.uuid4().hex[:10]
    admin = create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1))
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        s = Store(f"sqlite:///{tmp_path / 'state.db'}")
        yield s
        s.close()
        return
    with pg_schema("t_") as url:
        s = Store(url)
        try:
            yield s
        finally:
            s.close()
