"""Cards for human eyes: suit symbols, hand sorting, and the HTML colouring of red suits.

Only symbols and markup live here; every word (suit names, "and", sentences) comes from the
templates, the message catalogs or CLDR via Babel, so nothing here needs translating.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from markupsafe import Markup, escape

__all__ = [
    "DISPLAY_SUIT_ORDER",
    "RED",
    "TWICE",
    "SUIT_SYMBOLS",
    "card_html",
    "card_text",
    "counted",
    "group_by_suit",
    "is_red",
    "rank_text",
    "sort_cards",
]

RANKS = "23456789TJQKA"
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
#: Hands are shown in alternating colours, black and red, as players hold them.
DISPLAY_SUIT_ORDER = "SHCD"
RED = "#c0182b"
BLACK = "#111111"

_RANK_INDEX = {rank: i for i, rank in enumerate(RANKS)}
_SUIT_INDEX = {suit: i for i, suit in enumerate(DISPLAY_SUIT_ORDER)}


def _check(card: str) -> None:
    if len(card) != 2 or card[0] not in _RANK_INDEX or card[1] not in SUIT_SYMBOLS:
        raise ValueError(f"not a canonical card: {card!r}")


#: How a card held (or named) twice is shown, two decks (RULES.md §6.6): ``Q♠ ×2``, ``Q ×2`` in a hand row.
TWICE = "\u00a0×2"  # a no-break space: the text wrapping never parts it from its card


def ranks_text(cards: Iterable[str], separator: str = "  ", twice: str = TWICE) -> str:
    """The ranks of cards of one suit, as a hand shows them: ``4  K  A``; a card held twice (two
    decks, RULES.md §6.6) once with ``twice`` after it: ``4  Q ×2  A``."""
    return separator.join(rank_text(card[0]) + (twice if count > 1 else "") for card, count in counted(cards))


def counted(cards: Iterable[str]) -> list[tuple[str, int]]:
    """Each card once with how many times it is named, in the order of their first mention."""
    counts: dict[str, int] = {}
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    return list(counts.items())


def rank_text(rank: str) -> str:
    """``T`` is shown as ``10``, as on the cards themselves."""
    return "10" if rank == "T" else rank


def sort_key(card: str) -> tuple[int, int]:
    """Suit in display order, then rank from low to high ("you hold 3♣ and 9♣")."""
    return (_SUIT_INDEX[card[1]], _RANK_INDEX[card[0]])


def sort_cards(cards: Iterable[str]) -> list[str]:
    cards = list(cards)
    for card in cards:
        _check(card)
    return sorted(cards, key=sort_key)


def group_by_suit(cards: Iterable[str]) -> list[tuple[str, list[str]]]:
    """The hand as (suit, cards low to high) in display order, every suit listed (void = [])."""
    groups: dict[str, list[str]] = {suit: [] for suit in DISPLAY_SUIT_ORDER}
    for card in sort_cards(cards):
        groups[card[1]].append(card)
    return list(groups.items())


def is_red(card_or_suit: str) -> bool:
    return card_or_suit[-1] in "HD"


@functools.cache
def card_text(card: str) -> str:
    """``QS`` -> ``Q♠``, ``TH`` -> ``10♥``."""
    _check(card)
    return rank_text(card[0]) + SUIT_SYMBOLS[card[1]]


@functools.cache
def suit_html(suit: str) -> Markup:
    colour = RED if is_red(suit) else BLACK
    return Markup('<span style="color:{};">{}</span>').format(colour, SUIT_SYMBOLS[suit])


@functools.cache
def card_html(card: str) -> Markup:
    """A card as inline-styled HTML: hearts and diamonds red, no classes, no external CSS.

    Cached (52 cards at most): mails show many cards and Markup formatting is not free.
    """
    _check(card)
    colour = RED if is_red(card) else BLACK
    return Markup('<span style="color:{};font-weight:bold;white-space:nowrap;">{}</span>').format(
        colour, escape(card_text(card))
    )
