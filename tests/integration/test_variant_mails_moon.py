"""A moon choice nobody makes by the deadline: ``safety`` decides (RULES.md §3 ``moon``), by mail.

Service-level, on PostgreSQL, on the services' ``ManualClock`` (the helpers of
``test_deadlines``). The first deal is explicit: seat 0 (the one person at the table) holds every
club and leads one to every trick, so it takes every card: a moon, and under ``moon: choice`` it is
asked how to score it. It does not answer.

The database is not what the variants' mail tests are about: each of their modules runs on one
(moon and kitty on PostgreSQL, partnership and the passing variants on SQLite).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from pbem.db.models import Move
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from pbem.services.deadlines import Timing
from pbem.services.games import SeatSpec, create_game, get_or_create_player, start_game
from tests.harness.players import Received
from tests.integration.test_auto_finish import DECK
from tests.integration.test_deadlines import (  # noqa: F401  (svc is a fixture)
    Table,
    address,
    clock,
    svc,
    text_of,
)

RULES = {"pass_cycle": ["hold"], "moon": "choice"}

pytestmark = pytest.mark.postgres


@pytest.fixture
def db_url(pg_migrated_url: str) -> str:
    """This module's one database, PostgreSQL (see the module's docstring)."""
    return pg_migrated_url


def start_with_deck(svc: Services, timing: Timing, deck: list[str], *, people: int = 1, preset: str = "standard",
                    **options: object) -> Table:
    """A game of ``people`` people (then random bots) whose first hand is ``deck``."""
    rules = Rules.make(preset, **options)
    seats = [SeatSpec(address=address(k), name=f"Player {k}") if k < people else SeatSpec(bot="random")
             for k in range(rules.players)]
    with transaction(svc.session_factory) as session:
        owner = get_or_create_player(session, address(0), "Player 0")
        game = create_game(session, svc, rules=rules, seats=seats, creator=owner, seed="moon-table", title="Moon")
        timing.apply(game)
        return Table(svc, game.id, start_game(session, svc, game, first_deck=deck))


def play_to_the_moon(table: Table) -> Received:
    """Seat 0 plays its lowest club to every trick until it is asked how its moon is scored."""
    for _ in range(20):
        received = Received.parse(table.latest(0, "your_turn").raw)
        if received.decision == "moon":
            return received
        table.reply(table.latest(0, "your_turn"), sorted(received.legal, key=lambda c: "23456789TJQKA".index(c[0]))[0])
    raise AssertionError("seat 0 was never asked for its moon choice")


def test_an_unanswered_moon_choice_is_scored_by_safety_at_the_deadline_and_said_so(svc: Services) -> None:
    table = start_with_deck(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=12), DECK, **RULES)
    moon = play_to_the_moon(table)
    assert tuple(moon.legal) == ("old", "new")
    asked_at = clock(svc).now()
    assert table.seat(0).deadline_at is not None

    # At the deadline: the reminder says what the rules will do, not that a computer will play.
    clock(svc).advance(hours=24)
    reminder = table.tick()
    assert [(m.kind, m.recipient) for m in reminder] == [("reminder", address(0))]
    said = text_of(reminder[0])
    assert "the rules choose for you (“safety”)" in said
    assert "computer player" not in said

    # After the grace period: ChooseMoon(0, "safety") is the move, and the player is told first.
    clock(svc).advance(hours=12)
    acted = table.tick()
    mine = [m for m in acted if m.recipient == address(0)]
    assert mine[0].kind == "decision_defaulted", [m.kind for m in mine]
    told = text_of(mine[0])
    assert "The time for your decision ran out at" in told
    assert ("So the rules chose for you (“safety”): the old way, and everyone else scores 26 points, since that "
            "does not end the game with you losing it.") in told
    assert "X-Hearts-Decision" not in mine[0].raw.decode()  # a news mail: nothing to answer
    summary = next(m for m in mine if m.kind == "hand_summary")
    assert "No choice came by the deadline, so “safety” decided how it is scored." in text_of(summary)
    assert "You shot the moon: everyone else scores 26 points." in text_of(summary)
    assert not [m for m in acted if m.kind == "stand_in"]

    with transaction(svc.session_factory) as session:
        moves = session.execute(select(Move.kind, Move.seat, Move.payload).where(Move.game_id == table.game_id)
                                .order_by(Move.seq)).all()
    choice = [m for m in moves if m.kind == "moon"]
    assert [(m.seat, m.payload["choice"]) for m in choice] == [(0, "safety")]
    game = table.game()
    assert game.snapshot["totals"] == [0, 26, 26, 26]  # safety: the old way (the game goes on, seat 0 ahead)
    seat = table.seat(0)
    assert seat.stand_in is None  # the seat is still the player's: no computer player stands in
    # Their next decision (hand 2, no passing: a card, or nothing yet) has a deadline of its own.
    assert seat.deadline_at is None or seat.deadline_at > asked_at + timedelta(hours=36)
