"""Cancellation Hearts: the game with two 52-card decks (RULES.md §6.6, §6.8).

With two decks a hand may hold both copies of a card, so the one-bit-per-card hand of
:mod:`pbem.engine.state` is not enough. :class:`TwoDeckState` keeps that representation for "which
cards a seat holds" (``_hands``: one bit per card held at least once, so the legal-card rules of the
one-deck game apply unchanged to the distinct cards) and adds, per hand, a second packed mask of the
cards held twice (``_Copies.twice``), and the same for the cards taken, the kitty and the cards
received. The one-deck game never pays for it: ``new_game`` makes this class only when
``rules.decks == 2``.

What differs from one deck, all in this module:

- the deal takes 104 cards, each twice; the leftovers (``104 % players``) form a kitty for the first
  trick's winner;
- the opening lead is unrestricted (hearts too); afterwards hearts must be broken as usual;
- two identical cards in one trick cancel each other for winning it: the highest card of the led suit
  that is not cancelled wins; if every card of the led suit is cancelled, the trick stays on the table
  (``TrickCancelled``), the same player leads again, and its cards go to the winner of the next trick
  (several in a row accumulate, the kitty with them); the last trick with no winner goes to the winner
  of the trick before it (and, when no trick of the hand had a winner, to its leader);
- a moon is every penalty card in play, both copies: M is both decks' values;
- naming a card plays (or passes) one copy; naming it twice passes both.

A carried pile and the tricks it came from count for the seat that takes it: its ``tricks_won`` grows by
each of those tricks, so ``sun`` and ``avoid_all_tricks_bonus`` read "took every trick" and "took no
trick" as in the one-deck game.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from . import events as ev
from .cards import BIT, CARD_BIT, CARD_INDEX, CARD_NAMES, FULL_DECK, SUIT_MASK_OF, indices_of
from .errors import IllegalMove, Reason
from .state import DEAL, PASS, PLAY, TWO_DECK_STATE, GameState
from .trick_rules import breaks_hearts

_new_object = object.__new__


class _Copies(NamedTuple):
    """The second copies of a hand with two decks (each mask a subset of its one-bit counterpart)."""

    twice: int  # packed by seat (bit 52*s): the cards a seat holds two of
    taken2: int  # packed by seat: the cards a seat has taken both copies of
    kitty2: int  # the cards the kitty holds two of
    received2: tuple[int, ...]  # by seat: the cards passed to it twice
    carried: tuple[int, ...]  # card indices of the cancelled tricks on the table, in play order
    carried_tricks: int  # how many cancelled tricks those are
    last_winner: int  # the seat that won the latest trick with a winner this hand, -1 before
    last_carried: tuple[int, ...] = ()  # the carried cards the last finished trick took with it
    last_no_winner: bool = False  # the last finished trick was the hand's last and had no winner


_NO_COPIES = _Copies(0, 0, 0, (), (), 0, -1)


def _names(once: int, twice: int) -> tuple[str, ...]:
    """The canonical names of a multiset of cards (``once``: held at least once, ``twice``: two), in
    canonical order, a card held twice named twice."""
    out: list[str] = []
    for i in indices_of(once):
        out.append(CARD_NAMES[i])
        if twice >> i & 1:
            out.append(CARD_NAMES[i])
    return tuple(out)


def _multiset(indices: Sequence[int]) -> tuple[int, int]:
    """``(once, twice)`` masks of some card indices, each present at most twice."""
    once = twice = 0
    for i in indices:
        bit = BIT[i]
        if once & bit:
            twice |= bit
        else:
            once |= bit
    return once, twice


def _value(values: Sequence[int], once: int, twice: int) -> int:
    return sum(values[i] for i in indices_of(once)) + sum(values[i] for i in indices_of(twice))


class TwoDeckState(GameState):
    """A game of Hearts with two decks (RULES.md §6.6). The same public API as :class:`GameState`;
    ``hand(seat)`` names a card held twice twice, ``doubles(seat)`` is its mask, and ``carried`` the
    cancelled tricks' cards lying on the table."""

    __slots__ = ("_c",)

    @classmethod
    def new(cls, rules: Any) -> "TwoDeckState":
        s = super().new(rules)
        s._c = _NO_COPIES._replace(received2=(0,) * rules.players)
        return s

    def _copy(self) -> "TwoDeckState":
        s = super()._copy()
        s._c = self._c
        return s

    # -- queries -----------------------------------------------------------------------------------

    def doubles(self, seat: int) -> int:
        return self._c.twice >> 52 * seat & FULL_DECK

    def hand(self, seat: int) -> tuple[str, ...]:
        return _names(self._hands >> 52 * seat & FULL_DECK, self._c.twice >> 52 * seat & FULL_DECK)

    def taken_cards(self) -> tuple[tuple[str, ...], ...]:
        taken, taken2 = self._k.taken, self._c.taken2
        return tuple(_names(taken >> 52 * seat & FULL_DECK, taken2 >> 52 * seat & FULL_DECK)
                     for seat in range(self.t.players))

    def public_taken_cards(self) -> tuple[tuple[str, ...], ...]:
        cards = self.taken_cards()
        taker = self._h.v.kitty_taker
        if taker < 0:
            return cards
        pile = list(cards[taker])
        for c in self.kitty:  # the kitty lies face down in its taker's tricks (RULES.md §6.2, §6.6)
            pile.remove(c)
        return tuple(tuple(pile) if seat == taker else c for seat, c in enumerate(cards))

    def public_points(self) -> tuple[int, ...]:
        v = self._h.v
        if v.kitty_taker < 0:
            return self.points
        lost = _value(self.t.values, v.kitty, self._c.kitty2)
        return tuple(p - lost if seat == v.kitty_taker else p for seat, p in enumerate(self.points))

    def received_cards(self, seat: int) -> tuple[str, ...]:
        return _names(self._h.received[seat], self._c.received2[seat])

    @property
    def kitty(self) -> tuple[str, ...]:
        return _names(self._h.v.kitty, self._c.kitty2)

    @property
    def carried(self) -> tuple[str, ...]:
        return tuple(CARD_NAMES[i] for i in self._c.carried)

    @property
    def last_carried(self) -> tuple[str, ...]:
        return tuple(CARD_NAMES[i] for i in self._c.last_carried)

    @property
    def last_trick_cancelled(self) -> bool:
        return self._c.last_no_winner

    @property
    def carried_tricks(self) -> int:
        """How many cancelled tricks ``carried`` holds."""
        return self._c.carried_tricks

    def legal_mask(self) -> int:
        """As in the one-deck game, but the opening lead of a hand is unrestricted (RULES.md §6.8):
        hearts must be broken only after it."""
        if (self._legal < 0 and self.phase == PLAY and not self.trick and not self._k.tricks_played
                and not self.hearts_broken):
            opening = self._copy()
            opening.hearts_broken = True
            self._legal = GameState.legal_mask(opening)
        return GameState.legal_mask(self)

    def unplayed_can_change_score(self) -> bool:
        c = self._c
        if self.phase == PLAY and c.carried:
            if any(BIT[i] & self.t.scoring_mask for i in c.carried):
                return True  # the carried pile still goes to someone
            if self.t.sun and any(w + c.carried_tricks == self._k.tricks_played for w in self.tricks_won):
                return True  # a seat that takes the pile may still have taken every trick
        return super().unplayed_can_change_score()

    # -- moves ---------------------------------------------------------------------------------------

    def _deal(self, deck: Sequence[str], pass_direction: str | None, out: list | None) -> "TwoDeckState":
        if self.phase != DEAL:
            raise self._wrong_phase(DEAL)
        t = self.t
        n = t.players
        deck = tuple(deck)
        bad = next((c for c in deck if c not in CARD_INDEX), None)
        if bad is not None:
            raise IllegalMove(Reason.BAD_DECK, problem="unknown_card", card=str(bad))
        if len(deck) != t.deck_size or sorted(deck, key=CARD_INDEX.__getitem__) != list(t.deck_cards):
            raise IllegalMove(Reason.BAD_DECK, problem="not_the_cards_in_play", size=len(deck), expected=t.deck_size)
        hand_no = self.hand_no + 1
        direction = pass_direction or t.pass_direction(hand_no)
        if direction not in ("left", "right", "across", "hold") or (direction == "across" and n % 2):
            raise IllegalMove(Reason.BAD_DECK, problem="bad_pass_direction", pass_direction=direction)
        if direction != "hold" and not t.pass_count:
            raise IllegalMove(Reason.BAD_DECK, problem="passing_disabled", pass_direction=direction)
        dealer = (hand_no + n - 2) % n
        indices = [CARD_INDEX[c] for c in deck]
        k = t.kitty_size
        kitty, kitty2 = _multiset(indices[:k])  # the leftovers, first in the deck as with a kitty (§6.2)
        rest = indices[k:]
        packed = twice = 0
        for seat in range(n):
            once, two = _multiset(rest[(seat - dealer - 1) % n::n])
            packed |= once << 52 * seat
            twice |= two << 52 * seat
        zeros = (0,) * n
        h = self._h
        s = self._copy()
        # Two decks allow no team, call or charge (RULES.md §6.8): only the kitty's fields change.
        variant = h.v._replace(kitty=kitty, kitty_taker=-1, kitty_trick=0)
        s._h = h._replace(hand_no=hand_no, dealer=dealer, pass_direction=direction, deck=deck, passes=(None,) * n,
                          received=zeros, shooter=None, v=variant)
        s._k = self._k._replace(leader=-1, tricks_played=0, taken=0, points=0, tricks_won=0, last_trick=None)
        s._c = _Copies(twice, 0, kitty2, zeros, (), 0, -1)
        s._hands = packed
        s.trick = ()
        s.hearts_broken = False
        if out is not None:
            out.append(ev.HandDealt(hand_no, dealer, direction, ()))
        if direction == "hold":
            s._after_pass(out)
        else:
            s.phase = PASS
            s.to_move = -1
        return s

    def _pass(self, seat: int, cards: tuple[str, ...], out: list | None) -> "TwoDeckState":
        self._check_pass(seat, cards)
        once = self.hand_mask(seat)
        twice = self.doubles(seat)
        from_twice = from_once = 0
        chosen: list[int] = []
        missing: list[str] = []
        for c in cards:
            i = CARD_INDEX.get(c) if isinstance(c, str) else None
            if i is None:
                raise IllegalMove(Reason.UNKNOWN_CARD, text=str(c))
            bit = BIT[i]
            if twice & bit and not from_twice & bit:
                from_twice |= bit  # the first of two copies: one is left
            elif once & bit and not from_once & bit:
                from_once |= bit
            elif once & bit:
                raise IllegalMove(Reason.DUPLICATE_CARD, card=c)  # named more often than held
            else:
                missing.append(c)
            chosen.append(i)
        if missing:
            raise IllegalMove(Reason.CARD_NOT_IN_HAND, card=missing[0], cards=missing)
        s = self._copy()
        h = self._h
        passes = list(h.passes)
        passes[seat] = tuple(chosen)
        s._h = h._replace(passes=tuple(passes))
        s._hands = self._hands & ~(from_once << 52 * seat)
        s._c = self._c._replace(twice=self._c.twice & ~(from_twice << 52 * seat))
        if out is not None:
            out.append(ev.CardsPassed(seat))
        if None not in passes:
            s._exchange(out)
        return s

    def _exchange(self, out: list | None) -> None:
        """(On a fresh copy.) Every seat has passed: each packet joins the hand it goes to (a card
        the receiver already holds becomes its second copy)."""
        n = self.t.players
        h = self._h
        offset = {"left": 1, "right": n - 1, "across": n // 2}[h.pass_direction]
        received = [0] * n
        received2 = [0] * n
        hands, twice = self._hands, self._c.twice
        for seat, chosen in enumerate(h.passes):
            to = (seat + offset) % n
            once, two = _multiset(chosen)
            received[to], received2[to] = once, two
            held = hands >> 52 * to & FULL_DECK
            twice |= (two | once & held) << 52 * to
            hands |= once << 52 * to
        self._hands = hands
        self._h = h._replace(received=tuple(received))
        self._c = self._c._replace(twice=twice, received2=tuple(received2))
        if out is not None:
            out.append(ev.PassesExchanged(h.pass_direction, tuple(_names(r, r2) for r, r2 in zip(received, received2))))
        self._after_pass(out)

    def play(self, card: str, _events: list | None = None) -> "TwoDeckState":
        """The seat to move plays one copy of ``card``."""
        try:
            i = CARD_INDEX[card]
        except (KeyError, TypeError):
            if self.phase != PLAY:
                raise self._wrong_phase(PLAY) from None
            raise IllegalMove(Reason.UNKNOWN_CARD, text=str(card), legal=list(self.legal_cards())) from None
        out = _events
        bit = BIT[i]
        legal = self.legal_mask()
        if not legal & bit:
            if self.phase != PLAY:
                raise self._wrong_phase(PLAY)
            raise self._refusal(i, legal)
        t = self.t
        n = t.players
        seat = self.to_move
        c = self._c
        s = _new_object(TwoDeckState)
        s.t = t
        s.phase = PLAY
        s._legal = -1
        s._h = self._h
        seat_bit = bit << 52 * seat
        if c.twice & seat_bit:
            s._hands = self._hands
            c = c._replace(twice=c.twice ^ seat_bit)
        else:
            s._hands = self._hands ^ seat_bit
        k = self._k
        if out is not None:
            out.append(ev.CardPlayed(seat, CARD_NAMES[i], k.tricks_played + 1))
        if self.hearts_broken:
            s.hearts_broken = True
        elif breaks_hearts(t, i):
            s.hearts_broken = True
            if out is not None:
                out.append(ev.HeartsBroken(seat, CARD_NAMES[i]))
        else:
            s.hearts_broken = False
        trick = self.trick + (i,)
        if len(trick) < n:
            s.trick = trick
            s.to_move = seat + 1 if seat + 1 < n else 0
            s._k = k
            s._c = c
            return s
        s.trick = ()
        s._k = k
        s._award(trick, c, out)
        return s

    def _award(self, trick: tuple[int, ...], c: _Copies, out: list | None) -> None:
        """(On a fresh copy, ``trick`` complete.) RULES.md §6.6: identical cards cancel each other; the
        highest led-suit card left wins the trick and any carried pile, or the trick is carried."""
        t = self.t
        n = t.players
        k = self._k
        leader = k.leader
        played = k.tricks_played + 1
        names = tuple(CARD_NAMES[x] for x in trick)
        points = sum(map(t.values.__getitem__, trick))
        seen = twins = 0
        for x in trick:
            bit = BIT[x]
            twins |= seen & bit
            seen |= bit
        alive = seen & ~twins & SUIT_MASK_OF[trick[0]]
        last = played == t.hand_size
        if alive:
            winner = (leader + trick.index(alive.bit_length() - 1)) % n
        elif last:
            # RULES.md §6.6: the last trick with no winner goes to the winner of the trick before it
            # (when no trick had a winner this hand, to its leader).
            winner = c.last_winner if c.last_winner >= 0 else leader
        else:
            self._k = k._replace(tricks_played=played, last_trick=(leader, trick, -1, points))
            self._c = c._replace(carried=c.carried + trick, carried_tricks=c.carried_tricks + 1, last_carried=())
            self.to_move = leader  # the same player leads again
            if out is not None:
                out.append(ev.TrickCancelled(played, leader, names, points))
            return
        pile = trick + c.carried
        once, two = _multiset(pile)
        points += sum(map(t.values.__getitem__, c.carried))
        won = 1 + c.carried_tricks
        shift = 52 * winner
        taken = k.taken >> shift & FULL_DECK
        taken2 = c.taken2 | (two | once & taken) << shift
        taken_packed = k.taken | once << shift
        total = k.points + (points << 32 * winner)
        if out is not None:
            out.append(ev.TrickWon(played, leader, names, winner, points, False,
                                   tuple(CARD_NAMES[x] for x in c.carried), not alive))
        v = self._h.v
        if v.kitty_taker < 0 and t.kitty_size:
            # RULES.md §6.6: the leftovers go to the first trick's winner (with a carried first trick).
            kitty_value = _value(t.values, v.kitty, c.kitty2)
            held = taken_packed >> shift & FULL_DECK
            taken2 |= (c.kitty2 | v.kitty & held) << shift
            taken_packed |= v.kitty << shift
            total += kitty_value << 32 * winner
            self._h = self._h._replace(v=v._replace(kitty_taker=winner, kitty_trick=played))
            if out is not None:
                out.append(ev.KittyTaken(winner, played))
        self._k = k._replace(leader=winner, tricks_played=played, taken=taken_packed, points=total,
                             tricks_won=k.tricks_won + (won << 8 * winner), last_trick=(leader, trick, winner, points))
        self._c = c._replace(taken2=taken2, carried=(), carried_tricks=0, last_winner=winner, last_carried=c.carried,
                             last_no_winner=not alive)
        self.to_move = winner
        if last:
            self._end_hand(out)

    # -- scoring ---------------------------------------------------------------------------------

    def _took_every_penalty_card(self, seat: int) -> bool:
        pen = self.t.penalty_mask  # both copies of each (RULES.md §6.6: M is both decks' values)
        return self._c.taken2 >> 52 * seat & pen == pen

    def _bonus_copies(self, seat: int) -> int:
        bonus = self.t.bonus_bit
        return bool(self._k.taken >> 52 * seat & bonus) + bool(self._c.taken2 >> 52 * seat & bonus)

    # -- serialisation -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["decks"] = 2
        d["carried"] = list(self.carried)
        d["carried_tricks"] = self._c.carried_tricks
        d["last_winner"] = self._c.last_winner
        d["last_carried"] = list(self.last_carried)
        d["last_trick_cancelled"] = self._c.last_no_winner
        return d

    def _read_copies(self, d: dict[str, Any]) -> None:
        """The second copies from a snapshot whose lists name a card held twice twice."""
        n = self.t.players

        def twice(cards: Sequence[str]) -> int:
            return _multiset([CARD_INDEX[c] for c in cards])[1]

        self._c = _Copies(
            twice=sum(twice(h) << 52 * seat for seat, h in enumerate(d["hands"])),
            taken2=sum(twice(m) << 52 * seat for seat, m in enumerate(d["taken"])),
            kitty2=twice(d.get("kitty") or ()),
            received2=tuple(twice(r) for r in d["received"]) if d["received"] else (0,) * n,
            carried=tuple(CARD_INDEX[c] for c in d.get("carried") or ()),
            carried_tricks=int(d.get("carried_tricks") or 0),
            last_winner=int(d.get("last_winner", -1)),
            last_carried=tuple(CARD_INDEX[c] for c in d.get("last_carried") or ()),
            last_no_winner=bool(d.get("last_trick_cancelled", False)),
        )


TWO_DECK_STATE.append(TwoDeckState)
