"""Where the unseen cards can be: inference from what a seat saw, and sampling consistent deals.

A search bot imagines the other hands (a *world*) many times and plays each world out. The worlds
must agree with everything the seat knows, or the search learns from impossible deals:

- the cards this seat passed are in the receiver's hand until they are played (RULES.md §6.3: not
  after a ``mix``, where they were dealt back to anyone, the seat itself or a new kitty included;
  nor with ``pass_optional``, where a packet goes on through decliners nobody names: then they are
  only known to be in another hand); the cards it received are in its own hand; a seat that
  declined was passed nothing, and knows nothing of what went through it;
- a seat that did not follow suit is void in the led suit;
- the rules' restrictions tell more: a seat that discarded a penalty card on the first trick (with
  ``no_pts_on_first_trick``) held only penalty cards; a seat that led a heart before hearts were
  broken held nothing else it could lead; with ``qs_must_drop_when_safe`` a seat that did not drop
  QS when it had to does not hold it;
- each seat holds as many cards as it has not played (a boosted trick, RULES.md §6.5, takes two
  cards of each: its second round is a follow like the first, so a seat that does not follow in it
  is void too);
- Turbo (RULES.md §6.4): a charged card not yet played is in its charger's hand (with
  ``kitty_exchange``, the taker's: in its hand or its discards); a charged card played to the first
  trick led in its suit (led, or followed) was the only card of that suit its holder had, beside
  other charged ones (otherwise another card of the suit was legal and the charged one was not);
- Cancellation (RULES.md §6.6): two decks, so every card is in play twice and a seat may hold both
  copies. :class:`Knowledge` then says which cards are unseen twice (``unseen2``) and which a seat
  surely holds twice (``known2``); a passed card is in its receiver's hand as often as it was passed,
  less the copies of it played since (by the receiver, when every trick is known; by anyone, else);
  the opening lead of a hand says nothing (it is unrestricted); the leftovers are a kitty of the first
  trick's winner, unseen until taken (nothing passed is in it: it was set aside at the deal).
  :func:`sample_two_deck_world` deals each unseen copy;
- with a kitty (RULES.md §6.2) the unseen cards are in the other hands AND in a hidden *pile* of
  exactly the kitty's size: the kitty on the table, or in another seat's tricks (its cards, or with
  ``kitty_exchange`` the taker's discards). Cards passed before play cannot be in a kitty set aside
  at the deal; a first lead above the lowest club means the lower clubs are in the kitty; after an
  exchange, what the taker showed before it no longer bounds its hand, and what it was passed (or
  the clubs the kitty held) is in its hand or its discards. A seat that took the kitty knows it: it
  has no pile.

:func:`infer` turns a :class:`~pbem.bots.view.BotView` into :class:`Knowledge` (per seat: cards known
to be there, cards that may be there, how many); :func:`sample_hands` draws a deal from it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pbem.engine.cards import (
    CLUBS,
    CLUBS_MASK,
    HEARTS_MASK,
    KS_AS_BITS,
    QS,
    QS_BIT,
    SPADES,
    SUIT_MASK_OF,
    SUIT_OF,
    indices_of,
)

from pbem.engine.trick_rules import breaks_hearts

from .view import BotView


@dataclass(frozen=True)
class Knowledge:
    """Per seat (this seat included): the cards it surely holds, may hold, and how many it holds."""

    seat: int
    known: tuple[int, ...]
    allowed: tuple[int, ...]
    counts: tuple[int, ...]
    unseen: int  # cards in the other seats' hands and in the hidden pile
    #: The hidden pile (the kitty, or a taker's discards, that this seat cannot see): its size, the
    #: cards surely in it and the cards that may be in it; ``pile_owner``: the seat whose tricks hold
    #: it (None: the kitty lies on the table).
    pile: int = 0
    pile_known: int = 0
    pile_allowed: int = 0
    pile_owner: int | None = None
    #: Two decks (RULES.md §6.6): the cards both copies of which are unseen, and by seat the cards
    #: it surely holds twice (``known`` has the cards it surely holds at least once).
    decks: int = 1
    unseen2: int = 0
    known2: tuple[int, ...] = ()


def infer(view: BotView) -> Knowledge:
    """What ``view``'s seat knows about where every unseen card is."""
    if view.decks == 2:
        return _infer_two_decks(view)
    t = view.table
    n = t.players
    me = view.seat
    unseen = view.unseen
    allowed = [unseen] * n
    allowed[me] = view.hand
    known = [0] * n
    known[me] = view.hand
    if view.phase in ("play", "discard", "moon"):
        counts = [view.cards_held(s) for s in range(n)]
    else:
        counts = [view.hand.bit_count() if s == me else t.hand_size for s in range(n)]
    pile = view.hidden_kitty
    owner = view.kitty_taker if pile else None
    exchanged = bool(pile and owner is not None and view.exchanged)
    # Cards that are in the owner's hand or in the pile (after an exchange), nowhere else.
    owner_or_pile = 0
    pile_known = 0
    not_in_pile = 0  # passed cards whose receiver is unknown, set aside from a kitty dealt before
    if view.passed and view.phase != "pass":
        if view.targets_known:
            for card, to in zip(view.passed, view.pass_targets()):
                if unseen >> card & 1:
                    if exchanged and to == owner:
                        owner_or_pile |= 1 << card
                    else:
                        known[to] |= 1 << card
        elif view.pass_direction != "mix" and not exchanged:
            # pass_optional: the packet went on through decliners nobody names; in some other hand.
            not_in_pile = view.passed_mask & unseen
        # mix (RULES.md §6.3): the passed cards were dealt back to anyone, or to the new kitty.
    if view.charges_revealed:  # RULES.md §6.4: every charged card not yet played is in its charger's hand
        for s, m in enumerate(view.charges):
            if s == me or not m:
                continue
            if exchanged and s == owner:
                owner_or_pile |= m & unseen
            else:
                known[s] |= m & unseen

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
    # Turbo: the suits led before each trick (for the charged-card rule), where the tricks say it: the
    # trick on the table follows every finished trick; the finished ones only if every one is known.
    charged = view.charged
    leds: list[int | None] = []
    led = 0
    for k, (leader, cards) in enumerate(tricks):
        on_table = bool(view.trick) and k == len(tricks) - 1
        if on_table:
            leds.append(view.led_suits)
        else:
            leds.append(led if view.tricks_complete else None)
            led |= SUIT_MASK_OF[cards[0]]
    # After an exchange (or while the taker holds the kitty to discard) the taker's hand is no longer
    # what it showed before: those tricks say nothing of it.
    changed = view.kitty_taker if view.rules_kitty_exchange and view.kitty_taker not in (None, me) else None
    stale = (view.kitty_trick or view.tricks_played) if changed is not None else 0
    for k, ((leader, cards), before) in enumerate(zip(tricks, befores)):
        first = first_no + k == 0
        broken = bool(before & HEARTS_MASK) or (t.qs_breaks and bool(before & QS_BIT))
        skip = changed if first_no + k < stale else None
        _infer_trick(t, allowed, leader, cards, first, broken, me, skip)
        if charged and leds[k] is not None:
            _infer_charged(t, allowed, leader, cards, charged, leds[k], me, skip)
        if first and pile and t.first_lead == "two_of_clubs" and SUIT_OF[cards[0]] == CLUBS:
            # RULES.md §6.2: the lowest club dealt to a player leads; every club below it is in the kitty.
            below = t.deck_mask & CLUBS_MASK & ((1 << cards[0]) - 1) & unseen
            if exchanged:
                owner_or_pile |= below
            else:
                pile_known |= below

    for s in range(n):
        if s != me:
            allowed[s] = (allowed[s] | known[s]) & (unseen | known[s])
    fixed = pile_known | owner_or_pile
    for s in range(n):
        fixed |= known[s] if s != me else 0
    pile_allowed = 0
    if pile:
        if exchanged:
            pile_allowed = unseen & ~(fixed & ~owner_or_pile & ~pile_known)
            for s in range(n):
                if s not in (me, owner):
                    allowed[s] &= ~owner_or_pile
            allowed[owner] &= ~pile_known
        else:
            # The kitty was set aside at the deal: nothing passed is in it (after a mix it was dealt
            # from the mixed cards, and only what this seat knows to be elsewhere is ruled out).
            pile_allowed = unseen & ~(fixed & ~pile_known) & ~not_in_pile
        for s in range(n):
            if s != me:
                allowed[s] &= ~pile_known
        pile_allowed |= pile_known
    return Knowledge(me, tuple(known), tuple(allowed), tuple(counts), unseen, pile, pile_known, pile_allowed, owner)


def _infer_trick(t, allowed: list[int], leader: int, cards: tuple[int, ...], first: bool, broken: bool,
                 me: int, skip: int | None = None) -> None:
    """Narrow ``allowed`` from one trick (RULES.md §2 rule 10, read backwards); nothing about
    ``skip`` (a kitty taker whose hand changed since)."""
    n = t.players
    penalty = t.penalty_mask
    qs_counts = t.values[QS] > 0
    for k, c in enumerate(cards):
        seat = (leader + k) % n
        bit = 1 << c
        if breaks_hearts(t, c):
            next_broken = True
        else:
            next_broken = broken
        if seat == me or seat == skip:
            broken = next_broken
            continue
        if k == 0:
            # The first lead is restricted by first_lead, and by nothing with two decks (RULES.md §6.8).
            if not (first and (t.first_lead != "left_of_dealer" or t.two_decks)):
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


def _infer_charged(t, allowed: list[int], leader: int, cards: tuple[int, ...], charged: int, led_before: int,
                   me: int, skip: int | None = None) -> None:
    """Turbo (RULES.md §6.4), read backwards: a charged card played to the first trick led in its suit
    (``led_before``: the suit masks led in the tricks before this one) means its holder had no other
    card of that suit but charged ones. Not when ``qs_must_drop_when_safe`` forced a charged QS."""
    n = t.players
    suit = SUIT_MASK_OF[cards[0]]
    if led_before & suit:
        return
    for k, c in enumerate(cards):
        bit = 1 << c
        if not bit & charged or not bit & suit or (c == QS and t.qs_drop):
            continue
        seat = (leader + k) % n
        if seat != me and seat != skip:
            allowed[seat] &= ~(suit & ~charged)


def _infer_two_decks(view: BotView) -> Knowledge:
    """:func:`infer` with two decks (RULES.md §6.6; see the module docstring). Every option two decks
    refuse (a kitty to exchange, charges, boosts, a mix, declining) is left out."""
    t = view.table
    n = t.players
    me = view.seat
    unseen = view.unseen
    unseen2 = view.unseen2
    allowed = [unseen] * n
    allowed[me] = view.hand
    known = [0] * n
    known2 = [0] * n
    known[me], known2[me] = view.hand, view.doubles
    if view.phase in ("play", "moon"):
        counts = [view.cards_held(s) for s in range(n)]
    else:
        counts = [view.hand_count if s == me else t.hand_size for s in range(n)]
    pile = view.hidden_kitty
    owner = view.kitty_taker if pile else None
    tricks = list(view.tricks)
    if view.trick:
        tricks.append((view.leader, view.trick))
    # The copies of each card played, by seat when every trick is known (else by anyone).
    by_seat: list[dict[int, int]] | None = None
    if view.tricks_complete:
        by_seat = [{} for _ in range(n)]
        for leader, cards in tricks:
            for k, c in enumerate(cards):
                d = by_seat[(leader + k) % n]
                d[c] = d.get(c, 0) + 1
    played, played2 = view.played, view.played2
    if view.passed and view.phase != "pass" and view.targets_known:
        sent: dict[tuple[int, int], int] = {}
        for card, to in zip(view.passed, view.pass_targets()):
            sent[card, to] = sent.get((card, to), 0) + 1
        for (card, to), copies in sent.items():
            if by_seat is not None:
                gone = by_seat[to].get(card, 0)
            else:
                gone = 2 if played2 >> card & 1 else 1 if played >> card & 1 else 0
            left = copies - gone
            if left >= 1:
                known[to] |= 1 << card
            if left >= 2:
                known2[to] |= 1 << card
    first_no = view.tricks_played - len(view.tricks)
    # Hearts broken before each trick: from the tricks themselves (before the oldest one known, if it
    # is not the hand's first: broken unless hearts are not broken now, which says nothing).
    broken = view.hearts_broken if first_no else False
    for k, (leader, cards) in enumerate(tricks):
        _infer_trick(t, allowed, leader, cards, first_no + k == 0, broken, me)
        for c in cards:
            if breaks_hearts(t, c):
                broken = True
    for s in range(n):
        if s != me:
            allowed[s] = (allowed[s] | known[s]) & (unseen | known[s])
            known2[s] &= unseen2
    return Knowledge(me, tuple(known), tuple(allowed), tuple(counts), unseen, pile, 0,
                     unseen, owner, 2, unseen2, tuple(known2))


def sample_two_deck_world(knowledge: Knowledge, rng: random.Random,
                          tries: int = 20) -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """Two decks (RULES.md §6.6): a deal of every unseen copy to the other seats and the hidden pile
    that agrees with ``knowledge``: (hand masks by seat, by seat the cards held twice, the pile's mask,
    the pile's cards held twice). This seat's own hand is in both as it is. As :func:`sample_world`:
    the copies with the fewest possible holders first, each to a holder drawn by the room it has
    left; a matching when that paints itself into a corner; the voids dropped if contradictory."""
    k = knowledge
    n = len(k.counts)
    pile = n
    others = [s for s in range(n) if s != k.seat]
    known = list(k.known)
    known2 = list(k.known2)
    allowed = list(k.allowed)
    counts = list(k.counts)
    if k.pile:
        others.append(pile)
        known.append(0)
        known2.append(0)
        allowed.append(k.pile_allowed)
        counts.append(k.pile)
    # The copies not pinned to a seat: each unseen copy, less those known to be in a hand.
    free: list[int] = []
    unseen2 = k.unseen2
    for c in indices_of(k.unseen):
        bit = 1 << c
        copies = 2 if unseen2 & bit else 1
        for s in others:
            if known[s] & bit:
                copies -= 2 if known2[s] & bit else 1
        free += [c] * copies
    room = {s: counts[s] - known[s].bit_count() - known2[s].bit_count() for s in others}
    if sum(room.values()) != len(free) or min(room.values(), default=0) < 0:
        raise ValueError("the knowledge does not add up: counts and unseen cards disagree")
    holders = {c: [s for s in others if allowed[s] >> c & 1] for c in set(free)}
    hands = None
    for _ in range(tries):
        hands = _greedy2(known, known2, free, holders, dict(room), rng)
        if hands is not None:
            break
    if hands is None:
        hands = _matching2(known, known2, others, free, holders, room, rng)
    if hands is None:
        every = {c: list(others) for c in set(free)}
        hands = _matching2(known, known2, others, free, every, room, rng)
    assert hands is not None
    once, twice = hands
    if k.pile:
        return tuple(once[:n]), tuple(twice[:n]), once[pile], twice[pile]
    return tuple(once[:n]), tuple(twice[:n]), 0, 0


def _greedy2(known: list[int], known2: list[int], free: list[int], holders: dict[int, list[int]],
             room: dict[int, int], rng: random.Random) -> tuple[list[int], list[int]] | None:
    order = list(free)
    rng.shuffle(order)
    order.sort(key=lambda c: len(holders[c]))
    once, twice = list(known), list(known2)
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
        bit = 1 << c
        if once[s] & bit:
            twice[s] |= bit
        else:
            once[s] |= bit
        room[s] -= 1
    return once, twice


def _matching2(known: list[int], known2: list[int], others: list[int], free: list[int],
               holders: dict[int, list[int]], room: dict[int, int],
               rng: random.Random) -> tuple[list[int], list[int]] | None:
    """The copies (items ``free[i]``) to seats with capacities by augmenting paths; None if impossible."""
    load: dict[int, list[int]] = {s: [] for s in others}

    def place(i: int, seen: set[int]) -> bool:
        options = [s for s in holders[free[i]] if s not in seen]
        rng.shuffle(options)
        for s in options:
            seen.add(s)
            if len(load[s]) < room[s]:
                load[s].append(i)
                return True
            for other in list(load[s]):
                if place(other, seen):
                    load[s].remove(other)
                    load[s].append(i)
                    return True
        return False

    order = list(range(len(free)))
    rng.shuffle(order)
    for i in order:
        if not place(i, set()):
            return None
    once, twice = list(known), list(known2)
    for s, items in load.items():
        for i in items:
            bit = 1 << free[i]
            if once[s] & bit:
                twice[s] |= bit
            else:
                once[s] |= bit
    return once, twice


def sample_hands(knowledge: Knowledge, rng: random.Random, tries: int = 20) -> tuple[int, ...]:
    """A deal of the unseen cards to the other seats that agrees with ``knowledge`` (hand masks by seat;
    with a hidden pile, see :func:`sample_world`, the pile's cards are left out)."""
    return sample_world(knowledge, rng, tries)[0]


def sample_world(knowledge: Knowledge, rng: random.Random, tries: int = 20) -> tuple[tuple[int, ...], int]:
    """A deal of the unseen cards to the other seats and the hidden pile that agrees with
    ``knowledge``: (hand masks by seat, the pile's mask; 0 without a pile).

    Cards with the fewest possible holders are placed first, each to a holder drawn with weight by
    the room it has left, so the draws are close to uniform over consistent deals. If that paints
    itself into a corner ``tries`` times, a matching finds a consistent deal; if the knowledge is
    contradictory (a caller gave a wrong history) the void inferences are dropped.
    """
    k = knowledge
    n = len(k.counts)
    pile = n  # the hidden pile is placed as one more holder
    others = [s for s in range(n) if s != k.seat]
    known = list(k.known)
    allowed = list(k.allowed)
    counts = list(k.counts)
    if k.pile:
        others.append(pile)
        known.append(k.pile_known)
        allowed.append(k.pile_allowed)
        counts.append(k.pile)
    fixed = 0
    for s in others:
        fixed |= known[s]
    free = indices_of(k.unseen & ~fixed)
    room = {s: counts[s] - known[s].bit_count() for s in others}
    if sum(room.values()) != len(free) or min(room.values(), default=0) < 0:
        raise ValueError("the knowledge does not add up: counts and unseen cards disagree")
    holders = {c: [s for s in others if allowed[s] >> c & 1] for c in free}
    hands = None
    for _ in range(tries):
        hands = _greedy(known, free, holders, dict(room), rng)
        if hands is not None:
            break
    if hands is None:
        hands = _matching(known, others, free, holders, room, rng)
    if hands is None:  # contradictory knowledge: keep counts and known cards, drop the rest
        every = {c: list(others) for c in free}
        hands = _matching(known, others, free, every, room, rng)
    assert hands is not None
    return tuple(hands[:n]), (hands[pile] if k.pile else 0)


def _greedy(known: list[int], free: list[int], holders: dict[int, list[int]],
            room: dict[int, int], rng: random.Random) -> tuple[int, ...] | None:
    order = list(free)
    rng.shuffle(order)
    order.sort(key=lambda c: len(holders[c]))
    hands = list(known)
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


def _matching(known: list[int], others: list[int], free: list[int], holders: dict[int, list[int]],
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
    hands = list(known)
    for s, cards in load.items():
        for c in cards:
            hands[s] |= 1 << c
    return tuple(hands)
