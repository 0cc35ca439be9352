"""The ``random`` player: a uniformly random legal card, pass, kitty discard, moon scoring, dealer's
call (``dealer_calls_pass``), a decline now and then (``pass_optional``, one pass in four), and a
random charge (Turbo: any set of its chargeable cards within ``charge_limit``, none included, each
set as likely).

The baseline every other player is measured against, and a fuzzer for the server.
"""

from __future__ import annotations

import itertools
import random
from typing import Any, Mapping

from pbem.engine.cards import CARD_NAMES, indices_of

from .view import BotView, as_bot_view


#: How often the random player declines a pass it may decline.
DECLINE_RATE = 0.25


class RandomBot:
    name = "random"

    def __init__(self, seed: Any = None) -> None:
        self.rng = random.Random(seed)

    def choose_pass(self, view: BotView | Mapping[str, Any]) -> list[str]:
        v = as_bot_view(view)
        cards = self.rng.sample(v.hand_copies(), v.table.pass_count)  # two decks: each copy a card
        return [CARD_NAMES[c] for c in cards]

    def choose_play(self, view: BotView | Mapping[str, Any]) -> str:
        v = as_bot_view(view)
        if not v.legal:
            raise ValueError(f"seat {v.seat} has no card to play now (phase {v.phase})")
        return CARD_NAMES[self.rng.choice(indices_of(v.legal))]

    def choose_moon(self, view: BotView | Mapping[str, Any]) -> str:
        return self.rng.choice(("old", "new"))

    def choose_discard(self, view: BotView | Mapping[str, Any]) -> list[str]:
        """``kitty_exchange``: ``discard_count`` random cards of the hand (the kitty in it)."""
        v = as_bot_view(view)
        count = v.discard_count or v.kitty_size
        return [CARD_NAMES[c] for c in self.rng.sample(indices_of(v.hand), count)]

    def choose_call(self, view: BotView | Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
        """``dealer_calls_pass``: any legal call (RULES.md §6.3), mix included."""
        v = as_bot_view(view)
        if not v.call_choices:
            raise ValueError(f"seat {v.seat} has no pass to call now (phase {v.phase})")
        return self.rng.choice(v.call_choices)

    def choose_decline(self, view: BotView | Mapping[str, Any]) -> bool:
        """``pass_optional``: decline one pass in four (never where declining is not allowed)."""
        v = as_bot_view(view)
        return v.may_decline and self.rng.random() < DECLINE_RATE

    def choose_charge(self, view: BotView | Mapping[str, Any]) -> list[str]:
        """Turbo (RULES.md §6.4): any set of the chargeable cards held, at most ``charge_limit`` of them,
        none included, each set as likely."""
        v = as_bot_view(view)
        choices = indices_of(v.charge_choices)
        sets = [combo for k in range(min(v.charge_limit, len(choices)) + 1)
                for combo in itertools.combinations(choices, k)]
        return [CARD_NAMES[c] for c in self.rng.choice(sets)]
