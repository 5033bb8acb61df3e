"""Initial schema: runs, tasks, attempts, escalations, events.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

STATUSES = "'PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'PAUSED_FOR_INTERVENTION', 'SKIPPED'"


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("plan_path", sa.Text, nullable=False),
        sa.Column("plan_json", sa.Text, nullable=False),
        sa.Column("workdir", sa.Text, nullable=False),
        sa.Column("agent", sa.String(64), nullable=False),
        sa.Column("settings_json", sa.Text, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("lock_owner", sa.String(128)),
        sa.Column("lock_pid", sa.Integer),
        sa.Column("lock_host", sa.String(255)),
        sa.Column("lock_heartbeat", sa.Float),
    )
    op.create_table(
        "tasks",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("task_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("attempts_since_resume", sa.Integer, nullable=False, server_default="0"),
        sa.Column("level", sa.Integer, nullable=False, server_default="0"),
        sa.Column("level_attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("guidance", sa.Text),
        sa.Column("session_id", sa.String(255)),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.CheckConstraint(f"status IN ({STATUSES})", name="ck_tasks_status"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.UniqueConstraint("run_id", "task_id", name="uq_tasks_run_task"),
    )
    op.create_table(
        "attempts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("task_id", sa.String(64), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("verdict", sa.String(32)),
        sa.Column("error_summary", sa.Text),
        sa.Column("exit_code", sa.Integer),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("ended_at", sa.Float),
        sa.Column("duration_s", sa.Float),
        sa.Column("cost_usd", sa.Float),
        sa.Column("tokens_in", sa.Integer),
        sa.Column("tokens_out", sa.Integer),
        sa.Column("turns", sa.Integer),
        sa.Column("session_id", sa.String(255)),
        sa.Column("agent", sa.String(64)),
        sa.Column("model", sa.String(128)),
        sa.Column("decision", sa.String(32)),
        sa.Column("guidance", sa.Text),
        sa.Column("artifact_dir", sa.Text, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.UniqueConstraint("run_id", "task_id", "number", name="uq_attempts_number"),
    )
    op.create_table(
        "escalations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("task_id", sa.String(64), nullable=False),
        sa.Column("attempt_number", sa.Integer),
        sa.Column("level", sa.Integer, nullable=False, server_default="2"),
        sa.Column("category", sa.String(64)),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("options_json", sa.Text, nullable=False, server_default="[]"),
        sa.Column("recommendation", sa.Text),
        sa.Column("why", sa.Text),
        sa.Column("detail_json", sa.Text, nullable=False, server_default="{}"),
        sa.Column("status", sa.String(16), nullable=False, server_default="open"),
        sa.Column("response", sa.Text),
        sa.Column("response_kind", sa.String(32)),
        sa.Column("responder", sa.String(255)),
        sa.Column("channel", sa.String(32)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("answered_at", sa.Float),
        sa.Column("wait_s", sa.Float),
        sa.CheckConstraint("status IN ('open', 'answered')", name="ck_escalations_status"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("task_id", sa.String(64)),
        sa.Column("ts", sa.Float, nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("payload_json", sa.Text, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
    )
    op.create_index("ix_events_run", "events", ["run_id", "id"])
    op.create_index("ix_escalations_open", "escalations", ["status", "run_id"])


def downgrade() -> None:
    for name in ("events", "escalations", "attempts", "tasks", "runs"):
        op.drop_table(name)
