"""The card-play rules on bit masks, in one place for :class:`~pbem.engine.state.GameState` and for
:class:`~pbem.engine.playout.Playout` (a bot's fast rollouts): which cards a seat may play (RULES.md §2
rule 10), what breaks hearts, and a hand's points from the penalty points taken (rule 9, §3's moon).
Pure functions of a :class:`~pbem.engine.rules.Table` and masks; no state of their own."""

from __future__ import annotations

from typing import Sequence

from . import events as ev
from .cards import CLUBS_MASK, HEARTS_MASK, KS_AS_BITS, QS, QS_BIT, SPADES, SUIT_MASK_OF, SUIT_OF
from .rules import Table


def legal_of(t: Table, h: int, trick: tuple[int, ...], first: bool, hearts_broken: bool) -> int:
    """The legal cards (a mask) of a seat holding ``h`` with ``trick`` on the table, ``first`` in the
    hand's first trick (RULES.md §2 rule 10 and §3's options; not Turbo's charged cards, §6.4, which
    the state adds)."""
    if trick:
        follow = h & SUIT_MASK_OF[trick[0]]
        if follow:
            legal = follow
        else:
            legal = h
            if first and t.no_pts_first:
                legal = h & ~t.penalty_mask or h
        if t.qs_drop and legal & QS_BIT and legal != QS_BIT:
            if not follow or (SUIT_OF[trick[0]] == SPADES and any(1 << c & KS_AS_BITS for c in trick)):
                legal = QS_BIT
        return legal
    if first and t.first_lead != "left_of_dealer":
        if t.first_lead == "two_of_clubs":
            # The leader holds the lowest club dealt (RULES.md §6.2: with a kitty, not always 2C).
            legal = h & CLUBS_MASK
            return legal & -legal
        return h & CLUBS_MASK
    legal = h
    if first and t.no_pts_first:
        legal = h & ~t.penalty_mask or h
    if t.must_break and not hearts_broken:
        banned = HEARTS_MASK | QS_BIT if t.qs_lead_needs_broken else HEARTS_MASK
        rest = legal & ~banned
        if rest and not (t.hearts_instead_of_qs and rest == QS_BIT):
            legal = rest
    return legal


def trick_taken(t: Table, trick: tuple[int, ...], leader: int) -> tuple[int, int, int]:
    """A complete trick of one deck led by ``leader`` (RULES.md §2 rules 7 and 8): its cards (a mask),
    its penalty points, and the seat of its highest card of the led suit, which takes it."""
    values = t.values
    tmask = points = 0
    for c in trick:  # (a plain loop: far cheaper than sum over map here)
        tmask |= 1 << c
        points += values[c]
    best = (tmask & SUIT_MASK_OF[trick[0]]).bit_length() - 1
    return tmask, points, (leader + trick.index(best)) % t.players


def breaks_hearts(t: Table, card: int) -> bool:
    """Whether playing ``card`` breaks hearts: a heart, or the queen of spades with ``qs_breaks_hearts``."""
    return bool(1 << card & HEARTS_MASK) or (card == QS and t.qs_breaks)


def plain_hand_points(t: Table, points: Sequence[int], tricks_won: Sequence[int], bonus_copies: Sequence[int],
                      moon: ev.Moon | None) -> tuple[int, ...]:
    """Each seat's hand score without a team and before Turbo's multiplier (RULES.md §2 rule 9, §3):
    the penalty points taken, or the moon's (old: M to every other seat; new: -M to the shooter; a sun
    is 2M), the ``avoid_all_tricks_bonus`` of a seat that won no trick, and the bonus card's value by
    the copies each seat took."""
    n = t.players
    if moon is None:
        out = list(points)
        if t.avoid_bonus:
            for seat, won in enumerate(tricks_won):
                if not won:
                    out[seat] += t.avoid_bonus
    else:
        m = t.moon_total * (2 if moon.kind == "sun" else 1)
        if moon.scoring == "new":
            out = [0] * n
            out[moon.seat] = -m
        else:
            out = [m] * n
            out[moon.seat] = 0
            if t.individual and t.partner_spared:
                out[(moon.seat + 2) % 4] = 0  # RULES.md §6.1 partner_moon=spared
    if t.bonus_bit:
        for seat in range(n):
            out[seat] += t.bonus * bonus_copies[seat]
    return tuple(out)
