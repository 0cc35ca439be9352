"""The passing variants by mail (RULES.md §6.3): the dealer's call, declining the pass and a mix hand,
through the services with scripted people (the other seats random bots), on SQLite (each module of
the variants' mails runs on one database: moon and kitty on PostgreSQL, partnership and the passing
variants on SQLite), on the services' clock.

With 4 players the first hand's dealer is seat 3 (the cards are dealt from the dealer's left, and
seat 0 gets the first card): a person in seat 3 is asked for the first call.
"""

from __future__ import annotations

from email import message_from_bytes
from email.policy import default

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

LONG = Timing(deadline_hours=24 * 30, reminder_hours=0, grace_hours=0)
SHORT = Timing(deadline_hours=24, reminder_hours=0, grace_hours=12)
#: Any deck: with dealer_calls_pass and a person to call, the deal comes after the call (from the seed).
DECK = [f"{r}{s}" for s in "CDSH" for r in "23456789TJQKA"]


@pytest.fixture
def db_url(sqlite_migrated_url: str) -> str:
    """This module's one database, SQLite (see the module's docstring)."""
    return sqlite_migrated_url


def header(mail, name: str) -> str | None:
    value = message_from_bytes(mail.raw, policy=default).get(name)
    return None if value is None else " ".join(str(value).split())


def moves(svc: Services, game_id: int, kind: str) -> list[dict]:
    with transaction(svc.session_factory) as session:
        return list(session.scalars(select(Move.payload).where(Move.game_id == game_id, Move.kind == kind)
                                    .order_by(Move.seq)).all())


def test_the_dealer_calls_by_mail_refused_with_the_calls_then_accepted_and_told_with_the_deal(
        svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=4, dealer_calls_pass=True)
    ask = table.latest(3, "your_turn")
    assert header(ask, "X-Hearts-Decision") == "call_pass"
    legal = header(ask, "X-Hearts-Legal")
    assert legal is not None and legal.startswith("3 left, 2 left 1 right, ")
    assert "1 left 1 right 1 across" in legal and legal.endswith("3 across, mix")
    text = text_of(ask)
    assert text.startswith("You deal: call how the cards are passed")
    assert "You deal hand 1: before the deal, call how the cards are passed." in text
    assert "“2 left 1 right”" in text and "“mix”" in text
    assert "Reply with your call, for example: 2 left 1 right" in text
    assert "Please move by" in text
    # The others are told the game began, and asked nothing yet.
    assert not table.to(0, "your_turn")

    refused = table.reply(ask, "4 left")
    assert last_outcome(svc)["code"] == "BAD_CALL"
    said = " ".join(text_of(refused[0]).split())
    assert "“4 left” is not a call you can make in this game. Reply with one of: “3 left”, “2 left 1 right”," in said
    assert "“mix”." in said
    assert not moves(svc, table.game_id, "deal")

    # A person who is not the dealer cannot call (their reply answers no decision of theirs).
    accepted = table.reply(ask, "2 esquerda 1 direita")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    assert moves(svc, table.game_id, "call") == [{"type": "call", "seat": 3, "call": [["left", 2], ["right", 1]]}]
    for seat in range(4):
        mail = next(m for m in accepted if m.recipient == address(seat) and m.kind == "your_turn")
        prose = " ".join(text_of(mail).split())
        assert header(mail, "X-Hearts-Decision") == "pass"
        if seat == 3:
            assert "You called “2 left 1 right” for this hand." in prose
        else:
            assert "Player 3 called “2 left 1 right” for this hand." in prose
    prose = " ".join(text_of(next(m for m in accepted if m.recipient == address(0))).split())
    assert ("Pass 3 cards, in the order you write them: the first 2 to the left, to Player 1; "
            "the last 1 to the right, to Player 3.") in prose


def test_an_unanswered_call_follows_the_pass_cycle_at_the_deadline_and_says_so(svc: Services) -> None:
    table = start_with_deck(svc, SHORT, DECK, people=4, dealer_calls_pass=True, pass_cycle=["right"])
    clock(svc).advance(hours=24)
    reminder = [m for m in table.tick() if m.recipient == address(3)]
    assert [m.kind for m in reminder] == ["reminder"]
    assert "the hand follows the pass cycle, as it would without a call." in " ".join(text_of(reminder[0]).split())
    clock(svc).advance(hours=12)
    acted = table.tick()
    mine = [m for m in acted if m.recipient == address(3)]
    assert mine[0].kind == "decision_defaulted"
    prose = " ".join(text_of(mine[0]).split())
    assert prose.startswith("Time ran out: the hand follows the pass cycle")
    assert "So the hand follows the pass cycle, as it would without a call: “3 right”." in prose
    assert moves(svc, table.game_id, "call") == [{"type": "call", "seat": 3, "call": [["right", 3]]}]
    assert table.seat(3).stand_in is None
    # Dealt: everyone is asked to pass, told the call.
    first = next(m for m in acted if m.recipient == address(0) and m.kind == "your_turn")
    assert "Player 3 called “3 right” for this hand." in " ".join(text_of(first).split())


def test_a_computer_dealer_calls_and_the_people_are_told(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=1, dealer_calls_pass=True)
    calls = moves(svc, table.game_id, "call")
    assert len(calls) == 1 and calls[0]["seat"] == 3
    first = table.latest(0, "your_turn")
    assert header(first, "X-Hearts-Decision") == "pass"
    assert " called “" in " ".join(text_of(first).split())


def test_declining_the_pass_by_mail_keeps_the_hand_and_receives_nothing(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=2, pass_optional=True, pass_cycle=["left"])
    ask = table.latest(0, "your_turn")
    assert header(ask, "X-Hearts-Decision") == "pass"
    assert header(ask, "X-Hearts-Decline") == "no pass"
    hand = Received.parse(ask.raw).hand
    assert "Or reply “no pass” to keep your hand" in " ".join(text_of(ask).split())
    noted = table.reply(ask, "não passo")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    assert {"type": "decline", "seat": 0} in moves(svc, table.game_id, "decline")
    done = [m for m in noted if m.recipient == address(0)]
    assert done and done[0].kind == "pass_done"
    assert "You declined the pass: you keep your hand, and you will receive no cards." in " ".join(
        text_of(done[0]).split())
    # Seat 1 passes to seat 2 (a bot); the exchange is done once the bots have chosen.
    seat1 = Received.parse(table.latest(1, "your_turn").raw)
    table.reply(table.latest(1, "your_turn"), " ".join(seat1.hand[:3]))
    after = [m for m in table.mails if m.recipient == address(0)][-1]
    assert set(Received.parse(after.raw).hand) <= set(hand)  # nothing received (some cards played since)
    said = " ".join(text_of(after).split())
    if after.kind == "your_turn" or "You declined" in said:
        assert "You declined the pass: you kept your hand and received no cards." in said
    assert "You received" not in said


def test_an_unanswered_optional_pass_is_declined_at_the_deadline_and_said_so(svc: Services) -> None:
    table = start_with_deck(svc, SHORT, DECK, people=1, pass_optional=True, pass_cycle=["left"])
    hand = Received.parse(table.latest(0, "your_turn").raw).hand
    clock(svc).advance(hours=24)
    reminder = [m for m in table.tick() if m.recipient == address(0)]
    assert [m.kind for m in reminder] == ["reminder"]
    assert "you keep your hand: you pass no cards and receive none." in " ".join(text_of(reminder[0]).split())
    clock(svc).advance(hours=12)
    acted = [m for m in table.tick() if m.recipient == address(0)]
    assert acted[0].kind == "decision_defaulted"
    prose = " ".join(text_of(acted[0]).split())
    assert prose.startswith("Time ran out: you keep your hand, no pass")
    assert "So you declined the pass: you keep your hand, and you receive no cards." in prose
    assert {"type": "decline", "seat": 0} in moves(svc, table.game_id, "decline")
    assert table.seat(0).stand_in is None
    assert set(Received.parse([m for m in table.mails if m.recipient == address(0)][-1].raw).hand) <= set(hand)


def test_a_mix_hand_by_mail(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=1, pass_cycle=["mix"], pass_optional=True)
    ask = table.latest(0, "your_turn")
    assert header(ask, "X-Hearts-Decline") is None  # a mix hand cannot be declined (RULES.md §6.8)
    prose = " ".join(text_of(ask).split())
    assert prose.startswith("Pass 3 cards to the middle (mix)")
    assert "Hand 1, a mix hand." in prose
    assert ("Pass 3 cards to the middle: every player's cards in the middle are shuffled and dealt back, "
            "3 to each player.") in prose
    assert "no pass" not in prose
    table.reply(ask, "no pass")
    assert last_outcome(svc)["code"] == "NO_DECLINE_ON_MIX"
    assert "nobody may keep them" in " ".join(text_of(table.latest(0, "move_rejected")).split())
    cards = Received.parse(ask.raw).hand[-3:]
    table.reply(ask, " ".join(cards))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    mixed = moves(svc, table.game_id, "mix")
    assert len(mixed) == 1 and len(mixed[0]["cards"]) == 12
    after = [m for m in table.mails if m.recipient == address(0)][-1]
    said = " ".join(text_of(after).split())
    assert "You received" in said and "You passed" in said
