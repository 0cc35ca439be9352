"""The ``heuristic`` player: sound ordinary Hearts, decided from a few rules of thumb.

The rules, as a careful club player would state them:

- Pass the cards that take tricks you do not want: QS when it is poorly guarded (fewer than four
  lower spades), AS and KS when spades are short (they catch QS), high hearts; with room left, void
  a short suit (a void lets you discard later); then the highest cards. Keep the bonus card (JD in
  Omnibus).
- Following suit: duck under the card that is winning, with the highest card that still ducks
  (that dumps QS when spades are led and AS or KS is already in the trick). Last to play on a trick
  with no points, take it with your highest safe card instead, to shed it. When you cannot duck,
  play the cheapest card (the lowest one if players still to come may go over it, the highest one
  if you are last).
- Void in the led suit: dump QS first, then other big penalty cards, AS/KS while QS is out, high
  hearts, then high cards of short suits.
- Leading: lead the card least likely to take the trick (the fewest unseen lower cards of its suit);
  never QS, not AS/KS while QS is out; lead low spades to smoke out QS when you cannot be caught.
- Spoil a moon you can see coming (one other seat has taken every penalty card so far, and at
  least half the moon total): take a trick with points in it, lead your winning heart, and never
  feed the would-be shooter.

With a partnership (RULES.md §6.1; partners sit opposite), what counts is the team's score, so:

- never dump points on a trick the partner is winning (the bonus card, a gift, goes there first);
  last to play on a clean trick the partner is winning, let the partner have it;
- a moon is a threat only when the other side is making it (the partner's moon, or the team's slam,
  is not spoiled);
- passing to the partner (``pass_to_partner``) cannot move danger out of the team, but it can make a
  void: first a short side suit that fits (so this seat can discard on the opponents' tricks), then
  the usual pass's most dangerous cards (in trials between heuristic teams, this beat the usual pass,
  and keeping QS or passing the highest or the lowest plain cards did worse).

With ``kitty_exchange`` the taker discards face down to its own tricks, so a discarded penalty card
is taken for sure: discard the cards most likely to take tricks that are not penalty cards (AS/KS
while QS is out, high side cards, the cards of a short suit), a penalty card only when nothing else
is left (in trials between heuristic players this beat discarding an unguarded QS or a high heart,
and discarding the kitty's own cards).

Passing variants (RULES.md §6.3): with ``pass_optional`` a hand with nothing to get rid of declines
(it keeps its cards and is passed none of the others; in duplicate trials between heuristic players
this took 0.7 points per hand fewer than always declining, and was level with never declining); a
called split passes the most urgent cards
to the first direction of the call; the dealer's call is made before the deal, so it is the pass
cycle's direction for the hand (``mix`` on a hold hand, since ``hold`` is not a call).

Turbo (RULES.md §6.4): charging doubles a card's value for whoever takes it, and keeps it off the
first trick of its suit, so the heuristic charges a card it expects another seat to take, or one it
expects to take itself when the card is good for it; in doubt, nothing:

- QS when it is well guarded (four or more lower spades: it cannot be forced out, and it can be
  dropped on someone else's spade trick later);
- the bonus card (JD −10, charged −20: good to take) when it holds all but one of the higher cards of
  its suit (AD, KD, QD: two of them), so the trick it is played in is likely its own;
- TC (its taker's hand score ×4 instead of ×2) when it holds three or more lower clubs and no higher
  one, so it can duck club tricks and drop TC under a higher club;
- AH (every heart doubled) when it holds two or more low hearts (2H to 6H) to duck heart tricks with.

In duplicate trials of turbo hands (a seat with one rule, the other seats heuristic; the measure: that
seat's hand score less the others' mean) each part paid: charging nothing was 0.6 points a hand
worse, QS alone 0.37, leaving out the bonus card 0.29 or TC 0.08; AH with two low hearts was 0.3
better than never charging AH (AH always 0.2 worse); QS with three lower spades, or five, was no
better. With ``charge_limit`` below the number wanted, QS first, then the bonus card, TC and AH (with
``charge_limit`` 1 the order made no measurable difference; charging nothing was 0.8 worse). The
play is the same with the hand's charged values (the view's table holds them). With Booster Nines a
trick's last card is the second round's last when the trick boosts.

Cancellation (RULES.md §6.6, two decks): two identical cards in a trick cancel each other, so the
card winning a trick so far is the highest of the led suit played once, and a trick whose led-suit
cards all cancel is carried with its points to the next trick's winner. Following suit, a card whose
twin is on the trick cancels it (a duck, whatever its rank); last to play, the outcome of each card is
certain and the heuristic ducks with its highest card (a penalty card first), takes a clean trick
with its highest, lets a trick be carried rather than take its points, and takes points only when it
must (the carried pile's counted with the trick's); the cards still out count each unseen copy (a
card whose twin is unseen is not a sure winner); the pass treats each copy as a card (both copies of
a dangerous card may go, each low spade guards QS).

The decision functions work on card masks so the ``strong`` player can use them as its fast
playout policy; :class:`HeuristicBot` wraps them in the bot interface. The heuristic avoids points;
it does not try to shoot the moon.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from pbem.engine import OVER, GameState
from pbem.engine.cards import (
    CARD_INDEX,
    CARD_NAMES,
    CLUBS_MASK,
    HEARTS,
    HEARTS_MASK,
    KS_AS_BITS,
    QS,
    QS_BIT,
    RANK_OF,
    SPADES,
    SPADES_MASK,
    SUIT_MASK,
    SUIT_MASK_OF,
    SUIT_OF,
    cards_of,
    indices_of,
)
from pbem.engine.rules import Table

from .view import BotView, as_bot_view

_BELOW_QS = SPADES_MASK & ((1 << QS) - 1)
_JACK = 9  # rank index of a jack
_NINE = 7  # rank index of a nine (RULES.md §6.5)
_TC = CARD_INDEX["TC"]
_AH = CARD_INDEX["AH"]
_LOW_HEARTS = HEARTS_MASK & ((1 << CARD_INDEX["7H"]) - 1)  # 2H to 6H


def _highest(mask: int) -> int:
    return mask.bit_length() - 1


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


# -- moons ------------------------------------------------------------------------------------------


def moon_threat(t: Table, seat: int, points: tuple[int, ...], partner: int = -1, team: bool = False) -> int:
    """The seat that looks like shooting the moon (it alone has taken points, at least half the moon
    total), or -1. With a partner: never the partner; in ``team`` mode the threat is the other team
    taking every point so far (the seat returned is one of them: see :func:`threat_seats`)."""
    threat = threat_seats(t, seat, points, partner, team)
    return (threat & -threat).bit_length() - 1 if threat else -1


def threat_seats(t: Table, seat: int, points: tuple[int, ...], partner: int = -1, team: bool = False) -> int:
    """The seats (a mask of seat bits) whose moon, or team slam, this seat should spoil; 0 if none."""
    total = sum(points)
    if 2 * total < t.moon_total or not total or t.moon == "none":
        return 0
    if team and partner >= 0:
        n = len(points)
        ours = points[seat] + points[partner]
        if ours:
            return 0
        return sum(1 << s for s in range(n) if s != seat and s != partner)
    for s, p in enumerate(points):
        if p:
            return 1 << s if p == total and s != seat and s != partner else 0
    return 0


def partners_of(rules: Any) -> tuple[tuple[int, ...], bool]:
    """By seat, its partner (-1 without a partnership), and whether partners score as one team."""
    return _partners(rules.partnership, rules.players)


@functools.lru_cache(maxsize=16)
def _partners(mode: str, players: int) -> tuple[tuple[int, ...], bool]:
    if mode == "none" or players != 4:
        return (-1,) * players, False
    return tuple((s + 2) % 4 for s in range(4)), mode == "team"


# -- play -------------------------------------------------------------------------------------------


def choose_card(t: Table, seat: int, hand: int, legal: int, trick: tuple[int, ...], leader: int,
                played: int, points: tuple[int, ...], partner: int = -1, team: bool = False,
                doubles: int = 0, played2: int = 0, carried_value: int = 0) -> int:
    """The heuristic's card (an index) for the seat to play.

    ``played``: every card played this hand, the trick on the table included; ``points``: penalty
    points taken by each seat this hand; ``partner``: this seat's partner (-1 without one), ``team``:
    partners score as one team. Uses nothing but this seat's hand and what the table saw.
    Two decks (RULES.md §6.6): ``doubles`` the cards held twice, ``played2`` the cards both copies of
    which were played (``played``: at least one, carried cards included), ``carried_value`` the
    points of the cancelled tricks on the table, which go with the trick being played.
    """
    if not legal & (legal - 1):
        return legal.bit_length() - 1
    if t.two_decks:
        return _choose_card2(t, seat, hand, legal, trick, leader, played, points, doubles, played2, carried_value)
    shooter = threat_seats(t, seat, points, partner, team)
    if trick:
        if legal & SUIT_MASK_OF[trick[0]]:
            return _follow(t, legal, trick, leader, shooter, partner, _last_to_play(t, trick, hand))
        return _discard(t, hand, legal, trick, leader, played, shooter, partner)
    return _lead(t, hand, legal, played, shooter)


def _winner(t: Table, trick: tuple[int, ...], leader: int) -> tuple[int, int]:
    """The card winning the trick so far, and its seat."""
    led = SUIT_MASK_OF[trick[0]]
    winning = trick[0]
    for c in trick:
        if 1 << c & led and c > winning:
            winning = c
    return winning, (leader + trick.index(winning)) % t.players


def _trick_value(t: Table, trick: tuple[int, ...]) -> int:
    values = t.values
    v = 0
    for c in trick:
        v += values[c]
        if 1 << c & t.bonus_bit:
            v += t.bonus
    return v


def _cost(t: Table, c: int) -> int:
    """What a card costs its taker: its penalty value, less the bonus for the bonus card."""
    v = t.values[c]
    if 1 << c & t.bonus_bit:
        v += t.bonus
    return v


def _last_to_play(t: Table, trick: tuple[int, ...], hand: int) -> bool:
    """Whether this seat's card is the trick's last: the n-th, unless the trick boosts (Booster Nines,
    RULES.md §6.5: a nine of the led suit among the first round's cards, with more than one card in
    every hand), then the 2n-th."""
    n = t.players
    k = len(trick)
    if not t.booster:
        return k == n - 1
    if k >= n:
        return k == 2 * n - 1
    nine = SUIT_OF[trick[0]] * 13 + _NINE
    return k == n - 1 and not (nine in trick and hand & (hand - 1))


def _follow(t: Table, legal: int, trick: tuple[int, ...], leader: int, shooter: int, partner: int = -1,
            last: bool | None = None) -> int:
    winning, winner = _winner(t, trick, leader)
    above = legal & ~((2 << winning) - 1)
    below = legal & ((1 << winning) - 1)
    value = _trick_value(t, trick)
    if last is None:
        last = len(trick) == t.players - 1
    if shooter and above:
        if 1 << winner & shooter and (value > 0 or legal & t.penalty_mask):
            return _highest(above)  # take the points away from the would-be shooter
    if below:
        if last and value <= 0 and above and winner != partner:
            safe = above & ~t.penalty_mask
            if safe:
                return _highest(safe)  # a free trick: shed the highest card
        return _highest(below)
    # Every card wins for now: the cheapest, low if others may go over it, high if we are last.
    cards = indices_of(legal)
    if last:
        return min(cards, key=lambda c: (_cost(t, c), -c))
    return min(cards, key=lambda c: (_cost(t, c), c))


def _discard(t: Table, hand: int, legal: int, trick: tuple[int, ...], leader: int, played: int,
             shooter: int, partner: int = -1) -> int:
    _winning, winner = _winner(t, trick, leader)
    return _discard_from(t, hand, legal, winner, t.deck_mask & ~played & ~hand, shooter, partner)


def _discard_from(t: Table, hand: int, legal: int, winner: int, outstanding: int, shooter: int,
                  partner: int = -1) -> int:
    """The discard, given the seat winning the trick so far (-1: none, a cancelled trick so far) and
    the cards still out (in other hands or the kitty)."""
    if partner >= 0 and winner == partner:
        if legal & t.bonus_bit:
            return _highest(legal & t.bonus_bit)  # the bonus card to the partner's trick
        clean = legal & ~t.penalty_mask
        if clean:
            legal = clean  # no points on the partner's trick
    if shooter and winner >= 0 and 1 << winner & shooter:
        clean = legal & ~t.penalty_mask & ~t.bonus_bit
        if clean:
            legal = clean  # do not feed the would-be shooter
    qs_out = t.values[QS] > 0 and bool(outstanding & QS_BIT)
    values = t.values
    best = -1
    best_score = -10_000
    for c in _discard_candidates(t, legal):
        bit = 1 << c
        v = values[c]
        if bit & t.bonus_bit:
            score = -1000
        elif v >= 5:
            score = 1000 + 10 * v + RANK_OF[c]
        elif bit & KS_AS_BITS and qs_out:
            score = 500 + RANK_OF[c]
        elif v > 0:
            score = 300 + 10 * v + RANK_OF[c]
        else:
            length = (hand & SUIT_MASK_OF[c]).bit_count()
            score = RANK_OF[c] + (6 if length == 1 else 3 if length == 2 else 0)
        if score > best_score:
            best, best_score = c, score
    return best


def _discard_candidates(t: Table, legal: int) -> list[int]:
    """The cards worth weighing for a discard: every penalty card, the highest other card of each
    suit, and the card below the bonus card (the discard score prefers no other card)."""
    out = indices_of(legal & t.penalty_mask)
    rest = legal & ~t.penalty_mask
    for suit_mask in SUIT_MASK:
        m = rest & suit_mask
        if m:
            top = m.bit_length() - 1
            out.append(top)
            m ^= 1 << top
            if m and (1 << top & t.bonus_bit):
                out.append(m.bit_length() - 1)
    return out


def _lead_candidates(t: Table, legal: int) -> list[int]:
    """The cards worth weighing for a lead: the lowest of each suit, and the one above it when that
    is the bonus card (the lead score never prefers a higher card of a suit otherwise)."""
    out = []
    for suit_mask in SUIT_MASK:
        m = legal & suit_mask
        if m:
            low = m & -m
            out.append(low.bit_length() - 1)
            m ^= low
            if m and low & t.bonus_bit:
                out.append((m & -m).bit_length() - 1)
    return out


def _lead(t: Table, hand: int, legal: int, played: int, shooter: int, outstanding2: int = -1,
          outstanding: int = 0) -> int:
    """The lead. Two decks: ``outstanding`` the cards a copy of which is out, ``outstanding2`` those
    both copies of which are (counted twice); one deck: -1, the cards out are those not played."""
    if outstanding2 < 0:
        outstanding = t.deck_mask & ~played & ~hand
        outstanding2 = 0
    if shooter:
        hearts = legal & HEARTS_MASK
        if hearts and _highest(hearts) > _highest(outstanding & HEARTS_MASK):
            return _highest(hearts)  # a sure heart trick stops the moon
    values = t.values
    qs_counts = values[QS] > 0
    qs_out = qs_counts and bool(outstanding & QS_BIT)
    hold_qs = qs_counts and bool(hand & QS_BIT)
    can_smoke = qs_out and not hand & KS_AS_BITS
    best = -1
    best_score = 1e9
    for c in _lead_candidates(t, legal):
        suit_out = outstanding & SUIT_MASK_OF[c]
        if not suit_out:
            score = 50.0 + values[c]  # nobody can follow: it wins, and they discard on it
        else:
            lower = (suit_out & ((1 << c) - 1)).bit_count()
            higher = suit_out.bit_count() - lower
            if outstanding2:  # two decks: a card both copies of which are out counts twice
                suit_out2 = outstanding2 & SUIT_MASK_OF[c]
                lower2 = (suit_out2 & ((1 << c) - 1)).bit_count()
                lower += lower2
                higher += suit_out2.bit_count() - lower2
            if not lower:
                score = 0.0
            elif not higher:
                score = 40.0 + 2 * values[c]
            else:
                score = 10.0 * lower / (lower + higher) + 2 * values[c]
        bit = 1 << c
        if c == QS and qs_counts:
            score += 60
        elif bit & KS_AS_BITS and qs_out:
            score += 30
        elif bit & SPADES_MASK:
            if can_smoke and bit & _BELOW_QS:
                score -= 3
            elif hold_qs:
                score += 3
        if bit & t.bonus_bit:
            score += 20
        score += 0.01 * RANK_OF[c] - 0.05 * suit_out.bit_count()
        if score < best_score:
            best, best_score = c, score
    return best


# -- two decks (RULES.md §6.6 Cancellation) ---------------------------------------------------------


def _choose_card2(t: Table, seat: int, hand: int, legal: int, trick: tuple[int, ...], leader: int,
                  played: int, points: tuple[int, ...], doubles: int, played2: int, carried_value: int) -> int:
    """``choose_card`` with two decks: identical cards cancel, so the card winning a trick is the
    highest of the led suit played once, a card whose twin is on the trick cancels it, and a trick
    may win the carried pile with it (see the module docstring)."""
    shooter = threat_seats(t, seat, points)
    # The cards a copy of which is still out (in another hand or the kitty), and both copies of which are.
    outstanding = t.deck_mask & ~(doubles | played2 | hand & played)
    if trick:
        if legal & SUIT_MASK_OF[trick[0]]:
            return _follow2(t, seat, legal, trick, leader, shooter, carried_value)
        alive = _alive(trick)
        winner = (leader + trick.index(_highest(alive))) % t.players if alive else -1
        return _discard_from(t, hand, legal, winner, outstanding, shooter)
    return _lead(t, hand, legal, played, shooter, t.deck_mask & ~hand & ~played, outstanding)


def _alive(trick: tuple[int, ...]) -> int:
    """Two decks: the cards of the led suit on ``trick`` that no identical card cancels."""
    seen = twins = 0
    for c in trick:
        bit = 1 << c
        twins |= seen & bit
        seen |= bit
    return seen & ~twins & SUIT_MASK_OF[trick[0]]


def _follow2(t: Table, seat: int, legal: int, trick: tuple[int, ...], leader: int, shooter: int,
             carried_value: int) -> int:
    """Following suit with two decks. Each card is judged by what it does to the trick: it cancels the
    copy already there (and is no winner), or it becomes the highest card left, or it ducks under one.
    Last to play, the outcome is certain: duck (the highest card that ducks, a penalty card first), or
    take a clean trick with the highest card (shedding it), or let the trick be carried (its points
    go to the next trick's winner, perhaps this seat), and take points only when nothing else can
    be done, the cheapest; never feed a would-be shooter when the points can be taken from it.
    Earlier, a card that would win for now is played only if none ducks (the cheapest, lowest)."""
    n = t.players
    last = len(trick) == n - 1
    on_table = _alive(trick)
    value = _trick_value(t, trick) + carried_value
    spoil = False
    if shooter and on_table:
        now = (leader + trick.index(_highest(on_table))) % n
        spoil = bool(1 << now & shooter) and (value > 0 or bool(legal & t.penalty_mask))
    best, best_score = -1, 1e9
    for c in indices_of(legal):
        bit = 1 << c
        cost = _cost(t, c)
        if on_table & bit:
            alive, mine = on_table & ~bit, False  # it cancels its twin
        else:
            alive = on_table | bit
            mine = _highest(alive) == c
        rank = RANK_OF[c]
        total = value + cost
        if mine:
            if spoil:
                score = -1000.0 - rank  # take the points away from the would-be shooter
            elif last and total <= 0:
                score = -100.0 - rank  # a free trick: shed the highest card
            else:
                score = 500.0 + 10 * total + (-rank if last else rank)
        elif last and not alive:
            score = 5.0 * total - rank if total > 0 else -rank  # carried: to the next trick's winner
        else:
            score = -rank - 5 * cost  # ducks: the highest, dumping points
            if last and shooter and alive:
                taker = (leader + trick.index(_highest(alive))) % n
                if 1 << taker & shooter and total > 0:
                    score += 2000.0  # feeds the would-be shooter
        if score < best_score:
            best, best_score = c, score
    return best


# -- passing -----------------------------------------------------------------------------------------


def _pass_danger(t: Table, hand: int, doubles: int = 0):
    """How urgently each card of ``hand`` should be passed (40 and more: a card to get rid of; two
    decks: ``doubles`` the cards held twice, each copy a guard)."""
    values = t.values
    qs_counts = values[QS] > 0
    low_spades = (hand & _BELOW_QS).bit_count() + (doubles & _BELOW_QS).bit_count()
    short = low_spades < 3

    def danger(c: int) -> int:
        bit = 1 << c
        if bit & t.bonus_bit:
            return -100
        if c == QS and qs_counts:
            return 100 if low_spades < 4 else -50  # well guarded: keep it, to drop it on AS/KS
        if values[c] >= 5:
            return 60 + values[c]
        if bit & KS_AS_BITS and qs_counts and short:
            return 80 + RANK_OF[c]
        if SUIT_OF[c] == HEARTS and RANK_OF[c] >= _JACK:
            return 40 + RANK_OF[c] + values[c]
        return RANK_OF[c]

    return danger


def pass_ranking(t: Table, hand: int) -> list[int]:
    """Every card of ``hand`` (indices), the most urgent to pass first (what
    :func:`choose_pass_cards` draws on; ``strong`` weighs the first few by search)."""
    danger = _pass_danger(t, hand)
    return sorted(indices_of(hand), key=lambda c: (-danger(c), -c))


def choose_pass_cards(t: Table, hand: int, count: int) -> list[int]:
    """The ``count`` cards to pass from ``hand`` (indices, the most urgent first)."""
    if count <= 0:
        return []
    danger = _pass_danger(t, hand)
    cards = pass_ranking(t, hand)
    chosen = [c for c in cards if danger(c) >= 40][:count]
    room = count - len(chosen)
    if room > 0:
        # Void a short side suit (not hearts, not spades, not the bonus card's suit) if it fits.
        rest = hand & ~sum(1 << c for c in chosen)
        voidable = []
        for suit in range(4):
            if suit in (HEARTS, SPADES):
                continue
            cards_in = rest & SUIT_MASK[suit]
            if cards_in and cards_in.bit_count() <= room and not cards_in & t.bonus_bit:
                voidable.append((cards_in.bit_count(), -_highest(cards_in), cards_in))
        if voidable:
            voidable.sort()
            chosen += sorted(indices_of(voidable[0][2]), reverse=True)
        for c in cards:
            if len(chosen) >= count:
                break
            if c not in chosen:
                chosen.append(c)
    return chosen[:count]


def choose_pass_cards2(t: Table, hand: int, doubles: int, count: int) -> list[int]:
    """Two decks (RULES.md §6.6): ``choose_pass_cards`` over the copies held (``doubles``: the cards
    held twice), so both copies of a dangerous card may go; a card listed twice passes both."""
    if count <= 0:
        return []
    danger = _pass_danger(t, hand, doubles)
    copies = indices_of(hand) + indices_of(doubles)
    cards = sorted(copies, key=lambda c: (-danger(c), -c))
    chosen = [c for c in cards if danger(c) >= 40][:count]
    room = count - len(chosen)
    if room > 0:
        rest = list(copies)
        for c in chosen:
            rest.remove(c)
        voidable = []
        for suit in range(4):
            if suit in (HEARTS, SPADES):
                continue
            cards_in = [c for c in rest if SUIT_OF[c] == suit]
            if cards_in and len(cards_in) <= room and not any(1 << c & t.bonus_bit for c in cards_in):
                voidable.append((len(cards_in), -max(cards_in), sorted(cards_in, reverse=True)))
        if voidable:
            voidable.sort()
            chosen += voidable[0][2]
        for c in cards:
            if len(chosen) >= count:
                break
            if chosen.count(c) < copies.count(c):
                chosen.append(c)
    return chosen[:count]


def choose_partner_pass_cards(t: Table, hand: int, count: int) -> list[int]:
    """The ``count`` cards to pass to the partner (``pass_to_partner``; see the module docstring):
    first a short side suit that fits (a void, to discard on the opponents' tricks), then the usual
    pass's most dangerous cards."""
    if count <= 0:
        return []
    chosen: list[int] = []
    voidable = []
    for suit in range(4):
        if suit in (HEARTS, SPADES):
            continue
        cards_in = hand & SUIT_MASK[suit]
        if cards_in and cards_in.bit_count() <= count and not cards_in & t.bonus_bit:
            voidable.append((cards_in.bit_count(), -_highest(cards_in), cards_in))
    if voidable:
        voidable.sort()
        chosen += sorted(indices_of(voidable[0][2]), reverse=True)
    for c in choose_pass_cards(t, hand, hand.bit_count()):  # every card, the most dangerous first
        if len(chosen) >= count:
            break
        if c not in chosen:
            chosen.append(c)
    return chosen[:count]


def hand_is_safe(t: Table, hand: int) -> bool:
    """``pass_optional``: whether ``hand`` has nothing the pass would have to get rid of (no card the
    pass ranks urgent: an ill-guarded QS, AS/KS with short spades, a big penalty card, a high heart).
    Such a hand declines: it keeps its cards and, above all, receives none of the others' dangerous
    ones (RULES.md §6.3: a decliner is passed nothing)."""
    danger = _pass_danger(t, hand)
    return all(danger(c) < 40 for c in indices_of(hand))


def choose_call(view: BotView) -> tuple[tuple[str, int], ...]:
    """``dealer_calls_pass`` (RULES.md §6.3): the call is made before the deal, so no hand can fit
    it; the heuristic calls the pass cycle's direction for the hand (what the table expects, and
    what its passing is made for), and on a hold hand, where ``hold`` is not a call, ``mix`` (the
    nearest to keeping one's cards: some of them may come back)."""
    choices = view.call_choices
    if not choices:
        raise ValueError(f"seat {view.seat} has no pass to call now (phase {view.phase})")
    if view.default_call in choices:
        return view.default_call
    for call in choices:
        if call[0][0] == "mix":
            return call
    return choices[0]


def choose_charge_cards(t: Table, hand: int, choices: int, limit: int) -> list[int]:
    """Turbo (RULES.md §6.4): the cards of ``choices`` (the chargeable cards held) to charge, at most
    ``limit``, by the module docstring's rules (QS well guarded, the bonus card with its suit's higher
    cards, TC over low clubs, AH with low hearts); ``[]`` in doubt."""
    wanted: list[int] = []
    if choices & QS_BIT and t.values[QS] > 0 and (hand & _BELOW_QS).bit_count() >= 4:
        wanted.append(QS)
    bonus = choices & t.bonus_bit
    if bonus:
        b = bonus.bit_length() - 1
        higher = t.deck_mask & SUIT_MASK_OF[b] & ~((2 << b) - 1)
        if higher and (hand & higher).bit_count() >= max(1, higher.bit_count() - 1):
            wanted.append(b)
    if choices >> _TC & 1:
        clubs = hand & CLUBS_MASK
        if (clubs & ((1 << _TC) - 1)).bit_count() >= 3 and not clubs >> (_TC + 1):
            wanted.append(_TC)
    if choices >> _AH & 1 and (hand & _LOW_HEARTS).bit_count() >= 2:
        wanted.append(_AH)
    return wanted[:max(0, limit)]


def choose_discard_cards(t: Table, hand: int, count: int, played: int = 0) -> list[int]:
    """``kitty_exchange``: the ``count`` cards of ``hand`` (the kitty in it) to discard face down to
    this seat's own tricks, the most urgent first. A discarded card is taken for sure, so penalty
    cards go last (only when the hand has too few others, the cheapest first; the bonus card never
    before them); among
    the others, the ones that take tricks: AS/KS while QS is out, then high cards, sooner in a
    short suit."""
    if count <= 0:
        return []
    qs_counts = t.values[QS] > 0
    outstanding = t.deck_mask & ~played & ~hand
    qs_out = qs_counts and bool(outstanding & QS_BIT)
    low_spades = (hand & _BELOW_QS).bit_count()
    keep = t.penalty_mask | t.bonus_bit

    def danger(c: int) -> float:
        bit = 1 << c
        if bit & KS_AS_BITS and qs_out:
            return 80.0 + RANK_OF[c] - (10 if low_spades >= 4 else 0)
        length = (hand & SUIT_MASK_OF[c]).bit_count()
        short = 6 if length == 1 else 3 if length == 2 else 0
        return 2.0 * RANK_OF[c] + short

    def order(c: int) -> tuple[int, int, float, int]:
        bit = 1 << c
        rank = 2 if bit & t.bonus_bit else 1 if bit & keep else 0
        return rank, t.values[c] if rank == 1 else 0, -danger(c), -c  # the cheapest penalty card first

    return sorted(indices_of(hand), key=order)[:count]


# -- the moon choice ------------------------------------------------------------------------------


def _moon_outcome(view: BotView, scoring: str) -> GameState:
    """The state after this seat's moon is scored ``scoring`` (``old`` or ``new``), worked out by the
    engine itself (hand scores with the bonus card, exact reset, end of game, ties) from what the
    whole table knows at the moon choice."""
    return GameState.at_moon_choice(
        view.rules, shooter=view.seat, kind=view.shooter_kind or "moon", hand_no=view.hand_no,
        dealer=view.dealer, pass_direction=view.pass_direction, leader=view.leader,
        tricks_played=view.tricks_played, hearts_broken=view.hearts_broken,
        taken=[view.taken_cards(s) for s in range(view.players)], points=view.points, tricks_won=view.tricks_won,
        totals=view.totals, **_charges_arg(view),
    ).choose_moon(view.seat, scoring)


def _charges_arg(view: BotView) -> dict[str, Any]:
    """Turbo: the hand's charges (public at a moon choice), so the moon is scored with charged values."""
    if not view.charges:
        return {}
    return {"charges": [cards_of(m or 0) for m in view.charges]}


def choose_moon_scoring(view: BotView) -> str:
    """``old`` (every other seat takes M) or ``new`` (the shooter takes −M).

    Both move the shooter M points against every other seat, so what matters is the end of the game.
    The engine scores each choice (so the bonus card, ``exact_target_reset``, ``end_after_hands`` and
    ``tie`` count exactly as they will): a choice that ends the game with the shooter the sole winner
    is best, then a shared win (``tie=share``), then the game going on (with ``tie=play_on`` a tie
    for the win is another hand), and a choice that ends it with the shooter not winning is worst.
    When the game goes on either way, the shooter best placed afterwards wins the comparison, and
    between equal places old (which brings the end nearer) is taken when the shooter leads or shares
    the lead, new (which keeps the end away) when it trails.

    With a partnership (a team slam, or a moon in ``individual`` mode) the shooter is judged with its
    partner: the team's totals (team mode) or the partners' sums (individual mode) against the other
    team's, and a win is the team's (RULES.md §6.1).
    """
    seat = view.seat
    sign = 1 if view.table.lowest_wins else -1
    teams = view.teams

    def rank(scoring: str) -> tuple[int, int]:
        after = _moon_outcome(view, scoring)
        if teams:
            mine = view.side(seat)
            totals = after.team_totals
            others = [x for side, x in enumerate(totals) if side != mine]
            me = totals[mine]
            winning_sides = {view.side(s) for s in after.winners}
            sole = len(winning_sides) == 1
            won = mine in winning_sides
        else:
            totals = after.totals
            others = [x for s, x in enumerate(totals) if s != seat]
            me = totals[seat]
            sole = len(after.winners) == 1
            won = seat in after.winners
        if after.phase == OVER:
            outcome = 0 if not won else 3 if sole else 2
        else:
            outcome = 1
        # How far ahead of the best other seat (or team) the shooter is (negative: behind).
        margin = min(sign * (x - me) for x in others)
        return outcome, margin

    old, new = rank("old"), rank("new")
    if old != new:
        return "old" if old > new else "new"
    return "old" if old[1] >= 0 else "new"


# -- the bot ----------------------------------------------------------------------------------------


class HeuristicBot:
    """Rules of thumb (see the module docstring); deterministic, so ``seed`` is accepted and unused."""

    name = "heuristic"

    def __init__(self, seed: Any = None) -> None:
        self.seed = seed

    def choose_pass(self, view: BotView | Mapping[str, Any]) -> list[str]:
        v = as_bot_view(view)
        return [CARD_NAMES[c] for c in pass_cards_for(v)]

    def choose_play(self, view: BotView | Mapping[str, Any]) -> str:
        v = as_bot_view(view)
        if not v.legal:
            raise ValueError(f"seat {v.seat} has no card to play now (phase {v.phase})")
        return CARD_NAMES[card_for(v)]

    def choose_moon(self, view: BotView | Mapping[str, Any]) -> str:
        return choose_moon_scoring(as_bot_view(view))

    def choose_discard(self, view: BotView | Mapping[str, Any]) -> list[str]:
        v = as_bot_view(view)
        return [CARD_NAMES[c] for c in discard_cards_for(v)]

    def choose_call(self, view: BotView | Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
        return choose_call(as_bot_view(view))

    def choose_decline(self, view: BotView | Mapping[str, Any]) -> bool:
        return decline_for(as_bot_view(view))

    def choose_charge(self, view: BotView | Mapping[str, Any]) -> list[str]:
        return [CARD_NAMES[c] for c in charge_cards_for(as_bot_view(view))]


def charge_cards_for(v: BotView) -> list[int]:
    """Turbo: the heuristic's charge from a view (phase ``charge``; ``[]`` when it has no choice)."""
    return choose_charge_cards(v.table, v.hand, v.charge_choices, v.charge_limit)


def pass_cards_for(v: BotView) -> list[int]:
    """The heuristic's pass from a view: to the partner (``pass_to_partner``) or as usual."""
    count = v.table.pass_count
    if v.decks == 2:
        return choose_pass_cards2(v.table, v.hand, v.doubles, count)
    if v.partner is not None and set(v.pass_targets_of_a_pass(count)) == {v.partner}:
        return choose_partner_pass_cards(v.table, v.hand, count)
    return choose_pass_cards(v.table, v.hand, count)


def decline_for(v: BotView) -> bool:
    """``pass_optional``: decline when declining is allowed and the hand is safe to keep."""
    return v.may_decline and hand_is_safe(v.table, v.hand)


def card_for(v: BotView) -> int:
    """The heuristic's card from a view (the partner taken into account)."""
    partner = -1 if v.partner is None else v.partner
    team = v.rules.partnership == "team"
    if v.decks == 2:
        return choose_card(v.table, v.seat, v.hand, v.legal, v.trick, v.leader, v.played, v.points, partner, team,
                           v.doubles, v.played2, v.carried_value)
    return choose_card(v.table, v.seat, v.hand, v.legal, v.trick, v.leader, v.played, v.points, partner, team)


def discard_cards_for(v: BotView) -> list[int]:
    """The heuristic's ``kitty_exchange`` discard from a view: ``v.discard_count`` cards of its hand."""
    count = v.discard_count or v.kitty_size
    if v.hand.bit_count() < count:
        raise ValueError(f"seat {v.seat} has {v.hand.bit_count()} cards, cannot discard {count}")
    return choose_discard_cards(v.table, v.hand, count, v.played)


__all__ = ["HeuristicBot", "choose_card", "choose_pass_cards", "choose_pass_cards2", "choose_partner_pass_cards",
           "choose_discard_cards",
           "choose_moon_scoring", "moon_threat", "threat_seats", "partners_of", "pass_cards_for", "card_for",
           "discard_cards_for", "hand_is_safe", "choose_call", "decline_for", "choose_charge_cards",
           "charge_cards_for"]
