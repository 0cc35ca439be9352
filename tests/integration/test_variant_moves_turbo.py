"""Turbo charges by mail as moves (RULES.md §6.4): a refused charge changes nothing and is answered with
what may be charged; the cards alone (or "none") answer the charge mail; with no answer by the deadline
nothing is charged, and the player is told. Through the services with scripted people, the other seats
random bots, on the module's SQLite database and the services' clock (the deal of
tests/integration/test_variant_mails_turbo.py: seat 0 holds Q♠ 10♣ J♦, seat 1 A♥)."""

from __future__ import annotations

from pbem.services.app import Services
from pbem.services.deadlines import Timing
from tests.integration.test_deadlines import address, clock, last_outcome, text_of
from tests.integration.test_variant_mails_moon import start_with_deck
from tests.integration.test_variant_mails_turbo import DECK, LONG, header, moves, prose, svc  # noqa: F401

SHORT = Timing(deadline_hours=24, reminder_hours=0, grace_hours=12)


def test_a_refused_charge_changes_nothing_and_names_what_may_be_charged(svc: Services) -> None:
    table = start_with_deck(svc, LONG, DECK, people=2, preset="turbo", pass_cycle=["hold"], charge_limit=1)
    ask0 = table.latest(0, "your_turn")
    assert header(ask0, "X-Hearts-Charge-Limit") == "1"

    # A card that cannot be charged (2♣), then more than the limit: refused, nothing in the log.
    refused = table.reply(ask0, "charge 2C")
    assert last_outcome(svc)["code"] == "NOT_CHARGEABLE"
    said = prose(refused[0])
    assert "2♣ cannot be charged: only A♥, Q♠, the bonus card and 10♣ can." in said
    assert "You may charge 1 card of Q♠, 10♣, and J♦, or reply “charge none”." in said
    assert "Nothing has changed: reply again with your move." in said
    refused = table.reply(ask0, "charge QS TC")
    assert last_outcome(svc)["code"] == "TOO_MANY_CHARGES"
    said = prose(refused[0])
    assert "In this game a player charges 1 card at most. Your reply named 2 cards." in said
    assert moves(svc, table.game_id, "charge") == []

    # The cards alone answer the charge mail; "anunț nimic" (Romanian) charges nothing.
    table.reply(ask0, "10♣")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    table.reply(table.latest(1, "your_turn"), "anunț nimic")
    assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
    assert moves(svc, table.game_id, "charge") == [{"type": "charge", "seat": 0, "cards": ["TC"]},
                                                  {"type": "charge", "seat": 1, "cards": []}]
    # A second charge for the same hand is stale: the decision was made.
    table.reply(ask0, "charge QS")
    assert last_outcome(svc)["code"] != "MOVE_APPLIED"
    assert len(moves(svc, table.game_id, "charge")) == 2


def test_an_unanswered_charge_charges_nothing_at_the_deadline_and_says_so(svc: Services) -> None:
    table = start_with_deck(svc, SHORT, DECK, people=2, preset="turbo", pass_cycle=["hold"])
    table.reply(table.latest(1, "your_turn"), "charge AH")
    clock(svc).advance(hours=36)
    acted = table.tick()
    mine = [m for m in acted if m.recipient == address(0)]
    assert mine and mine[0].kind == "decision_defaulted", [m.kind for m in mine]
    said = " ".join(text_of(mine[0]).split())
    assert said.startswith("Time ran out: you charge nothing")
    assert "So nothing was charged for you this hand: your cards count as usual." in said
    assert moves(svc, table.game_id, "charge") == [{"type": "charge", "seat": 1, "cards": ["AH"]},
                                                  {"type": "charge", "seat": 0, "cards": []}]
    assert table.seat(0).stand_in is None  # the seat stays the player's
    # Everyone is told the charges with the play that follows.
    told = [prose(m) for m in acted if m.recipient == address(1)]
    assert any("Player 1 (you) A♥" in t for t in told), told
