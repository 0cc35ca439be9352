"""What happened when a move was applied, in the past tense, for the mail layer to tell.

Events carry canonical cards and seats only. ``event_to_dict`` gives a JSON-able form with a
``type`` key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HandDealt:
    hand_no: int
    dealer: int
    pass_direction: str  # left right across scatter hold, mix, or "split" (a called split, RULES.md §6.3)
    pass_call: tuple[tuple[str, int], ...] = ()  # dealer_calls_pass: the dealer's call, told to everyone


@dataclass(frozen=True)
class PassCalled:
    """``dealer_calls_pass`` (RULES.md §6.3): the dealer called this hand's pass, public: a tuple of
    ``(direction, count)`` pairs (``(("mix", n),)``, or ``(("hold", 0),)`` as the deadline default)."""

    seat: int
    call: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class CardsPassed:
    """A seat chose its cards to pass, or declined (``pass_optional``): which cards, and whether it
    declined, is private to that seat."""

    seat: int


@dataclass(frozen=True)
class PassesExchanged:
    """Every seat had passed; ``received[seat]`` are the cards that joined that seat's hand (a
    decliner's is ``()``: forwarded cards pass it unseen; ``mix``: the cards dealt back to it)."""

    pass_direction: str
    received: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class CardPlayed:
    seat: int
    card: str
    trick_no: int


@dataclass(frozen=True)
class HeartsBroken:
    seat: int
    card: str


@dataclass(frozen=True)
class TrickWon:
    trick_no: int
    leader: int
    cards: tuple[str, ...]
    winner: int
    points: int
    boosted: bool = False  # RULES.md §6.5: ``cards`` holds both rounds, 2n cards, each round leader first
    # RULES.md §6.6 (two decks): the cards of the cancelled tricks before it that go with it (``points``
    # counts them too), and whether this trick itself had no winner (every card of the led suit
    # cancelled): it is the hand's last trick and goes to ``winner``, who won the trick before it.
    carried: tuple[str, ...] = ()
    cancelled: bool = False


@dataclass(frozen=True)
class TrickCancelled:
    """Cancellation (RULES.md §6.6): every card of the led suit in trick ``trick_no`` was cancelled by its
    twin; the trick stays on the table (``points`` its penalty points), ``leader`` leads again, and its
    cards go to the winner of the next trick (with any cancelled before it)."""

    trick_no: int
    leader: int
    cards: tuple[str, ...]
    points: int


@dataclass(frozen=True)
class TrickBoosted:
    """Booster Nines (RULES.md §6.5): the first round of trick ``trick_no`` is down and ``card``, a nine
    ``seat`` led or played following suit, boosts it: each player plays one more card, the leader first."""

    trick_no: int
    seat: int
    card: str


@dataclass(frozen=True)
class CardsCharged:
    """Turbo (RULES.md §6.4): ``seat`` made its charge decision; which cards stays private until
    every seat has decided (``ChargesRevealed``)."""

    seat: int


@dataclass(frozen=True)
class ChargesRevealed:
    """Turbo (RULES.md §6.4): every seat has decided; ``charges[seat]`` are the cards it charged (shown to
    the table), ``()`` for none. Play starts after it."""

    charges: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class MoonChoiceNeeded:
    """``moon=choice``: the shooter must choose ``old`` or ``new`` before the hand is scored."""

    seat: int
    kind: str  # "moon" or "sun"
    team: bool = False  # a team slam (RULES.md §6.1 team mode): ``seat`` chooses for the team


@dataclass(frozen=True)
class Moon:
    seat: int
    kind: str  # "moon" (every penalty card) or "sun" (every trick)
    scoring: str  # "old" (others take M), "new" (shooter takes −M) or "win" (the shooter wins the game, §6.7)
    team: bool = False  # a team slam (RULES.md §6.1): ``seat`` is the slamming team's latest trick winner
    total: int = field(default=0, compare=False)  # the M it was scored with (charged values; 2M for a sun)


@dataclass(frozen=True)
class KittyTaken:
    """RULES.md §6.2: ``seat`` took the kitty at the end of trick ``trick_no`` (its cards are private)."""

    seat: int
    trick_no: int


@dataclass(frozen=True)
class KittyDiscarded:
    """``kitty_exchange``: the kitty's taker discarded as many cards face down (which: private)."""

    seat: int


@dataclass(frozen=True)
class HandScored:
    hand_no: int
    points: tuple[int, ...]
    totals: tuple[int, ...]
    moon: Moon | None
    tricks_won: tuple[int, ...]
    team_points: tuple[int, ...] = ()  # by team, with a partnership (individual mode: partners' sums)
    team_totals: tuple[int, ...] = ()
    multiplier: tuple[int, ...] = ()  # Turbo (RULES.md §6.4), by seat: 1, or 2/4 for the 10 of clubs' taker
    charged: tuple[tuple[str, ...], ...] = ()  # Turbo, by seat: the cards charged this hand


@dataclass(frozen=True)
class GameOver:
    winners: tuple[int, ...]
    ranking: tuple[int, ...]
    totals: tuple[int, ...]
    team_totals: tuple[int, ...] = ()


Event = (HandDealt | PassCalled | CardsPassed | PassesExchanged | CardsCharged | ChargesRevealed | CardPlayed
         | HeartsBroken | TrickBoosted | TrickWon | TrickCancelled | KittyTaken | KittyDiscarded | MoonChoiceNeeded | HandScored | GameOver)

_NAMES = {
    HandDealt: "hand_dealt",
    PassCalled: "pass_called",
    CardsPassed: "cards_passed",
    PassesExchanged: "passes_exchanged",
    CardPlayed: "card_played",
    HeartsBroken: "hearts_broken",
    TrickWon: "trick_won",
    TrickBoosted: "trick_boosted",
    TrickCancelled: "trick_cancelled",
    CardsCharged: "cards_charged",
    ChargesRevealed: "charges_revealed",
    KittyTaken: "kitty_taken",
    KittyDiscarded: "kitty_discarded",
    MoonChoiceNeeded: "moon_choice_needed",
    HandScored: "hand_scored",
    GameOver: "game_over",
}


# -- the play path's events, made cheaply (a frozen dataclass's ``__init__`` sets each field through
# ``object.__setattr__``: about a microsecond an event, the most of a card play's cost) -------------

_new = object.__new__
_set = object.__setattr__
#: Interned ``CardPlayed`` values, made when first needed (``card_played``), by the key
#: ``trick_no << 10 | seat << 6 | card index``; the card play path reads it inline.
PLAYED_EVENTS: dict[int, CardPlayed] = {}


def card_played(seat: int, card: str, index: int, trick_no: int) -> CardPlayed:
    """``CardPlayed(seat, card, trick_no)`` (``card`` of card ``index``, ``seat`` < 16), one shared value
    for each: events are immutable, so equal events may be one object."""
    key = trick_no << 10 | seat << 6 | index
    event = PLAYED_EVENTS.get(key)
    if event is None:
        event = PLAYED_EVENTS[key] = CardPlayed(seat, card, trick_no)
    return event


def trick_won(trick_no: int, leader: int, cards: tuple[str, ...], winner: int, points: int,
              boosted: bool = False, carried: tuple[str, ...] = (), cancelled: bool = False) -> TrickWon:
    """``TrickWon(...)`` with these fields, the same value, made without the per-field ``setattr``."""
    event = _new(TrickWon)
    _set(event, "__dict__", {"trick_no": trick_no, "leader": leader, "cards": cards, "winner": winner,
                             "points": points, "boosted": boosted, "carried": carried, "cancelled": cancelled})
    return event


def hand_scored(hand_no: int, points: tuple[int, ...], totals: tuple[int, ...], moon: Moon | None,
                tricks_won: tuple[int, ...], team_points: tuple[int, ...] = (), team_totals: tuple[int, ...] = (),
                multiplier: tuple[int, ...] = (), charged: tuple[tuple[str, ...], ...] = ()) -> HandScored:
    """``HandScored(...)`` with these fields, the same value, made without the per-field ``setattr``."""
    event = _new(HandScored)
    _set(event, "__dict__", {"hand_no": hand_no, "points": points, "totals": totals, "moon": moon,
                             "tricks_won": tricks_won, "team_points": team_points, "team_totals": team_totals,
                             "multiplier": multiplier, "charged": charged})
    return event


def event_to_dict(event: Event) -> dict[str, Any]:
    d = dataclasses.asdict(event)
    d["type"] = _NAMES[type(event)]
    return d
