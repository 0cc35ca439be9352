"""Bots playing a hand or a game among themselves, each from its own seat's view.

The simulator and the tests drive games through here; the server drives bots through its services
(one decision at a time, from the move log).
"""

from __future__ import annotations

import random
from typing import Sequence

from pbem.engine import CALL, DEAL, DISCARD, MIX, MOON, OVER, PASS, PLAY, GameState, shuffled_mix

from . import Bot
from .view import BotView, SeenTrick


def call_pass(state: GameState, bots: Sequence[Bot]) -> GameState:
    """``dealer_calls_pass`` (RULES.md §6.3): in phase ``call`` the coming hand's dealer calls its pass;
    any other state is returned as it is."""
    if state.phase != CALL:
        return state
    dealer = state.next_dealer
    return state.call_pass(dealer, bots[dealer].choose_call(BotView.from_state(state, dealer)))


def choose_passes(state: GameState, bots: Sequence[Bot]) -> list[list[str] | None]:
    """Phase ``pass``: every seat's choice from the deal, before any pass is applied (passes are
    simultaneous); ``None`` for a seat that declines (``pass_optional``: asked first)."""
    out: list[list[str] | None] = []
    for s in range(state.players):
        view = BotView.from_state(state, s)
        if view.may_decline and bots[s].choose_decline(view):
            out.append(None)
        else:
            out.append(bots[s].choose_pass(view))
    return out


def play_hand(state: GameState, bots: Sequence[Bot], rng: random.Random | None = None) -> GameState:
    """Play the hand just dealt in ``state`` to its end: passes (declines too, and a ``mix`` hand's
    shuffle, drawn from ``rng``), tricks, the kitty discard (``kitty_exchange``) and the moon choice
    (a team's too) if any.

    Passes are simultaneous: every seat chooses from the deal before any pass is applied.
    """
    if state.phase == PASS:
        for s, cards in enumerate(choose_passes(state, bots)):
            state = state.decline_pass(s) if cards is None else state.pass_cards(s, cards)
    tricks: list[SeenTrick] = []
    while True:
        phase = state.phase
        if phase == MIX:
            state = state.mix(shuffled_mix(state, rng or random.Random(f"mix:{state.hand_no}")))
        elif phase == PLAY:
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
    if state.phase not in (CALL, DEAL, OVER):
        raise RuntimeError(f"hand did not finish: {state!r}")
    return state
