"""Initial schema: players, games, seats, moves, inbound and outbound mail,
invitations, webhook nonces.

Statuses are plain VARCHAR columns (the models map them to StrEnums); times are
timestamptz on PostgreSQL and UTC text on SQLite; JSON is JSONB on PostgreSQL.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
ADDRESS = sa.String(length=320)
MESSAGE_ID = sa.String(length=998)
STATUS = sa.String(length=16)


def created_at(name: str = "created_at") -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False)


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("address", ADDRESS, nullable=False),
        sa.Column("display_name", sa.String(length=200), server_default="", nullable=False),
        sa.Column("language", sa.String(length=16), server_default="en", nullable=False),
        sa.Column("timezone", sa.String(length=64), server_default="UTC", nullable=False),
        sa.Column("prefs", JSON_DOCUMENT, server_default=sa.text("'{}'"), nullable=False),
        created_at(),
        sa.Column("bounced_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("bounce_count", sa.Integer(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.UniqueConstraint("address", name=op.f("uq_players_address")),
    )

    op.create_table(
        "inbound_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_key", MESSAGE_ID, nullable=False),
        sa.Column("recipient", ADDRESS, nullable=False),
        sa.Column("mail_from", ADDRESS, server_default="", nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("source", STATUS, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", STATUS, server_default="pending", nullable=False),
        sa.Column("outcome", JSON_DOCUMENT, nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound_messages")),
        sa.UniqueConstraint(
            "message_key", "recipient", name=op.f("uq_inbound_messages_message_key_recipient")
        ),
    )
    op.create_index(op.f("ix_inbound_messages_status"), "inbound_messages", ["status"])

    op.create_table(
        "webhook_nonces",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("nonce", sa.String(length=256), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_nonces")),
        sa.UniqueConstraint("source", "nonce", name=op.f("uq_webhook_nonces_source_nonce")),
    )
    op.create_index(op.f("ix_webhook_nonces_seen_at"), "webhook_nonces", ["seen_at"])

    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rules", JSON_DOCUMENT, nullable=False),
        sa.Column("status", STATUS, server_default="inviting", nullable=False),
        sa.Column("creator_id", sa.Integer(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("snapshot", JSON_DOCUMENT, nullable=True),
        sa.Column("next_seq", sa.Integer(), server_default="1", nullable=False),
        created_at(),
        created_at("updated_at"),
        sa.Column("thread_id", MESSAGE_ID, nullable=True),
        sa.ForeignKeyConstraint(
            ["creator_id"], ["players.id"],
            name=op.f("fk_games_creator_id_players"), ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
    )
    op.create_index(op.f("ix_games_status"), "games", ["status"])

    op.create_table(
        "seats",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("bot", sa.String(length=64), nullable=True),
        sa.Column("status", STATUS, server_default="invited", nullable=False),
        sa.Column("decisions", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_seats_game_id_games"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_seats_player_id_players")
        ),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_seats")),
        sa.UniqueConstraint("game_id", "player_id", name=op.f("uq_seats_game_id_player_id")),
    )
    op.create_index(op.f("ix_seats_player_id"), "seats", ["player_id"])

    op.create_table(
        "moves",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("payload", JSON_DOCUMENT, nullable=False),
        sa.Column("inbound_id", sa.Integer(), nullable=True),
        created_at(),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_moves_game_id_games"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["inbound_id"], ["inbound_messages.id"],
            name=op.f("fk_moves_inbound_id_inbound_messages"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_moves")),
        sa.UniqueConstraint("game_id", "seq", name=op.f("uq_moves_game_id_seq")),
    )

    op.create_table(
        "outbound_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("recipient", ADDRESS, nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("message_id", MESSAGE_ID, nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=False),
        sa.Column("status", STATUS, server_default="pending", nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        created_at("next_attempt_at"),
        created_at(),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("inbound_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"],
            name=op.f("fk_outbound_messages_game_id_games"), ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"],
            name=op.f("fk_outbound_messages_player_id_players"), ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["inbound_id"], ["inbound_messages.id"],
            name=op.f("fk_outbound_messages_inbound_id_inbound_messages"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbound_messages")),
    )
    op.create_index(
        op.f("ix_outbound_messages_status_next_attempt_at"),
        "outbound_messages", ["status", "next_attempt_at"],
    )
    op.create_index(
        op.f("ix_outbound_messages_recipient_created_at"),
        "outbound_messages", ["recipient", "created_at"],
    )

    op.create_table(
        "invitations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("address", ADDRESS, nullable=False),
        sa.Column("token", sa.String(length=128), nullable=False),
        sa.Column("status", STATUS, server_default="pending", nullable=False),
        sa.Column("invited_by", sa.Integer(), nullable=True),
        created_at(),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_invitations_game_id_games"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["invited_by"], ["players.id"], name=op.f("fk_invitations_invited_by_players")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invitations")),
        sa.UniqueConstraint("token", name=op.f("uq_invitations_token")),
    )
    op.create_index(op.f("ix_invitations_address"), "invitations", ["address"])
    op.create_index(
        op.f("ix_invitations_invited_by_created_at"), "invitations", ["invited_by", "created_at"]
    )


def downgrade() -> None:
    for table in (
        "invitations",
        "outbound_messages",
        "moves",
        "seats",
        "games",
        "webhook_nonces",
        "inbound_messages",
        "players",
    ):
        op.drop_table(table)
