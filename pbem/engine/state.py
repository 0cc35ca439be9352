"""The state of a whole game of Hearts, immutable, and the moves that change it.

A :class:`GameState` is never changed in place: ``deal``, ``pass_cards``, ``play`` and ``choose_moon``
return a new state, or raise :class:`~pbem.engine.errors.IllegalMove` and leave the old one as it was.
The life of a game::

    deal ─> pass (every seat, in any order; skipped on a hold hand) ─> play (trick after trick)
         ─> [moon: the shooter chooses, with moon=choice] ─> scored ─> deal … ─> over

Chance is outside the engine: a hand starts from an explicit deck (``deal(deck)``), which the move log
records, so a game replays exactly.

Hands and taken cards are bit masks (see :mod:`pbem.engine.cards`); the public methods speak in
canonical card names.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Sequence

from . import events as ev
from .cards import (
    CARD_INDEX,
    CARD_NAMES,
    CLUBS_MASK,
    FULL_DECK,
    HEARTS,
    HEARTS_MASK,
    KS_AS_BITS,
    QS,
    QS_BIT,
    SPADES,
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
from .rules import PASS_DIRECTIONS, Rules, Table

DEAL, PASS, PLAY, MOON, OVER = "deal", "pass", "play", "moon", "over"
PHASES = (DEAL, PASS, PLAY, MOON, OVER)
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
        """A game before its first deal."""
        n = rules.players
        zeros = (0,) * n
        s = object.__new__(cls)
        s.t = rules.table
        s.phase = DEAL
        s._hands = 0
        s.trick = ()
        s.to_move = -1
        s.hearts_broken = False
        s._legal = -1
        s._h = _Hand(rules, 0, n - 1, "hold", (), (None,) * n, zeros, zeros, (), None, ())
        s._k = _Tricks(-1, 0, 0, 0, 0, None)
        return s

    def _copy(self) -> "GameState":
        s = _new_object(GameState)
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
        return tuple(packed >> 52 * seat & FULL_DECK for seat in range(self.t.players))

    @property
    def points(self) -> tuple[int, ...]:
        """Penalty points each seat has taken this hand (before any moon)."""
        packed = self._k.points
        return tuple(packed >> 32 * seat & 0xFFFFFFFF for seat in range(self.t.players))

    @property
    def tricks_won(self) -> tuple[int, ...]:
        packed = self._k.tricks_won
        return tuple(packed >> 8 * seat & 0xFF for seat in range(self.t.players))
    last_trick = property(lambda self: self._k.last_trick)

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
        trick = self.trick
        first = self._k.tricks_played == 0
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
        elif first and t.first_lead != "left_of_dealer":
            if t.first_lead == "two_of_clubs":
                legal = 1 << t.lowest_club
            else:
                legal = h & CLUBS_MASK
        else:
            legal = h
            if first and t.no_pts_first:
                legal = h & ~t.penalty_mask or h
            if t.must_break and not self.hearts_broken:
                banned = HEARTS_MASK | QS_BIT if t.qs_lead_needs_broken else HEARTS_MASK
                rest = legal & ~banned
                if rest and not (t.hearts_instead_of_qs and rest == QS_BIT):
                    legal = rest
        self._legal = legal
        return legal

    def legal_cards(self) -> tuple[str, ...]:
        """The cards the seat to play may play now (empty outside the play phase)."""
        legal = self._legal
        if legal < 0:
            trick = self.trick  # non-empty only in the play phase
            if trick and not self.t.qs_drop:
                # The common case, inline: following suit with cards of the led suit.
                legal = self._hands >> 52 * self.to_move & SUIT_MASK_OF[trick[0]]
                if legal:
                    self._legal = legal
                else:
                    legal = self.legal_mask()
            else:
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
        direction = pass_direction or t.pass_direction(hand_no)
        if direction not in PASS_DIRECTIONS:
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
        for seat in range(n):
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
        s._h = _new_tuple(_Hand, (h.rules, hand_no, dealer, direction, tuple(deck), (None,) * n, zeros, h.totals,
                                  h.history, None, h.winners))
        s._k = _new_tuple(_Tricks, (-1, 0, 0, 0, 0, None))
        s._hands = packed
        s.trick = ()
        s.hearts_broken = False
        if out is not None:
            out.append(ev.HandDealt(hand_no, dealer, direction))
        if direction == "hold":
            s._start_play()
        else:
            s.phase = PASS
            s.to_move = -1
        return s

    def _start_play(self) -> None:
        """(On a fresh copy.) Enter the play phase with the first leader to move."""
        t = self.t
        if t.first_lead == "left_of_dealer":
            leader = (self.dealer + 1) % t.players
        else:
            bit = 1 << t.lowest_club
            hands = self._hands
            leader = 0
            while not hands >> 52 * leader & bit:
                leader += 1
        self.phase = PLAY
        k = self._k
        self._k = _new_tuple(_Tricks, (leader, 0, k.taken, k.points, k.tricks_won, None))
        self.to_move = leader
        self._legal = -1

    def _pass(self, seat: int, cards: tuple[str, ...], out: list | None) -> "GameState":
        if self.phase != PASS:
            if self.phase == PLAY and self.pass_direction == "hold":
                raise IllegalMove(Reason.NO_PASS_THIS_HAND)
            raise self._wrong_phase(PASS)
        if seat.__class__ is not int or not 0 <= seat < self.t.players:
            raise IllegalMove(Reason.BAD_SEAT, seat=seat)
        if self._h.passes[seat] is not None:
            raise IllegalMove(Reason.ALREADY_PASSED, seat=seat)
        t = self.t
        if len(cards) != t.pass_count:
            raise IllegalMove(Reason.WRONG_PASS_COUNT, expected=t.pass_count, given=len(cards))
        hand = self.hand_mask(seat)
        chosen = []
        mask = 0
        missing = []  # every card of the pass not in the hand, so one refusal names them all
        for c in cards:
            i = CARD_INDEX.get(c)
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
        s = self._copy()
        h = self._h
        passes = list(h.passes)
        passes[seat] = tuple(chosen)
        s._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, h.pass_direction, h.deck, tuple(passes),
                                  h.received, h.totals, h.history, h.shooter, h.winners))
        s._hands = self._hands & ~(mask << 52 * seat)
        if out is not None:
            out.append(ev.CardsPassed(seat))
        if None not in passes:
            s._exchange(out)
        return s

    def _exchange(self, out: list | None) -> None:
        """(On a fresh copy.) Every seat has passed: the passed cards join their new hands."""
        n = self.t.players
        h = self._h
        direction = h.pass_direction
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
                received[to] = sum(map(BIT.__getitem__, chosen))
        self._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, direction, h.deck, h.passes, tuple(received),
                                     h.totals, h.history, h.shooter, h.winners))
        self._hands |= _pack(received)
        if out is not None:
            out.append(ev.PassesExchanged(direction, tuple(cards_of(r) for r in received)))
        self._start_play()

    def _refusal(self, i: int, legal: int) -> IllegalMove:
        """Why card ``i`` is not among the legal cards ``legal`` (the first rule that excludes it)."""
        t = self.t
        card = CARD_NAMES[i]
        legal_cards = list(cards_of(legal))
        h = self.hand_mask(self.to_move)
        bit = 1 << i
        if not h & bit:
            return IllegalMove(Reason.CARD_NOT_IN_HAND, card=card, legal=legal_cards)
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
            return IllegalMove(Reason.MUST_LEAD_LOWEST_CLUB, card=card, required=CARD_NAMES[t.lowest_club],
                               legal=legal_cards)
        if first and t.first_lead == "any_club":
            return IllegalMove(Reason.MUST_LEAD_CLUB, card=card, clubs=legal_cards, legal=legal_cards)
        if first and t.no_pts_first and bit & t.penalty_mask and h & ~t.penalty_mask:
            return IllegalMove(Reason.NO_POINTS_ON_FIRST_TRICK, card=card, legal=legal_cards)
        if i == QS:
            return IllegalMove(Reason.QS_NEEDS_BROKEN_HEARTS, card=card, legal=legal_cards)
        return IllegalMove(Reason.HEARTS_NOT_BROKEN, card=card, legal=legal_cards)

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
            out.append(ev.CardPlayed(seat, CARD_NAMES[i], k.tricks_played + 1))
        if self.hearts_broken:
            s.hearts_broken = True
        elif bit & HEARTS_MASK or (i == QS and t.qs_breaks):
            s.hearts_broken = True
            if out is not None:
                out.append(ev.HeartsBroken(seat, CARD_NAMES[i]))
        else:
            s.hearts_broken = False
        n = t.players
        if len(trick) < n:
            s.trick = trick
            s.to_move = seat + 1 if seat + 1 < n else 0
            s._k = k
            return s
        # The trick is complete: the highest card of the led suit takes it.
        tmask = sum(map(BIT.__getitem__, trick))
        points = sum(map(t.values.__getitem__, trick))
        best = (tmask & SUIT_MASK_OF[trick[0]]).bit_length() - 1
        leader = k.leader
        winner = (leader + trick.index(best)) % n
        played = k.tricks_played + 1
        s._k = _new_tuple(_Tricks, (winner, played, k.taken | tmask << 52 * winner, k.points + (points << 32 * winner),
                                    k.tricks_won + (1 << 8 * winner), (leader, trick, winner, points)))
        s.trick = ()
        s.to_move = winner
        if out is not None:
            out.append(ev.TrickWon(played, leader, tuple(CARD_NAMES[c] for c in trick), winner, points))
        if played == t.hand_size:
            s._end_hand(out)
        return s

    # -- scoring (RULES.md §2 rules 7 to 9, §3) -----------------------------------------------------

    def _end_hand(self, out: list | None) -> None:
        """(On a fresh copy.) Every trick is played: score the hand, or wait for the moon choice."""
        t = self.t
        self.to_move = -1
        shooter = None
        k = self._k
        if t.sun:
            for seat in range(t.players):
                if k.tricks_won >> 8 * seat & 0xFF == t.hand_size:
                    shooter = (seat, "sun")
        pen = t.penalty_mask
        if shooter is None and t.moon != "none" and pen:
            for seat in range(t.players):
                if k.taken >> 52 * seat & pen == pen:
                    shooter = (seat, "moon")
        if shooter is None:
            self._score(None, out)
        elif t.moon == "choice":
            self.phase = MOON
            h = self._h
            self._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, h.pass_direction, h.deck, h.passes,
                                         h.received, h.totals, h.history, shooter, h.winners))
            if out is not None:
                out.append(ev.MoonChoiceNeeded(*shooter))
        elif t.moon == "safety":
            self._score(ev.Moon(shooter[0], shooter[1], self._safety_choice(shooter)), out)
        else:
            self._score(ev.Moon(shooter[0], shooter[1], t.moon), out)

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
        s._score(ev.Moon(shooter[0], shooter[1], choice), out)
        return s

    def _hand_points(self, moon: ev.Moon | None) -> tuple[int, ...]:
        t = self.t
        n = t.players
        if moon is None:
            points = list(self.points)
            if t.avoid_bonus:
                for seat, won in enumerate(self.tricks_won):
                    if not won:
                        points[seat] += t.avoid_bonus
        else:
            m = t.moon_total * (2 if moon.kind == "sun" else 1)
            if moon.scoring == "new":
                points = [0] * n
                points[moon.seat] = -m
            else:
                points = [m] * n
                points[moon.seat] = 0
        if t.bonus_bit:
            taken = self._k.taken
            for seat in range(n):
                if taken >> 52 * seat & t.bonus_bit:
                    points[seat] += t.bonus
        return tuple(points)

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
        best = min(totals) if t.lowest_wins else max(totals)
        leaders = tuple(s for s, x in enumerate(totals) if x == best)
        if len(leaders) > 1 and not t.tie_share:
            return None
        return leaders

    def _safety_choice(self, shooter: tuple[int, str]) -> str:
        """``moon=safety``: score new if old scores would end the game with the shooter not a winner."""
        old = self._hand_points(ev.Moon(shooter[0], shooter[1], "old"))
        winners = self._winners(self._new_totals(old), self.hand_no)
        return "new" if winners is not None and shooter[0] not in winners else "old"

    def _score(self, moon: ev.Moon | None, out: list | None) -> None:
        """(On a fresh copy.) Rule 9: hand scores, totals, exact reset, end of game."""
        points = self._hand_points(moon)
        totals = self._new_totals(points)
        h = self._h
        winners = self._winners(totals, h.hand_no)
        self._h = _new_tuple(_Hand, (h.rules, h.hand_no, h.dealer, h.pass_direction, h.deck, h.passes, h.received,
                                     totals, h.history + ((points, totals, moon),), h.shooter, winners or ()))
        if out is not None:
            out.append(ev.HandScored(self.hand_no, points, totals, moon, self.tricks_won))
        self.to_move = -1
        if winners is None:
            self.phase = DEAL
            return
        self.phase = OVER
        if out is not None:
            out.append(ev.GameOver(winners, self.ranking(), totals))

    def ranking(self) -> tuple[int, ...]:
        """Seats from the best total to the worst (ties in seat order)."""
        sign = 1 if self.t.lowest_wins else -1
        return tuple(sorted(range(self.t.players), key=lambda s: (sign * self.totals[s], s)))

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
            "hands": [list(cards_of(m)) for m in self.hands],
            "passes": [None if p is None else [names[i] for i in p] for p in self.passes],
            "received": [list(cards_of(m)) for m in self.received],
            "trick": [names[i] for i in self.trick],
            "leader": self.leader,
            "to_move": self.to_move,
            "tricks_played": self.tricks_played,
            "hearts_broken": self.hearts_broken,
            "taken": [list(cards_of(m)) for m in self.taken],
            "points": list(self.points),
            "tricks_won": list(self.tricks_won),
            "last_trick": None if self.last_trick is None else {
                "leader": self.last_trick[0], "cards": [names[i] for i in self.last_trick[1]],
                "winner": self.last_trick[2], "points": self.last_trick[3]},
            "totals": list(self.totals),
            "history": [
                {"points": list(p), "totals": list(tot),
                 "moon": None if m is None else {"seat": m.seat, "kind": m.kind, "scoring": m.scoring}}
                for p, tot, m in self.history
            ],
            "shooter": None if self.shooter is None else {"seat": self.shooter[0], "kind": self.shooter[1]},
            "winners": list(self.winners),
        }

    @classmethod
    def at_moon_choice(cls, rules: Rules, *, shooter: int, kind: str, hand_no: int, dealer: int,
                       pass_direction: str, leader: int, tricks_played: int, hearts_broken: bool,
                       taken: Sequence[Iterable[str]], points: Sequence[int], tricks_won: Sequence[int],
                       totals: Sequence[int]) -> "GameState":
        """A hand whose last trick is played, waiting for ``shooter``'s moon choice, built from what
        the whole table knows then (no hidden cards are left): ``choose_moon`` on it scores the hand
        exactly as the game will. For bots weighing old against new."""
        n = rules.players
        return cls.from_dict({
            "rules": rules.to_dict(), "phase": MOON, "hand_no": hand_no, "dealer": dealer,
            "pass_direction": pass_direction, "deck": [], "hands": [[] for _ in range(n)],
            "passes": [None] * n, "received": [[] for _ in range(n)], "trick": [], "leader": leader,
            "to_move": -1, "tricks_played": tricks_played, "hearts_broken": hearts_broken,
            "taken": [list(cards) for cards in taken], "points": list(points), "tricks_won": list(tricks_won),
            "last_trick": None, "totals": list(totals), "history": [], "shooter": {"seat": shooter, "kind": kind},
            "winners": [],
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
            passes=tuple(None if p is None else tuple(CARD_INDEX[c] for c in p) for p in d["passes"]),
            received=tuple(mask(r) for r in d["received"]),
            totals=tuple(d["totals"]),
            history=tuple(
                (tuple(h["points"]), tuple(h["totals"]),
                 None if h["moon"] is None else ev.Moon(h["moon"]["seat"], h["moon"]["kind"], h["moon"]["scoring"]))
                for h in d["history"]
            ),
            shooter=None if sh is None else (sh["seat"], sh["kind"]),
            winners=tuple(d["winners"]),
        )
        s._k = _Tricks(
            leader=d["leader"],
            tricks_played=d["tricks_played"],
            taken=_pack([mask(m) for m in d["taken"]]),
            points=sum(p << 32 * seat for seat, p in enumerate(d["points"])),
            tricks_won=sum(w << 8 * seat for seat, w in enumerate(d["tricks_won"])),
            last_trick=None if lt is None else (
                lt["leader"], tuple(CARD_INDEX[c] for c in lt["cards"]), lt["winner"], lt["points"]),
        )
        return s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<GameState hand {self.hand_no} {self.phase} to_move={self.to_move} "
                f"trick={[CARD_NAMES[c] for c in self.trick]} totals={list(self.totals)}>")


_new_tuple = tuple.__new__  # makes a NamedTuple without its Python-level __new__ (hot path)
_new_object = object.__new__


def _pack(masks: Sequence[int]) -> int:
    """Every seat's hand mask in one int (seat s at bit 52*s)."""
    packed = 0
    for seat, m in enumerate(masks):
        packed |= m << 52 * seat
    return packed


def new_game(rules: Rules | None = None) -> GameState:
    """A game under ``rules`` (standard by default), waiting for its first deal."""
    return GameState.new(rules or Rules())
