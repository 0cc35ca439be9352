"""Computer players: ``random``, ``heuristic`` and ``strong``.

Every bot answers four questions from what its seat may know (a :class:`BotView`, or the engine's
``seat_view`` dict) and answers with canonical cards::

    bot = get_bot("strong", seed=7)
    view = bot_view(state, seat)            # or BotView.from_moves(rules, moves, seat)
    bot.choose_pass(view)   # -> ["QS", "AH", "KH"]   (phase "pass")
    bot.choose_play(view)   # -> "9C"                 (phase "play", the seat to move)
    bot.choose_moon(view)   # -> "old" | "new"        (phase "moon", the shooter; a team's slam too)
    bot.choose_discard(view)  # -> ["AS", "KD"]       (phase "discard", kitty_exchange: the taker)
    bot.choose_call(view)   # -> (("left", 2), ("right", 1))  (phase "call", dealer_calls_pass: the dealer)
    bot.choose_decline(view)  # -> True | False       (phase "pass" when view.may_decline: before choose_pass)
    bot.choose_charge(view)   # -> ["QS"] | []         (phase "charge", Turbo: at most view.charge_limit)

``decide(bot, state, seat, tricks)`` asks the method the phase calls for and returns the engine move
(``CallPass``, ``DeclinePass`` or ``PassCards``, ``ChargeCards``, ``PlayCard``, ``DiscardKitty``, ``ChooseMoon``).

A bot is cheap to make; make one per decision or per game. ``seed`` (int or str) makes its choices
reproducible.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

from .decisions import decide
from .heuristic import HeuristicBot
from .random_bot import RandomBot
from .strong import StrongBot
from .view import BotView, as_bot_view, bot_view


class Bot(Protocol):
    name: str

    def choose_pass(self, view: BotView | Mapping[str, Any]) -> list[str]: ...

    def choose_play(self, view: BotView | Mapping[str, Any]) -> str: ...

    def choose_moon(self, view: BotView | Mapping[str, Any]) -> str: ...

    def choose_discard(self, view: BotView | Mapping[str, Any]) -> list[str]: ...

    def choose_call(self, view: BotView | Mapping[str, Any]) -> tuple[tuple[str, int], ...]: ...

    def choose_decline(self, view: BotView | Mapping[str, Any]) -> bool: ...

    def choose_charge(self, view: BotView | Mapping[str, Any]) -> list[str]: ...


def _random(seed: Any, **options: Any) -> Bot:
    return RandomBot(seed, **options)


def _heuristic(seed: Any, **options: Any) -> Bot:
    return HeuristicBot(seed, **options)


def _strong(seed: Any, **options: Any) -> Bot:
    return StrongBot(seed, **options)


BOTS: dict[str, Callable[..., Bot]] = {"random": _random, "heuristic": _heuristic, "strong": _strong}


def get_bot(name: str, seed: Any = None, **options: Any) -> Bot:
    """A new bot by name. ``options`` go to its constructor (``strong``: ``playouts``, ``time_limit``)."""
    try:
        make = BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; known: {', '.join(sorted(BOTS))}") from None
    return make(seed, **options)


__all__ = ["Bot", "BOTS", "BotView", "as_bot_view", "bot_view", "decide", "get_bot"]
