"""Uniqueness rules the services rely on, enforced by both databases."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError

from pbem.db.models import Game, InboundMessage, InboundSource, Move, Player, Seat, WebhookNonce
from pbem.db.session import make_engine, make_session_factory, transaction

RECEIVED = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def engine(db_url: str):
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def new_game(engine: Engine) -> int:
    with transaction(make_session_factory(engine)) as session:
        game = Game(rules={"preset": "standard"})
        session.add(game)
        session.flush()
        return game.id


def test_moves_are_unique_per_game_and_seq(engine: Engine) -> None:
    factory = make_session_factory(engine)
    game_id, other_game_id = new_game(engine), new_game(engine)
    with transaction(factory) as session:
        session.add(Move(game_id=game_id, seq=1, kind="deal", payload={"deck": ["2C", "QS"]}))
        session.add(Move(game_id=other_game_id, seq=1, kind="deal", payload={"deck": []}))

    with pytest.raises(IntegrityError), transaction(factory) as session:
        session.add(Move(game_id=game_id, seq=1, kind="play", seat=0, payload={"card": "2C"}))

    with factory() as session:
        assert session.scalar(select(func.count()).select_from(Move)) == 2
        deal = session.scalars(select(Move).where(Move.game_id == game_id)).one()
        assert deal.payload == {"deck": ["2C", "QS"]}


def test_inbound_is_unique_per_message_key_and_recipient(engine: Engine) -> None:
    factory = make_session_factory(engine)

    def inbound(recipient: str, source: InboundSource = InboundSource.SMTP) -> InboundMessage:
        return InboundMessage(
            message_key="<abc@mail.example>",
            recipient=recipient,
            mail_from="ana@example.com",
            raw=b"Subject: hi\r\n\r\nQS\r\n",
            source=source,
            received_at=RECEIVED,
        )

    with transaction(factory) as session:
        session.add(inbound("g1@hearts.localhost"))
        # The same mail to a second recipient is a second row.
        session.add(inbound("g2@hearts.localhost"))

    # Delivered again (here by the webhook, recipient in another case): refused.
    with pytest.raises(IntegrityError), transaction(factory) as session:
        session.add(inbound("G1@Hearts.Localhost", InboundSource.WEBHOOK))

    with factory() as session:
        rows = session.scalars(select(InboundMessage).order_by(InboundMessage.id)).all()
        assert [row.recipient for row in rows] == ["g1@hearts.localhost", "g2@hearts.localhost"]
        assert rows[0].raw == b"Subject: hi\r\n\r\nQS\r\n"
        assert rows[0].status == "pending"


def test_player_address_nonce_and_seat_uniqueness(engine: Engine) -> None:
    factory = make_session_factory(engine)
    with transaction(factory) as session:
        session.add(Player(address="ana@example.com"))
    with pytest.raises(IntegrityError), transaction(factory) as session:
        session.add(Player(address="ANA@example.com"))

    with transaction(factory) as session:
        session.add(WebhookNonce(source="mailgun", nonce="t1", seen_at=RECEIVED))
        session.add(WebhookNonce(source="webhook", nonce="t1", seen_at=RECEIVED))
    with pytest.raises(IntegrityError), transaction(factory) as session:
        session.add(WebhookNonce(source="mailgun", nonce="t1", seen_at=RECEIVED))

    game_id = new_game(engine)
    with transaction(factory) as session:
        ana = session.scalars(select(Player)).one()
        # Empty seats (no player) don't clash with each other.
        session.add_all([Seat(game_id=game_id, seat=0, player_id=ana.id)])
        session.add_all([Seat(game_id=game_id, seat=i) for i in (1, 2)])
    with pytest.raises(IntegrityError), transaction(factory) as session:
        session.add(Seat(game_id=game_id, seat=3, player_id=ana.id))


def test_foreign_keys_are_enforced(engine: Engine) -> None:
    """SQLite ignores foreign keys unless told; make_engine tells it."""
    with pytest.raises(IntegrityError), transaction(make_session_factory(engine)) as session:
        session.add(Move(game_id=999_999, seq=1, kind="deal", payload={}))
