"""The end of a hand played for the players is shown in its hand summary (README, "Playing by
mail"), on SQLite and PostgreSQL, read back from the bytes the outbox holds.

When the move that ends a hand is followed by cards played automatically (a single legal card,
the autopilot), every trick it completed is in the hand summary, one line each, in order: no
other mail shows them (the next mail is the next hand's pass).
"""

from __future__ import annotations

import random
import re

import pytest

from pbem.engine import PLAY
from pbem.services.app import Services
from tests.harness.players import Received, choose
from tests.integration.mailplay import (
    Mailbox,
    answer,
    html_of,
    last_outcome,
    new_game,
    state_of,
    text_of,
)


def tricks_in_text(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^\s*Trick (\d+): ", text, re.M)]


def tricks_in_html(html: str) -> list[int]:
    return [int(n) for n in re.findall(r">Trick (\d+): ", html)]


def test_a_hand_ended_by_single_legal_cards_shows_each_trick_of_its_last_move(svc: Services) -> None:
    """One person and three computers; the person plays every card by hand.  Trick 13 is always a
    single legal card, so the last card the person chooses ends the hand with two tricks or more."""
    game_id, mails = new_game(svc, people=1, seed="hand-end-3", end_after_hands=3)
    box = Mailbox(list(mails))
    rng = random.Random(3)
    pending = [m for m in mails if m.kind == "your_turn"]
    ends = 0
    for _ in range(200):
        if not pending:
            break
        mail = pending.pop(0)
        received = Received.parse(mail.raw)
        before = state_of(svc, game_id)
        new = box.add(answer(svc, mail, choose(received, rng)))
        assert last_outcome(svc)["code"] == "MOVE_APPLIED", last_outcome(svc)
        pending += [m for m in new if m.kind == "your_turn"]
        summaries = [m for m in new if m.kind == "hand_summary"]
        if received.decision != "play" or not summaries:
            continue
        assert before.phase == PLAY
        completed = list(range(before.tricks_played + 1, 14))
        assert len(completed) >= 2, completed
        (summary,) = summaries
        assert tricks_in_text(text_of(summary)) == completed, text_of(summary)
        assert tricks_in_html(html_of(summary)) == completed, html_of(summary)
        ends += 1
    assert box.to(0, "game_summary"), "the game did not end"
    assert ends >= 2, "no hand ended on a card played by mail: the check above proved nothing"


def test_a_hand_played_by_the_autopilot_shows_every_trick_in_its_summary(svc: Services) -> None:
    """The person passes, then turns the autopilot on: the rest of the hand is played in that
    turn, and its summary lists each of those tricks, one line each."""
    game_id, mails = new_game(svc, people=1, seed="hand-end-autopilot")
    box = Mailbox(list(mails))
    rng = random.Random(5)
    turn = next(m for m in mails if m.kind == "your_turn")
    box.add(answer(svc, turn, choose(Received.parse(turn.raw), rng)))  # the pass
    play = box.latest(0, "your_turn")
    assert Received.parse(play.raw).decision == "play"
    before = state_of(svc, game_id)
    new = box.add(answer(svc, play, "autopilot"))
    assert last_outcome(svc)["code"] == "AUTOPILOT_ON", last_outcome(svc)
    (summary,) = [m for m in new if m.kind == "hand_summary"]
    completed = list(range(before.tricks_played + 1, 14))
    assert len(completed) >= 10, completed
    text = text_of(summary)
    assert tricks_in_text(text) == completed, text
    assert tricks_in_html(html_of(summary)) == completed
    assert len(re.findall(r"took\s+it\s+\(", text)) == len(completed), text  # each says who took it
