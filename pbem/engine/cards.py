"""Cards, suits and card sets.

A card is known to the outside world by its canonical name, rank then suit: ``QS``, ``TH``, ``2C``.
Inside the engine a card is an index ``suit * 13 + rank`` (ranks ``2`` = 0 … ``A`` = 12, suits in the
order clubs, diamonds, hearts, spades) and a set of cards is an ``int`` bit mask, so that the hot
paths (legal cards, playing a card, scoring a trick) are a few integer operations.
"""

from __future__ import annotations

from typing import Iterable

SUITS = "CDHS"
RANKS = "23456789TJQKA"
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)

#: Canonical names by card index.
CARD_NAMES: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
#: Card index by canonical name.
CARD_INDEX: dict[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}
#: The bit of each card index.
BIT: tuple[int, ...] = tuple(1 << i for i in range(52))
#: The bit of each card, by canonical name.
CARD_BIT: dict[str, int] = {name: 1 << i for i, name in enumerate(CARD_NAMES)}
#: Suit of each card index.
SUIT_OF: tuple[int, ...] = tuple(i // 13 for i in range(52))
#: Rank (0 for a two … 12 for an ace) of each card index.
RANK_OF: tuple[int, ...] = tuple(i % 13 for i in range(52))

SUIT_BITS = (1 << 13) - 1
#: The mask of every card of a suit, by suit.
SUIT_MASK: tuple[int, ...] = tuple(SUIT_BITS << (13 * s) for s in range(4))
#: The mask of the suit of each card index.
SUIT_MASK_OF: tuple[int, ...] = tuple(SUIT_MASK[i // 13] for i in range(52))
FULL_DECK = (1 << 52) - 1

HEARTS_MASK = SUIT_MASK[HEARTS]
CLUBS_MASK = SUIT_MASK[CLUBS]
SPADES_MASK = SUIT_MASK[SPADES]
QS = CARD_INDEX["QS"]
QS_BIT = 1 << QS
KS_AS_BITS = (1 << CARD_INDEX["KS"]) | (1 << CARD_INDEX["AS"])

_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}


def canonical(text: str) -> str:
    """Return the canonical name of a card written compactly (``qs``, ``10h``, ``Q♠``, ``♠Q``, ``S10``).

    Raises ``ValueError`` for anything else. Free text (``queen of spades``, other languages) is the
    mail reader's business, not the engine's.
    """
    t = text.strip().upper()
    for symbol, letter in _SYMBOLS.items():
        t = t.replace(symbol, letter)
    t = t.replace("10", "T")
    if len(t) == 2:
        if t in CARD_INDEX:
            return t
        if t[1] + t[0] in CARD_INDEX:
            return t[1] + t[0]
    raise ValueError(f"not a card: {text!r}")


def mask_of(cards: Iterable[str]) -> int:
    """The bit mask of some canonical card names."""
    m = 0
    for c in cards:
        m |= 1 << CARD_INDEX[c]
    return m


def _suit_table(suit: int) -> tuple[tuple[str, ...], ...]:
    """For each 13-bit mask of one suit, its cards lowest first (8,192 tuples, built by doubling)."""
    table: list[tuple[str, ...]] = [()]
    for rank in range(13):
        card = (CARD_NAMES[13 * suit + rank],)
        table += [cards + card for cards in table]
    return tuple(table)


#: ``SUIT_TUPLES[suit][bits]``: the names of the cards of ``suit`` in a 13-bit mask.
SUIT_TUPLES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(_suit_table(s) for s in range(4))
_C, _D, _H, _S = SUIT_TUPLES


def cards_of(mask: int) -> tuple[str, ...]:
    """The canonical names of the cards in a mask, by suit (C D H S) then rank, lowest first."""
    return _C[mask & SUIT_BITS] + _D[mask >> 13 & SUIT_BITS] + _H[mask >> 26 & SUIT_BITS] + _S[mask >> 39]


def lowest(mask: int) -> int:
    """Index of the lowest card (by index) in a non-empty mask."""
    return (mask & -mask).bit_length() - 1


def indices_of(mask: int) -> list[int]:
    """The card indices in a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
