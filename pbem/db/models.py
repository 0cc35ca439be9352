"""The tables of pbem, as SQLAlchemy 2 typed declarative models.

The schema itself is made only by the Alembic migrations in ``migrations/``;
these classes describe it for the ORM, and a test checks the two agree.

Conventions:
- Times are aware UTC datetimes (``UTCDateTime``).  Models never read the clock:
  services pass times in (they are given a clock); only ``created_at``-style
  columns carry a database ``server_default`` as a backstop.
- Cards are canonical strings (``QS``), seats ints 0..n-1, inside JSON payloads.
- Statuses are ``StrEnum``s stored as their lowercase values.
- ``moves`` is append-only: the code inserts, never updates or deletes.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    WriteOnlyMapped,
    mapped_column,
    relationship,
    validates,
)

from pbem.db.types import JSONDocument, RawBytes, UTCDateTime, str_enum

# Named constraints, so later migrations (SQLite batch mode included) can refer to them.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ADDRESS_LENGTH = 320  # 64 local part + @ + 255 domain
MESSAGE_ID_LENGTH = 998  # the longest line RFC 5322 allows
#: A mail's bytes are still kept (the retention sweep empties them: pbem.services.retention).
RAW_KEPT = text("length(raw) > 0")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSONDocument,
        bytes: RawBytes,
    }


def now_default() -> Any:
    """Database-side current time, for ``server_default`` backstops only."""
    return func.now()


# --- statuses ---------------------------------------------------------------


class Notify(enum.StrEnum):
    """When a player is mailed about a game (``players.prefs['notify']``)."""

    TURN_AND_TRICK = "turn_and_trick"
    EVERY_CARD = "every_card"
    DIGEST = "digest"


class GameStatus(enum.StrEnum):
    INVITING = "inviting"
    ACTIVE = "active"
    PAUSED = "paused"
    FINISHED = "finished"
    ABORTED = "aborted"


class SeatStatus(enum.StrEnum):
    INVITED = "invited"
    JOINED = "joined"
    BOT = "bot"
    DECLINED = "declined"


class InboundSource(enum.StrEnum):
    SMTP = "smtp"
    WEBHOOK = "webhook"
    MAILGUN = "mailgun"
    INJECT = "inject"


class InboundStatus(enum.StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    DONE = "done"
    IGNORED = "ignored"
    REJECTED = "rejected"
    FAILED = "failed"


class OutboundStatus(enum.StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


class InvitationStatus(enum.StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    EXPIRED = "expired"


# --- tables -----------------------------------------------------------------

DEFAULT_PREFS: dict[str, Any] = {
    "notify": Notify.TURN_AND_TRICK.value,
    "autoplay_single": True,
}


class Player(Base):
    """A person known by their mail address (stored lowercase, unique)."""

    __tablename__ = "players"

    id: Mapped[int] = mapped_column(primary_key=True)
    address: Mapped[str] = mapped_column(String(ADDRESS_LENGTH), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), server_default="")
    language: Mapped[str] = mapped_column(String(16), server_default="en")
    timezone: Mapped[str] = mapped_column(String(64), server_default="UTC")
    # Only the keys a player changed; read through effective_prefs().
    prefs: Mapped[dict[str, Any]] = mapped_column(
        default=dict, server_default=text("'{}'")
    )
    created_at: Mapped[datetime] = mapped_column(server_default=now_default())
    bounced_at: Mapped[datetime | None]
    bounce_count: Mapped[int] = mapped_column(server_default="0", default=0)
    # Away until then (README, "Time", vacations): deadlines suspended or a bot plays, per each game's policy.
    vacation_until: Mapped[datetime | None]
    digest_sent_at: Mapped[datetime | None]

    seats: Mapped[list[Seat]] = relationship(back_populates="player")

    @validates("address")
    def _lowercase_address(self, _key: str, address: str) -> str:
        return address.strip().lower()

    def effective_prefs(self) -> dict[str, Any]:
        """The defaults overlaid with what the player chose."""
        return {**DEFAULT_PREFS, **(self.prefs or {})}


class Game(Base):
    """One game: its rules, its seats and a cached engine state.

    ``version`` is SQLAlchemy's optimistic-concurrency counter: every UPDATE of the
    row checks and bumps it, so two workers that loaded the same version cannot
    both commit a change (the loser gets ``StaleDataError`` and retries).
    The truth is the move log; ``snapshot`` is a cache a check can rebuild from it.
    """

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(primary_key=True)
    rules: Mapped[dict[str, Any]]
    status: Mapped[GameStatus] = mapped_column(
        str_enum(GameStatus), default=GameStatus.INVITING, server_default=GameStatus.INVITING.value
    )
    creator_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", ondelete="SET NULL")
    )
    version: Mapped[int] = mapped_column(Integer)
    snapshot: Mapped[dict[str, Any] | None]
    # seq of the next move to append; moves are numbered from 1.
    next_seq: Mapped[int] = mapped_column(default=1, server_default="1")
    created_at: Mapped[datetime] = mapped_column(server_default=now_default())
    updated_at: Mapped[datetime] = mapped_column(server_default=now_default())
    # Message-ID of the game's first mail: the root of its mail thread.
    thread_id: Mapped[str | None] = mapped_column(String(MESSAGE_ID_LENGTH))
    # Seed of the deals (deck of hand k from random.Random(f"{seed}:{k}")); None: system randomness.
    seed: Mapped[str | None] = mapped_column(String(128))
    title: Mapped[str] = mapped_column(String(200), default="", server_default="")
    # Time (README, "Time"): hours a seat has to decide, weekends optionally not counted, a grace period,
    # when the reminder goes out, and what happens to an absent player's seat.
    deadline_hours: Mapped[int] = mapped_column(default=72, server_default="72")
    skip_weekends: Mapped[bool] = mapped_column(default=False, server_default=false())
    grace_hours: Mapped[int] = mapped_column(default=0, server_default="0")
    reminder_hours: Mapped[int] = mapped_column(default=24, server_default="24")
    absence_policy: Mapped[str] = mapped_column(String(16), default="bot", server_default="bot")
    paused_at: Mapped[datetime | None]
    #: Set when a turn stopped its automatic moves at the bound of one step with more to play:
    #: follow-up steps continue the game (``pbem.services.continuation``).
    continue_at: Mapped[datetime | None]

    creator: Mapped[Player | None] = relationship()
    seats: Mapped[list[Seat]] = relationship(
        back_populates="game", order_by="Seat.seat", cascade="all, delete-orphan"
    )
    # Write-only: the log can be long, so it is never loaded whole by accident.
    moves: WriteOnlyMapped[Move] = relationship(
        back_populates="game", order_by="Move.seq", passive_deletes=True
    )

    __table_args__ = (
        Index(None, "status"),
        Index(None, "continue_at", postgresql_where=text("continue_at IS NOT NULL"),
              sqlite_where=text("continue_at IS NOT NULL")),
    )
    __mapper_args__ = {"version_id_col": version}


class Seat(Base):
    """A place at a game's table, taken by a player or a bot."""

    __tablename__ = "seats"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(primary_key=True)
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), index=True)
    bot: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[SeatStatus] = mapped_column(
        str_enum(SeatStatus), default=SeatStatus.INVITED, server_default=SeatStatus.INVITED.value
    )
    # How many decisions this seat has made: signed reply addresses name it, so a
    # reply to a decision already made is recognised as stale.
    decisions: Mapped[int] = mapped_column(default=0, server_default="0")
    # Time (README, "Time"): since when the game waits for this seat, its deadline, reminders sent.
    waiting_since: Mapped[datetime | None]
    deadline_at: Mapped[datetime | None] = mapped_column(index=True)
    reminders_sent: Mapped[int] = mapped_column(default=0, server_default="0")
    # Why a bot plays for a player who may take the seat back (deadline, vacation, substitute_wanted).
    stand_in: Mapped[str | None] = mapped_column(String(32))
    # This game's notification choice, overriding the player's (every_card, turn_and_trick, digest).
    notify: Mapped[str | None] = mapped_column(String(32))
    # Playing ahead: {"cards": [...]} to play in order when legal; autopilot for the rest of this hand number.
    queued: Mapped[dict[str, Any] | None]
    autopilot_hand: Mapped[int | None]
    # The last table_talk id passed on to this seat.
    talk_seen: Mapped[int] = mapped_column(default=0, server_default="0")
    # Cards played for the player since they were last asked: {"forced": [...], "ahead": [...]}.
    played_for: Mapped[dict[str, Any] | None]

    game: Mapped[Game] = relationship(back_populates="seats")
    player: Mapped[Player | None] = relationship(back_populates="seats")

    # NULLs are distinct in UNIQUE on both databases, so empty seats don't clash.
    __table_args__ = (UniqueConstraint("game_id", "player_id"),)


class Move(Base):
    """One entry of a game's append-only log: a deal (with its whole deck), a
    pass, a play, a moon choice...  Replaying the log rebuilds the game."""

    __tablename__ = "moves"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seq: Mapped[int]
    kind: Mapped[str] = mapped_column(String(32))
    seat: Mapped[int | None]
    payload: Mapped[dict[str, Any]]
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id"))
    created_at: Mapped[datetime] = mapped_column(server_default=now_default())

    game: Mapped[Game] = relationship(back_populates="moves")

    __table_args__ = (UniqueConstraint("game_id", "seq"),)


class InboundMessage(Base):
    """A received mail, stored raw before it is answered, one row per recipient.

    ``message_key`` is the Message-ID, or ``sha256:<hex>`` of the raw bytes when it
    has none; with the recipient it is unique, so a mail delivered twice (or by
    both SMTP and a webhook) is processed once.
    """

    __tablename__ = "inbound_messages"

    id: Mapped[int] = mapped_column(primary_key=True)
    message_key: Mapped[str] = mapped_column(String(MESSAGE_ID_LENGTH))
    recipient: Mapped[str] = mapped_column(String(ADDRESS_LENGTH))  # envelope RCPT TO
    mail_from: Mapped[str] = mapped_column(String(ADDRESS_LENGTH), server_default="")
    raw: Mapped[bytes]
    source: Mapped[InboundSource] = mapped_column(str_enum(InboundSource))
    received_at: Mapped[datetime]
    status: Mapped[InboundStatus] = mapped_column(
        str_enum(InboundStatus),
        default=InboundStatus.PENDING,
        server_default=InboundStatus.PENDING.value,
    )
    # What happened, for operators (JSON: a reason code and details).
    outcome: Mapped[dict[str, Any] | None]
    #: Counted, and ``attempted_at`` stamped, before each attempt at processing (committed on its own).
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    attempted_at: Mapped[datetime | None]
    processed_at: Mapped[datetime | None]

    __table_args__ = (
        UniqueConstraint("message_key", "recipient"),
        Index(None, "status"),
        Index("ix_inbound_messages_raw_kept", "received_at", postgresql_where=RAW_KEPT, sqlite_where=RAW_KEPT),
    )

    @validates("recipient")
    def _lowercase_recipient(self, _key: str, recipient: str) -> str:
        return recipient.strip().lower()


class OutboundMessage(Base):
    """The outbox: a rendered mail written in the same transaction as the move
    that caused it, then sent (with retries) by a worker."""

    __tablename__ = "outbound_messages"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"))
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id", ondelete="SET NULL"))
    recipient: Mapped[str] = mapped_column(String(ADDRESS_LENGTH))
    kind: Mapped[str] = mapped_column(String(64))  # template kind, e.g. your_turn
    message_id: Mapped[str] = mapped_column(String(MESSAGE_ID_LENGTH))
    raw: Mapped[bytes]
    # What quote removal needs of the mail (its subject, then the keys of its lines:
    # pbem.mail.quoted), so that a reply to it never parses its bytes; emptied (NULL) with the
    # bytes. NULL on a mail sent before it was kept: then the bytes are read.
    quoted: Mapped[str | None] = mapped_column(Text)
    status: Mapped[OutboundStatus] = mapped_column(
        str_enum(OutboundStatus),
        default=OutboundStatus.PENDING,
        server_default=OutboundStatus.PENDING.value,
    )
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)
    next_attempt_at: Mapped[datetime] = mapped_column(server_default=now_default())
    created_at: Mapped[datetime] = mapped_column(server_default=now_default())
    sent_at: Mapped[datetime | None]
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id"))

    __table_args__ = (
        Index(None, "status", "next_attempt_at"),  # the sender's and the sweep's query
        Index(None, "recipient", "created_at"),  # per-address daily caps
        # The mails whose bytes are still kept, by age: what the retention sweep clears
        # (pbem.services.retention); it holds only the retention window's rows.
        Index("ix_outbound_messages_raw_kept", "created_at", postgresql_where=RAW_KEPT, sqlite_where=RAW_KEPT),
    )


class Invitation(Base):
    """An invitation to take a seat, answered by replying (or by its token)."""

    __tablename__ = "invitations"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[int]
    address: Mapped[str] = mapped_column(String(ADDRESS_LENGTH), index=True)
    token: Mapped[str] = mapped_column(String(128), unique=True)
    status: Mapped[InvitationStatus] = mapped_column(
        str_enum(InvitationStatus),
        default=InvitationStatus.PENDING,
        server_default=InvitationStatus.PENDING.value,
    )
    # Nullable: games created on the command line have no inviting player.
    invited_by: Mapped[int | None] = mapped_column(ForeignKey("players.id"))
    # "join" (a seat of a new game) or "substitute" (take over an absent player's seat).
    kind: Mapped[str] = mapped_column(String(16), default="join", server_default="join")
    created_at: Mapped[datetime] = mapped_column(server_default=now_default())

    __table_args__ = (Index(None, "invited_by", "created_at"),)  # per-sender daily cap

    @validates("address")
    def _lowercase_address(self, _key: str, address: str) -> str:
        return address.strip().lower()


class WebhookNonce(Base):
    """A token or body hash already accepted by a web front: replay protection."""

    __tablename__ = "webhook_nonces"

    id: Mapped[int] = mapped_column(primary_key=True)
    source: Mapped[str] = mapped_column(String(32))
    nonce: Mapped[str] = mapped_column(String(256))
    seen_at: Mapped[datetime] = mapped_column(index=True)  # pruning old nonces

    __table_args__ = (UniqueConstraint("source", "nonce"),)


class Absence(Base):
    """A vacation a player announced; counted against the yearly allowance."""

    __tablename__ = "absences"

    id: Mapped[int] = mapped_column(primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"), index=True)
    starts_at: Mapped[datetime]
    ends_at: Mapped[datetime]
    created_at: Mapped[datetime] = mapped_column(server_default=now_default())


class TableTalk(Base):
    """A line said at a table (``say …``), passed on to the other players in their next mail."""

    __tablename__ = "table_talk"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    seat: Mapped[int]
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(server_default=now_default())


class StrangerAnswer(Base):
    """A mail sent to an address that no player has verified: the one answer a request to ``new@``
    may get (README, "What a stranger may receive"), counted against the caps."""

    __tablename__ = "stranger_answers"

    id: Mapped[int] = mapped_column(primary_key=True)
    address: Mapped[str] = mapped_column(String(ADDRESS_LENGTH))
    kind: Mapped[str] = mapped_column(String(64))
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id", ondelete="SET NULL"))
    sent_at: Mapped[datetime]

    __table_args__ = (Index(None, "address", "sent_at"), Index(None, "sent_at"))


class MailRetry(Base):
    """A set-aside mail given a fresh set of attempts by the operator (``pbem mail retry``, README
    "Operating pbem"): which mail (exactly one of the two ids), when, the attempts it had used and
    what its record said before (``before``), since the mail's own row starts again from nothing."""

    __tablename__ = "mail_retries"

    id: Mapped[int] = mapped_column(primary_key=True)
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id", ondelete="CASCADE"),
                                                   index=True)
    outbound_id: Mapped[int | None] = mapped_column(ForeignKey("outbound_messages.id", ondelete="CASCADE"),
                                                    index=True)
    retried_at: Mapped[datetime]
    attempts: Mapped[int]
    before: Mapped[dict[str, Any] | None]

    __table_args__ = (CheckConstraint("(inbound_id IS NULL) <> (outbound_id IS NULL)", name="one_mail"),)
