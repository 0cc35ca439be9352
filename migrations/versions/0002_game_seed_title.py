"""Games: a seed for reproducible deals, a title, and a per-seat note of what a seat was last asked.

- ``games.seed``: when set, the deck of hand k is shuffled by ``random.Random(f"{seed}:{k}")``, so
  the same seed gives the same deals (reproducible and duplicate games); the decks are in the move
  log in any case.
- ``games.title``: shown in subjects and lists.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("seed", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("title", sa.String(length=200), server_default="", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("title")
        batch.drop_column("seed")
