"""Where the unseen cards can be: inference from what a seat saw, and sampling consistent deals.

A search bot imagines the other hands (a *world*) many times and plays each world out. The worlds
must agree with everything the seat knows, or the search learns from impossible deals:

- the cards this seat passed are in the receiver's hand until they are played;
- a seat that did not follow suit is void in the led suit;
- the rules' restrictions tell more: a seat that discarded a penalty card on the first trick (with
  ``no_pts_on_first_trick``) held only penalty cards; a seat that led a heart before hearts were
  broken held nothing else it could lead; with ``qs_must_drop_when_safe`` a seat that did not drop
  QS when it had to does not hold it;
- each seat holds as many cards as it has not played.

:func:`infer` turns a :class:`~pbem.bots.view.BotView` into :class:`Knowledge` (per seat: cards known
to be there, cards that may be there, how many); :func:`sample_hands` draws a deal from it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pbem.engine.cards import (
    HEARTS_MASK,
    KS_AS_BITS,
    QS,
    QS_BIT,
    SPADES,
    SUIT_MASK_OF,
    SUIT_OF,
    indices_of,
)

from .view import BotView


@dataclass(frozen=True)
class Knowledge:
    """Per seat (this seat included): the cards it surely holds, may hold, and how many it holds."""

    seat: int
    known: tuple[int, ...]
    allowed: tuple[int, ...]
    counts: tuple[int, ...]
    unseen: int  # cards in the other seats' hands


def infer(view: BotView) -> Knowledge:
    """What ``view``'s seat knows about where every unseen card is."""
    t = view.table
    n = t.players
    me = view.seat
    unseen = view.unseen
    allowed = [unseen] * n
    allowed[me] = view.hand
    known = [0] * n
    known[me] = view.hand
    counts = [view.cards_held(s) for s in range(n)]
    if view.phase != "play":
        counts = [view.hand.bit_count() if s == me else t.hand_size for s in range(n)]
    if view.passed and view.phase != "pass":
        for card, to in zip(view.passed, view.pass_targets()):
            if unseen >> card & 1:
                known[to] |= 1 << card

    played_before = view.played
    tricks = list(view.tricks)
    if view.trick:
        tricks.append((view.leader, view.trick))
    first_no = view.tricks_played - len(view.tricks)  # index of the oldest trick we have
    # Cards played before a trick = every card played, minus that trick's and later tricks' cards.
    later = 0
    befores = []
    for leader, cards in reversed(tricks):
        for c in cards:
            later |= 1 << c
        befores.append(played_before & ~later)
    befores.reverse()
    for k, ((leader, cards), before) in enumerate(zip(tricks, befores)):
        first = first_no + k == 0
        broken = bool(before & HEARTS_MASK) or (t.qs_breaks and bool(before & QS_BIT))
        _infer_trick(t, allowed, leader, cards, first, broken, me)

    for s in range(n):
        if s != me:
            allowed[s] = (allowed[s] | known[s]) & (unseen | known[s])
    return Knowledge(me, tuple(known), tuple(allowed), tuple(counts), unseen)


def _infer_trick(t, allowed: list[int], leader: int, cards: tuple[int, ...], first: bool, broken: bool,
                 me: int) -> None:
    """Narrow ``allowed`` from one trick (RULES.md §2 rule 10, read backwards)."""
    n = t.players
    penalty = t.penalty_mask
    qs_counts = t.values[QS] > 0
    for k, c in enumerate(cards):
        seat = (leader + k) % n
        bit = 1 << c
        if bit & HEARTS_MASK or (c == QS and t.qs_breaks):
            next_broken = True
        else:
            next_broken = broken
        if seat == me:
            broken = next_broken
            continue
        if k == 0:
            if not (first and t.first_lead != "left_of_dealer"):
                if first and t.no_pts_first and bit & penalty:
                    allowed[seat] &= penalty
                if t.must_break and not broken:
                    banned = HEARTS_MASK | QS_BIT if t.qs_lead_needs_broken else HEARTS_MASK
                    if bit & banned:
                        keep = banned | (QS_BIT if t.hearts_instead_of_qs else 0)
                        allowed[seat] &= keep
        else:
            led = SUIT_MASK_OF[cards[0]]
            if not bit & led:
                allowed[seat] &= ~led
                if first and t.no_pts_first and bit & penalty:
                    allowed[seat] &= penalty
                if t.qs_drop and qs_counts and c != QS and not (first and t.no_pts_first and not bit & penalty):
                    allowed[seat] &= ~QS_BIT
            elif t.qs_drop and qs_counts and c != QS and SUIT_OF[cards[0]] == SPADES:
                if any(1 << x & KS_AS_BITS for x in cards[:k]):
                    allowed[seat] &= ~QS_BIT
        broken = next_broken


def sample_hands(knowledge: Knowledge, rng: random.Random, tries: int = 20) -> tuple[int, ...]:
    """A deal of the unseen cards to the other seats that agrees with ``knowledge`` (hand masks by seat).

    Cards with the fewest possible holders are placed first, each to a holder drawn with weight by
    the room it has left, so the draws are close to uniform over consistent deals. If that paints
    itself into a corner ``tries`` times, a matching finds a consistent deal; if the knowledge is
    contradictory (a caller gave a wrong history) the void inferences are dropped.
    """
    k = knowledge
    n = len(k.counts)
    others = [s for s in range(n) if s != k.seat]
    fixed = 0
    for s in others:
        fixed |= k.known[s]
    free = indices_of(k.unseen & ~fixed)
    room = {s: k.counts[s] - k.known[s].bit_count() for s in others}
    if sum(room.values()) != len(free) or min(room.values(), default=0) < 0:
        raise ValueError("the knowledge does not add up: counts and unseen cards disagree")
    holders = {c: [s for s in others if k.allowed[s] >> c & 1] for c in free}
    for _ in range(tries):
        hands = _greedy(k, others, free, holders, dict(room), rng)
        if hands is not None:
            return hands
    hands = _matching(k, others, free, holders, room, rng)
    if hands is None:  # contradictory knowledge: keep counts and known cards, drop the rest
        every = {c: list(others) for c in free}
        hands = _matching(k, others, free, every, room, rng)
    assert hands is not None
    return hands


def _greedy(k: Knowledge, others: list[int], free: list[int], holders: dict[int, list[int]],
            room: dict[int, int], rng: random.Random) -> tuple[int, ...] | None:
    order = list(free)
    rng.shuffle(order)
    order.sort(key=lambda c: len(holders[c]))
    hands = list(k.known)
    for c in order:
        options = [s for s in holders[c] if room[s] > 0]
        if not options:
            return None
        if len(options) == 1:
            s = options[0]
        else:
            total = sum(room[s] for s in options)
            pick = rng.randrange(total)
            for s in options:
                pick -= room[s]
                if pick < 0:
                    break
        hands[s] |= 1 << c
        room[s] -= 1
    return tuple(hands)


def _matching(k: Knowledge, others: list[int], free: list[int], holders: dict[int, list[int]],
              room: dict[int, int], rng: random.Random) -> tuple[int, ...] | None:
    """Cards to seats with capacities by augmenting paths (Kuhn's algorithm); None if impossible."""
    load: dict[int, list[int]] = {s: [] for s in others}

    def place(c: int, seen: set[int]) -> bool:
        options = [s for s in holders[c] if s not in seen]
        rng.shuffle(options)
        for s in options:
            seen.add(s)
            if len(load[s]) < room[s]:
                load[s].append(c)
                return True
            for other in list(load[s]):
                if place(other, seen):  # move ``other`` elsewhere to make room for ``c``
                    load[s].remove(other)
                    load[s].append(c)
                    return True
        return False

    order = list(free)
    rng.shuffle(order)
    for c in order:
        if not place(c, set()):
            return None
    hands = list(k.known)
    for s, cards in load.items():
        for c in cards:
            hands[s] |= 1 << c
    return tuple(hands)
