"""What every part of the store shares: its URL and engine, a transaction, and the event row each
change writes inside its own transaction. The Store and its table mixins (run lock, escalations)
all build on it, so none of them restates another's methods."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, insert

from orchestrator.schema import events


class StoreBase:
    url: str
    engine: Engine

    @contextmanager
    def tx(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

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
        conn.execute(
            insert(events).values(
                run_id=run_id,
                task_id=task_id,
                ts=time.time(),
                kind=kind,
                payload_json=json.dumps(payload, default=str),
            )
        )
