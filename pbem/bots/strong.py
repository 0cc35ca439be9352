"""The ``strong`` player: Perfect Information Monte Carlo (PIMC) search over consistent deals.

Hearts hides the other hands, so the player imagines them: it samples deals that agree with all it
knows (:mod:`pbem.bots.knowledge`), and in each such *world* it plays every legal card and plays the
hand out with the ``heuristic`` policy for every seat. A card's value is its mean hand score for this
seat over the worlds; it plays the best. Every legal card is tried in the same worlds (common random
numbers), so the comparison between cards is much less noisy than the scores themselves.

Rollouts run through the engine's public API (``GameState.from_dict`` builds a world, ``play``
advances it) so every rules option is honoured exactly; the heuristic policy works on masks.

Budget: ``playouts`` card playouts per decision (split evenly among the legal cards), and a
``time_limit`` in seconds that stops sampling new worlds early. The defaults keep a decision under
a second on one core; the playout budget alone is deterministic for a given seed, the time limit is
a guard (set it to ``None`` for reproducible runs). Passing and the moon choice use the heuristic.
"""

from __future__ import annotations

import random
import time
from typing import Any, Mapping

from pbem.engine import MOON, PLAY, GameState
from pbem.engine.cards import CARD_NAMES, cards_of, indices_of

from .heuristic import choose_card, choose_moon_scoring, choose_pass_cards
from .knowledge import infer, sample_hands
from .view import BotView, as_bot_view

#: Card playouts per decision by default, and the wall-clock guard (seconds).
DEFAULT_PLAYOUTS = 1500
DEFAULT_TIME_LIMIT = 0.8


class StrongBot:
    name = "strong"

    def __init__(self, seed: Any = None, playouts: int = DEFAULT_PLAYOUTS,
                 time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
        if playouts < 1:
            raise ValueError("playouts must be at least 1")
        self.rng = random.Random(seed)
        self.playouts = playouts
        self.time_limit = time_limit

    def choose_pass(self, view: BotView | Mapping[str, Any]) -> list[str]:
        v = as_bot_view(view)
        return [CARD_NAMES[c] for c in choose_pass_cards(v.table, v.hand, v.table.pass_count)]

    def choose_moon(self, view: BotView | Mapping[str, Any]) -> str:
        return choose_moon_scoring(as_bot_view(view))

    def choose_play(self, view: BotView | Mapping[str, Any]) -> str:
        v = as_bot_view(view)
        legal = v.legal
        if not legal:
            raise ValueError(f"seat {v.seat} has no card to play now (phase {v.phase})")
        if not legal & (legal - 1):
            return CARD_NAMES[legal.bit_length() - 1]
        if v.rules_assumed:  # worlds played under the wrong rules could refuse a legal card
            return CARD_NAMES[choose_card(v.table, v.seat, v.hand, legal, v.trick, v.leader, v.played, v.points)]
        return CARD_NAMES[self.evaluate(v)[0][0]]

    def evaluate(self, v: BotView) -> list[tuple[int, float]]:
        """Each legal card (index) with its mean score for this seat (lower is better), best first."""
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        t = v.table
        cards = indices_of(v.legal)
        worlds = max(1, self.playouts // len(cards))
        knowledge = infer(v)
        template = _template(v)
        played = v.played
        me = v.seat
        sign = 1 if t.lowest_wins else -1
        sums = [0] * len(cards)
        done = 0
        rng = self.rng
        for _ in range(worlds):
            hands = sample_hands(knowledge, rng)
            template["hands"] = [list(cards_of(h)) for h in hands]
            root = GameState.from_dict(template)
            for j, c in enumerate(cards):
                sums[j] += sign * _rollout(root.play(CARD_NAMES[c]), me, played | 1 << c, t)
            done += 1
            if deadline is not None and time.perf_counter() > deadline:
                break
        # Ties go to the heuristic's own choice, then to the lower card.
        preferred = choose_card(t, me, v.hand, v.legal, v.trick, v.leader, played, v.points)
        scored = [(c, s / done) for c, s in zip(cards, sums)]
        scored.sort(key=lambda cs: (cs[1], cs[0] != preferred, cs[0]))
        return scored


def _template(v: BotView) -> dict[str, Any]:
    """A ``GameState.from_dict`` snapshot of what ``v`` knows; each world fills in the hands."""
    n = v.players
    lt = None
    if v.tricks:
        leader, cards = v.tricks[-1]
        lt = {"leader": leader, "cards": [CARD_NAMES[c] for c in cards], "winner": v.leader, "points": 0}
    return {
        "rules": v.rules.to_dict(),
        "phase": PLAY,
        "hand_no": v.hand_no,
        "dealer": v.dealer,
        "pass_direction": v.pass_direction,
        "deck": [],
        "hands": None,
        "passes": [None] * n,
        "received": [[] for _ in range(n)],
        "trick": [CARD_NAMES[c] for c in v.trick],
        "leader": v.leader,
        "to_move": v.to_move,
        "tricks_played": v.tricks_played,
        "hearts_broken": v.hearts_broken,
        "taken": [list(cards_of(m)) for m in v.taken],
        "points": list(v.points),
        "tricks_won": list(v.tricks_won),
        "last_trick": lt,
        "totals": list(v.totals),
        "history": [],
        "shooter": None,
        "winners": [],
    }


def _rollout(state: GameState, me: int, played: int, t: Any) -> int:
    """Play the hand out with the heuristic for every seat; this seat's hand score.

    Once no unplayed card can score (and the options do not score who takes which trick), the rest
    is played with the first legal card: it cannot change the result, and is much cheaper.
    """
    scoring = t.scoring_mask & t.deck_mask
    free_ride = False  # nothing left can change the score
    while state.phase == PLAY:
        legal = state.legal_mask()
        if not free_ride and not state.trick and not t.tricks_matter and not scoring & ~played:
            free_ride = True
        if free_ride or not legal & (legal - 1):
            c = (legal & -legal).bit_length() - 1
        else:
            seat = state.to_move
            c = choose_card(t, seat, state.hand_mask(seat), legal, state.trick, state.leader, played, state.points)
        played |= 1 << c
        state = state.play(CARD_NAMES[c])
    if state.phase == MOON:
        state = state.choose_moon(state.shooter[0], "safety")
    return state.history[-1][0][me]
