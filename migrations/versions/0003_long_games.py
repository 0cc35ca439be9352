"""Games that last for days: deadlines, reminders, absences, substitutes, playing ahead,
notification choices and table talk (issue 4).

games:    deadline_hours, skip_weekends, grace_hours, reminder_hours, absence_policy
          (bot | pause | substitute), paused_at
seats:    waiting_since, deadline_at, reminders_sent, stand_in (why a bot is playing for a player
          who may take the seat back: deadline | vacation | substitute_wanted), notify (this game's
          choice, overriding the player's), queued (cards to play in order when legal), autopilot_hand,
          talk_seen (the last table_talk id this seat was told)
players:  vacation_until, digest_sent_at
invitations: kind (join | substitute)
absences: one row per vacation, for the yearly allowance
table_talk: lines said at a table, passed on to the others in their next mail

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("deadline_hours", sa.Integer(), server_default="72", nullable=False))
        batch.add_column(sa.Column("skip_weekends", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch.add_column(sa.Column("grace_hours", sa.Integer(), server_default="0", nullable=False))
        batch.add_column(sa.Column("reminder_hours", sa.Integer(), server_default="24", nullable=False))
        batch.add_column(sa.Column("absence_policy", sa.String(length=16), server_default="bot", nullable=False))
        batch.add_column(sa.Column("paused_at", WHEN, nullable=True))
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("waiting_since", WHEN, nullable=True))
        batch.add_column(sa.Column("deadline_at", WHEN, nullable=True))
        batch.add_column(sa.Column("reminders_sent", sa.Integer(), server_default="0", nullable=False))
        batch.add_column(sa.Column("stand_in", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("notify", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("queued", JSON_DOCUMENT, nullable=True))
        batch.add_column(sa.Column("autopilot_hand", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("talk_seen", sa.Integer(), server_default="0", nullable=False))
        batch.create_index("ix_seats_deadline_at", ["deadline_at"])
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("vacation_until", WHEN, nullable=True))
        batch.add_column(sa.Column("digest_sent_at", WHEN, nullable=True))
    with op.batch_alter_table("invitations") as batch:
        batch.add_column(sa.Column("kind", sa.String(length=16), server_default="join", nullable=False))
    op.create_table(
        "absences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("starts_at", WHEN, nullable=False),
        sa.Column("ends_at", WHEN, nullable=False),
        sa.Column("created_at", WHEN, server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_absences_player_id_players",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_absences"),
    )
    op.create_index("ix_absences_player_id", "absences", ["player_id"])
    op.create_table(
        "table_talk",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", WHEN, server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_table_talk_game_id_games", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_table_talk"),
    )
    op.create_index("ix_table_talk_game_id", "table_talk", ["game_id"])


def downgrade() -> None:
    op.drop_index("ix_table_talk_game_id", table_name="table_talk")
    op.drop_table("table_talk")
    op.drop_index("ix_absences_player_id", table_name="absences")
    op.drop_table("absences")
    with op.batch_alter_table("invitations") as batch:
        batch.drop_column("kind")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("digest_sent_at")
        batch.drop_column("vacation_until")
    with op.batch_alter_table("seats") as batch:
        batch.drop_index("ix_seats_deadline_at")
        for name in ("talk_seen", "autopilot_hand", "queued", "notify", "stand_in", "reminders_sent",
                     "deadline_at", "waiting_since"):
            batch.drop_column(name)
    with op.batch_alter_table("games") as batch:
        for name in ("paused_at", "absence_policy", "reminder_hours", "grace_hours", "skip_weekends",
                     "deadline_hours"):
            batch.drop_column(name)
