"""pbem.engine: the rules of Hearts as a pure, immutable, standard-library-only core.

The public API, for the server and for bot authors::

    from pbem.engine import Rules, new_game, shuffled_deck

    rules = Rules.make("omnibus", target=50)          # a preset plus overrides (RULES.md §5)
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(7)))
    state = state.pass_cards(0, ["QS", "AS", "KS"])   # … every seat, in any order
    state.legal_cards()                               # ('2C',)
    state = state.play("2C")
    state, events = apply(state, PlayCard(state.to_move, card))  # the same, with what happened

See README.md ("The engine, for bot authors") for the whole tour.
"""

from __future__ import annotations

import random
from typing import Sequence

from .cards import CARD_INDEX, CARD_NAMES, RANKS, SUITS, canonical
from .errors import IllegalMove, InvalidRules, Reason
from .events import (
    CardPlayed,
    CardsPassed,
    Event,
    GameOver,
    HandDealt,
    HandScored,
    HeartsBroken,
    KittyDiscarded,
    KittyTaken,
    Moon,
    MoonChoiceNeeded,
    PassesExchanged,
    TrickWon,
    event_to_dict,
)
from .moves import ChooseMoon, Deal, DiscardKitty, Move, PassCards, PlayCard, apply, move_from_dict, move_to_dict, replay
from .rules import PRESETS, TEAMS, Rules
from .state import DEAL, DISCARD, MOON, OVER, PASS, PHASES, PLAY, GameState, new_game
from .view import seat_view


def deck_in_play(rules: Rules) -> tuple[str, ...]:
    """The cards in play under ``rules`` (52 minus ``removed_cards``; a kitty's cards included), in
    canonical order."""
    return rules.table.deck_cards


def shuffled_deck(rules: Rules, rng: random.Random) -> tuple[str, ...]:
    """A shuffled deck for ``GameState.deal``, drawn from ``rng`` (chance lives outside the engine)."""
    deck = list(rules.table.deck_cards)
    rng.shuffle(deck)
    return tuple(deck)


def trick_winner(cards: Sequence[str], leader: int, players: int) -> int:
    """The seat that takes a complete trick led by ``leader``: the highest card of the led suit."""
    led = cards[0][1]
    best = max((k for k, c in enumerate(cards) if c[1] == led), key=lambda k: RANKS.index(cards[k][0]))
    return (leader + best) % players


def card_points(rules: Rules, cards: Sequence[str]) -> int:
    """The penalty points of some cards under ``rules`` (the bonus card not included)."""
    values = rules.table.values
    return sum(values[CARD_INDEX[c]] for c in cards)


__all__ = [
    "CARD_NAMES", "RANKS", "SUITS", "canonical",
    "IllegalMove", "InvalidRules", "Reason",
    "Event", "HandDealt", "CardsPassed", "PassesExchanged", "CardPlayed", "HeartsBroken", "TrickWon",
    "KittyTaken", "KittyDiscarded", "MoonChoiceNeeded", "Moon", "HandScored", "GameOver", "event_to_dict",
    "Move", "Deal", "PassCards", "PlayCard", "ChooseMoon", "DiscardKitty", "apply", "move_to_dict", "move_from_dict",
    "replay", "PRESETS", "TEAMS", "Rules",
    "GameState", "new_game", "DEAL", "PASS", "PLAY", "DISCARD", "MOON", "OVER", "PHASES",
    "seat_view", "deck_in_play", "shuffled_deck", "trick_winner", "card_points",
]
