"""Who asked is a column of its own; the consultant's per-task overrides live on the task row.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# the display names earlier versions kept in detail_json["asker"]
_ASKERS = {
    "The agent": "agent",
    "The orchestrator": "orchestrator",
    "The plan": "plan",
}


def upgrade() -> None:
    with op.batch_alter_table("escalations") as batch:
        batch.add_column(sa.Column("asker", sa.String(16), nullable=False, server_default="agent"))
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("overrides_json", sa.Text, nullable=True))
    conn = op.get_bind()
    for esc_id, detail_json in conn.execute(sa.text("SELECT id, detail_json FROM escalations")):
        try:
            detail = json.loads(detail_json or "{}")
        except ValueError:
            continue
        asker = _ASKERS.get(str(detail.get("asker")), "agent")
        if detail.get("budget"):
            asker = "budget"
        conn.execute(
            sa.text("UPDATE escalations SET asker = :a WHERE id = :i"), {"a": asker, "i": esc_id}
        )
    for run_id, settings_json in conn.execute(sa.text("SELECT id, settings_json FROM runs")):
        try:
            settings = json.loads(settings_json or "{}")
        except ValueError:
            continue
        overrides = settings.pop("task_overrides", None)
        if not isinstance(overrides, dict):
            continue
        for task_id, values in overrides.items():
            conn.execute(
                sa.text("UPDATE tasks SET overrides_json = :o WHERE run_id = :r AND task_id = :t"),
                {"o": json.dumps(values), "r": run_id, "t": task_id},
            )
        conn.execute(
            sa.text("UPDATE runs SET settings_json = :s WHERE id = :r"),
            {"s": json.dumps(settings), "r": run_id},
        )


def downgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("overrides_json")
    with op.batch_alter_table("escalations") as batch:
        batch.drop_column("asker")
