"""Helpers for the long-game tests (README, "Playing ahead" to "Summaries"): games driven by mail through the services.

Replies are stored as a front stores them and processed as the worker processes them, in this
process, on the test's database (SQLite or PostgreSQL); the clock is a ``ManualClock``.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

from sqlalchemy import select

from pbem.config import Settings
from pbem.db.models import InboundMessage, OutboundMessage
from pbem.db.session import transaction
from pbem.engine import GameState, Rules
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.games import SeatSpec, create_game, start_game
from pbem.services.gamestore import current_state, load_game
from pbem.services.inbound import process_inbound
from pbem.services.intake import store_inbound
from tests.harness.players import Received, reply_bytes

DOMAIN = "hearts.test"


def make_services(db_url: str, tmp_path: Path, **env: str) -> Services:
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": db_url,
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "test-secret-key",
        "PBEM_BASE_URL": "https://hearts.test",
        "PBEM_BROKER_URL": "memory://",
        "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random",
        **env,
    })
    return Services.from_settings(settings, clock=ManualClock())


def address(seat: int) -> str:
    return f"p{seat}@players.test"


def new_game(svc: Services, *, people: int = 4, seed: str = "long-games", deck: list[str] | None = None,
             **options: object) -> tuple[int, list[OutboundMessage]]:
    """A game with ``people`` people in the first seats and random bots after them."""
    rules = Rules.make("standard", **options)
    seats = [SeatSpec(address=address(k), name=f"Player {k}") if k < people else SeatSpec(bot="random")
             for k in range(rules.players)]
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=rules, seats=seats, seed=seed, title="Long table")
        mails = start_game(session, svc, game, first_deck=deck)
        return game.id, mails


def deliver(svc: Services, raw: bytes, sender: str, recipient: str) -> list[OutboundMessage]:
    """Store a mail as a front would, process it as the worker would; the mails it caused."""
    with transaction(svc.session_factory) as session:
        ids = store_inbound(session, raw=raw, mail_from=sender, recipients=[recipient], source="inject",
                            received_at=svc.clock.now())
    out_ids: list[int] = []
    for inbound_id in ids:
        out_ids += process_inbound(svc, inbound_id)
    return outbox(svc, out_ids)


def outbox(svc: Services, ids: list[int]) -> list[OutboundMessage]:
    """The outbox rows of ``ids``, in the order they were written (detached from any session)."""
    with transaction(svc.session_factory) as session:
        rows = list(session.scalars(select(OutboundMessage).where(OutboundMessage.id.in_(ids))
                                    .order_by(OutboundMessage.id)))
        session.expunge_all()
        return rows


def answer(svc: Services, mail: OutboundMessage, body: str) -> list[OutboundMessage]:
    """Reply to ``mail`` (one of ours) from its recipient, with ``body`` on top."""
    received = Received.parse(mail.raw)
    return deliver(svc, reply_bytes(received, sender=mail.recipient, body=body), mail.recipient,
                   received.reply_to)


def last_outcome(svc: Services) -> dict:
    with transaction(svc.session_factory) as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        return {"status": row.status, **(row.outcome or {})}


def parsed(mail: OutboundMessage) -> EmailMessage:
    return message_from_bytes(mail.raw, policy=default)  # type: ignore[return-value]


def text_of(mail: OutboundMessage) -> str:
    return parsed(mail).get_body(("plain",)).get_content()


def prose_of(mail: OutboundMessage) -> str:
    """The text part with its lines joined: text parts are wrapped at 72 columns, so a sentence
    a test looks for may go on on the next line."""
    return re.sub(r"[ \t]*\r?\n[ \t]*", " ", text_of(mail))


def html_of(mail: OutboundMessage) -> str:
    return parsed(mail).get_body(("html",)).get_content()


@dataclass
class Mailbox:
    """Every mail of a test, in order, with the latest per seat at hand."""

    mails: list[OutboundMessage]

    def add(self, mails: list[OutboundMessage]) -> list[OutboundMessage]:
        self.mails += mails
        return mails

    def to(self, seat: int, kind: str | None = None) -> list[OutboundMessage]:
        return [m for m in self.mails if m.recipient == address(seat) and (kind is None or m.kind == kind)]

    def latest(self, seat: int, kind: str | None = None) -> OutboundMessage:
        return self.to(seat, kind)[-1]


def state_of(svc: Services, game_id: int) -> GameState:
    """The game's current state, read back from the database."""
    with transaction(svc.session_factory) as session:
        return current_state(load_game(session, game_id, lock=False))
