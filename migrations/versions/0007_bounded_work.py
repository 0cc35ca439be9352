"""Bounded work per received mail and per game, and what strangers were answered.

inbound_messages.attempted_at
    when the latest attempt at processing the mail began.  An attempt is counted (``attempts``)
    and stamped in its own committed statement *before* the mail is processed, so a process killed
    in the middle (SIGKILL, out of memory, past the task's time limit) still uses up one attempt,
    and the sweep re-queues a pending mail whose attempt began long ago.
games.continue_at
    set when a turn stopped its automatic moves (bots, forced cards) at the bound of one step with
    more still to play: the game is continued, one committed step at a time, by follow-up tasks
    (the sweep finds those left behind through the partial index).
stranger_answers
    one row per mail sent to an address no player has verified (the answer to a request to
    ``new@``), counted against the per-address daily and the global hourly caps.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)
CONTINUING = sa.text("continue_at IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("inbound_messages") as batch:
        batch.add_column(sa.Column("attempted_at", WHEN, nullable=True))
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("continue_at", WHEN, nullable=True))
    op.create_index("ix_games_continue_at", "games", ["continue_at"],
                    postgresql_where=CONTINUING, sqlite_where=CONTINUING)
    op.create_table(
        "stranger_answers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("inbound_id", sa.Integer(), nullable=True),
        sa.Column("sent_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["inbound_id"], ["inbound_messages.id"],
                                name="fk_stranger_answers_inbound_id_inbound_messages", ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name="pk_stranger_answers"),
    )
    op.create_index("ix_stranger_answers_address_sent_at", "stranger_answers", ["address", "sent_at"])
    op.create_index("ix_stranger_answers_sent_at", "stranger_answers", ["sent_at"])


def downgrade() -> None:
    op.drop_index("ix_stranger_answers_sent_at", table_name="stranger_answers")
    op.drop_index("ix_stranger_answers_address_sent_at", table_name="stranger_answers")
    op.drop_table("stranger_answers")
    op.drop_index("ix_games_continue_at", table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("continue_at")
    with op.batch_alter_table("inbound_messages") as batch:
        batch.drop_column("attempted_at")
