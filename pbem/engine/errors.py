"""Typed errors of the engine: a reason code and the details needed to explain it.

The engine never writes sentences for players. A refused move raises :class:`IllegalMove` with a
:class:`Reason` and a ``details`` dict of plain values (canonical cards, seats, suit letters); the mail
layer turns the pair into a sentence in the player's language. A refused set of rules raises
:class:`InvalidRules` the same way.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class Reason(str, Enum):
    """Why a move was refused. Every play refusal's details also carry ``legal``."""

    WRONG_PHASE = "WRONG_PHASE"  # {phase, expected}
    NOT_YOUR_TURN = "NOT_YOUR_TURN"  # {seat, to_move}
    GAME_OVER = "GAME_OVER"  # {}
    UNKNOWN_CARD = "UNKNOWN_CARD"  # {text}
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"  # {card}; a pass also {cards}: every card passed but not held
    MUST_FOLLOW_SUIT = "MUST_FOLLOW_SUIT"  # {card, led_suit, held}
    MUST_LEAD_LOWEST_CLUB = "MUST_LEAD_LOWEST_CLUB"  # {card, required}
    MUST_LEAD_CLUB = "MUST_LEAD_CLUB"  # {card, clubs}
    NO_POINTS_ON_FIRST_TRICK = "NO_POINTS_ON_FIRST_TRICK"  # {card}
    HEARTS_NOT_BROKEN = "HEARTS_NOT_BROKEN"  # {card}
    QS_NEEDS_BROKEN_HEARTS = "QS_NEEDS_BROKEN_HEARTS"  # {card}
    MUST_PLAY_QS = "MUST_PLAY_QS"  # {card}
    ALREADY_PASSED = "ALREADY_PASSED"  # {seat}
    NO_PASS_THIS_HAND = "NO_PASS_THIS_HAND"  # {}
    WRONG_PASS_COUNT = "WRONG_PASS_COUNT"  # {expected, given}
    DUPLICATE_CARD = "DUPLICATE_CARD"  # {card}
    NOT_THE_SHOOTER = "NOT_THE_SHOOTER"  # {seat, shooter}
    BAD_MOON_CHOICE = "BAD_MOON_CHOICE"  # {choice}
    BAD_DECK = "BAD_DECK"  # {problem}
    BAD_SEAT = "BAD_SEAT"  # {seat}
    NOT_THE_KITTY_TAKER = "NOT_THE_KITTY_TAKER"  # {seat, taker}
    WRONG_DISCARD_COUNT = "WRONG_DISCARD_COUNT"  # {expected, given}
    NO_DECLINE_ON_MIX = "NO_DECLINE_ON_MIX"  # {}: RULES.md §6.8, a mix hand cannot be declined
    PASS_NOT_OPTIONAL = "PASS_NOT_OPTIONAL"  # {}: declining without pass_optional
    NOT_THE_DEALER = "NOT_THE_DEALER"  # {seat, dealer}: only the dealer calls the pass
    BAD_CALL = "BAD_CALL"  # {call, choices}: calls as lists of [direction, count]
    ALREADY_CHARGED = "ALREADY_CHARGED"  # {seat}: RULES.md §6.4, one charge decision a hand
    NOT_CHARGEABLE = "NOT_CHARGEABLE"  # {card, choices}: a card of the hand that cannot be charged
    TOO_MANY_CHARGES = "TOO_MANY_CHARGES"  # {limit, given}: more than charge_limit cards
    CHARGED_CARD_FIRST_TRICK_OF_SUIT = "CHARGED_CARD_FIRST_TRICK_OF_SUIT"  # {card, suit, legal}: §6.4


class IllegalMove(Exception):
    """A move the rules do not allow now; the state it was tried on is unchanged."""

    def __init__(self, reason: Reason, **details: Any) -> None:
        self.reason = reason
        self.details = details
        super().__init__(f"{reason.value} {details}")

    @property
    def code(self) -> str:
        return self.reason.value


class InvalidRules(ValueError):
    """A combination of options that cannot work, with a code naming the problem."""

    def __init__(self, code: str, **details: Any) -> None:
        self.code = code
        self.details = details
        super().__init__(f"{code} {details}")
