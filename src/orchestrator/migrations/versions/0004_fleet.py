"""The fleet (issue 12, part 2): a run's origin, and the worker behind each attempt.

`runs.origin` is the repository a fleet run's workers clone and push the run branch back to
(NULL: a run driven by one runner, as before). An attempt records the worker that ran it: its
name as shown (`--name`, else host:pid) and the host, PID and process start time that tell a
dead worker from a live one, so its orphaned agent can be killed when its machine comes back.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("origin", sa.Text, nullable=True))
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("worker", sa.String(255), nullable=True))
        batch.add_column(sa.Column("worker_host", sa.String(255), nullable=True))
        batch.add_column(sa.Column("worker_pid", sa.Integer, nullable=True))
        batch.add_column(sa.Column("worker_started", sa.String(80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        for name in ("worker_started", "worker_pid", "worker_host", "worker"):
            batch.drop_column(name)
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("origin")
