"""Bots playing a hand or a game among themselves, each from its own seat's view.

The simulator and the tests drive games through here; the server drives bots through its services
(one decision at a time, from the move log).
"""

from __future__ import annotations

from typing import Sequence

from pbem.engine import DEAL, DISCARD, MOON, OVER, PASS, PLAY, GameState

from . import Bot
from .view import BotView, SeenTrick


def play_hand(state: GameState, bots: Sequence[Bot]) -> GameState:
    """Play the hand just dealt in ``state`` to its end: passes, tricks, the kitty discard
    (``kitty_exchange``) and the moon choice (a team's too) if any.

    Passes are simultaneous: every seat chooses from the deal before any pass is applied.
    """
    n = state.players
    if state.phase == PASS:
        views = [BotView.from_state(state, s) for s in range(n)]
        choices = [bots[s].choose_pass(views[s]) for s in range(n)]
        for s in range(n):
            state = state.pass_cards(s, choices[s])
    tricks: list[SeenTrick] = []
    while True:
        phase = state.phase
        if phase == PLAY:
            seat = state.to_move
            card = bots[seat].choose_play(BotView.from_state(state, seat, tricks))
            state = state.play(card)
            if not state.trick:
                leader, cards, _winner, _points = state.last_trick
                tricks.append((leader, cards))
        elif phase == DISCARD:
            (seat,) = state.seats_to_act()
            state = state.discard_kitty(seat, bots[seat].choose_discard(BotView.from_state(state, seat, tricks)))
        elif phase == MOON:
            seat = state.shooter[0]
            state = state.choose_moon(seat, bots[seat].choose_moon(BotView.from_state(state, seat, tricks)))
        else:
            break
    if state.phase not in (DEAL, OVER):
        raise RuntimeError(f"hand did not finish: {state!r}")
    return state
