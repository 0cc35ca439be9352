"""Engine speed: complete random hands per second through the public API, beside OpenSpiel's.

Four loops, each playing complete hands of ``standard`` Hearts with uniformly random choices:

- **pbem**: ``deal`` of a shuffled deck with the pass direction drawn uniformly from
  left/right/across/hold; ``pass_cards`` of three random cards for each seat; then
  ``apply(state, PlayCard(seat, random.choice(state.legal_cards())))`` until the hand is scored,
  through the public API, events included.
- **OpenSpiel driven well**: the same direction draw (its pass-direction chance node); the shuffled
  deck as 52 ``apply_action`` calls; each seat's pass as 3 actions; each play
  ``random.choice(legal_actions())``. The same work as pbem's loop.
- **OpenSpiel naive**: at every chance node, ``random.choice(chance_outcomes())`` (the 52 deal nodes
  list their outcomes in Python: about half its time), each decision ``random.choice(legal_actions())``.
- **OpenSpiel in C++**: ``pyspiel.evaluate_bots`` with four uniform random bots (no Python per move).

OpenSpiel's game is loaded with ``qs_breaks_hearts=False``, pbem's ``standard`` (its only parameter
that differs). The loops run in interleaved rounds in one process; each round gives pbem's rate over
each OpenSpiel loop's rate, and a ratio printed is the median of those per-round ratios, so that a
busy machine penalises no loop more than another. Rates are per second of this process's CPU time
(``time.process_time``), which other processes on the machine disturb far less than wall time.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any, Callable

from pbem.engine import PlayCard, Rules, apply, new_game, shuffled_deck

DIRECTIONS = ("left", "right", "across", "hold")
#: OpenSpiel's pass-direction chance outcomes: 0 no pass, 1 left, 2 across, 3 right.
OPENSPIEL_DIRECTION = {"hold": 0, "left": 1, "across": 2, "right": 3}
OPENSPIEL_PARAMS = {"qs_breaks_hearts": False}


def ours_hand_loop(seconds: float, seed: int = 1, rules: Rules | None = None) -> tuple[int, float]:
    """pbem through its public API (see the module docstring); ``rules`` default to ``standard``."""
    rules = rules or Rules()
    rng = random.Random(seed)
    start_state = new_game(rules)
    n = rules.players
    count = rules.pass_count
    choice = rng.choice
    sample = rng.sample
    hands = 0
    t0 = time.process_time()
    deadline = t0 + seconds
    while True:
        state = start_state.deal(shuffled_deck(rules, rng), choice(DIRECTIONS))
        if state.phase == "pass":
            for seat in range(n):
                state = state.pass_cards(seat, sample(state.hand(seat), count))
        while state.phase == "play":
            state, _events = apply(state, PlayCard(state.to_move, choice(state.legal_cards())))
        hands += 1
        if hands % 16 == 0 and time.process_time() >= deadline:
            break
    return hands, time.process_time() - t0


def _openspiel_game() -> Any:
    import pyspiel

    return pyspiel.load_game("hearts", OPENSPIEL_PARAMS)


def openspiel_well_loop(seconds: float, seed: int = 1) -> tuple[int, float]:
    """OpenSpiel given the same work as pbem's loop (see the module docstring)."""
    game = _openspiel_game()
    rng = random.Random(seed)
    choice = rng.choice
    sample = rng.sample
    shuffle = rng.shuffle
    cards = list(range(52))
    hands = 0
    t0 = time.process_time()
    deadline = t0 + seconds
    while True:
        state = game.new_initial_state()
        act = state.apply_action
        direction = OPENSPIEL_DIRECTION[choice(DIRECTIONS)]
        act(direction)
        shuffle(cards)
        for c in cards:
            act(c)
        if direction:
            for _seat in range(4):
                for c in sample(state.legal_actions(), 3):
                    act(c)
        legal = state.legal_actions
        while not state.is_terminal():
            act(choice(legal()))
        hands += 1
        if hands % 16 == 0 and time.process_time() >= deadline:
            break
    return hands, time.process_time() - t0


def openspiel_naive_loop(seconds: float, seed: int = 1) -> tuple[int, float]:
    """OpenSpiel driven naively: chance outcomes listed in Python at every chance node."""
    game = _openspiel_game()
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
        if hands % 16 == 0 and time.process_time() >= deadline:
            break
    return hands, time.process_time() - t0


def openspiel_cpp_loop(seconds: float, seed: int = 1) -> tuple[int, float]:
    """OpenSpiel's all-C++ loop: ``pyspiel.evaluate_bots`` with uniform random bots."""
    import pyspiel

    game = _openspiel_game()
    bots = [pyspiel.make_uniform_random_bot(p, seed * 10 + p) for p in range(4)]
    evaluate = pyspiel.evaluate_bots
    new_state = game.new_initial_state
    hands = 0
    t0 = time.process_time()
    deadline = t0 + seconds
    while True:
        evaluate(new_state(), bots, seed * 100_003 + hands)
        hands += 1
        if hands % 64 == 0 and time.process_time() >= deadline:
            break
    return hands, time.process_time() - t0


LOOPS: tuple[tuple[str, str, Callable[[float, int], tuple[int, float]]], ...] = (
    ("well", "OpenSpiel driven well", openspiel_well_loop),
    ("naive", "OpenSpiel naive", openspiel_naive_loop),
    ("cpp", "OpenSpiel C++ evaluate_bots", openspiel_cpp_loop),
)


def run(rounds: int = 9, seconds: float = 1.0, echo: Callable[[str], None] = print) -> dict[str, float]:
    """Interleaved rounds of every loop; prints each round and the median per-round ratios."""
    try:
        import pyspiel  # noqa: F401
        have_openspiel = True
    except ImportError:
        have_openspiel = False
        echo("OpenSpiel is not installed (pip install 'pbem[bench]'): measuring pbem alone")
    ours: list[float] = []
    theirs: dict[str, list[float]] = {key: [] for key, _, _ in LOOPS}
    ratios: dict[str, list[float]] = {key: [] for key, _, _ in LOOPS}
    for k in range(rounds):
        n, dt = ours_hand_loop(seconds, seed=k)
        rate = n / dt
        ours.append(rate)
        line = f"round {k + 1}: pbem {rate:7.0f}"
        if have_openspiel:
            for key, _label, loop in LOOPS:
                m, du = loop(seconds, k + 1)
                theirs[key].append(m / du)
                ratios[key].append(rate / (m / du))
                line += f"   {key} {m / du:7.0f} ({rate / (m / du):.2f}x)"
        echo(line + "   hands/s of CPU")
    result = {"pbem_hands_per_s": statistics.median(ours)}
    echo(f"pbem (pure Python, public API, events): {result['pbem_hands_per_s']:8.0f} hands/s of CPU "
         f"(median of {rounds} rounds)")
    if have_openspiel:
        for key, label, _loop in LOOPS:
            result[f"{key}_hands_per_s"] = statistics.median(theirs[key])
            result[f"{key}_ratio"] = statistics.median(ratios[key])
            echo(f"{label + ':':40s}{result[f'{key}_hands_per_s']:8.0f} hands/s of CPU; "
                 f"ratio pbem / it {result[f'{key}_ratio']:.3f} (median of {rounds} per-round ratios)")
    return result
