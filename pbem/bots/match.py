"""Bots playing a hand or a game among themselves, each from its own seat's view.

The simulator and the tests drive games through here; the server drives bots through its services
(one decision at a time, from the move log). Every decision goes through :func:`pbem.bots.decide`.
"""

from __future__ import annotations

import random
from typing import Sequence

from pbem.engine import CALL, DEAL, MIX, OVER, PASS, PLAY, DeclinePass, GameState, MixCards, apply, shuffled_mix

from . import Bot
from .decisions import decide
from .view import SeenTrick


def call_pass(state: GameState, bots: Sequence[Bot]) -> GameState:
    """``dealer_calls_pass`` (RULES.md §6.3): in phase ``call`` the coming hand's dealer calls its pass;
    any other state is returned as it is."""
    if state.phase != CALL:
        return state
    dealer = state.next_dealer
    return apply(state, decide(bots[dealer], state, dealer))[0]


def choose_passes(state: GameState, bots: Sequence[Bot]) -> list[list[str] | None]:
    """Phase ``pass``: every seat's choice from the deal, before any pass is applied (passes are
    simultaneous); ``None`` for a seat that declines (``pass_optional``: asked first)."""
    out: list[list[str] | None] = []
    for s in range(state.players):
        move = decide(bots[s], state, s)
        out.append(None if isinstance(move, DeclinePass) else list(move.cards))
    return out


def play_hand(state: GameState, bots: Sequence[Bot], rng: random.Random | None = None) -> GameState:
    """Play the hand just dealt in ``state`` to its end: passes (declines too, and a ``mix`` hand's
    shuffle, drawn from ``rng``), tricks, the kitty discard (``kitty_exchange``) and the moon choice
    (a team's too) if any.

    Passes are simultaneous: every seat chooses from the deal before any pass is applied.
    """
    if state.phase == PASS:
        moves = [decide(bots[s], state, s) for s in range(state.players)]
        for move in moves:
            state = apply(state, move)[0]
    tricks: list[SeenTrick] = []
    while True:
        phase = state.phase
        if phase == MIX:
            state = apply(state, MixCards(shuffled_mix(state, rng or random.Random(f"mix:{state.hand_no}"))))[0]
            continue
        seats = state.seats_to_act()
        if phase in (CALL, DEAL, OVER) or not seats:
            break
        seat = seats[0]
        state = apply(state, decide(bots[seat], state, seat, tricks))[0]
        if phase == PLAY and not state.trick:  # that card finished a trick
            leader, cards, _winner, _points = state.last_trick
            tricks.append((leader, cards))
    if state.phase not in (CALL, DEAL, OVER):
        raise RuntimeError(f"hand did not finish: {state!r}")
    return state
