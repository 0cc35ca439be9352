"""A card sent by replying to a news mail (``trick_done``, ``card_played``) rather than to the
``your_turn`` mail is accepted when it is that seat's turn (README, "Playing"): the reply address is
signed for the seat's decision number, and news does not change it, so a mail that was only news
does not go stale. Through the services, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select

from pbem.db.models import Move, OutboundMessage
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.gamestore import load_game, snapshot_agrees
from tests.harness.players import Received, choose
from tests.integration.mailplay import Mailbox, address, answer, last_outcome, new_game


def news_then_turn(svc: Services, box: Mailbox, pending: list[OutboundMessage], kind: str,
                   rng: random.Random) -> tuple[OutboundMessage, OutboundMessage]:
    """Play on until a seat that has already decided something gets a ``kind`` news mail and then,
    with no decision of its own in between, its ``your_turn`` mail: both are returned."""
    news: dict[int, OutboundMessage] = {}
    decided: set[int] = set()
    for _ in range(200):
        for mail in pending:
            if mail.kind == kind:
                news[Received.parse(mail.raw).seat] = mail
        turn = next(m for m in pending if m.kind == "your_turn")
        received = Received.parse(turn.raw)
        seat = received.seat
        if seat in news and seat in decided and received.decision == "play":
            return news[seat], turn
        news.pop(seat, None)  # its decision makes its earlier news mails stale; later ones are not
        decided.add(seat)
        pending = box.add(answer(svc, turn, choose(received, rng)))
    raise AssertionError(f"no seat got a {kind} mail and then its turn")


def check_the_news_reply_plays(svc: Services, game_id: int, news: OutboundMessage, turn: OutboundMessage) -> None:
    seat = Received.parse(turn.raw).seat
    news_reply_to, turn_reply_to = Received.parse(news.raw).reply_to, Received.parse(turn.raw).reply_to
    assert news.recipient == turn.recipient == address(seat)
    assert news.id < turn.id
    assert news_reply_to == turn_reply_to  # signed for the same decision: the news did not change it
    legal = Received.parse(turn.raw).legal
    card = legal[-1]
    with transaction(svc.session_factory) as session:
        moves_before = len(session.scalars(select(Move.id).where(Move.game_id == game_id)).all())

    answers = answer(svc, news, card)  # to the news mail, not the turn mail
    outcome = last_outcome(svc)
    assert outcome["code"] == "MOVE_APPLIED", outcome
    assert outcome["move"] == {"type": "play", "seat": seat, "card": card}
    assert not [m.kind for m in answers if m.kind in ("move_rejected", "request_rejected")]
    with transaction(svc.session_factory) as session:
        moves = session.execute(select(Move.kind, Move.seat, Move.payload).where(Move.game_id == game_id)
                                .order_by(Move.seq)).all()
        assert (moves[moves_before].seat, moves[moves_before].payload["card"]) == (seat, card)
        assert snapshot_agrees(session, load_game(session, game_id, lock=False))
    # The decision is made: the turn mail (the same address) is now stale, and changes nothing.
    answer(svc, turn, legal[0] if legal[0] != card else legal[-1])
    assert last_outcome(svc)["code"] == "STALE_TURN"
    with transaction(svc.session_factory) as session:
        assert len(session.scalars(select(Move.id).where(Move.game_id == game_id)).all()) == len(moves)


def test_a_card_sent_in_reply_to_a_trick_done_mail_is_played(svc: Services) -> None:
    game_id, mails = new_game(svc, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    news, turn = news_then_turn(svc, box, list(mails), "trick_done", random.Random(7))
    check_the_news_reply_plays(svc, game_id, news, turn)


def test_a_card_sent_in_reply_to_a_card_played_mail_is_played(svc: Services) -> None:
    game_id, mails = new_game(svc, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    for seat in range(4):  # everyone asks for a mail for every card
        box.add(answer(svc, box.latest(seat), "notify every card"))
        assert last_outcome(svc)["code"] == "NOTIFY_SET"
    news, turn = news_then_turn(svc, box, [m for m in mails if m.kind == "your_turn"], "card_played",
                                random.Random(8))
    check_the_news_reply_plays(svc, game_id, news, turn)
