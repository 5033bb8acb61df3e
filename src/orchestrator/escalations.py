"""The escalations table: a question is opened inside the transaction of the step that needs it
(`Store.record`), and answered once — the first answer wins, a second is refused and shown it."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import insert, select, update

from orchestrator.models import UserError
from orchestrator.rows import EscalationRow
from orchestrator.schema import escalations
from orchestrator.storebase import StoreBase

if TYPE_CHECKING:
    from sqlalchemy import Connection


def storable(values: dict[str, Any]) -> dict[str, Any]:
    """Text every database can hold: a NUL byte (PostgreSQL refuses it) is written as `\\x00`,
    and a lone surrogate (from undecodable agent output) as its escape, so an agent's odd bytes
    never make a step unrecordable (and an attempt re-run, paid for again, on every resume)."""
    return {
        k: v.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")
        if isinstance(v, str)
        else v
        for k, v in values.items()
    }


class AlreadyAnswered(UserError):
    """An escalation may be answered once; the first answer stands."""


def answered_message(row: Any) -> str:
    return (
        f"escalation {row['id']} was already answered by {row['responder']} via {row['channel']}: "
        f"{row['response']!r} ({row['response_kind']})"
    )


class EscalationTable(StoreBase):
    """Mixed into the Store."""

    def _open_escalation(
        self,
        conn: Connection,
        run_id: str,
        task_id: str,
        *,
        question: str,
        asker: str,
        options: list[str] | None = None,
        recommendation: str | None = None,
        category: str | None = None,
        why: str | None = None,
        level: int = 2,
        attempt_number: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> int:
        esc_id = conn.execute(
            insert(escalations).values(
                **storable(
                    {
                        "run_id": run_id,
                        "task_id": task_id,
                        "attempt_number": attempt_number,
                        "level": level,
                        "category": category,
                        "question": question,
                        "options_json": json.dumps(options or []),
                        "recommendation": recommendation,
                        "why": why,
                        "detail_json": json.dumps(detail or {}, default=str),
                        "asker": asker,
                        "status": "open",
                        "created_at": time.time(),
                    }
                )
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        payload = {
            "escalation_id": esc_id,
            "level": level,
            "category": category,
            "asker": asker,
            "question": question,
        }
        self._event(conn, run_id, "escalation_opened", payload, task_id)
        return int(esc_id)

    def escalation(self, esc_id: int) -> EscalationRow | None:
        with self.reading() as conn:
            r = (
                conn.execute(select(escalations).where(escalations.c.id == esc_id))
                .mappings()
                .first()
            )
        return self._esc_row(r) if r else None

    @staticmethod
    def _esc_row(r: Any) -> EscalationRow:
        row = dict(r)
        row["options"] = json.loads(row.pop("options_json"))
        row["detail"] = json.loads(row.pop("detail_json"))
        return cast(EscalationRow, row)

    def escalations(
        self, run_id: str | None = None, *, open_only: bool = False, task_id: str | None = None
    ) -> list[EscalationRow]:
        q = select(escalations).order_by(escalations.c.id)
        if run_id:
            q = q.where(escalations.c.run_id == run_id)
        if task_id is not None:
            q = q.where(escalations.c.task_id == task_id)
        if open_only:
            q = q.where(escalations.c.status == "open")
        with self.reading() as conn:
            return [self._esc_row(r) for r in conn.execute(q).mappings()]

    def answer_escalation(
        self, esc_id: int, *, response: str, kind: str, responder: str, channel: str
    ) -> EscalationRow:
        """First answer wins; a second one is refused and shown the first."""
        now = time.time()
        with self.tx() as conn:
            row = (
                conn.execute(select(escalations).where(escalations.c.id == esc_id))
                .mappings()
                .first()
            )
            if row is None:
                raise UserError(
                    f"no escalation {esc_id}; `orchestrator escalations` lists the open ones"
                )
            if row["status"] != "open":
                raise AlreadyAnswered(answered_message(row))
            done = conn.execute(
                update(escalations)
                .where(escalations.c.id == esc_id, escalations.c.status == "open")
                .values(
                    **storable(
                        {
                            "status": "answered",
                            "response": response,
                            "response_kind": kind,
                            "responder": responder,
                            "channel": channel,
                            "answered_at": now,
                            "wait_s": now - row["created_at"],
                        }
                    )
                )
            ).rowcount
            if done != 1:
                raise AlreadyAnswered(f"escalation {esc_id} was answered by someone else just now")
            self._event(
                conn,
                row["run_id"],
                "escalation_answered",
                {
                    "escalation_id": esc_id,
                    "response": response,
                    "kind": kind,
                    "responder": responder,
                    "channel": channel,
                    "wait_s": now - row["created_at"],
                },
                row["task_id"],
            )
        out = self.escalation(esc_id)
        assert out is not None
        return out
