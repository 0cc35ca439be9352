"""Table talk (issue 4 §7) through the services, on SQLite and PostgreSQL: a ``say`` line in any
reply reaches every other player once, in their next mail, and never its speaker."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sqlalchemy import select

from pbem.db.models import TableTalk
from pbem.db.session import transaction
from pbem.services.app import Services
from tests.harness.players import Received, choose, reply_bytes
from tests.integration.mailplay import (
    Mailbox,
    address,
    answer,
    deliver,
    html_of,
    last_outcome,
    make_services,
    new_game,
    text_of,
)

LINE = "Good luck, <b>everyone</b>!"


@pytest.fixture
def svc(db_url: str, tmp_path: Path) -> Services:
    services = make_services(db_url, tmp_path)
    yield services
    services.close()


def talk_rows(svc: Services) -> list[tuple[int, str]]:
    with transaction(svc.session_factory) as session:
        return [tuple(r) for r in session.execute(select(TableTalk.seat, TableTalk.text).order_by(TableTalk.id))]


def play_on(svc: Services, box: Mailbox, pending: list, rng: random.Random, moves: int) -> None:
    """Answer the turn mails with legal cards, ``moves`` times."""
    for _ in range(moves):
        turn = [m for m in pending if m.kind == "your_turn"][-1]
        new = box.add(answer(svc, turn, choose(Received.parse(turn.raw), rng)))
        pending[:] = new


def test_say_with_a_card_reaches_each_other_player_once(svc: Services) -> None:
    game_id, mails = new_game(svc, people=3, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    turn = next(m for m in mails if m.kind == "your_turn")
    speaker = Received.parse(turn.raw).seat
    card = Received.parse(turn.raw).legal[0]
    start = len(box.mails)
    pending = box.add(answer(svc, turn, f"say {LINE}\n{card}"))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED"
    assert talk_rows(svc) == [(speaker, LINE)]
    play_on(svc, box, pending, random.Random(3), 12)  # three tricks: every player hears of the table

    after = box.mails[start:]
    for seat in range(3):
        texts = [text_of(m) for m in after if m.recipient == address(seat)]
        if seat == speaker:
            assert all(LINE not in t for t in texts)
            continue
        assert texts, f"seat {seat} got no mail"
        assert LINE in texts[0] and "Table talk:" in texts[0]
        assert all(LINE not in t for t in texts[1:]), "a line was passed on twice"
        first = next(m for m in after if m.recipient == address(seat))
        assert "&lt;b&gt;everyone&lt;/b&gt;" in html_of(first)  # escaped in HTML


def test_a_reply_of_only_talk_is_recorded_without_an_answer(svc: Services) -> None:
    game_id, mails = new_game(svc, people=2, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    started = box.latest(1, "game_started")
    assert answer(svc, started, "say hello from seat 1\nsay and a second line") == []
    assert last_outcome(svc)["code"] == "TALK_RECORDED"
    assert talk_rows(svc) == [(1, "hello from seat 1\nand a second line")]
    # Someone else writing to seat 1's address is not seat 1 talking.
    received = Received.parse(started.raw)
    deliver(svc, reply_bytes(received, sender="mallory@evil.test", body="say I am seat 1"), "mallory@evil.test",
            received.reply_to)
    assert last_outcome(svc)["code"] == "FORGED_SENDER"
    assert len(talk_rows(svc)) == 1
    # Seat 0 hears both lines in its next mail.
    pending = [m for m in mails if m.kind == "your_turn"]
    heard = []
    rng = random.Random(1)
    for _ in range(8):
        play_on(svc, box, pending, rng, 1)
        heard = [text_of(m) for m in box.to(0) if "hello from seat 1" in text_of(m)]
        if heard:
            break
    assert len(heard) == 1 and "and a second line" in heard[0]
