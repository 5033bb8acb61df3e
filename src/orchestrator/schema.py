"""The store's tables (SQLAlchemy Core). Alembic migrations create them; this mirrors the head revision."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Float,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

TASK_STATUSES = ("PENDING", "RUNNING", "COMPLETED", "FAILED", "PAUSED_FOR_INTERVENTION", "SKIPPED")
_status_check = "status IN (" + ", ".join(f"'{s}'" for s in TASK_STATUSES) + ")"

runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("plan_path", Text, nullable=False),
    Column("plan_json", Text, nullable=False),
    Column("workdir", Text, nullable=False),
    Column("agent", String(64), nullable=False),
    Column("settings_json", Text, nullable=False),
    Column("status", String(32), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("lock_owner", String(128)),
    Column("lock_pid", Integer),
    Column("lock_host", String(255)),
    Column("lock_heartbeat", Float),
    Column("lock_started", String(80)),
    Column("origin", Text),
)

tasks = Table(
    "tasks",
    metadata,
    Column("run_id", String(64), nullable=False),
    Column("task_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("status", String(32), nullable=False),
    Column("attempts_since_resume", Integer, nullable=False, default=0),
    Column("level", Integer, nullable=False, default=0),
    Column("level_attempts", Integer, nullable=False, default=0),
    Column("guidance", Text),
    Column("session_id", String(255)),
    Column("updated_at", Float, nullable=False),
    Column("overrides_json", Text),
    CheckConstraint(_status_check, name="ck_tasks_status"),
    ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
    UniqueConstraint("run_id", "task_id", name="uq_tasks_run_task"),
)

attempts = Table(
    "attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("task_id", String(64), nullable=False),
    Column("number", Integer, nullable=False),
    Column("verdict", String(32)),
    Column("error_summary", Text),
    Column("exit_code", Integer),
    Column("started_at", Float, nullable=False),
    Column("ended_at", Float),
    Column("duration_s", Float),
    Column("cost_usd", Float),
    Column("tokens_in", Integer),
    Column("tokens_out", Integer),
    Column("turns", Integer),
    Column("session_id", String(255)),
    Column("agent", String(64)),
    Column("model", String(128)),
    Column("decision", String(32)),
    Column("guidance", Text),
    Column("artifact_dir", Text, nullable=False),
    Column("pgid", Integer),
    Column("pgid_started", String(80)),
    Column("worker", String(255)),
    Column("worker_host", String(255)),
    Column("worker_pid", Integer),
    Column("worker_started", String(80)),
    ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
    UniqueConstraint("run_id", "task_id", "number", name="uq_attempts_number"),
)

escalations = Table(
    "escalations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("task_id", String(64), nullable=False),
    Column("attempt_number", Integer),
    Column("level", Integer, nullable=False, default=2),
    Column("category", String(64)),
    Column("question", Text, nullable=False),
    Column("options_json", Text, nullable=False, default="[]"),
    Column("recommendation", Text),
    Column("why", Text),
    Column("detail_json", Text, nullable=False, default="{}"),
    Column("status", String(16), nullable=False, default="open"),
    Column("response", Text),
    Column("response_kind", String(32)),
    Column("responder", String(255)),
    Column("channel", String(32)),
    Column("created_at", Float, nullable=False),
    Column("answered_at", Float),
    Column("wait_s", Float),
    Column("asker", String(16), nullable=False, server_default="agent"),
    CheckConstraint("status IN ('open', 'answered')", name="ck_escalations_status"),
    ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
)

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), nullable=False),
    Column("task_id", String(64)),
    Column("ts", Float, nullable=False),
    Column("kind", String(64), nullable=False),
    Column("payload_json", Text, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
)
