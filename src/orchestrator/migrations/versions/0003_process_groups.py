"""What a runner started and who holds the lock, by start time: a recycled PID is never mistaken.

An attempt records its process group (`pgid`) and the leader's stamp (boot id and start time), so
a later runner kills a group a killed runner left alive before anything runs again. The run lock
records its owner's stamp beside its PID.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("pgid", sa.Integer, nullable=True))
        batch.add_column(sa.Column("pgid_started", sa.String(80), nullable=True))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("lock_started", sa.String(80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("lock_started")
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("pgid_started")
        batch.drop_column("pgid")
