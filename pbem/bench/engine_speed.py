"""Engine speed: complete random hands per second through the public API, beside OpenSpiel's.

Ours: deal a shuffled deck, every seat passes three random cards, then the seat to move plays a
uniformly random legal card until the hand is scored — exactly what a bot author's playout does
(``deal``, ``pass_cards``, ``legal_cards``, ``play``). OpenSpiel: ``pyspiel.load_game("hearts")``,
random chance outcomes and random legal actions until the state is terminal (its C++ engine driven
from Python). The two are measured in alternating rounds in one process and the best round of each
is reported, so that a busy machine penalises neither more than the other. Rates are per second of
this process's CPU time (``time.process_time``), which other processes on the machine disturb far less
than wall time; the loops run in one thread.
"""

from __future__ import annotations

import random
import time
from typing import Callable

from pbem.engine import Rules, new_game, shuffled_deck


def ours_hand_loop(seconds: float, seed: int = 1) -> tuple[int, float]:
    rules = Rules()
    rng = random.Random(seed)
    start_state = new_game(rules)
    choice = rng.choice
    sample = rng.sample
    hands = 0
    t0 = time.process_time()
    deadline = t0 + seconds
    while True:
        state = start_state.deal(shuffled_deck(rules, rng))
        for seat in range(4):
            state = state.pass_cards(seat, sample(state.hand(seat), 3))
        while state.phase == "play":
            state = state.play(choice(state.legal_cards()))
        hands += 1
        if hands % 64 == 0 and time.process_time() >= deadline:
            break
    return hands, time.process_time() - t0


def openspiel_hand_loop(seconds: float, seed: int = 1) -> tuple[int, float]:
    import pyspiel

    game = pyspiel.load_game("hearts")
    rng = random.Random(seed)
    choice = rng.choice
    hands = 0
    t0 = time.process_time()
    deadline = t0 + seconds
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.chance_outcomes())[0])
            else:
                state.apply_action(choice(state.legal_actions()))
        hands += 1
        if hands % 64 == 0 and time.process_time() >= deadline:
            break
    return hands, time.process_time() - t0


def run(rounds: int = 5, seconds: float = 2.0, echo: Callable[[str], None] = print) -> dict[str, float]:
    try:
        import pyspiel  # noqa: F401
        have_openspiel = True
    except ImportError:
        have_openspiel = False
        echo("OpenSpiel is not installed (pip install 'pbem[bench]'): measuring pbem alone")
    ours: list[float] = []
    theirs: list[float] = []
    for k in range(rounds):
        n, dt = ours_hand_loop(seconds, seed=k)
        ours.append(n / dt)
        line = f"round {k + 1}: pbem {n / dt:8.0f} hands/s"
        if have_openspiel:
            n, dt = openspiel_hand_loop(seconds, seed=k)
            theirs.append(n / dt)
            line += f"   OpenSpiel {n / dt:8.0f} hands/s"
        echo(line)
    result = {"pbem_hands_per_s": max(ours)}
    echo(f"pbem (pure Python, public API): {max(ours):8.0f} complete random hands/s (best of {rounds})")
    if theirs:
        result["openspiel_hands_per_s"] = max(theirs)
        result["ratio"] = max(ours) / max(theirs)
        echo(f"OpenSpiel C++ via pyspiel:      {max(theirs):8.0f} complete random hands/s (best of {rounds})")
        echo(f"ratio pbem / OpenSpiel:         {result['ratio']:8.2f}")
    return result
