"""The kitty by mail (RULES.md §6.2): two people (seats 0 and 1) and two random bots through the
services, on PostgreSQL (each module of the variants' mails runs on one database: moon and kitty on
PostgreSQL, partnership and the passing variants on SQLite), on the services' clock.

The first deal is explicit: the kitty is A♣ 2♥ 3♥ 4♥; seat 0 holds every other club and leads one
to every trick (so it takes every trick), seat 3 holds the other hearts and two aces, and must drop
a heart by trick 3: the first trick with a penalty card is seat 0's, so seat 0 takes the kitty.
Seat 1 (spades) must learn who took it and when, never its cards, while the hand is played.
"""

from __future__ import annotations

import random
import re

import pytest
from sqlalchemy import select

from pbem.db.models import Move
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.deadlines import Timing
from tests.harness.players import Received
from tests.integration.test_deadlines import (  # noqa: F401  (svc is a fixture)
    Table,
    address,
    clock,
    last_outcome,
    svc,
    text_of,
)
from tests.integration.test_variant_mails_moon import start_with_deck

pytestmark = pytest.mark.postgres


@pytest.fixture
def db_url(pg_migrated_url: str) -> str:
    """This module's one database, PostgreSQL (see the module's docstring)."""
    return pg_migrated_url


KITTY = ["AC", "2H", "3H", "4H"]
HANDS = [
    [f"{r}C" for r in "23456789TJQK"],
    [f"{r}S" for r in "23456789TJQK"],
    [f"{r}D" for r in "23456789TJQK"],
    ["AS", "AD"] + [f"{r}H" for r in "56789TJQKA"],
]
#: The kitty is the first cards of the deck; the rest is dealt one at a time from the dealer's left.
DECK = KITTY + [HANDS[k % 4][k // 4] for k in range(48)]
#: The kitty's cards as the mails write them.
SHOWN = ("A♣", "2♥", "3♥", "4♥")
LONG = Timing(deadline_hours=24 * 30, reminder_hours=0, grace_hours=0)
RANKS = "23456789TJQKA"


def play_until_the_kitty_is_taken(table: Table, *, exchange: bool) -> None:
    """Seat 0 plays its lowest club, seat 1 a random legal card, until seat 0 took the kitty (with
    ``exchange``: until seat 0 is asked to discard)."""
    rng = random.Random(1)
    for _ in range(40):
        asked = table.to(0, "your_turn")
        if exchange and asked and Received.parse(asked[-1].raw).decision == "discard":
            return
        if not exchange and table.game().snapshot.get("kitty_taker") is not None:
            return
        waiting = [k for k in (0, 1) if table.seat(k).deadline_at is not None]
        assert waiting, "nobody is asked"
        seat = waiting[0]
        received = Received.parse(table.latest(seat, "your_turn").raw)
        legal = list(received.legal)
        card = min(legal, key=lambda c: RANKS.index(c[0])) if seat == 0 else rng.choice(legal)
        table.reply(table.latest(seat, "your_turn"), card)
    raise AssertionError("seat 0 never took the kitty")


def kitty_trick(table: Table) -> int:
    return int(table.game().snapshot["kitty_trick"])


def names_a_kitty_card(raw: bytes, text: str) -> list[str]:
    """The kitty cards a mail names (in its text, or as canonical cards in its X-Hearts headers)."""
    headers = raw.split(b"\r\n\r\n", 1)[0].decode()
    found = [c for c in SHOWN if c in text]
    found += [c for c in KITTY if re.search(rf"^X-Hearts-[\w-]+:.*\b{c}\b", headers, re.MULTILINE)]
    return found


def test_the_kitty_is_shown_to_its_taker_and_only_its_taking_to_the_others(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=2, preset="kitty", pass_cycle=["hold"])
    first = text_of(table.to(1)[0])
    assert ("A kitty of 4 cards lies face down; it goes to the first player to take a penalty card, at the end of "
            "that trick.") in first
    assert "The kitty joins its taker's tricks and counts for them; only they see its cards." in first
    before = len(table.mails)
    play_until_the_kitty_is_taken(table, exchange=False)
    trick = kitty_trick(table)
    # The others: who took it and at which trick, in their next mail; never its cards.
    later = table.mails[before:]
    to_seat_1 = [m for m in later if m.recipient == address(1)]
    assert any(f"Player 0 took the kitty at trick {trick}." in text_of(m) for m in to_seat_1)
    for mail in to_seat_1:
        assert names_a_kitty_card(mail.raw, text_of(mail)) == [], mail.kind
    # The taker: its cards, in its next mail.
    to_seat_0 = [m for m in table.mails if m.recipient == address(0)]
    assert any(f"You took the kitty at trick {trick}: 2♥, 3♥, 4♥, and A♣. Its cards count among your tricks."
               in text_of(m) for m in to_seat_0)


def test_the_discard_decision_by_mail_refused_with_the_choices_then_accepted(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=2, preset="kitty", kitty_exchange=True, pass_cycle=["hold"])
    assert "Whoever takes the kitty adds it to their hand and discards as many cards face down" in text_of(
        table.to(0)[0])
    play_until_the_kitty_is_taken(table, exchange=True)
    trick = kitty_trick(table)
    ask = table.latest(0, "your_turn")
    received = Received.parse(ask.raw)
    assert received.decision == "discard"
    assert set(KITTY) <= set(received.legal) and set(received.legal) == set(received.hand)
    text = text_of(ask)
    assert text.startswith("You took the kitty: discard 4 cards")
    assert f"You took the kitty at trick {trick}: 2♥, 3♥, 4♥, and A♣. It is in your hand now." in text
    assert "Discard 4 cards face down to your tricks, before the next lead" in text
    assert "Reply with the 4 cards you discard, for example: discard" in text
    assert "Please move by" in text
    # Seat 1 is told who took it and that the hand waits for the discard, not what it held.
    waiting = [m for m in table.mails if m.recipient == address(1)][-1]
    assert f"Player 0 took the kitty at trick {trick}." in text_of(waiting)
    assert names_a_kitty_card(waiting.raw, text_of(waiting)) == []

    # Two cards: refused, with the legal choices.
    refused = table.reply(ask, "discard 5C 6C")
    assert last_outcome(svc)["code"] == "WRONG_DISCARD_COUNT"
    assert [m.kind for m in refused] == ["move_rejected"]
    said = text_of(refused[0])
    assert "You must discard exactly 4 cards, as many as the kitty held. Your reply named 2 cards." in said
    assert "You may discard any 4 of your cards:" in said
    # Seat 1 may not discard.
    table.reply(table.latest(1), "discard 2S 3S 4S 5S")
    assert last_outcome(svc)["code"] in ("NOT_THE_KITTY_TAKER", "STALE_TURN")

    # In Portuguese, four cards: accepted; the play goes on and seat 0 leads.
    cards = [c for c in received.hand if c.endswith("C") and c != "AC"][:2] + ["2H", "3H"]
    accepted = table.reply(ask, "descarto " + " ".join(cards))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    with transaction(svc.session_factory) as session:
        discard = session.scalars(select(Move.payload).where(Move.game_id == table.game_id, Move.kind == "discard")).all()
    assert [sorted(d["cards"]) for d in discard] == [sorted(cards)]
    turn = next(m for m in accepted if m.recipient == address(0) and m.kind == "your_turn")
    assert Received.parse(turn.raw).decision == "play"
    assert "You discarded" in text_of(turn)
    for mail in (m for m in accepted if m.recipient == address(1)):
        assert names_a_kitty_card(mail.raw, text_of(mail)) == []


def test_an_unanswered_discard_discards_the_kitty_at_the_deadline_and_says_so(svc: Services) -> None:
    table = start_with_deck(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=12), DECK, people=2,
                            preset="kitty", kitty_exchange=True, pass_cycle=["hold"])
    play_until_the_kitty_is_taken(table, exchange=True)
    clock(svc).advance(hours=24)
    reminder = [m for m in table.tick() if m.recipient == address(0)]
    assert [m.kind for m in reminder] == ["reminder"]
    assert "the kitty cards themselves are discarded for you" in text_of(reminder[0])
    clock(svc).advance(hours=12)
    acted = table.tick()
    mine = [m for m in acted if m.recipient == address(0)]
    assert mine[0].kind == "decision_defaulted"
    assert "So the kitty cards themselves were discarded for you: 2♥, 3♥, 4♥, and A♣." in text_of(mine[0])
    assert text_of(mine[0]).startswith("Time ran out: the kitty cards were discarded for you")
    with transaction(svc.session_factory) as session:
        discard = session.scalars(select(Move.payload).where(Move.game_id == table.game_id, Move.kind == "discard")).all()
    assert [sorted(d["cards"]) for d in discard] == [sorted(KITTY)]
    assert table.seat(0).stand_in is None
    # The play goes on: seat 0 (who won the trick) leads, asked by mail.
    assert any(m.kind == "your_turn" and Received.parse(m.raw).decision == "play" for m in mine)
    for mail in (m for m in acted if m.recipient == address(1)):
        assert names_a_kitty_card(mail.raw, text_of(mail)) == []


def test_a_kitty_exchange_game_with_computer_players_plays_to_its_end_by_mail(svc: Services) -> None:
    """Whoever takes the kitty (the person or a computer player) discards; the game ends."""
    table = start_with_deck(svc, LONG, None, people=1, preset="kitty", kitty_exchange=True, end_after_hands=2)
    rng = random.Random(4)
    for _ in range(120):
        if table.to(0, "game_summary"):
            break
        mail = table.latest(0, "your_turn")
        received = Received.parse(mail.raw)
        if received.decision == "discard":
            body = "discard " + " ".join(rng.sample(list(received.legal), 4))
        elif received.decision == "pass":
            body = " ".join(rng.sample(list(received.hand), 3))
        else:
            body = rng.choice(list(received.legal))
        table.reply(mail, body)
        assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    assert table.to(0, "game_summary")
    summaries = [text_of(m) for m in table.to(0, "hand_summary")]
    assert len(summaries) == 2 and all("The kitty held " in s for s in summaries)
    with transaction(svc.session_factory) as session:
        assert len(session.scalars(select(Move.id).where(Move.game_id == table.game_id, Move.kind == "discard")).all()) >= 1


def test_the_autopilot_discards_for_its_player(svc: Services) -> None:
    """README, "Playing ahead": the autopilot plays the rest of the hand, the kitty discard included."""
    table = start_with_deck(svc, LONG, DECK, people=1, preset="kitty", kitty_exchange=True, pass_cycle=["hold"])
    table.reply(table.latest(0, "your_turn"), "autopilot")
    assert last_outcome(svc)["code"] == "AUTOPILOT_ON"
    asked = [Received.parse(m.raw).decision for m in table.to(0, "your_turn")]
    assert "discard" not in asked
    with transaction(svc.session_factory) as session:
        moves = session.execute(select(Move.kind, Move.seat).where(Move.game_id == table.game_id)
                                .order_by(Move.seq)).all()
    assert [(kind, seat) for kind, seat in moves if kind == "discard"] == [("discard", 0)]
    summary = text_of(table.latest(0, "hand_summary"))
    assert "The kitty held 2♥, 3♥, 4♥, and A♣; you took it at trick" in summary and "You discarded" in summary
