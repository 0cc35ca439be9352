"""The speed of ``strong``'s rollouts: whole hands played out by the heuristic policy for every seat
(what each of ``strong``'s playouts does, less its moon model), per CPU second, on the engine's fast
:class:`~pbem.engine.playout.Playout` (the masks ``strong`` plays its rollouts on where the rules
allow) beside the same hands through the immutable :class:`~pbem.engine.GameState`. Both play the
same cards (``tests/engine/test_playout.py``; ``tests/bots/test_strong.py``)."""

from __future__ import annotations

import random
import statistics
import time
from typing import Callable

from pbem.bots.heuristic import choose_card
from pbem.engine import CARD_NAMES, PLAY, Rules, new_game, shuffled_deck
from pbem.engine.playout import Playout


def _on_playout(state, t) -> None:
    p = Playout(state)
    points = tuple(p.points)
    while not p.over:
        legal = p.legal()
        seat = p.to_move
        c = choose_card(t, seat, p.hands[seat], legal, p.trick, p.leader, p.played, points)
        if p.play(c):
            points = tuple(p.points)
    p.hand_points()


def _on_state(state, t) -> None:
    played = 0
    while state.phase == PLAY:
        seat = state.to_move
        c = choose_card(t, seat, state.hand_mask(seat), state.legal_mask(), state.trick, state.leader, played,
                        state.points)
        played |= 1 << c
        state = state.play(CARD_NAMES[c])


def playout_loop(seconds: float, seed: int, fast: bool) -> tuple[int, float]:
    """Whole hands of standard rules dealt and played out by the heuristic policy, for ``seconds``
    of CPU: (hands, CPU seconds). The deal is outside the timing."""
    rules = Rules()
    t = rules.table
    rng = random.Random(seed)
    start = new_game(rules)
    play_out = _on_playout if fast else _on_state
    hands = 0
    spent = 0.0
    while spent < seconds:
        state = start.deal(shuffled_deck(rules, rng), "hold")
        t0 = time.process_time()
        for _ in range(8):
            play_out(state, t)
        spent += time.process_time() - t0
        hands += 8
    return hands, spent


def run(rounds: int = 5, seconds: float = 0.5, echo: Callable[[str], None] = print) -> dict[str, float]:
    """Interleaved rounds of both loops; prints the medians and their ratio."""
    fast: list[float] = []
    slow: list[float] = []
    for k in range(rounds):
        n, dt = playout_loop(seconds, k, True)
        fast.append(n / dt)
        n, dt = playout_loop(seconds, k, False)
        slow.append(n / dt)
    result = {"playout_hands_per_s": statistics.median(fast), "state_hands_per_s": statistics.median(slow),
              "ratio": statistics.median(f / s for f, s in zip(fast, slow))}
    echo(f"strong's rollouts (heuristic policy, whole hands): {result['playout_hands_per_s']:6.0f} hands/s of CPU on "
         f"the Playout, {result['state_hands_per_s']:6.0f} through GameState ({result['ratio']:.2f}x; "
         f"medians of {rounds} rounds)")
    return result
