"""The state of a whole game of Hearts, immutable, and the moves that change it.

A :class:`GameState` is never changed in place: ``deal``, ``pass_cards``, ``play`` and ``choose_moon``
return a new state, or raise :class:`~pbem.engine.errors.IllegalMove` and leave the old one as it was.
The life of a game::

    [call: the dealer calls the pass, with dealer_calls_pass] ─> deal
         ─> pass (every seat, in any order, or declines with pass_optional; skipped on a hold hand)
         ─> [mix: a mix hand's passed cards dealt back, chance like a deal]
         ─> [charge: Turbo, each seat holding a chargeable card charges some or none]
         ─> play (trick after trick; [discard: the kitty's taker, with kitty_exchange])
         ─> [moon: the shooter chooses, with moon=choice] ─> scored ─> [call] deal … ─> over

Chance is outside the engine: a hand starts from an explicit deck (``deal(deck)``), which the move log
records, so a game replays exactly.

Hands and taken cards are bit masks (see :mod:`pbem.engine.cards`); the public methods speak in
canonical card names.
"""

from __future__ import annotations

from operator import itemgetter as _itemgetter
from typing import Any, Iterable, NamedTuple, Sequence

from . import events as ev
from .cards import (
    CARD_INDEX,
    CARD_NAMES,
    CLUBS_MASK,
    FULL_DECK,
    HEARTS,
    QS,
    QS_BIT,
    SUIT_MASK,
    SUIT_MASK_OF,
    SUIT_OF,
    SUITS,
    BIT,
    CARD_BIT,
    SUIT_BITS,
    SUIT_TUPLES,
    cards_of,
)

_C, _D, _H, _S = SUIT_TUPLES
from .errors import IllegalMove, Reason
from .rules import CALL_DIRECTIONS, PASS_DIRECTIONS, Rules, Table
from .trick_rules import breaks_hearts, legal_of, plain_hand_points, trick_taken

DEAL, PASS, PLAY, MOON, OVER = "deal", "pass", "play", "moon", "over"
DISCARD = "discard"  # kitty_exchange: the kitty's taker discards (RULES.md §6.2)
CALL = "call"  # dealer_calls_pass: the coming hand's dealer calls its pass, before the deal (RULES.md §6.3)
MIX = "mix"  # a mix hand: every seat has put its cards in the middle; a chance node like DEAL (§6.3)
CHARGE = "charge"  # Turbo: every seat with a chargeable card decides its charge, after the pass (RULES.md §6.4)
PHASES = (CALL, DEAL, PASS, MIX, CHARGE, PLAY, DISCARD, MOON, OVER)
_NINE = 7  # the rank index of a nine (RULES.md §6.5)
MOON_CHOICES = ("old", "new", "safety")


class _Hand(NamedTuple):
    """What changes at most once a hand (or a pass): kept apart so a card play copies less."""

    rules: Rules
    hand_no: int  # 1-based; 0 before the first deal
    dealer: int
    pass_direction: str  # of this hand: left right across hold scatter
    deck: tuple[str, ...]  # this hand's deal, in deal order
    passes: tuple[tuple[int, ...] | None, ...]  # by seat: card indices passed (in order), or None
    received: tuple[int, ...]  # masks by seat, once the passes are exchanged
    totals: tuple[int, ...]
    history: tuple[tuple[tuple[int, ...], tuple[int, ...], "ev.Moon | None"], ...]  # (points, totals, moon)
    shooter: tuple[int, str] | None  # (seat, kind) awaiting the moon choice
    winners: tuple[int, ...]  # once OVER
    v: "_Variant"  # the §6 variants' state of this hand (_NO_VARIANT in the standard game)


class _Variant(NamedTuple):
    """What the §6 variants add to a hand; changed only at a trick's end or by a variant's move."""

    kitty: int  # mask of the kitty's cards (RULES.md §6.2)
    kitty_taker: int  # seat that took it, -1 while it lies on the table
    kitty_trick: int  # the trick at whose end it was taken, 0 before
    discarded: int  # kitty_exchange: mask of the taker's face-down discards
    team_last: tuple[int, int]  # team mode: the seat that won each team's latest trick, -1 before
    call: tuple[tuple[str, int], ...] = ()  # dealer_calls_pass: the call for this (or the coming) hand
    charges: tuple[int | None, ...] = ()  # Turbo: by seat, the mask charged, None while undecided
    charged: int = 0  # Turbo: the mask of every card charged, once revealed
    led: int = 0  # Turbo: the union of the suit masks of the suits led in finished tricks


_NO_VARIANT = _Variant(0, -1, 0, 0, (-1, -1))
#: The state class of a game with two decks (RULES.md §6.6): ``pbem.engine.two_decks`` builds on this
#: module and registers it here, so that ``new_game`` and ``GameState.from_dict`` make the right kind.
TWO_DECK_STATE: list[type["GameState"]] = []
#: ``passes[seat]`` of a seat that declined to pass (``pass_optional``, RULES.md §6.3).
DECLINED: tuple[int, ...] = ()


class _Tricks(NamedTuple):
    """What changes once a trick: who leads, what each seat has taken."""

    leader: int  # seat that led (or leads) the trick on the table
    tricks_played: int  # finished tricks this hand
    # Packed by seat, like the hands, so that finishing a trick is a few integer operations:
    taken: int  # the masks of the cards each seat took, seat s at bit 52*s
    points: int  # penalty points each seat took this hand (before any moon), seat s at bit 32*s
    tricks_won: int  # tricks each seat won, seat s at bit 8*s
    last_trick: tuple[int, tuple[int, ...], int, int] | None  # (leader, card indices, winner, points)


class GameState:
    """One moment of a game. Read its attributes; change it only through its move methods.

    Attributes (read-only): ``rules``, ``phase``, ``hand_no``, ``dealer``, ``pass_direction``,
    ``to_move`` (-1 outside the play phase), ``trick`` (card indices in play order; ``trick_cards()``
    names them), ``leader``, ``tricks_played``, ``hearts_broken``, ``taken``/``points``/``tricks_won``
    (by seat, this hand), ``last_trick``, ``totals``, ``history``, ``shooter``, ``winners``.
    """

    __slots__ = ("t", "phase", "_hands", "trick", "to_move", "hearts_broken", "_legal", "_h", "_k")
    # t: the rules' Table; _hands: every hand in one int (seat s's mask at bit 52*s, see hand_mask);
    # _legal: cached legal mask (-1: not worked out yet); _h: _Hand; _k: _Tricks.

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def new(cls, rules: Rules) -> "GameState":
        """A game before its first deal (with two decks, RULES.md §6.6, a ``TwoDeckState``)."""
        if rules.decks == 2 and cls is GameState:
            return TWO_DECK_STATE[0].new(rules)
        n = rules.players
        zeros = (0,) * n
        s = object.__new__(cls)
        s.t = rules.table
        s.phase = CALL if rules.table.dealer_calls else DEAL
        s._hands = 0
        s.trick = ()
        s.to_move = -1
        s.hearts_broken = False
        s._legal = -1
        s._h = _Hand(rules, 0, n - 1, "hold", (), (None,) * n, zeros, zeros, (), None, (), _NO_VARIANT)
        s._k = _Tricks(-1, 0, 0, 0, 0, None)
        return s

    def _copy(self) -> "GameState":
        s = _new_object(self.__class__)
        s.t = self.t
        s.phase = self.phase
        s._hands = self._hands
        s.trick = self.trick
        s.to_move = self.to_move
        s.hearts_broken = self.hearts_broken
        s._legal = -1
        s._h = self._h
        s._k = self._k
        return s

    # -- the slower-changing parts, as attributes -----------------------------------------------

    rules = property(lambda self: self._h.rules)
    hand_no = property(lambda self: self._h.hand_no)
    dealer = property(lambda self: self._h.dealer)
    pass_direction = property(lambda self: self._h.pass_direction)
    deck = property(lambda self: self._h.deck)
    passes = property(lambda self: self._h.passes)
    received = property(lambda self: self._h.received)
    totals = property(lambda self: self._h.totals)
    history = property(lambda self: self._h.history)
    shooter = property(lambda self: self._h.shooter)
    winners = property(lambda self: self._h.winners)
    leader = property(lambda self: self._k.leader)
    tricks_played = property(lambda self: self._k.tricks_played)
    @property
    def taken(self) -> tuple[int, ...]:
        """The mask of the cards each seat has taken this hand."""
        packed = self._k.taken
        return tuple([packed >> shift & FULL_DECK for shift in _SHIFTS[52][self.t.players]])

    @property
    def points(self) -> tuple[int, ...]:
        """Penalty points each seat has taken this hand (before any moon)."""
        packed = self._k.points
        return tuple([packed >> shift & 0xFFFFFFFF for shift in _SHIFTS[32][self.t.players]])

    @property
    def tricks_won(self) -> tuple[int, ...]:
        packed = self._k.tricks_won
        return tuple([packed >> shift & 0xFF for shift in _SHIFTS[8][self.t.players]])
    last_trick = property(lambda self: self._k.last_trick)

    # -- the §6 variants ------------------------------------------------------------------------

    @property
    def kitty(self) -> tuple[str, ...]:
        """The kitty's cards (RULES.md §6.2; ``()`` without one). Hidden information: a seat may be
        shown them only once it took the kitty (see ``seat_view``)."""
        return cards_of(self._h.v.kitty)

    @property
    def kitty_taker(self) -> int | None:
        """The seat that took the kitty this hand, or None while it lies on the table."""
        taker = self._h.v.kitty_taker
        return None if taker < 0 else taker

    @property
    def kitty_trick(self) -> int | None:
        """The trick at whose end the kitty was taken (1-based), or None while it lies."""
        return self._h.v.kitty_trick or None

    @property
    def discarded(self) -> tuple[str, ...]:
        """``kitty_exchange``: the cards the kitty's taker discarded face down to their tricks (they
        are in ``taken``/``points`` of the taker); ``()`` before the discard. Private to the taker."""
        return cards_of(self._h.v.discarded)

    kitty_discards = discarded

    @property
    def discard_count(self) -> int:
        """How many cards the kitty's taker discards (``kitty_exchange``: the kitty's size), else 0."""
        return self.t.kitty_size if self.t.kitty_exchange else 0

    def discard_choices(self) -> tuple[str, ...]:
        """DISCARD phase: the cards the taker may discard (any ``discard_count`` distinct ones)."""
        if self.phase != DISCARD:
            return ()
        return self.hand(self._h.v.kitty_taker)

    def moon_choices(self) -> tuple[str, ...]:
        """MOON phase: what the shooter may answer (``old``, ``new``, or ``safety``)."""
        return MOON_CHOICES if self.phase == MOON else ()

    def face_down_mask(self) -> int:
        """The cards in the kitty taker's tricks that no other seat has seen: the kitty (or, with
        ``kitty_exchange``, the discards) once taken; 0 otherwise."""
        v = self._h.v
        if v.kitty_taker < 0:
            return 0
        # With kitty_exchange the discards once made; before, the kitty is in the hand, not the tricks
        # (and when it was taken at the last trick, it joined the tricks itself).
        return (v.discarded or v.kitty) & self._k.taken >> 52 * v.kitty_taker & FULL_DECK

    def public_taken(self) -> tuple[int, ...]:
        """``taken`` as the whole table knows it: the face-down kitty cards left out."""
        hidden = ~self.face_down_mask()
        return tuple(m & hidden for m in self.taken)

    def public_points(self) -> tuple[int, ...]:
        """``points`` as the whole table knows it: the face-down kitty cards' points left out."""
        hidden = self.face_down_mask()
        if not hidden:
            return self.points
        values = self.t.values
        lost = sum(values[i] for i in range(52) if hidden >> i & 1)
        taker = self._h.v.kitty_taker
        return tuple(p - lost if seat == taker else p for seat, p in enumerate(self.points))

    # -- cards with their copies (RULES.md §6.6: two decks) ---------------------------------------

    @property
    def decks(self) -> int:
        """How many 52-card decks are in play: 1, or 2 (Cancellation, RULES.md §6.6)."""
        return self.t.decks

    def doubles(self, seat: int) -> int:
        """The mask of the cards ``seat`` holds two of (two decks, RULES.md §6.6); 0 with one deck.
        ``hand_mask`` has one bit per card held, whatever its copies."""
        return 0

    def taken_cards(self) -> tuple[tuple[str, ...], ...]:
        """By seat, the cards it has taken this hand, a card taken twice named twice (two decks)."""
        return tuple(cards_of(m) for m in self.taken)

    def public_taken_cards(self) -> tuple[tuple[str, ...], ...]:
        """``taken_cards`` as the whole table knows them: the face-down kitty cards left out."""
        return tuple(cards_of(m) for m in self.public_taken())

    def received_cards(self, seat: int) -> tuple[str, ...]:
        """The cards passed to ``seat`` this hand, once the passes are exchanged (a card received
        twice named twice)."""
        return cards_of(self._h.received[seat])

    @property
    def carried(self) -> tuple[str, ...]:
        """Cancellation (RULES.md §6.6): the cards of the cancelled tricks lying on the table, to go to
        the next trick's winner, in play order; ``()`` with one deck."""
        return ()

    @property
    def last_carried(self) -> tuple[str, ...]:
        """Cancellation (RULES.md §6.6): the carried cards that the last finished trick took with it
        (``last_trick``'s points count them); ``()`` otherwise, and with one deck."""
        return ()

    @property
    def last_trick_cancelled(self) -> bool:
        """Cancellation: the last finished trick was the hand's last and had no winner (every led-suit card
        cancelled): it went to ``last_trick``'s winner, who won the trick before it. False with one deck."""
        return False

    # -- RULES.md §6.3 passing variants ----------------------------------------------------------

    @property
    def next_dealer(self) -> int:
        """The dealer of the coming hand (between hands: the seat that calls with dealer_calls_pass)."""
        n = self.t.players
        return (self._h.hand_no + n - 1) % n

    @property
    def pass_call(self) -> tuple[tuple[str, int], ...]:
        """``dealer_calls_pass``: the call of the hand being dealt or played (``(direction, count)``
        pairs), ``()`` before the first call or without the option."""
        return self._h.v.call

    @property
    def declined(self) -> tuple[int, ...]:
        """``pass_optional``: the seats that declined this hand's pass. Private to each of them: the
        engine tells the table only that a seat has passed (``CardsPassed``)."""
        return tuple(s for s, p in enumerate(self._h.passes) if p is not None and not p)

    @property
    def may_decline(self) -> bool:
        """Whether a seat to pass may decline now (``pass_optional``, not on a ``mix`` hand)."""
        return self.phase == PASS and self.t.pass_optional and self._h.pass_direction != "mix"

    def call_choices(self) -> tuple[tuple[tuple[str, int], ...], ...]:
        """CALL phase: the legal calls, each a tuple of ``(direction, count)`` pairs with the counts
        summing to ``pass_count`` over left, right (and across with 4 or 6 players), in that order,
        listed from the most cards to the left down; then ``(("mix", pass_count),)``."""
        if self.phase != CALL:
            return ()
        return _calls(self.t.players, self.t.pass_count)

    def default_call(self) -> tuple[tuple[str, int], ...]:
        """CALL phase: the call made when the dealer does not answer by the deadline (RULES.md §6.8):
        the pass cycle's direction for the coming hand, ``(("hold", 0),)`` on a hold hand (legal only
        as this default), a scatter as its split; ``()`` outside the CALL phase."""
        if self.phase != CALL:
            return ()
        t = self.t
        direction = t.pass_direction(self._h.hand_no + 1)
        if direction == "hold":
            return (("hold", 0),)
        if direction == "scatter":
            k = t.pass_count // (t.players - 1)
            return _canonical_call({d: k for d in _offsets(t.players)})
        return ((direction, t.pass_count),)

    @property
    def cards_to_mix(self) -> tuple[str, ...]:
        """MIX phase: the cards to shuffle and deal back (every seat's pass and the kitty), in canonical
        order; ``()`` otherwise. Hidden from every seat."""
        if self.phase != MIX:
            return ()
        return cards_of(self._mix_mask())

    def _mix_mask(self) -> int:
        m = self._h.v.kitty
        for chosen in self._h.passes:
            for i in chosen or ():
                m |= 1 << i
        return m

    @property
    def team_totals(self) -> tuple[int, ...]:
        """By team (RULES.md §6.1): team mode the team's total, individual mode the partners' sum;
        ``()`` without a partnership."""
        t = self.t
        totals = self._h.totals
        if t.team:
            return (totals[0], totals[1])
        if t.individual:
            return (totals[0] + totals[2], totals[1] + totals[3])
        return ()

    # -- RULES.md §6.4 Turbo and §6.5 Booster Nines ------------------------------------------------

    @property
    def charge_limit(self) -> int:
        """Turbo: the most cards one seat may charge."""
        return self.t.charge_limit

    def seats_to_charge(self) -> tuple[int, ...]:
        """CHARGE phase: the seats still to decide their charge (a seat holding no chargeable card is
        never asked: it charged nothing)."""
        if self.phase != CHARGE:
            return ()
        return tuple(seat for seat, c in enumerate(self._h.v.charges) if c is None)

    def charge_choices(self, seat: int) -> tuple[str, ...]:
        """CHARGE phase: the chargeable cards ``seat`` holds, while it is still to decide; else ()."""
        if self.phase != CHARGE or self._h.v.charges[seat] is not None:
            return ()
        return cards_of(self.hand_mask(seat) & self.t.chargeable_mask)

    @property
    def charges(self) -> tuple[tuple[str, ...] | None, ...]:
        """Turbo: by seat, the cards it charged this hand, None while undecided (``()`` without turbo or
        before the charge phase). Hidden information during the CHARGE phase: a seat may be shown only
        its own (see ``seat_view``); public once ``charges_revealed``."""
        return tuple(None if c is None else cards_of(c) for c in self._h.v.charges)

    @property
    def charges_revealed(self) -> bool:
        """Turbo: every seat has decided its charge this hand (the table has been shown them)."""
        charges = self._h.v.charges
        return bool(charges) and None not in charges

    @property
    def charged_cards(self) -> tuple[str, ...]:
        """Turbo: every card charged this hand, once revealed (canonical order); else ()."""
        return cards_of(self._h.v.charged) if self.charges_revealed else ()

    @property
    def suits_led(self) -> str:
        """Turbo: the suits (letters) led in this hand's finished tricks."""
        led = self._h.v.led
        return "".join(SUITS[suit] for suit in range(4) if led & SUIT_MASK[suit])

    def card_value(self, card: str) -> int:
        """A card's penalty value this hand: with Turbo's charges once revealed (RULES.md §6.4); the
        bonus card apart, as in ``pbem.engine.card_points``."""
        return self.t.values[CARD_INDEX[card]]

    @property
    def moon_total(self) -> int:
        """M of this hand: the values of the cards in play, charged values included (RULES.md §6.4)."""
        return self.t.moon_total

    @property
    def trick_boosted(self) -> bool:
        """Booster Nines (RULES.md §6.5): the trick on the table boosts — a nine of the led suit among
        its first-round cards, in a trick that started with more than one card in every hand."""
        trick = self.trick
        if not (self.t.booster and trick):
            return False
        n = self.t.players
        nine = SUIT_OF[trick[0]] * 13 + _NINE
        return nine in trick[:n] and self._hands.bit_count() + len(trick) >= 2 * n

    @property
    def boost_round(self) -> bool:
        """Booster Nines: the trick on the table is in its second round."""
        return self.t.booster and len(self.trick) >= self.t.players

    # -- queries --------------------------------------------------------------------------------

    @property
    def players(self) -> int:
        return self.t.players

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    def hand_mask(self, seat: int) -> int:
        """The mask of the cards a seat holds."""
        return self._hands >> 52 * seat & FULL_DECK

    @property
    def hands(self) -> tuple[int, ...]:
        """The masks of every seat's hand."""
        return tuple(self._hands >> 52 * seat & FULL_DECK for seat in range(self.t.players))

    def hand(self, seat: int) -> tuple[str, ...]:
        """The cards a seat holds (by suit C D H S, then rank)."""
        return cards_of(self._hands >> 52 * seat & FULL_DECK)

    def trick_cards(self) -> tuple[tuple[int, str], ...]:
        """The trick on the table as (seat, card) in play order."""
        n = self.t.players
        return tuple(((self.leader + k) % n, CARD_NAMES[c]) for k, c in enumerate(self.trick))

    @property
    def first_trick(self) -> bool:
        return self.tricks_played == 0

    @property
    def led_suit(self) -> str | None:
        return SUITS[SUIT_OF[self.trick[0]]] if self.trick else None

    def points_taken(self) -> tuple[int, ...]:
        """Penalty points in each seat's tricks so far this hand (before any moon)."""
        return self.points

    def seats_to_pass(self) -> tuple[int, ...]:
        """Seats that still have to choose their pass (PASS phase)."""
        if self.phase != PASS:
            return ()
        return tuple(s for s, p in enumerate(self.passes) if p is None)

    def seats_to_act(self) -> tuple[int, ...]:
        """Every seat whose decision the game is waiting for now."""
        if self.phase == PASS:
            return self.seats_to_pass()
        if self.phase == PLAY:
            return (self.to_move,)
        if self.phase == MOON and self.shooter is not None:
            return (self.shooter[0],)
        if self.phase == DISCARD:
            return (self._h.v.kitty_taker,)
        if self.phase == CALL:
            return (self.next_dealer,)
        if self.phase == CHARGE:
            return self.seats_to_charge()
        return ()

    def legal_mask(self) -> int:
        """The mask of the legal cards of the seat to play (RULES.md §2 rule 10)."""
        legal = self._legal
        if legal >= 0:
            return legal
        if self.phase != PLAY:
            self._legal = 0
            return 0
        t = self.t
        h = self._hands >> 52 * self.to_move & FULL_DECK
        legal = legal_of(t, h, self.trick, self._k.tricks_played == 0, self.hearts_broken)
        if t.turbo:
            legal = self._held_back(h, legal)
        self._legal = legal
        return legal

    def _held_back(self, h: int, legal: int) -> int:
        """Turbo (RULES.md §6.4): a charged card is not led, nor played to the first trick led in its
        suit, unless it is the only card of that suit its holder has, or nothing else is legal."""
        v = self._h.v
        restricted = legal & v.charged & ~v.led
        if self.trick:
            restricted &= SUIT_MASK_OF[self.trick[0]]  # discarding it on another suit's trick is fine
        for i in range(52):
            if restricted >> i & 1 and h & SUIT_MASK_OF[i] == 1 << i:
                restricted &= ~(1 << i)
        return legal & ~restricted or legal

    def legal_cards(self) -> tuple[str, ...]:
        """The cards the seat to play may play now (empty outside the play phase)."""
        legal = self._legal
        if legal < 0:
            trick = self.trick  # non-empty only in the play phase
            if trick and not self.t.slow_follow:
                # The common case, inline: following suit with cards of the led suit (rule 10).
                suit = SUIT_OF[trick[0]]
                bits = self._hands >> 52 * self.to_move + 13 * suit & SUIT_BITS
                if bits:
                    self._legal = bits << 13 * suit
                    return SUIT_TUPLES[suit][bits]
            legal = self.legal_mask()
        return _C[legal & SUIT_BITS] + _D[legal >> 13 & SUIT_BITS] + _H[legal >> 26 & SUIT_BITS] + _S[legal >> 39]

    def only_legal_card(self) -> str | None:
        """The card the seat to play must play, when it has exactly one legal card."""
        m = self.legal_mask()
        if m and not m & (m - 1):
            return CARD_NAMES[m.bit_length() - 1]
        return None

    def unplayed_can_change_score(self) -> bool:
        """Whether playing out the rest of this hand can change anyone's score.

        False when no unplayed card (in the hands or on the table) counts for points or the bonus,
        and the options that score who takes which trick (``sun``, ``avoid_all_tricks_bonus``) can
        no longer be affected; then the rest of the hand can be played automatically.
        """
        if self.phase != PLAY:
            return False
        t = self.t
        unplayed = 0
        for m in self.hands:
            unplayed |= m
        for c in self.trick:
            unplayed |= 1 << c
        if unplayed & t.scoring_mask:
            return True
        if t.sun and any(w == self.tricks_played for w in self.tricks_won):
            return True
        if t.avoid_bonus and any(w == 0 for w in self.tricks_won):
            return True
        if t.team and (t.sun or t.avoid_bonus):
            won = self.tricks_won
            if any(won[a] + won[b] in (0, self.tricks_played) for a, b in ((0, 2), (1, 3))):
                return True
        v = self._h.v
        if v.kitty_taker < 0 and v.kitty & t.scoring_mask:
            return True
        return False

    # -- moves ----------------------------------------------------------------------------------

    def deal(self, deck: Sequence[str], pass_direction: str | None = None) -> "GameState":
        """Start the next hand from ``deck`` (dealt one card at a time clockwise from the dealer's left).

        ``pass_direction`` overrides the rules' pass cycle for this hand (for bot authors and tests).
        """
        return self._deal(deck, pass_direction, None)

    def pass_cards(self, seat: int, cards: Iterable[str]) -> "GameState":
        """``seat`` passes ``cards``. With ``scatter`` the first ``pass_count/(n-1)`` go to the seat on
        the left, the next to the seat after it, and so on."""
        return self._pass(seat, tuple(cards), None)

    def choose_moon(self, seat: int, choice: str) -> "GameState":
        """``moon=choice``: the shooter chooses ``old`` (others take M) or ``new`` (shooter takes −M);
        ``safety`` applies the ``moon=safety`` rule (used when the shooter does not answer in time)."""
        return self._choose_moon(seat, choice, None)

    def decline_pass(self, seat: int) -> "GameState":
        """``pass_optional`` (RULES.md §6.3): ``seat`` passes nothing; the cards passed to it go on,
        unseen, along their direction to the first seat that chose (each keeps its own on a loop)."""
        return self._decline(seat, None)

    def call_pass(self, seat: int, call: Iterable[Sequence[Any]]) -> "GameState":
        """``dealer_calls_pass`` (RULES.md §6.3): the coming hand's dealer calls its pass, one of
        ``call_choices()`` (or ``default_call()``), e.g. ``(("left", 2), ("right", 1))``."""
        return self._call(seat, call, None)

    def mix(self, cards: Sequence[str]) -> "GameState":
        """A ``mix`` hand: deal back ``cards``, a permutation of ``cards_to_mix`` (the new kitty first,
        then one at a time from the dealer's left, RULES.md §6.8)."""
        return self._mix(tuple(cards), None)

    def discard_kitty(self, seat: int, cards: Iterable[str]) -> "GameState":
        """``kitty_exchange`` (RULES.md §6.2): the kitty's taker, who added it to their hand, discards
        ``discard_count`` cards face down to their tricks before the next lead."""
        return self._discard(seat, tuple(cards), None)

    # -- move implementations (events appended to ``out`` when it is a list) ----------------------

    def _wrong_phase(self, expected: str) -> IllegalMove:
        if self.phase == OVER:
            return IllegalMove(Reason.GAME_OVER)
        return IllegalMove(Reason.WRONG_PHASE, phase=self.phase, expected=expected)

    def _check_seat(self, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < self.t.players:
            raise IllegalMove(Reason.BAD_SEAT, seat=seat)

    def _deal(self, deck: Sequence[str], pass_direction: str | None, out: list | None) -> "GameState":
        if self.phase != DEAL:
            raise self._wrong_phase(DEAL)
        t = self.t
        n = t.players
        try:
            bits = [CARD_BIT[c] for c in deck]
        except (KeyError, TypeError):
            bad = next((c for c in deck if c not in CARD_INDEX), None)
            raise IllegalMove(Reason.BAD_DECK, problem="unknown_card", card=str(bad)) from None
        if len(bits) != t.deck_size:
            raise IllegalMove(Reason.BAD_DECK, problem="not_the_cards_in_play", size=len(bits), expected=t.deck_size)
        hand_no = self.hand_no + 1
        call = ()
        if t.dealer_calls and self._h.v.call:
            # RULES.md §6.3: the dealer's call sets this hand's pass.
            call = self._h.v.call
            called = call[0][0] if len(call) == 1 else "split"
            if pass_direction and pass_direction != called:
                raise IllegalMove(Reason.BAD_DECK, problem="bad_pass_direction", pass_direction=pass_direction)
            pass_direction = called
        direction = pass_direction or t.pass_direction(hand_no)
        if t.pass_to_partner and direction != "hold" and direction in PASS_DIRECTIONS:
            direction = "across"  # RULES.md §6.8: every passing hand passes to the partner
        if direction not in PASS_DIRECTIONS and not (call and direction == "split"):
            raise IllegalMove(Reason.BAD_DECK, problem="bad_pass_direction", pass_direction=direction)
        if direction != "hold":
            if not t.pass_count:
                raise IllegalMove(Reason.BAD_DECK, problem="passing_disabled", pass_direction=direction)
            if direction == "across" and n % 2:
                raise IllegalMove(Reason.BAD_DECK, problem="bad_pass_direction", pass_direction=direction)
            if direction == "scatter" and t.pass_count % (n - 1):
                raise IllegalMove(Reason.BAD_DECK, problem="bad_pass_direction", pass_direction=direction)
        dealer = (hand_no + n - 2) % n
        # One card at a time clockwise from the dealer's left: seat s gets every n-th card. A sum of
        # distinct bits has as many bits set as terms (a repeated card carries), and the hands
        # together must be exactly the cards in play.
        packed = every = 0
        size = t.hand_size
        variant = _NO_VARIANT
        if t.kitty_size:
            # RULES.md §6.2: the kitty is the first cards of the deck, the rest dealt as usual.
            kitty = sum(bits[:t.kitty_size])
            bits = bits[t.kitty_size:]
            every = kitty if kitty.bit_count() == t.kitty_size else -1
            variant = _Variant(kitty, -1, 0, 0, (-1, -1), call)
        elif call:
            variant = _Variant(0, -1, 0, 0, (-1, -1), call)
        for seat in range(n):
            if every < 0:
                break
            hand = sum(bits[(seat - dealer - 1) % n::n])
            if hand.bit_count() != size:
                every = -1
                break
            every |= hand
            packed |= hand << 52 * seat
        if every != t.deck_mask:
            raise IllegalMove(Reason.BAD_DECK, problem="not_the_cards_in_play", size=len(bits), expected=t.deck_size)
        zeros = (0,) * n
        h = self._h
        s = self._copy()
        s.t = h.rules.table  # a Turbo hand's charged values end with it
        s._h = _new_tuple(_Hand, (h.rules, hand_no, dealer, direction, tuple(deck), (None,) * n, zeros, h.totals,
                                  h.history, None, h.winners, variant))
        s._k = _new_tuple(_Tricks, (-1, 0, 0, 0, 0, None))
        s._hands = packed
        s.trick = ()
        s.hearts_broken = False
        if out is not None:
            out.append(ev.HandDealt(hand_no, dealer, direction, call))
        if direction == "hold":
            s._after_pass(out)
        else:
            s.phase = PASS
            s.to_move = -1
        return s

    def _after_pass(self, out: list | None) -> None:
        """(On a fresh copy.) The passes are done (or it is a hold hand): Turbo's charges, then play."""
        if not self.t.turbo:
            self._start_play()
            return
        # RULES.md §6.4: a seat holding no chargeable card has nothing to decide: it charges nothing.
        chargeable = self.t.chargeable_mask
        charges = tuple(None if self.hand_mask(seat) & chargeable else 0 for seat in range(self.t.players))
        h = self._h
        self._h = h._replace(v=h.v._replace(charges=charges, charged=0, led=0))
        if None in charges:
            self.phase = CHARGE
            self.to_move = -1
            self._legal = -1
        else:
            self._reveal(out)

    def _charge(self, seat: int, cards: tuple[str, ...], out: list | None) -> "GameState":
        if self.phase != CHARGE:
            raise self._wrong_phase(CHARGE)
        self._check_seat(seat)
        v = self._h.v
        if v.charges[seat] is not None:
            raise IllegalMove(Reason.ALREADY_CHARGED, seat=seat)
        t = self.t
        _, mask = self._cards_held(seat, cards)
        choices = self.charge_choices(seat)
        odd = mask & ~t.chargeable_mask
        if odd:
            raise IllegalMove(Reason.NOT_CHARGEABLE, card=CARD_NAMES[(odd & -odd).bit_length() - 1],
                              choices=list(choices))
        if len(cards) > t.charge_limit:
            raise IllegalMove(Reason.TOO_MANY_CHARGES, limit=t.charge_limit, given=len(cards))
        s = self._copy()
        charges = list(v.charges)
        charges[seat] = mask
        h = self._h
        s._h = h._replace(v=v._replace(charges=tuple(charges)))
        if out is not None:
            out.append(ev.CardsCharged(seat))
        if None not in charges:
            s._reveal(out)
        return s

    def _reveal(self, out: list | None) -> None:
        """(On a fresh copy.) Every seat has decided: the table is shown the charges, the hand's card
        values become the charged ones (RULES.md §6.4), and play starts."""
        h = self._h
        charged = 0
        for mask in h.v.charges:
            charged |= mask
        self._h = h._replace(v=h.v._replace(charged=charged))
        self.t = h.rules.table.charged(charged) if charged else h.rules.table
        if out is not None:
            out.append(ev.ChargesRevealed(tuple(cards_of(mask) for mask in h.v.charges)))
        self._start_play()

    def _start_play(self) -> None:
        """(On a fresh copy.) Enter the play phase with the first leader to move."""
        t = self.t
        if t.first_lead == "left_of_dealer":
            leader = (self.dealer + 1) % t.players
        else:
            bit = 1 << t.lowest_club
            hands = self._hands
            if t.kitty_size:  # RULES.md §6.2: the lowest club dealt to a player
                dealt = 0
                for seat in range(t.players):
                    dealt |= hands >> 52 * seat & FULL_DECK
                dealt &= CLUBS_MASK
                bit = dealt & -dealt
            leader = 0
            while not hands >> 52 * leader & bit:
                leader += 1
        self.phase = PLAY
        k = self._k
        self._k = _new_tuple(_Tricks, (leader, 0, k.taken, k.points, k.tricks_won, None))
        self.to_move = leader
        self._legal = -1

    def _cards_held(self, seat: int, cards: tuple[str, ...]) -> tuple[list[int], int]:
        """The indices (in the order given) and the mask of distinct cards ``seat`` holds, for a pass or
        a discard; refused with the first problem: an unknown card, a card named twice, or every card
        named that is not in the hand (so one refusal names them all)."""
        hand = self._hands >> 52 * seat & FULL_DECK
        chosen = [CARD_INDEX[c] for c in cards if c.__class__ is str and c in CARD_INDEX]
        if len(chosen) == len(cards):  # every card known: the common case, checked at once
            mask = 0
            for i in chosen:
                mask |= 1 << i
            if mask.bit_count() == len(chosen) and not mask & ~hand:
                return chosen, mask
        chosen = []
        mask = 0
        missing = []
        for c in cards:
            i = CARD_INDEX.get(c) if isinstance(c, str) else None
            if i is None:
                raise IllegalMove(Reason.UNKNOWN_CARD, text=str(c))
            if mask >> i & 1:
                raise IllegalMove(Reason.DUPLICATE_CARD, card=c)
            if not hand >> i & 1:
                missing.append(c)
            mask |= 1 << i
            chosen.append(i)
        if missing:
            raise IllegalMove(Reason.CARD_NOT_IN_HAND, card=missing[0], cards=missing)
        return chosen, mask

    def _check_pass(self, seat: int, cards: tuple[str, ...]) -> None:
        """Refuse a pass by ``seat`` of ``cards`` that the phase, the seat or the count rules out."""
        if self.phase != PASS:
            if self.phase == PLAY and self.pass_direction == "hold":
                raise IllegalMove(Reason.NO_PASS_THIS_HAND)
            raise self._wrong_phase(PASS)
        if seat.__class__ is not int or not 0 <= seat < self.t.players:
            raise IllegalMove(Reason.BAD_SEAT, seat=seat)
        if self._h.passes[seat] is not None:
            raise IllegalMove(Reason.ALREADY_PASSED, seat=seat)
        if len(cards) != self.t.pass_count:
            raise IllegalMove(Reason.WRONG_PASS_COUNT, expected=self.t.pass_count, given=len(cards))

    def _pass(self, seat: int, cards: tuple[str, ...], out: list | None) -> "GameState":
        self._check_pass(seat, cards)
        chosen, mask = self._cards_held(seat, cards)
        s = self._copy()
        h = self._h
        passes = list(h.passes)
        passes[seat] = tuple(chosen)
        s._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, h.pass_direction, h.deck, tuple(passes),
                                  h.received, h.totals, h.history, h.shooter, h.winners, h.v))
        s._hands = self._hands & ~(mask << 52 * seat)
        if out is not None:
            out.append(ev.CardsPassed(seat))
        if None not in passes:
            if h.pass_direction == "mix":
                s.phase = MIX  # RULES.md §6.3: shuffled (MixCards) and dealt back
            else:
                s._exchange(out)
        return s

    def _decline(self, seat: int, out: list | None) -> "GameState":
        if self.phase != PASS:
            if self.phase == PLAY and self.pass_direction == "hold":
                raise IllegalMove(Reason.NO_PASS_THIS_HAND)
            raise self._wrong_phase(PASS)
        self._check_seat(seat)
        if not self.t.pass_optional:
            raise IllegalMove(Reason.PASS_NOT_OPTIONAL)
        h = self._h
        if h.pass_direction == "mix":
            raise IllegalMove(Reason.NO_DECLINE_ON_MIX)  # RULES.md §6.8
        if h.passes[seat] is not None:
            raise IllegalMove(Reason.ALREADY_PASSED, seat=seat)
        s = self._copy()
        passes = list(h.passes)
        passes[seat] = DECLINED
        s._h = h._replace(passes=tuple(passes))
        if out is not None:
            out.append(ev.CardsPassed(seat))
        if None not in passes:
            s._exchange(out)
        return s

    def _call(self, seat: int, call: Any, out: list | None) -> "GameState":
        if self.phase != CALL:
            raise self._wrong_phase(CALL)
        self._check_seat(seat)
        dealer = self.next_dealer
        if seat != dealer:
            raise IllegalMove(Reason.NOT_THE_DEALER, seat=seat, dealer=dealer)
        given = _call_form(call)
        choices = self.call_choices()
        default = self.default_call()
        found = None
        if given is not None:
            parts: dict[str, int] = {}
            for d, c in given:
                if d in parts:
                    parts = {}
                    break
                parts[d] = c
            if parts:
                canon = _canonical_call(parts) if "mix" not in parts and "hold" not in parts else given
                if canon in choices or canon == default:
                    found = canon
        if found is None:
            raise IllegalMove(Reason.BAD_CALL, call=[list(p) for p in given] if given is not None else str(call),
                              choices=[[list(p) for p in c] for c in choices])
        s = self._copy()
        h = self._h
        s._h = h._replace(v=h.v._replace(call=found))
        s.phase = DEAL
        if out is not None:
            out.append(ev.PassCalled(seat, found))
        return s

    def _mix(self, cards: tuple[str, ...], out: list | None) -> "GameState":
        if self.phase != MIX:
            raise self._wrong_phase(MIX)
        expected = self._mix_mask()
        got = 0
        for c in cards:
            i = CARD_INDEX.get(c) if isinstance(c, str) else None
            if i is None:
                raise IllegalMove(Reason.BAD_DECK, problem="unknown_card", card=str(c))
            got |= 1 << i
        size = expected.bit_count()
        if len(cards) != size or got != expected:
            raise IllegalMove(Reason.BAD_DECK, problem="not_the_mixed_cards", size=len(cards), expected=size)
        t = self.t
        n = t.players
        h = self._h
        # RULES.md §6.8: dealt back as a deal is, the new kitty first, then one card at a time from the
        # dealer's left.
        k = t.kitty_size
        kitty = sum(1 << CARD_INDEX[c] for c in cards[:k])
        received = [0] * n
        for j, c in enumerate(cards[k:]):
            received[(h.dealer + 1 + j) % n] |= 1 << CARD_INDEX[c]
        s = self._copy()
        s._h = h._replace(received=tuple(received), v=h.v._replace(kitty=kitty))
        s._hands = self._hands | _pack(received)
        if out is not None:
            out.append(ev.PassesExchanged("mix", tuple(cards_of(r) for r in received)))
        s._after_pass(out)
        return s

    def _exchange_forwarded(self, out: list | None) -> None:
        """(On a fresh copy.) The exchange with decliners or a called split (RULES.md §6.3, §6.8): each
        packet goes along its own direction, through the decliners, to the first seat that chose (its
        origin, when every other seat on that loop declined); a decliner receives nothing."""
        n = self.t.players
        h = self._h
        direction = h.pass_direction
        if direction == "split":
            packets = tuple((_offsets(n)[d], c) for d, c in h.v.call)
        elif direction == "scatter":
            k = self.t.pass_count // (n - 1)
            packets = tuple((j, k) for j in range(1, n))
        else:
            packets = ((1 if direction == "left" else n - 1 if direction == "right" else n // 2, self.t.pass_count),)
        chose = [bool(p) for p in h.passes]
        received = [0] * n
        for seat, chosen in enumerate(h.passes):
            if not chosen:
                continue
            start = 0
            for offset, count in packets:
                to = (seat + offset) % n
                while not chose[to]:
                    to = (to + offset) % n
                received[to] |= sum(map(BIT.__getitem__, chosen[start:start + count]))
                start += count
        self._h = h._replace(received=tuple(received))
        self._hands |= _pack(received)
        if out is not None:
            out.append(ev.PassesExchanged(direction, tuple(cards_of(r) for r in received)))
        self._after_pass(out)

    def _exchange(self, out: list | None) -> None:
        """(On a fresh copy.) Every seat has passed: the passed cards join their new hands."""
        n = self.t.players
        h = self._h
        direction = h.pass_direction
        if direction == "split" or DECLINED in h.passes:
            return self._exchange_forwarded(out)
        received = [0] * n
        for seat, chosen in enumerate(h.passes):
            if direction == "scatter":
                # pass_count/(n-1) cards to each other seat, the first ones to the seat on the left.
                k = len(chosen) // (n - 1)
                for j in range(n - 1):
                    to = (seat + 1 + j) % n
                    received[to] |= sum(map(BIT.__getitem__, chosen[j * k:(j + 1) * k]))
            else:
                to = (seat + (1 if direction == "left" else n - 1 if direction == "right" else n // 2)) % n
                got = 0
                for i in chosen:
                    got |= 1 << i
                received[to] = got
        self._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, direction, h.deck, h.passes, tuple(received),
                                     h.totals, h.history, h.shooter, h.winners, h.v))
        self._hands |= _pack(received)
        if out is not None:
            out.append(ev.PassesExchanged(direction, tuple(cards_of(r) for r in received)))
        self._after_pass(out)

    def _refusal(self, i: int, legal: int) -> IllegalMove:
        """Why card ``i`` is not among the legal cards ``legal`` (the first rule that excludes it)."""
        t = self.t
        card = CARD_NAMES[i]
        legal_cards = list(cards_of(legal))
        h = self.hand_mask(self.to_move)
        bit = 1 << i
        if not h & bit:
            return IllegalMove(Reason.CARD_NOT_IN_HAND, card=card, legal=legal_cards)
        if t.turbo and bit & self._h.v.charged and self._charge_free_legal() & bit:
            return IllegalMove(Reason.CHARGED_CARD_FIRST_TRICK_OF_SUIT, card=card, suit=SUITS[SUIT_OF[i]],
                               legal=legal_cards)
        first = self.tricks_played == 0
        if self.trick:
            led = SUIT_OF[self.trick[0]]
            held = h & SUIT_MASK_OF[self.trick[0]]
            if held and SUIT_OF[i] != led:
                return IllegalMove(Reason.MUST_FOLLOW_SUIT, card=card, led_suit=SUITS[led],
                                   held=list(cards_of(held)), legal=legal_cards)
            if legal == QS_BIT and t.qs_drop:
                return IllegalMove(Reason.MUST_PLAY_QS, card=card, legal=legal_cards)
            return IllegalMove(Reason.NO_POINTS_ON_FIRST_TRICK, card=card, legal=legal_cards)
        if first and t.first_lead == "two_of_clubs":
            return IllegalMove(Reason.MUST_LEAD_LOWEST_CLUB, card=card, required=legal_cards[0],
                               legal=legal_cards)
        if first and t.first_lead == "any_club":
            return IllegalMove(Reason.MUST_LEAD_CLUB, card=card, clubs=legal_cards, legal=legal_cards)
        if first and t.no_pts_first and bit & t.penalty_mask and h & ~t.penalty_mask:
            return IllegalMove(Reason.NO_POINTS_ON_FIRST_TRICK, card=card, legal=legal_cards)
        if i == QS:
            return IllegalMove(Reason.QS_NEEDS_BROKEN_HEARTS, card=card, legal=legal_cards)
        return IllegalMove(Reason.HEARTS_NOT_BROKEN, card=card, legal=legal_cards)

    def _charge_free_legal(self) -> int:
        """The legal mask as it would be without Turbo's rule for charged cards (to explain a refusal)."""
        s = self._copy()
        s._h = self._h._replace(v=self._h.v._replace(charged=0))
        return s.legal_mask()

    def play(self, card: str, _events: list | None = None) -> "GameState":
        """The seat to move plays ``card``. (``apply`` passes ``_events`` to collect what happened.)"""
        # The hot path of every playout: kept flat on purpose. Outside the play phase the legal set
        # is empty, so the phase is checked only on the way to a refusal.
        try:
            i = CARD_INDEX[card]
        except (KeyError, TypeError):
            if self.phase != PLAY:
                raise self._wrong_phase(PLAY) from None
            raise IllegalMove(Reason.UNKNOWN_CARD, text=str(card), legal=list(self.legal_cards())) from None
        out = _events
        bit = BIT[i]
        legal = self._legal
        if legal < 0:
            legal = self.legal_mask()
        if not legal & bit:
            if self.phase != PLAY:
                raise self._wrong_phase(PLAY)
            raise self._refusal(i, legal)
        t = self.t
        seat = self.to_move
        trick = self.trick + (i,)
        s = _new_object(GameState)
        s.t = t
        s.phase = PLAY
        s._hands = self._hands ^ bit << 52 * seat
        s._legal = -1
        s._h = self._h
        k = self._k
        if out is not None:
            played = _played_event(k.tricks_played + 1 << 10 | seat << 6 | i)
            out.append(played or ev.card_played(seat, CARD_NAMES[i], i, k.tricks_played + 1))
        if self.hearts_broken:
            s.hearts_broken = True
        elif breaks_hearts(t, i):
            s.hearts_broken = True
            if out is not None:
                out.append(ev.HeartsBroken(seat, CARD_NAMES[i]))
        else:
            s.hearts_broken = False
        n = t.players
        if len(trick) < n or t.booster and s._boosting(trick, n, k, out):
            s.trick = trick
            s.to_move = seat + 1 if seat + 1 < n else 0
            s._k = k
            return s
        # The trick is complete: the highest card of the led suit takes it.
        leader = k.leader
        tmask, points, winner = trick_taken(t, trick, leader)
        played = k.tricks_played + 1
        s._k = _new_tuple(_Tricks, (winner, played, k.taken | tmask << 52 * winner, k.points + (points << 32 * winner),
                                    k.tricks_won + (1 << 8 * winner), (leader, trick, winner, points)))
        s.trick = ()
        s.to_move = winner
        if out is not None:
            out.append(_trick_won(played, leader, _itemgetter(*trick)(CARD_NAMES), winner, points, len(trick) > n))
        if t.trick_hook:
            s._after_trick(winner, played, points, out)
        if played == t.hand_size or t.booster and not s._hands and s.phase == PLAY:
            s._end_hand(out)
        return s

    def _boosting(self, trick: tuple[int, ...], n: int, k: _Tricks, out: list | None) -> bool:
        """Booster Nines (RULES.md §6.5, §6.8), with ``trick``'s n-th card or more down: whether the trick
        goes on. Its first round just ended: it boosts when a nine of the led suit is among those cards
        and every hand still holds a card (a trick started with one card each does not); then the leader
        plays again. In the second round it goes on to 2n cards."""
        if len(trick) > n:
            return len(trick) < 2 * n
        nine = SUIT_OF[trick[0]] * 13 + _NINE
        if nine not in trick or not self._hands:
            return False
        if out is not None:
            out.append(ev.TrickBoosted(k.tricks_played + 1, (k.leader + trick.index(nine)) % n, CARD_NAMES[nine]))
        return True

    # -- the §6 variants at a trick's end ---------------------------------------------------------

    def _after_trick(self, winner: int, played: int, points: int, out: list | None) -> None:
        """(On a fresh copy, a trick just won.) Team mode: remember the team's latest trick winner.
        Kitty (RULES.md §6.2, §6.8): it goes to the first trick's winner (``first_trick``) or to the
        winner of the first trick with a penalty card (``penalty``/``first_penalty``), else to the
        last trick's winner; it joins their tricks, or with ``kitty_exchange`` their hand (then they
        discard before the next lead; at the last trick there is no lead left, so it joins the
        tricks)."""
        t = self.t
        h = self._h
        v = h.v
        if t.team:
            last = (winner, v.team_last[1]) if winner % 2 == 0 else (v.team_last[0], winner)
            v = v._replace(team_last=last)
        if t.turbo:
            v = v._replace(led=v.led | SUIT_MASK_OF[self._k.last_trick[1][0]])
        final = played == t.hand_size or not self._hands  # fewer tricks with Booster Nines
        if v.kitty_taker < 0 and t.kitty_size and (
                (played == 1 if t.kitty_form == "first_trick" else points > 0) or final):
            kitty = v.kitty
            v = v._replace(kitty_taker=winner, kitty_trick=played)
            if t.kitty_exchange and not final:
                self._hands |= kitty << 52 * winner
                self.phase = DISCARD
                self.to_move = -1
            else:
                k = self._k
                value = sum(t.values[i] for i in range(52) if kitty >> i & 1)
                self._k = k._replace(taken=k.taken | kitty << 52 * winner, points=k.points + (value << 32 * winner))
            if out is not None:
                out.append(ev.KittyTaken(winner, played))
        self._h = h._replace(v=v)

    def _discard(self, seat: int, cards: tuple[str, ...], out: list | None) -> "GameState":
        if self.phase != DISCARD:
            raise self._wrong_phase(DISCARD)
        self._check_seat(seat)
        v = self._h.v
        if seat != v.kitty_taker:
            raise IllegalMove(Reason.NOT_THE_KITTY_TAKER, seat=seat, taker=v.kitty_taker)
        t = self.t
        if len(cards) != t.kitty_size:
            raise IllegalMove(Reason.WRONG_DISCARD_COUNT, expected=t.kitty_size, given=len(cards))
        _, mask = self._cards_held(seat, cards)
        s = self._copy()
        s._hands = self._hands & ~(mask << 52 * seat)
        k = self._k
        value = sum(t.values[i] for i in range(52) if mask >> i & 1)
        s._k = k._replace(taken=k.taken | mask << 52 * seat, points=k.points + (value << 32 * seat))
        s._h = self._h._replace(v=v._replace(discarded=mask))
        s.phase = PLAY
        s.to_move = seat  # the taker won the trick: they lead the next
        if out is not None:
            out.append(ev.KittyDiscarded(seat))
        return s

    # -- scoring (RULES.md §2 rules 7 to 9, §3) -----------------------------------------------------

    def _end_hand(self, out: list | None) -> None:
        """(On a fresh copy.) Every trick is played: score the hand, or wait for the moon choice."""
        t = self.t
        self.to_move = -1
        shooter = None
        k = self._k
        if t.team:
            shooter = self._team_slam()
        elif t.sun:
            for seat in range(t.players):
                if k.tricks_won >> 8 * seat & 0xFF == k.tricks_played:
                    shooter = (seat, "sun")
        if shooter is None and t.moon != "none" and t.penalty_mask:
            for seat in range(t.players):
                if self._took_every_penalty_card(seat):
                    shooter = (seat, "moon")
        if shooter is None:
            self._score(None, out)
        elif t.moon == "choice":
            self.phase = MOON
            h = self._h
            self._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, h.pass_direction, h.deck, h.passes,
                                         h.received, h.totals, h.history, shooter, h.winners, h.v))
            if out is not None:
                out.append(ev.MoonChoiceNeeded(shooter[0], shooter[1], t.team))
        elif t.moon == "safety":
            self._score(self._moon(shooter, self._safety_choice(shooter)), out)
        else:
            self._score(self._moon(shooter, t.moon), out)

    def _took_every_penalty_card(self, seat: int) -> bool:
        """Whether ``seat`` took every penalty card in play this hand (rule 8)."""
        pen = self.t.penalty_mask
        return self._k.taken >> 52 * seat & pen == pen

    def _bonus_copies(self, seat: int) -> int:
        """How many bonus cards ``seat`` took this hand (RULES.md §3 ``jd_bonus``; two with two decks)."""
        return 1 if self._k.taken >> 52 * seat & self.t.bonus_bit else 0

    def _team_slam(self) -> tuple[int, str] | None:
        """Team mode (RULES.md §6.1, §6.8): a team that took every trick (``sun``) or every penalty
        card (with a moon rule) has slammed; its player who won its latest trick speaks for it."""
        t = self.t
        if t.moon == "none":
            return None
        taken = self.taken
        won = self.tricks_won
        last = self._h.v.team_last
        for team, (a, b) in enumerate(((0, 2), (1, 3))):
            if t.sun and won[a] + won[b] == self._k.tricks_played:
                return (last[team], "sun")
        pen = t.penalty_mask
        for team, (a, b) in enumerate(((0, 2), (1, 3))):
            if pen and (taken[a] | taken[b]) & pen == pen:
                return (last[team], "moon")
        return None

    def _choose_moon(self, seat: int, choice: str, out: list | None) -> "GameState":
        if self.phase != MOON:
            raise self._wrong_phase(MOON)
        shooter = self.shooter
        if seat != shooter[0]:
            raise IllegalMove(Reason.NOT_THE_SHOOTER, seat=seat, shooter=shooter[0])
        if choice not in MOON_CHOICES:
            raise IllegalMove(Reason.BAD_MOON_CHOICE, choice=choice)
        if choice == "safety":
            choice = self._safety_choice(shooter)
        s = self._copy()
        s._h = self._h._replace(shooter=None)
        s._score(s._moon(shooter, choice), out)
        return s

    def _moon(self, shooter: tuple[int, str], scoring: str) -> ev.Moon:
        """The moon (or sun) event of ``shooter`` scored by ``scoring``, with the M of this hand."""
        total = self.t.moon_total * (2 if shooter[1] == "sun" else 1)
        return ev.Moon(shooter[0], shooter[1], scoring, self.t.team, total)

    def _multipliers(self) -> tuple[int, ...]:
        """Turbo (RULES.md §6.4): by seat, the factor of its hand score: 2 for the 10 of clubs' taker (4 if
        it was charged), 1 for the others; in team mode both partners carry their team's factor."""
        t = self.t
        n = t.players
        factors = [1] * n
        taken = self._k.taken
        for seat in range(n):
            if taken >> 52 * seat & t.tc_bit:
                factors[seat] = 4 if self._h.v.charged & t.tc_bit else 2
                if t.team:
                    factors[(seat + 2) % 4] = factors[seat]
        return tuple(factors)

    def _hand_points(self, moon: ev.Moon | None) -> tuple[int, ...]:
        t = self.t
        if t.turbo:
            # RULES.md §6.4: the TC multiplier last, on the hand score (a negative one too).
            return tuple(map(int.__mul__, self._plain_hand_points(moon), self._multipliers()))
        return self._plain_hand_points(moon)

    def _plain_hand_points(self, moon: ev.Moon | None) -> tuple[int, ...]:
        t = self.t
        if t.team:
            return self._team_hand_points(moon)
        copies = [self._bonus_copies(seat) for seat in range(t.players)] if t.bonus_bit else ()
        return plain_hand_points(t, self.points, self.tricks_won, copies, moon)

    def _team_hand_points(self, moon: ev.Moon | None) -> tuple[int, ...]:
        """Team mode (RULES.md §6.1): each team scores as one; both partners carry the team's score."""
        t = self.t
        if moon is None:
            per = self.points
            team = [per[0] + per[2], per[1] + per[3]]
            if t.avoid_bonus:
                won = self.tricks_won
                for k in (0, 1):
                    if not won[k] + won[k + 2]:
                        team[k] += t.avoid_bonus
        else:
            m = t.moon_total * (2 if moon.kind == "sun" else 1)
            side = moon.seat % 2
            if moon.scoring == "new":
                team = [0, 0]
                team[side] = -m
            else:
                team = [m, m]
                team[side] = 0
        if t.bonus_bit:
            taken = self._k.taken
            for seat in range(4):
                if taken >> 52 * seat & t.bonus_bit:
                    team[seat % 2] += t.bonus
        return (team[0], team[1], team[0], team[1])

    def _new_totals(self, points: tuple[int, ...]) -> tuple[int, ...]:
        t = self.t
        totals = tuple(map(int.__add__, self._h.totals, points))
        if t.exact_target_reset is not None:
            totals = tuple(t.exact_target_reset if x == t.target else x for x in totals)
        return totals

    def _winners(self, totals: tuple[int, ...], hand_no: int) -> tuple[int, ...] | None:
        """Rule 9 steps 4 and 5: the winners if the game is over after these totals, else None."""
        t = self.t
        if t.end_after_hands is not None:
            ended = hand_no >= t.end_after_hands
        else:
            ended = max(totals) >= t.target
        if not ended:
            return None
        if t.individual:
            # RULES.md §6.1: the partners' totals are added; the lower (higher) team sum wins.
            totals = (totals[0] + totals[2], totals[1] + totals[3]) * 2
        best = min(totals) if t.lowest_wins else max(totals)
        leaders = tuple(s for s, x in enumerate(totals) if x == best)
        if len(leaders) > (2 if t.partnership != "none" else 1) and not t.tie_share:
            return None
        return leaders

    def _safety_choice(self, shooter: tuple[int, str]) -> str:
        """``moon=safety``: score new if old scores would end the game with the shooter not a winner."""
        old = self._hand_points(ev.Moon(shooter[0], shooter[1], "old"))
        winners = self._winners(self._new_totals(old), self.hand_no)
        # With a partnership the winners are both seats of a team: this judges the shooter's team.
        return "new" if winners is not None and shooter[0] not in winners else "old"

    def _score(self, moon: ev.Moon | None, out: list | None) -> None:
        """(On a fresh copy.) Rule 9: hand scores, totals, exact reset, end of game."""
        h = self._h
        t = self.t
        if moon is not None and moon.scoring == "win":
            # RULES.md §6.7, §6.8: the shooter wins at once; this hand is not added to the totals.
            points = (0,) * t.players
            totals = h.totals
            winners = tuple(sorted((moon.seat, (moon.seat + 2) % 4))) if t.team else (moon.seat,)
        else:
            points = self._hand_points(moon)
            totals = self._new_totals(points)
            winners = self._winners(totals, h.hand_no)
        self._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, h.pass_direction, h.deck, h.passes, h.received,
                                     totals, h.history + ((points, totals, moon),), h.shooter, winners or (), h.v))
        if out is not None:
            out.append(ev.hand_scored(h.hand_no, points, totals, moon, self.tricks_won,
                                     _team_values(t, points), _team_values(t, totals),
                                     self._multipliers() if t.turbo else (),
                                     self.charges if t.turbo else ()))
        self.to_move = -1
        if winners is None:
            self.phase = CALL if self.t.dealer_calls else DEAL
            return
        self.phase = OVER
        if out is not None:
            out.append(ev.GameOver(winners, self.ranking(), totals, _team_values(self.t, totals)))

    def ranking(self) -> tuple[int, ...]:
        """Seats from the best total to the worst (ties in seat order); with a partnership by their
        team's standing (individual mode: the team sum, then the seat's own total)."""
        sign = 1 if self.t.lowest_wins else -1
        totals = self.totals
        won = self._h.winners  # first: under moon=win (RULES.md §6.7) the shooter, whatever the totals
        if self.t.individual:
            sums = (totals[0] + totals[2], totals[1] + totals[3])
            return tuple(sorted(range(4), key=lambda s: (s not in won, sign * sums[s % 2], sign * totals[s], s)))
        return tuple(sorted(range(self.t.players), key=lambda s: (s not in won, sign * totals[s], s)))

    # -- serialisation ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able snapshot (cards canonical); ``GameState.from_dict`` reads it back."""
        names = CARD_NAMES
        return {
            "rules": self.rules.to_dict(),
            "phase": self.phase,
            "hand_no": self.hand_no,
            "dealer": self.dealer,
            "pass_direction": self.pass_direction,
            "deck": list(self.deck),
            "hands": [list(self.hand(seat)) for seat in range(self.t.players)],
            "passes": [None if p is None else "declined" if not p else [names[i] for i in p] for p in self.passes],
            "received": [list(self.received_cards(seat)) for seat in range(self.t.players)],
            "trick": [names[i] for i in self.trick],
            "leader": self.leader,
            "to_move": self.to_move,
            "tricks_played": self.tricks_played,
            "hearts_broken": self.hearts_broken,
            "taken": [list(cards) for cards in self.taken_cards()],
            "points": list(self.points),
            "tricks_won": list(self.tricks_won),
            "last_trick": None if self.last_trick is None else {
                "leader": self.last_trick[0], "cards": [names[i] for i in self.last_trick[1]],
                "winner": self.last_trick[2], "points": self.last_trick[3]},
            "totals": list(self.totals),
            "history": [{"points": list(p), "totals": list(tot), "moon": _moon_dict(m)} for p, tot, m in self.history],
            "shooter": None if self.shooter is None else {"seat": self.shooter[0], "kind": self.shooter[1]},
            "winners": list(self.winners),
            # RULES.md §6 (older snapshots lack them: from_dict reads the defaults)
            "kitty": list(self.kitty),
            "kitty_taker": self.kitty_taker,
            "kitty_trick": self.kitty_trick,
            "discarded": list(self.discarded),
            "team_last": list(self._h.v.team_last),
            "pass_call": [[d, c] for d, c in self._h.v.call],
            "charges": [None if c is None else list(cards_of(c)) for c in self._h.v.charges],
            "suits_led": self.suits_led,
        }

    @classmethod
    def at_moon_choice(cls, rules: Rules, *, shooter: int, kind: str, hand_no: int, dealer: int,
                       pass_direction: str, leader: int, tricks_played: int, hearts_broken: bool,
                       taken: Sequence[Iterable[str]], points: Sequence[int], tricks_won: Sequence[int],
                       totals: Sequence[int], charges: Sequence[Iterable[str]] = ()) -> "GameState":
        """A hand whose last trick is played, waiting for ``shooter``'s moon choice, built from what
        the whole table knows then (no hidden cards are left; Turbo's ``charges`` by seat, public once
        play began): ``choose_moon`` on it scores the hand exactly as the game will. For bots weighing
        old against new."""
        n = rules.players
        return cls.from_dict({
            "rules": rules.to_dict(), "phase": MOON, "hand_no": hand_no, "dealer": dealer,
            "pass_direction": pass_direction, "deck": [], "hands": [[] for _ in range(n)],
            "passes": [None] * n, "received": [[] for _ in range(n)], "trick": [], "leader": leader,
            "to_move": -1, "tricks_played": tricks_played, "hearts_broken": hearts_broken,
            "taken": [list(cards) for cards in taken], "points": list(points), "tricks_won": list(tricks_won),
            "last_trick": None, "totals": list(totals), "history": [], "shooter": {"seat": shooter, "kind": kind},
            "winners": [], "charges": [list(c) for c in charges],
        })

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "GameState":
        def mask(cards: Iterable[str]) -> int:
            m = 0
            for c in cards:
                m |= 1 << CARD_INDEX[c]
            return m

        lt = d["last_trick"]
        sh = d["shooter"]
        s = cls.new(Rules.from_dict(d["rules"]))
        s.phase = d["phase"]
        s._hands = _pack([mask(h) for h in d["hands"]])
        s.trick = tuple(CARD_INDEX[c] for c in d["trick"])
        s.to_move = d["to_move"]
        s.hearts_broken = d["hearts_broken"]
        s._h = _Hand(
            rules=s.rules,
            hand_no=d["hand_no"],
            dealer=d["dealer"],
            pass_direction=d["pass_direction"],
            deck=tuple(d["deck"]),
            passes=tuple(None if p is None else DECLINED if p == "declined" else tuple(CARD_INDEX[c] for c in p)
                         for p in d["passes"]),
            received=tuple(mask(r) for r in d["received"]),
            totals=tuple(d["totals"]),
            history=tuple(
                (tuple(h["points"]), tuple(h["totals"]),
                 None if h["moon"] is None else ev.Moon(h["moon"]["seat"], h["moon"]["kind"], h["moon"]["scoring"],
                                                         bool(h["moon"].get("team", False)),
                                                         int(h["moon"].get("total", 0))))
                for h in d["history"]
            ),
            shooter=None if sh is None else (sh["seat"], sh["kind"]),
            winners=tuple(d["winners"]),
            v=_NO_VARIANT if not (d.get("kitty") or d.get("team_last") or d.get("pass_call") or d.get("charges")) else _Variant(
                mask(d.get("kitty") or ()),
                -1 if d.get("kitty_taker") is None else d["kitty_taker"],
                d.get("kitty_trick") or 0,
                mask(d.get("discarded") or ()),
                tuple(d.get("team_last") or (-1, -1)),
                tuple((str(x), int(c)) for x, c in d.get("pass_call") or ()),
                tuple(None if c is None else mask(c) for c in d.get("charges") or ()),
                0,
                sum(SUIT_MASK["CDHS".index(x)] for x in d.get("suits_led") or ""),
            ),
        )
        charges = s._h.v.charges
        if charges and None not in charges:  # RULES.md §6.4: the charged values, for the rest of the hand
            charged = 0
            for c in charges:
                charged |= c
            s._h = s._h._replace(v=s._h.v._replace(charged=charged))
            if charged:
                s.t = s.rules.table.charged(charged)
        s._k = _Tricks(
            leader=d["leader"],
            tricks_played=d["tricks_played"],
            taken=_pack([mask(m) for m in d["taken"]]),
            points=sum(p << 32 * seat for seat, p in enumerate(d["points"])),
            tricks_won=sum(w << 8 * seat for seat, w in enumerate(d["tricks_won"])),
            last_trick=None if lt is None else (
                lt["leader"], tuple(CARD_INDEX[c] for c in lt["cards"]), lt["winner"], lt["points"]),
        )
        s._read_copies(d)
        return s

    def _read_copies(self, d: dict[str, Any]) -> None:
        """``from_dict``'s last step: with two decks, the second copies (see ``TwoDeckState``)."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<GameState hand {self.hand_no} {self.phase} to_move={self.to_move} "
                f"trick={[CARD_NAMES[c] for c in self.trick]} totals={list(self.totals)}>")


def _moon_dict(m: "ev.Moon | None") -> dict[str, Any] | None:
    if m is None:
        return None
    d: dict[str, Any] = {"seat": m.seat, "kind": m.kind, "scoring": m.scoring}
    if m.team:
        d["team"] = True
    if m.total:
        d["total"] = m.total
    return d


def _team_values(t: Table, values: tuple[int, ...]) -> tuple[int, ...]:
    """By team (RULES.md §6.1): team mode the team's value (partners carry it), individual mode the
    partners' sum; ``()`` without a partnership."""
    if t.team:
        return (values[0], values[1])
    if t.individual:
        return (values[0] + values[2], values[1] + values[3])
    return ()


#: ``_SHIFTS[width][n]``: the bit offsets of seats 0 … n-1 in an int packed by seat at ``width`` bits.
_SHIFTS = {width: tuple(tuple(width * seat for seat in range(n)) for n in range(11)) for width in (8, 32, 52)}
_played_event = ev.PLAYED_EVENTS.get
_trick_won = ev.trick_won
_new_tuple = tuple.__new__  # makes a NamedTuple without its Python-level __new__ (hot path)
_new_object = object.__new__


def _offsets(n: int) -> dict[str, int]:
    """RULES.md §3: the seat each direction passes to, as an offset clockwise (across: 4 or 6 players)."""
    offsets = {"left": 1, "right": n - 1}
    if n in (4, 6):
        offsets["across"] = n // 2
    return offsets


def _canonical_call(parts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """A split as a call: its non-zero parts in the order left, right, across."""
    return tuple((d, parts[d]) for d in CALL_DIRECTIONS if parts.get(d))


def _call_form(call: Any) -> tuple[tuple[str, int], ...] | None:
    """``call`` as ``(direction, count)`` pairs, or None when it has no such shape."""
    try:
        pairs = tuple((str(d), int(c)) for d, c in call)
    except (TypeError, ValueError):
        return None
    if not pairs or any(c < 0 or isinstance(c, bool) for _, c in pairs):
        return None
    return pairs


_CALLS: dict[tuple[int, int], tuple[tuple[tuple[str, int], ...], ...]] = {}


def _calls(n: int, count: int) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Every split of ``count`` cards over the directions of ``n`` players, then mix (RULES.md §6.3)."""
    key = (n, count)
    if key not in _CALLS:
        dirs = tuple(_offsets(n))
        found: list[tuple[tuple[str, int], ...]] = []

        def split(k: int, left: int, parts: dict[str, int]) -> None:
            if k == len(dirs) - 1:
                found.append(_canonical_call({**parts, dirs[k]: left}))
                return
            for c in range(left, -1, -1):
                split(k + 1, left - c, {**parts, dirs[k]: c})

        split(0, count, {})
        _CALLS[key] = tuple(found) + ((("mix", count),),)
    return _CALLS[key]


def _pack(masks: Sequence[int]) -> int:
    """Every seat's hand mask in one int (seat s at bit 52*s)."""
    packed = 0
    for seat, m in enumerate(masks):
        packed |= m << 52 * seat
    return packed


def new_game(rules: Rules | None = None) -> GameState:
    """A game under ``rules`` (standard by default), waiting for its first deal."""
    return GameState.new(rules or Rules())
