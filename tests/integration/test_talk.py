"""Table talk (README, "Table talk") through the services, on SQLite and PostgreSQL: a ``say`` line in any
reply reaches every other player once, in their next mail, and never its speaker."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select

from pbem.db.models import OutboundMessage, TableTalk
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.creator import abort_game
from pbem.services.gamestore import load_game
from pbem.services.tick import tick
from tests.harness.players import Received, choose, reply_bytes
from tests.integration.mailplay import (
    Mailbox,
    address,
    answer,
    deliver,
    html_of,
    last_outcome,
    new_game,
    outbox,
    text_of,
)

LINE = "Good luck, <b>everyone</b>!"


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
    started = box.latest(1)
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


def abort(svc: Services, game_id: int) -> list[OutboundMessage]:
    """The operator's ``pbem game abort``: the game's mails, as written."""
    with transaction(svc.session_factory) as session:
        ids = [m.id for m in abort_game(session, svc, load_game(session, game_id), svc.clock.now())]
    return outbox(svc, ids)


def test_any_mail_about_the_game_carries_the_unseen_talk_and_talk_before_an_abort_is_told(svc: Services) -> None:
    game_id, mails = new_game(svc, people=3, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    assert answer(svc, box.latest(1), "say see you all") == []
    # A status is a mail about the game: it carries the line, once; the speaker's own does not.
    status = box.add(answer(svc, box.latest(2), "status"))
    assert [m.kind for m in status] == ["status"]
    assert "Table talk:" in text_of(status[0]) and "see you all" in text_of(status[0])
    assert "see you all" in html_of(status[0])
    again = box.add(answer(svc, box.latest(2), "status"))
    assert "see you all" not in text_of(again[0]) and "Table talk:" not in text_of(again[0])
    own = box.add(answer(svc, box.latest(1), "status"))
    assert "see you all" not in text_of(own[0])
    # Said just before the game is called off: the abort mail is the next mail, and it tells it.
    assert answer(svc, box.latest(2), "say sorry, I must go") == []
    aborted = {m.recipient: text_of(m) for m in box.add(abort(svc, game_id))}
    assert sorted(aborted) == [address(0), address(1), address(2)]
    assert "see you all" in aborted[address(0)] and "sorry, I must go" in aborted[address(0)]
    assert "see you all" not in aborted[address(1)] and "sorry, I must go" in aborted[address(1)]
    assert "Table talk:" not in aborted[address(2)]
    for seat in range(3):  # every line reached every other player exactly once
        texts = [text_of(m) for m in box.to(seat)]
        assert sum("see you all" in t for t in texts) == (0 if seat == 1 else 1)
        assert sum("sorry, I must go" in t for t in texts) == (0 if seat == 2 else 1)


def test_a_reminder_carries_the_talk_the_awaited_player_has_not_heard(svc: Services) -> None:
    game_id, mails = new_game(svc, people=2, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    turn = next(m for m in mails if m.kind == "your_turn")
    awaited = Received.parse(turn.raw).seat
    other = 1 - awaited
    assert answer(svc, box.latest(other), "say your move, friend") == []
    svc.clock.advance(hours=49)  # 24 hours before the 72-hour deadline
    reminders = box.add(outbox(svc, tick(svc)))
    assert [(m.kind, m.recipient) for m in reminders] == [("reminder", address(awaited))]
    assert "your move, friend" in text_of(reminders[0]) and "your move, friend" in html_of(reminders[0])
    box.add(answer(svc, turn, choose(Received.parse(turn.raw), random.Random(5))))
    play_on(svc, box, [m for m in box.mails if m.kind == "your_turn"], random.Random(6), 6)
    heard = [m.kind for m in box.to(awaited) if "your move, friend" in text_of(m)]
    assert heard == ["reminder"]
    assert not any("your move, friend" in text_of(m) for m in box.to(other))

