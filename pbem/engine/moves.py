"""Moves as values: what the move log stores, what ``apply`` takes, and replaying a log.

Parsing (what a player wrote) is the mail reader's business; a move here is already canonical.
``apply(state, move)`` returns the new state and the events it caused, or raises ``IllegalMove``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .cards import CARD_INDEX
from .errors import IllegalMove, Reason
from .events import Event
from .rules import Rules
from .state import GameState, new_game


@dataclass(frozen=True)
class Deal:
    """Deal the next hand from this deck (the deck of cards in play, in deal order)."""

    deck: tuple[str, ...]
    pass_direction: str | None = None


@dataclass(frozen=True)
class PassCards:
    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True, init=False)
class PlayCard:
    """``seat`` plays ``card``. Immutable, so equal moves may be one object: those of a canonical card and
    a seat below 16 are kept and handed out again (a frozen ``__init__`` costs a card play much)."""

    seat: int
    card: str

    def __new__(cls, seat: int, card: str) -> "PlayCard":
        plain = cls is PlayCard and seat.__class__ is int and card.__class__ is str
        if plain:
            move = _PLAYS.get((seat, card))
            if move is not None:
                return move
        move = _new_object(cls)
        _set_field(move, "seat", seat)
        _set_field(move, "card", card)
        if plain and card in CARD_INDEX and 0 <= seat < 16:
            _PLAYS[seat, card] = move
        return move

    def __getnewargs__(self) -> tuple[int, str]:
        return (self.seat, self.card)


_new_object = object.__new__
_set_field = object.__setattr__
_PLAYS: dict[tuple[int, str], PlayCard] = {}


@dataclass(frozen=True)
class ChooseMoon:
    seat: int
    choice: str  # "old", "new", or "safety" (the rule applied when the shooter does not answer)


@dataclass(frozen=True)
class DiscardKitty:
    """``kitty_exchange`` (RULES.md §6.2): the kitty's taker discards this many cards face down."""

    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class CallPass:
    """``dealer_calls_pass`` (RULES.md §6.3): the dealer of the coming hand calls its pass, a tuple of
    ``(direction, count)`` pairs (``state.call_choices()``; ``state.default_call()`` at the deadline)."""

    seat: int
    call: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class DeclinePass:
    """``pass_optional`` (RULES.md §6.3): ``seat`` passes nothing and forwards what it is passed, unseen."""

    seat: int


@dataclass(frozen=True)
class MixCards:
    """A ``mix`` hand (RULES.md §6.3): the passed cards (and the kitty) in their shuffled order, dealt
    back as a deal is. Chance from outside, like ``Deal``: ``pbem.engine.shuffled_mix`` draws it."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class ChargeCards:
    """Turbo (RULES.md §6.4): ``seat`` charges (shows the table) these of its chargeable cards, ``()`` for
    none (``state.charge_choices(seat)``, at most ``state.charge_limit``)."""

    seat: int
    cards: tuple[str, ...]


Move = Deal | PassCards | PlayCard | ChooseMoon | DiscardKitty | CallPass | DeclinePass | MixCards | ChargeCards


def apply(state: GameState, move: Move) -> tuple[GameState, tuple[Event, ...]]:
    """Apply one move; return the new state and what happened. The old state is untouched."""
    out: list[Event] = []
    if move.__class__ is PlayCard or isinstance(move, PlayCard):  # a card play first: the hot path
        if move.seat != state.to_move and state.phase == "play":
            raise IllegalMove(Reason.NOT_YOUR_TURN, seat=move.seat, to_move=state.to_move, legal=[])
        return state.play(move.card, out), tuple(out)
    if isinstance(move, PassCards):
        new = state._pass(move.seat, tuple(move.cards), out)
    elif isinstance(move, Deal):
        new = state._deal(move.deck, move.pass_direction, out)
    elif isinstance(move, ChooseMoon):
        new = state._choose_moon(move.seat, move.choice, out)
    elif isinstance(move, DiscardKitty):
        new = state._discard(move.seat, tuple(move.cards), out)
    elif isinstance(move, DeclinePass):
        new = state._decline(move.seat, out)
    elif isinstance(move, CallPass):
        new = state._call(move.seat, move.call, out)
    elif isinstance(move, MixCards):
        new = state._mix(tuple(move.cards), out)
    elif isinstance(move, ChargeCards):
        new = state._charge(move.seat, tuple(move.cards), out)
    else:
        raise TypeError(f"not a move: {move!r}")
    return new, tuple(out)


def move_to_dict(move: Move) -> dict[str, Any]:
    """The JSON form stored in the move log."""
    if isinstance(move, Deal):
        d: dict[str, Any] = {"type": "deal", "deck": list(move.deck)}
        if move.pass_direction:
            d["pass_direction"] = move.pass_direction
        return d
    if isinstance(move, PassCards):
        return {"type": "pass", "seat": move.seat, "cards": list(move.cards)}
    if isinstance(move, PlayCard):
        return {"type": "play", "seat": move.seat, "card": move.card}
    if isinstance(move, ChooseMoon):
        return {"type": "moon", "seat": move.seat, "choice": move.choice}
    if isinstance(move, DiscardKitty):
        return {"type": "discard", "seat": move.seat, "cards": list(move.cards)}
    if isinstance(move, DeclinePass):
        return {"type": "decline", "seat": move.seat}
    if isinstance(move, CallPass):
        return {"type": "call", "seat": move.seat, "call": [[d, c] for d, c in move.call]}
    if isinstance(move, MixCards):
        return {"type": "mix", "cards": list(move.cards)}
    if isinstance(move, ChargeCards):
        return {"type": "charge", "seat": move.seat, "cards": list(move.cards)}
    raise TypeError(f"not a move: {move!r}")


def move_from_dict(d: Mapping[str, Any]) -> Move:
    kind = d["type"]
    if kind == "deal":
        return Deal(tuple(d["deck"]), d.get("pass_direction"))
    if kind == "pass":
        return PassCards(int(d["seat"]), tuple(d["cards"]))
    if kind == "play":
        return PlayCard(int(d["seat"]), d["card"])
    if kind == "moon":
        return ChooseMoon(int(d["seat"]), d["choice"])
    if kind == "discard":
        return DiscardKitty(int(d["seat"]), tuple(d["cards"]))
    if kind == "decline":
        return DeclinePass(int(d["seat"]))
    if kind == "call":
        return CallPass(int(d["seat"]), tuple((str(x), int(c)) for x, c in d["call"]))
    if kind == "mix":
        return MixCards(tuple(d["cards"]))
    if kind == "charge":
        return ChargeCards(int(d["seat"]), tuple(d["cards"]))
    raise ValueError(f"unknown move type {kind!r}")


def replay(rules: Rules, moves: Iterable[Move]) -> GameState:
    """The state after playing ``moves`` from the start of a game under ``rules``."""
    state = new_game(rules)
    for move in moves:
        state, _ = apply(state, move)
    return state
