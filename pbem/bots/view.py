"""What a bot may know when it decides: one seat's knowledge of a game, as card masks.

A bot must decide from what its seat may know, never from other seats' hidden cards. A
:class:`BotView` is built from a :class:`~pbem.engine.GameState` by reading only the seat's own hand,
its own pass, what it received, and what the whole table has seen (every card played, who took what,
the totals). Bots read masks (see :mod:`pbem.engine.cards`) because their search runs on them.

Partnership and kitty (RULES.md §6.1, §6.2): the view names the seat's partner and the teams, the
kitty's size and who took it. The kitty's cards are in the view only of the seat that took it (and,
with ``kitty_exchange``, the cards it discarded only in its own view): every other seat's view holds
the taker's trick cards and points without them, so no bot can learn what it must not.

Passing variants (RULES.md §6.3): the view says whether this seat may decline (``may_decline``) and
whether it did (``declined``: it then received nothing, since forwarded cards pass it unseen), the
hand's public call (``pass_call``) and, for the dealer in phase ``call``, the legal calls. After a
``mix`` the view holds what this seat got back (``received``) and nothing of where its own passed
cards went; the cards being mixed are in no seat's view.

Turbo and Booster Nines (RULES.md §6.4, §6.5): during the ``charge`` phase the view holds this seat's
own charge only (``charges``: the others are ``None`` until every seat has decided) and its choices
(``charge_choices``); once the charges are revealed every seat's is public, and ``table`` is the
hand's table with the charged values (QS 26, every heart doubled, the bonus doubled) so every bot
values cards as the engine scores them. A boosted trick holds 2n cards (round 2 from the leader
again); the view says whether the trick on the table boosts and which suits were led (a charged
card's first trick of its suit).

Cancellation (RULES.md §6.6): with two decks a card is in play twice. The masks keep one bit per card
(``hand``: the cards held at least once, as the engine's ``hand_mask``), and a second mask says which
are there twice: ``doubles`` (held twice), ``taken2`` (by seat, taken twice). ``carried`` holds the
cancelled tricks' cards lying on the table (in play order, public), ``played``/``played2`` every
card played at least once / twice (the carried ones included), ``unseen``/``unseen2`` the cards of
which at least one copy / both copies are out of this seat's sight. The one-deck view never fills
them (``decks`` 1: ``doubles`` 0, ``taken2`` and ``carried`` empty).

Why the finished tricks travel with the view: an engine state keeps only the last finished trick, but
inference needs every one (a seat that did not follow suit is void in it). Callers that have the move
log give the tricks (``from_moves``, or ``from_state(..., tricks=...)``); without them the view holds
the last trick only and says so (``tricks_complete``), and bots infer less.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from pbem.engine import CALL, CHARGE, DISCARD, Deal, GameState, Move, PlayCard, Rules, apply, new_game
from pbem.engine.cards import CARD_INDEX, CARD_NAMES, FULL_DECK, SUIT_MASK, SUITS, cards_of, indices_of, mask_of
from pbem.engine.rules import Table

#: A finished trick as a seat saw it: (leader, card indices in play order).
SeenTrick = tuple[int, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class BotView:
    """One seat's knowledge, at one moment of a hand. Masks are sets of card indices."""

    rules: Rules
    seat: int
    phase: str
    hand_no: int
    dealer: int
    pass_direction: str
    hand: int  # the seat's cards now
    legal: int  # the seat's legal cards when it is to play, else 0
    to_move: int
    passed: tuple[int, ...] | None  # the cards this seat passed, in order
    received: int  # the cards this seat received (0 until every seat has passed)
    trick: tuple[int, ...]  # the trick on the table, in play order from ``leader``
    leader: int
    tricks_played: int
    hearts_broken: bool
    tricks: tuple[SeenTrick, ...]  # finished tricks of this hand, oldest first
    tricks_complete: bool  # whether ``tricks`` holds every finished trick of the hand
    taken: tuple[int, ...]  # by seat, the cards in its tricks this hand
    points: tuple[int, ...]  # by seat, penalty points taken this hand
    tricks_won: tuple[int, ...]
    totals: tuple[int, ...]
    shooter_kind: str | None  # "moon" or "sun" when this seat must choose how its moon is scored
    rules_assumed: bool = False  # the rules were not given (a bare seat_view dict): standard assumed
    # -- §6.1 partnership --
    teams: tuple[tuple[int, ...], ...] = ()  # ((0, 2), (1, 3)) with a partnership, else ()
    partner: int | None = None  # this seat's partner, None without a partnership
    team_totals: tuple[int, ...] = ()  # by team (team mode: the team's total; individual: the sum)
    # -- §6.2 kitty --
    kitty_size: int = 0
    kitty_taker: int | None = None  # the seat that took the kitty, None while it lies on the table
    kitty: tuple[int, ...] = ()  # the kitty's cards, only when this seat took it
    kitty_trick: int = 0  # the (1-based) trick after which the kitty was taken; 0 if not (or unknown)
    discard_count: int = 0  # phase "discard": how many cards this seat discards
    discarded: tuple[int, ...] = ()  # kitty_exchange: the cards this seat (the taker) discarded
    kitty_known: bool = True  # False: a bare seat_view dict that did not say where the kitty is
    # -- §6.3 passing variants --
    may_decline: bool = False  # pass_optional: this seat, to pass, may decline (not on a mix hand)
    declined: bool = False  # this seat declined this hand's pass (it received nothing)
    #: dealer_calls_pass: this hand's call, ``(direction, count)`` pairs (public), ``()`` without one
    pass_call: tuple[tuple[str, int], ...] = ()
    #: phase "call", the dealer of the coming hand only: the legal calls, and the cycle's (the default)
    call_choices: tuple[tuple[tuple[str, int], ...], ...] = ()
    default_call: tuple[tuple[str, int], ...] = ()
    # -- §6.4 Turbo, §6.5 Booster Nines --
    #: by seat, the mask of the cards it charged this hand; ``None`` while undecided, or (phase
    #: ``charge``) another seat's, hidden until every seat has decided; ``()`` without turbo
    charges: tuple[int | None, ...] = ()
    charged: int = 0  # every card charged this hand, once revealed (public)
    charge_choices: int = 0  # phase "charge", this seat still to decide: the chargeable cards it holds
    charge_limit: int = 4
    led_suits: int = 0  # the union of the suit masks of the suits led in this hand's finished tricks
    trick_boosted: bool = False  # Booster Nines: the trick on the table boosts (2n cards)
    boost_round: bool = False  # Booster Nines: the trick on the table is in its second round
    # -- §6.6 Cancellation (two decks) --
    decks: int = 1
    doubles: int = 0  # the cards this seat holds twice (a subset of ``hand``)
    taken2: tuple[int, ...] = ()  # by seat, the cards it has taken twice (two decks; else ())
    carried: tuple[int, ...] = ()  # the cancelled tricks' cards on the table, in play order

    # -- derived knowledge -------------------------------------------------------------------------

    @property
    def table(self) -> Table:
        """The hand's table: the rules', with Turbo's charged values once the charges are revealed."""
        return _table(self.rules, self.charged)

    @property
    def charges_revealed(self) -> bool:
        """Turbo: every seat has decided its charge this hand, and the table has been shown them."""
        return bool(self.charges) and None not in self.charges

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def played(self) -> int:
        """Every card played this hand, the trick on the table included (two decks: at least one copy
        played, the carried cards included)."""
        m = 0
        for taken in self.taken:
            m |= taken
        for c in self.trick:
            m |= 1 << c
        for c in self.carried:
            m |= 1 << c
        return m

    @property
    def played2(self) -> int:
        """Two decks (RULES.md §6.6): the cards both copies of which have been played this hand (in
        tricks taken, on the trick on the table, or carried); 0 with one deck."""
        if self.decks == 1:
            return 0
        once = twice = 0
        for m, m2 in zip(self.taken, self.taken2):
            twice |= m2 | once & m
            once |= m
        for c in self.trick + self.carried:
            bit = 1 << c
            twice |= once & bit
            once |= bit
        return twice

    @property
    def unseen(self) -> int:
        """The cards in play this seat has not seen: in the other seats' hands, and in the kitty
        (on the table, or hidden in its taker's tricks: its cards, or the taker's discards). Two
        decks: the cards at least one copy of which this seat has not seen."""
        if self.decks == 1:
            return self.table.deck_mask & ~self.hand & ~self.played & FULL_DECK
        played = self.played
        seen2 = self.doubles | self.played2 | self.hand & played
        return self.table.deck_mask & ~seen2 & FULL_DECK

    @property
    def unseen2(self) -> int:
        """Two decks: the cards neither copy of which this seat has seen (0 with one deck)."""
        if self.decks == 1:
            return 0
        return self.table.deck_mask & ~self.hand & ~self.played & FULL_DECK

    @property
    def hand_count(self) -> int:
        """How many cards this seat holds (a card held twice counted twice)."""
        return self.hand.bit_count() + self.doubles.bit_count()

    def hand_copies(self) -> list[int]:
        """The cards held, a card held twice listed twice (ascending; one deck: ``indices_of(hand)``)."""
        if not self.doubles:
            return indices_of(self.hand)
        return sorted(indices_of(self.hand) + indices_of(self.doubles))

    def taken_cards(self, seat: int) -> tuple[str, ...]:
        """The cards ``seat`` has taken as this seat may know them, a card taken twice named twice."""
        if self.decks == 1:
            return cards_of(self.taken[seat])
        return _names(self.taken[seat], self.taken2[seat])

    @property
    def carried_tricks(self) -> int:
        """Cancellation: how many cancelled tricks lie on the table (every finished trick is in some
        seat's tricks_won, or carried)."""
        return self.tricks_played - sum(self.tricks_won) if self.decks == 2 else 0

    @property
    def carried_value(self) -> int:
        """Cancellation: the penalty points of the carried cards (they go to the next trick's winner)."""
        values = self.table.values
        return sum(values[c] for c in self.carried)

    @property
    def last_winner(self) -> int:
        """Cancellation: the seat that won the latest trick with a winner this hand (the last trick
        goes to it if it has none, RULES.md §6.6), -1 before any: the leader leads again after a
        cancelled trick, so once some trick had a winner, the leader is that winner."""
        return self.leader if sum(self.tricks_won) else -1

    @property
    def kitty_mask(self) -> int:
        m = 0
        for c in self.kitty:
            m |= 1 << c
        return m

    @property
    def hidden_kitty(self) -> int:
        """How many cards of the kitty (or of the taker's discards) this seat cannot see: on the table,
        or in another seat's tricks."""
        if not self.kitty_size or self.kitty_taker == self.seat:
            return 0
        if self.kitty_taker is not None and self.phase == "discard":
            return 0  # the kitty is in the taker's hand for now
        return self.kitty_size

    @property
    def exchanged(self) -> bool:
        """``kitty_exchange``: the taker has added the kitty to its hand and discarded."""
        return bool(self.kitty_size and self.rules_kitty_exchange and self.kitty_taker is not None
                    and self.phase != "discard")

    @property
    def rules_kitty_exchange(self) -> bool:
        return self.rules.kitty_exchange

    def side(self, seat: int) -> int:
        """What a seat is judged with: its team (0 or 1) with a partnership, else the seat itself."""
        if not self.teams:
            return seat
        return 0 if seat in self.teams[0] else 1

    def cards_held(self, seat: int) -> int:
        """How many cards ``seat`` holds now. During play every seat plays one card per round of a
        trick (two rounds in a boosted one, RULES.md §6.5), so every hand holds what this seat's does,
        less the cards it has put on the trick on the table that this seat has not."""
        held = self.hand.bit_count() + self.doubles.bit_count()
        if self.phase == "discard" and self.seat == self.kitty_taker:
            held -= self.kitty_size
        held += self._on_table(self.seat) - self._on_table(seat)
        if self.phase == "discard" and seat == self.kitty_taker:
            held += self.kitty_size  # the kitty is in the taker's hand until it discards
        return held

    def _on_table(self, seat: int) -> int:
        """How many cards ``seat`` has played to the trick on the table (0, 1, or 2 in a boost round)."""
        n = self.players
        k = len(self.trick)
        first = (seat - self.leader) % n
        return 0 if first >= k else 1 + (k - 1 - first) // n

    def packets(self) -> tuple[tuple[int, int], ...]:
        """This hand's pass as packets ``(offset clockwise, count)``: one for left/right/across, one per
        other seat for scatter, one per direction of a called split (RULES.md §6.3: the first count of
        cards to the first direction, and so on); ``()`` for hold and mix (the mixed cards go anywhere)."""
        n = self.players
        count = self.table.pass_count
        direction = self.pass_direction
        steps = {"left": 1, "right": n - 1, "across": n // 2}
        if direction == "scatter":
            k = count // (n - 1)
            return tuple((j, k) for j in range(1, n))
        if direction == "split":
            return tuple((steps[d], c) for d, c in self.pass_call if d in steps)
        if direction in steps:
            return ((steps[direction], count),)
        return ()

    @property
    def targets_known(self) -> bool:
        """Whether the seat each passed card went to is known: not after a mix, nor with
        ``pass_optional`` (a packet goes on through the decliners, and who declined is not told)."""
        return self.pass_direction != "mix" and not self.rules.pass_optional

    def pass_targets(self) -> tuple[int, ...]:
        """The seat each card this seat passed went toward (same order as ``passed``): its first
        receiver, were nobody to decline (see ``targets_known``)."""
        if not self.passed:
            return ()
        return self._targets(len(self.passed))

    def pass_targets_of_a_pass(self, count: int) -> tuple[int, ...]:
        """The seat that will receive each of ``count`` cards passed this hand (before passing)."""
        if not count:
            return ()
        return self._targets(count)

    def _targets(self, count: int) -> tuple[int, ...]:
        out: list[int] = []
        for offset, k in self.packets():
            out += [(self.seat + offset) % self.players] * k
        return tuple(out[:count])

    @property
    def passed_mask(self) -> int:
        m = 0
        for c in self.passed or ():
            m |= 1 << c
        return m

    def hand_cards(self) -> tuple[str, ...]:
        return cards_of(self.hand)

    def legal_cards(self) -> tuple[str, ...]:
        return cards_of(self.legal)

    # -- making views ------------------------------------------------------------------------------

    @classmethod
    def from_state(cls, state: GameState, seat: int, tricks: Sequence[SeenTrick] | None = None) -> "BotView":
        """The view of ``seat``. ``tricks``: the finished tricks of this hand, oldest first (from the
        move log); without them only the last finished trick is known.

        Reads only this seat's hand and pass and what the table has seen.
        """
        n = state.players
        done = state.tricks_played
        if tricks is not None:
            seen = tuple((leader, tuple(cards)) for leader, cards in tricks)
            if len(seen) != done:
                raise ValueError(f"{len(seen)} finished tricks given, the hand has {done}")
            complete = True
        else:
            lt = state.last_trick
            seen = () if lt is None or not done else ((lt[0], tuple(lt[1])),)
            complete = len(seen) == done
        shooter = state.shooter
        rules = state.rules
        kitty = _kitty_of(state, seat)
        taken = tuple(state.taken)
        points = tuple(state.points)
        charges, charged = _charges_of(state, seat)
        taken2: tuple[int, ...] = ()
        two = state.decks == 2
        if two:  # RULES.md §6.6: the cards taken with their copies, the face-down kitty left out
            hide = kitty.taker is not None and kitty.taker != seat
            pairs = [_copies(names) for names in (state.public_taken_cards() if hide else state.taken_cards())]
            taken = tuple(once for once, _ in pairs)
            taken2 = tuple(twice for _, twice in pairs)
            points = tuple(state.public_points() if hide else state.points)
        elif kitty.hidden:  # another seat's tricks hold cards this seat must not see
            t = _table(rules, charged)
            taker = kitty.taker
            taken = tuple(m & ~kitty.hidden if s == taker else m for s, m in enumerate(taken))
            lost = sum(t.values[c] for c in range(52) if kitty.hidden >> c & 1)
            points = tuple(p - lost if s == taker else p for s, p in enumerate(points))
        teams = tuple(tuple(team) for team in rules.teams)
        calling = state.phase == CALL and state.next_dealer == seat
        return cls(
            rules=rules,
            seat=seat,
            phase=state.phase,
            hand_no=state.hand_no,
            dealer=state.dealer,
            pass_direction=state.pass_direction,
            hand=state.hand_mask(seat),
            legal=state.legal_mask() if state.phase == "play" and state.to_move == seat else 0,
            to_move=state.to_move,
            passed=state.passes[seat] if 0 <= seat < n and state.passes else None,
            received=state.received[seat] if state.phase != "pass" else 0,
            trick=tuple(state.trick),
            leader=state.leader,
            tricks_played=done,
            hearts_broken=state.hearts_broken,
            tricks=seen,
            tricks_complete=complete,
            taken=taken,
            points=points,
            tricks_won=tuple(state.tricks_won),
            totals=tuple(state.totals),
            shooter_kind=shooter[1] if shooter is not None and shooter[0] == seat else None,
            teams=teams,
            partner=_partner(teams, seat),
            team_totals=tuple(state.team_totals),
            kitty_size=kitty.size,
            kitty_taker=kitty.taker,
            kitty=kitty.own,
            kitty_trick=kitty.trick,
            discard_count=kitty.discard_count,
            discarded=kitty.discarded,
            may_decline=state.may_decline and state.passes[seat] is None,
            declined=bool(state.passes) and state.passes[seat] is not None and not state.passes[seat],
            pass_call=tuple(state.pass_call),
            call_choices=state.call_choices() if calling else (),
            default_call=state.default_call() if calling else (),
            charges=charges,
            charged=charged,
            charge_choices=mask_of(state.charge_choices(seat)) if state.phase == CHARGE else 0,
            charge_limit=rules.charge_limit,
            led_suits=_led_mask(state.suits_led),
            trick_boosted=state.trick_boosted,
            boost_round=state.boost_round,
            **({"decks": 2, "doubles": state.doubles(seat), "taken2": taken2,
                "carried": tuple(CARD_INDEX[c] for c in state.carried)} if two else {}),
        )

    @classmethod
    def from_moves(cls, rules: Rules, moves: Iterable[Move], seat: int) -> "BotView":
        """The view of ``seat`` after replaying a game's move log (every finished trick known)."""
        state = new_game(rules)
        tricks: list[SeenTrick] = []
        for move in moves:
            state, _ = apply(state, move)
            if isinstance(move, Deal):
                tricks = []
            elif isinstance(move, PlayCard) and not state.trick:  # that card finished a trick
                leader, cards, _winner, _points = state.last_trick
                tricks.append((leader, tuple(cards)))
        return cls.from_state(state, seat, tricks)

    @classmethod
    def from_seat_view(cls, view: Mapping[str, Any], rules: Rules | Mapping[str, Any] | None = None) -> "BotView":
        """A :class:`BotView` from the engine's ``seat_view`` dict.

        That dict does not carry the rules: give them, or put them under ``view["rules"]``; without
        either the standard rules for the view's player count are assumed (legal cards still come
        from the view, so play stays legal, but card values may be wrong). Prefer ``from_state``.
        """
        rules = rules if rules is not None else view.get("rules")
        assumed = rules is None
        if rules is None:
            rules = Rules.make("standard", players=view["players"], pass_count=view.get("pass_count", 3))
        elif not isinstance(rules, Rules):
            rules = Rules.from_dict(rules)
        lt = view.get("last_trick")
        done = view["tricks_played"]
        seen: tuple[SeenTrick, ...] = ()
        if lt is not None and done:
            seen = ((lt["leader"], tuple(CARD_INDEX[c] for _, c in lt["cards"])),)
        trick = view.get("trick") or []
        passed = view.get("passed")
        shooter_kind = view.get("moon_choice")
        teams = tuple(tuple(team) for team in rules.teams)
        kitty_size = rules.table.kitty_size
        own_kitty = view.get("kitty") or ()
        charges = tuple(None if c is None else mask_of(c) for c in view.get("charges") or ())
        charged = 0
        if view.get("charges_revealed"):
            for c in charges:
                charged |= c or 0
        return cls(
            rules=rules,
            seat=view["seat"],
            phase=view["phase"],
            hand_no=view["hand_no"],
            dealer=view["dealer"],
            pass_direction=view["pass_direction"],
            hand=mask_of(view["hand"]),
            legal=mask_of(view.get("legal") or ()),
            to_move=view["to_move"],
            passed=None if passed is None else tuple(CARD_INDEX[c] for c in passed),
            received=mask_of(view.get("received") or ()),
            trick=tuple(CARD_INDEX[c] for _, c in trick),
            leader=view["leader"],
            tricks_played=done,
            hearts_broken=view["hearts_broken"],
            tricks=seen,
            tricks_complete=len(seen) == done,
            taken=tuple(mask_of(t) for t in view["taken"]),
            points=tuple(view["points_taken"]),
            tricks_won=tuple(view["tricks_won"]),
            totals=tuple(view["totals"]),
            shooter_kind=shooter_kind,
            rules_assumed=assumed,
            teams=teams,
            partner=_partner(teams, view["seat"]),
            team_totals=tuple(view.get("team_totals") or ()),
            kitty_size=kitty_size,
            kitty_taker=view.get("kitty_taker"),
            kitty=tuple(CARD_INDEX[c] for c in own_kitty),
            kitty_trick=view.get("kitty_trick") or 0,
            discard_count=(view.get("discard_count") or 0) if view["phase"] == "discard" else 0,
            discarded=tuple(CARD_INDEX[c] for c in view.get("discarded") or ()),
            kitty_known=not kitty_size or "kitty_taker" in view,
            may_decline=bool(view.get("may_decline")),
            declined=bool(view.get("declined")),
            pass_call=_call(view.get("pass_call") or ()),
            call_choices=tuple(_call(c) for c in view.get("call_choices") or ()),
            default_call=_call(view.get("default_call") or ()),
            charges=charges,
            charged=charged,
            charge_choices=mask_of(view.get("charge_choices") or ()),
            charge_limit=view.get("charge_limit") or rules.charge_limit,
            led_suits=_led_mask(view.get("suits_led") or ""),
            trick_boosted=bool(view.get("trick_boosted")),
            boost_round=bool(view.get("boost_round")),
            **(_two_decks_of_dict(view) if (view.get("decks") or rules.decks) == 2 else {}),
        )


@dataclass(frozen=True, slots=True)
class _Kitty:
    size: int = 0
    taker: int | None = None
    own: tuple[int, ...] = ()  # the kitty's cards, for its taker only
    trick: int = 0
    discard_count: int = 0
    discarded: tuple[int, ...] = ()  # the taker's own discards, for the taker only
    hidden: int = 0  # cards in the taker's tricks that this seat must not see (mask)


def _copies(names: Iterable[str]) -> tuple[int, int]:
    """``(once, twice)`` masks of some card names, each named at most twice (two decks)."""
    once = twice = 0
    for c in names:
        bit = 1 << CARD_INDEX[c]
        twice |= once & bit
        once |= bit
    return once, twice


def _names(once: int, twice: int) -> tuple[str, ...]:
    """Canonical names of a multiset given as ``(once, twice)`` masks, a card held twice named twice."""
    out: list[str] = []
    for c in indices_of(once):
        out.append(CARD_NAMES[c])
        if twice >> c & 1:
            out.append(CARD_NAMES[c])
    return tuple(out)


def _two_decks_of_dict(view: Mapping[str, Any]) -> dict[str, Any]:
    """The two-deck fields of a view from the engine's ``seat_view`` dict (its lists carry copies)."""
    pairs = [_copies(t) for t in view["taken"]]
    return {
        "decks": 2,
        "doubles": _copies(view["hand"])[1],
        "taken2": tuple(twice for _, twice in pairs),
        "carried": tuple(CARD_INDEX[c] for c in view.get("carried") or ()),
    }


def _call(pairs: Iterable[Sequence[Any]]) -> tuple[tuple[str, int], ...]:
    return tuple((str(d), int(c)) for d, c in pairs)


def _table(rules: Rules, charged: int) -> Table:
    """The table a hand is played with: with Turbo's charged values once revealed (RULES.md §6.4), the
    engine's own derived table (the values the engine scores with), else the rules' table."""
    t = rules.table
    return t.charged(charged) if charged else t


def _charges_of(state: GameState, seat: int) -> tuple[tuple[int | None, ...], int]:
    """What ``seat`` may know of this hand's charges (RULES.md §6.4): by seat, the mask charged (during
    the charge phase only its own, the others ``None``: they are hidden until every seat decides), and
    the mask of every card charged once revealed."""
    charges = tuple(None if c is None else mask_of(c) for c in state.charges)
    if state.phase == CHARGE:
        charges = tuple(c if s == seat else None for s, c in enumerate(charges))
    return charges, mask_of(state.charged_cards)


def _led_mask(suits: str) -> int:
    """The suit letters led (``state.suits_led``) as the union of their suit masks."""
    m = 0
    for letter in suits:
        m |= SUIT_MASK[SUITS.index(letter)]
    return m


def _names_to_indices(cards: Iterable[Any]) -> tuple[int, ...]:
    return tuple(c if isinstance(c, int) else CARD_INDEX[c] for c in cards)


def _kitty_of(state: GameState, seat: int) -> _Kitty:
    """What ``seat`` may know of the kitty (RULES.md §6.2): its size and taker; its cards and the
    taker's discards only when ``seat`` is the taker; and the mask of the cards the taker's tricks
    hold that ``seat`` must not see."""
    t = state.rules.table
    size = t.kitty_size
    if not size:
        return _Kitty()
    taker = state.kitty_taker
    phase = state.phase
    discard_count = state.discard_count if phase == DISCARD and seat == taker else 0
    if taker is None:
        return _Kitty(size, None, discard_count=discard_count)
    kitty = _names_to_indices(state.kitty)
    exchange = t.kitty_exchange
    discards = _names_to_indices(state.discarded) if exchange else ()
    trick = state.kitty_trick or 0
    if seat == taker:
        return _Kitty(size, taker, kitty, trick, discard_count, discards)
    if exchange and phase == DISCARD:
        hidden = 0  # in the taker's hand, which no one else sees anyway
    elif exchange and discards:
        hidden = _mask(discards)
    else:  # the kitty joined the taker's tricks (with kitty_exchange: taken at the last trick)
        hidden = _mask(kitty)  # (two decks: a card the kitty holds twice, one bit)
    return _Kitty(size, taker, (), trick, 0, (), hidden)


def _mask(indices: Iterable[int]) -> int:
    m = 0
    for c in indices:
        m |= 1 << c
    return m


def _partner(teams: tuple[tuple[int, ...], ...], seat: int) -> int | None:
    for team in teams:
        if seat in team:
            others = [s for s in team if s != seat]
            return others[0] if others else None
    return None


def as_bot_view(view: "BotView | Mapping[str, Any]") -> BotView:
    """Bots accept a :class:`BotView` or the engine's ``seat_view`` dict."""
    if isinstance(view, BotView):
        return view
    return BotView.from_seat_view(view)


def bot_view(state: GameState, seat: int, tricks: Sequence[SeenTrick] | None = None) -> BotView:
    """The view a bot in ``seat`` decides from (see :meth:`BotView.from_state`)."""
    return BotView.from_state(state, seat, tricks)
