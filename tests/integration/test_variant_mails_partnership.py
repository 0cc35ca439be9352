"""Partnership Hearts by mail (RULES.md §6.1): one person (seat 0) and three random bots through the
services, on SQLite (each module of the variants' mails runs on one database: moon and kitty on
PostgreSQL, partnership and the passing variants on SQLite), on the services' clock.

What the person reads: the first mail names the partner and the mode, the pass goes to the
partner by name (``pass_to_partner``), the team totals are beside the players' in every score
block, the hand and game summaries rank the teams and name the winning team; a team's slam is
worded for the team, the moon choice is asked of the partner who won the team's latest trick, and
with no answer by the deadline ``safety`` decides (judged on team totals), announced by mail.
"""

from __future__ import annotations

import random

import pytest

from pbem.db.session import transaction
from pbem.engine import GameOver
from pbem.services.app import Services
from pbem.services.gamestore import current_state, load_game
from pbem.services.summaries import game_summary
from pbem.services.deadlines import Timing
from tests.harness.players import Received, choose
from tests.integration.test_auto_finish import DECK
from tests.integration.test_deadlines import (  # noqa: F401  (svc is a fixture)
    Table,
    address,
    clock,
    svc,
    text_of,
)
from tests.integration.test_variant_mails_moon import play_to_the_moon, start_with_deck

LONG = Timing(deadline_hours=24 * 30, reminder_hours=0, grace_hours=0)


@pytest.fixture
def db_url(sqlite_migrated_url: str) -> str:
    """This module's one database, SQLite (see the module's docstring)."""
    return sqlite_migrated_url


def partner_name(table: Table) -> str:
    """The name the mails give seat 2 (a computer player: its label is the game's own)."""
    text = text_of(table.to(0)[0])
    return text.split("Your partner is ", 1)[1].split(", across the table", 1)[0]


def play_out(table: Table, until: str, rng: random.Random, limit: int = 80) -> None:
    """Seat 0 answers each of its decision mails with a legal move until a ``until`` mail comes."""
    for _ in range(limit):
        if table.to(0, until):
            return
        mail = table.latest(0, "your_turn")
        table.reply(mail, choose(Received.parse(mail.raw), rng))
    raise AssertionError(f"no {until} mail")


def test_a_partnership_game_by_mail_shows_the_partner_the_pass_to_them_and_the_teams(svc: Services) -> None:
    table = start_with_deck(svc, LONG, None, preset="partnership", pass_to_partner=True, end_after_hands=1)
    first = table.to(0)
    assert [m.kind for m in first] == ["your_turn"]  # one decision, one mail: the start is in it
    text = text_of(first[0])
    partner = partner_name(table)
    assert "computer" in partner  # seat 2 is a computer player: named by its label
    assert f"Your partner is {partner}, across the table: you play as a team, and your tricks count together." in text
    assert ("Partners sit opposite each other and play as a team: a team's tricks count together, and the team "
            "scores as one.") in text
    assert "In every hand that passes, everyone passes 3 cards across, to their partner." in text
    # The pass goes to the partner, said by name (hand 1 of the cycle is `left`: pass_to_partner makes it across).
    assert f"Pass 3 cards to your partner, {partner}." in text
    assert text.startswith("Pass 3 cards to your partner")  # the inbox preview line
    # The team totals beside the players'.
    assert "Team" in text and f"Player 0 & {partner} (your team)" in text

    play_out(table, "game_summary", random.Random(5))
    turn = table.to(0, "your_turn")[-1]
    assert "(your team)" in text_of(turn)  # every score block has the teams
    summary = text_of(table.latest(0, "hand_summary"))
    assert f"Player 0 & {partner} (your team)" in summary
    over = text_of(table.latest(0, "game_summary"))
    assert ("The game is over, and your team won: you and " in over) or (" won as a team." in over)
    game = table.game()
    totals = game.snapshot["totals"]
    assert totals[0] == totals[2] and totals[1] == totals[3]  # team mode: partners carry the team's total
    # The chart draws one line per team, its legend naming both partners.
    with transaction(svc.session_factory) as session:
        row = load_game(session, table.game_id, lock=False)
        state = current_state(row)
        parts = game_summary(session, svc, row, state, GameOver(tuple(state.winners), (), tuple(state.totals),
                                                                tuple(state.team_totals)))
    legend = parts.legend("en")
    assert len(parts.series) == 2 and legend[0].startswith("Player 0 & ") and " & " in legend[1]
    assert parts.team_totals == tuple(state.team_totals) and parts.winning_teams


def test_a_team_slam_is_asked_of_the_latest_trick_winner_and_safety_decides_at_the_deadline(svc: Services) -> None:
    """Seat 0 holds every club and leads one to every trick: its team takes every card, and seat 0
    won the team's latest trick, so it is asked (RULES.md §6.8). It does not answer."""
    table = start_with_deck(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0), DECK,
                            preset="partnership", moon="choice", pass_cycle=["hold"])
    partner = partner_name(table)
    moon = play_to_the_moon(table)
    assert tuple(moon.legal) == ("old", "new")
    asked = text_of(table.latest(0, "your_turn"))
    assert asked.startswith("Your team slammed: reply “old” or “new”")
    assert (f"You and {partner} took every penalty card: your team slammed! You won your team's latest trick, so "
            "you choose how it is scored: reply “old” and the other team scores 26 points, or reply “new” and "
            "your team subtracts 26 points.") in asked

    clock(svc).advance(hours=24)
    acted = table.tick()
    mine = [m for m in acted if m.recipient == address(0)]
    assert mine[0].kind == "decision_defaulted"
    assert ("So the rules chose for you (“safety”): the old way, and the other team scores 26 points, since that "
            "does not end the game with your team losing it.") in text_of(mine[0])
    summary = text_of(next(m for m in mine if m.kind == "hand_summary"))
    assert f"You and {partner} took every penalty card: the other team scores 26 points." in summary
    assert "No choice came by the deadline, so “safety” decided how it is scored." in summary
    assert table.game().snapshot["totals"] == [0, 26, 0, 26]
