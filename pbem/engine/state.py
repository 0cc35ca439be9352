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

from typing import Any, Iterable, Sequence

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
    cards_of,
)
from .errors import IllegalMove, Reason
from .rules import PASS_DIRECTIONS, Rules, Table

DEAL, PASS, PLAY, MOON, OVER = "deal", "pass", "play", "moon", "over"
PHASES = (DEAL, PASS, PLAY, MOON, OVER)
MOON_CHOICES = ("old", "new", "safety")


class GameState:
    """One moment of a game. Read the attributes; change it only through its move methods."""

    __slots__ = (
        "rules",  # Rules
        "t",  # Table of the rules
        "phase",  # DEAL PASS PLAY MOON OVER
        "hand_no",  # 1-based; 0 before the first deal
        "dealer",  # seat
        "pass_direction",  # of this hand: left right across hold scatter
        "deck",  # tuple of card indices of this hand's deal, in deal order
        "_hands",  # every hand in one int: seat s's mask is bits 52*s to 52*s+51 (see hand_mask)
        "passes",  # tuple by seat: tuple of card indices passed (in order), or None
        "received",  # tuple of masks by seat, once the passes are exchanged
        "trick",  # card indices of the trick on the table, in play order
        "leader",  # seat that led (or leads) the trick on the table
        "to_move",  # seat to play; -1 outside PLAY
        "tricks_played",  # finished tricks this hand
        "hearts_broken",
        "taken",  # tuple of masks by seat: cards taken this hand
        "points",  # tuple of ints by seat: penalty points taken this hand (before any moon)
        "tricks_won",  # tuple of ints by seat
        "last_trick",  # (leader, card indices, winner, points) or None
        "totals",  # tuple of ints by seat
        "history",  # tuple of (points, totals after, Moon|None) per scored hand
        "shooter",  # (seat, kind) awaiting the moon choice, or None
        "winners",  # tuple of seats once OVER, else ()
        "_legal",  # cached legal mask (-1: not worked out yet)
    )

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def new(cls, rules: Rules) -> "GameState":
        """A game before its first deal."""
        s = object.__new__(cls)
        n = rules.players
        s.rules = rules
        s.t = rules.table
        s.phase = DEAL
        s.hand_no = 0
        s.dealer = n - 1
        s.pass_direction = "hold"
        s.deck = ()
        s._hands = 0
        s.passes = (None,) * n
        s.received = (0,) * n
        s.trick = ()
        s.leader = -1
        s.to_move = -1
        s.tricks_played = 0
        s.hearts_broken = False
        s.taken = (0,) * n
        s.points = (0,) * n
        s.tricks_won = (0,) * n
        s.last_trick = None
        s.totals = (0,) * n
        s.history = ()
        s.shooter = None
        s.winners = ()
        s._legal = -1
        return s

    def _copy(self) -> "GameState":
        s = object.__new__(GameState)
        s.rules = self.rules
        s.t = self.t
        s.phase = self.phase
        s.hand_no = self.hand_no
        s.dealer = self.dealer
        s.pass_direction = self.pass_direction
        s.deck = self.deck
        s._hands = self._hands
        s.passes = self.passes
        s.received = self.received
        s.trick = self.trick
        s.leader = self.leader
        s.to_move = self.to_move
        s.tricks_played = self.tricks_played
        s.hearts_broken = self.hearts_broken
        s.taken = self.taken
        s.points = self.points
        s.tricks_won = self.tricks_won
        s.last_trick = self.last_trick
        s.totals = self.totals
        s.history = self.history
        s.shooter = self.shooter
        s.winners = self.winners
        s._legal = -1
        return s

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
        first = self.tricks_played == 0
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
        return cards_of(self.legal_mask())

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

    def play(self, card: str) -> "GameState":
        """The seat to move plays ``card``."""
        i = CARD_INDEX.get(card)
        if i is None:
            raise IllegalMove(Reason.UNKNOWN_CARD, text=card, legal=list(self.legal_cards()))
        return self._play(i, None)

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
            idx = [CARD_INDEX[c] for c in deck]
        except (KeyError, TypeError):
            bad = next((c for c in deck if c not in CARD_INDEX), None)
            raise IllegalMove(Reason.BAD_DECK, problem="unknown_card", card=str(bad)) from None
        if len(idx) != t.deck_size or len(set(idx)) != len(idx) or sum(map(BIT.__getitem__, idx)) != t.deck_mask:
            raise IllegalMove(Reason.BAD_DECK, problem="not_the_cards_in_play", size=len(idx), expected=t.deck_size)
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
        # One card at a time clockwise from the dealer's left: seat s gets every n-th card.
        bit = BIT.__getitem__
        hands = [sum(map(bit, idx[(seat - dealer - 1) % n::n])) for seat in range(n)]
        s = self._copy()
        s.hand_no = hand_no
        s.dealer = dealer
        s.pass_direction = direction
        s.deck = tuple(idx)
        s._hands = _pack(hands)
        s.passes = (None,) * n
        s.received = (0,) * n
        s.trick = ()
        s.tricks_played = 0
        s.hearts_broken = False
        s.taken = (0,) * n
        s.points = (0,) * n
        s.tricks_won = (0,) * n
        s.last_trick = None
        s.shooter = None
        if out is not None:
            out.append(ev.HandDealt(hand_no, dealer, direction))
        if direction == "hold":
            s._start_play()
        else:
            s.phase = PASS
            s.leader = -1
            s.to_move = -1
        return s

    def _start_play(self) -> None:
        """(On a fresh copy.) Enter the play phase with the first leader to move."""
        t = self.t
        if t.first_lead == "left_of_dealer":
            leader = (self.dealer + 1) % t.players
        else:
            bit = 1 << t.lowest_club
            leader = next(s for s, h in enumerate(self.hands) if h & bit)
        self.phase = PLAY
        self.leader = leader
        self.to_move = leader
        self._legal = -1

    def _pass(self, seat: int, cards: tuple[str, ...], out: list | None) -> "GameState":
        if self.phase != PASS:
            if self.phase == PLAY and self.pass_direction == "hold":
                raise IllegalMove(Reason.NO_PASS_THIS_HAND)
            raise self._wrong_phase(PASS)
        self._check_seat(seat)
        if self.passes[seat] is not None:
            raise IllegalMove(Reason.ALREADY_PASSED, seat=seat)
        t = self.t
        if len(cards) != t.pass_count:
            raise IllegalMove(Reason.WRONG_PASS_COUNT, expected=t.pass_count, given=len(cards))
        hand = self.hand_mask(seat)
        chosen = []
        mask = 0
        for c in cards:
            i = CARD_INDEX.get(c)
            if i is None:
                raise IllegalMove(Reason.UNKNOWN_CARD, text=str(c))
            if mask >> i & 1:
                raise IllegalMove(Reason.DUPLICATE_CARD, card=c)
            if not hand >> i & 1:
                raise IllegalMove(Reason.CARD_NOT_IN_HAND, card=c)
            mask |= 1 << i
            chosen.append(i)
        s = self._copy()
        passes = list(self.passes)
        passes[seat] = tuple(chosen)
        s.passes = tuple(passes)
        s._hands = self._hands & ~(mask << 52 * seat)
        if out is not None:
            out.append(ev.CardsPassed(seat))
        if all(p is not None for p in passes):
            s._exchange(out)
        return s

    def _exchange(self, out: list | None) -> None:
        """(On a fresh copy.) Every seat has passed: the passed cards join their new hands."""
        n = self.t.players
        direction = self.pass_direction
        received = [0] * n
        for seat, chosen in enumerate(self.passes):
            if direction == "scatter":
                k = len(chosen) // (n - 1)
                for j in range(n - 1):
                    to = (seat + 1 + j) % n
                    for i in chosen[j * k:(j + 1) * k]:
                        received[to] |= 1 << i
            else:
                step = {"left": 1, "right": n - 1, "across": n // 2}[direction]
                to = (seat + step) % n
                for i in chosen:
                    received[to] |= 1 << i
        self.received = tuple(received)
        self._hands = _pack([h | r for h, r in zip(self.hands, received)])
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

    def _play(self, i: int, out: list | None) -> "GameState":
        if self.phase != PLAY:
            raise self._wrong_phase(PLAY)
        bit = 1 << i
        legal = self._legal
        if legal < 0:
            legal = self.legal_mask()
        if not legal & bit:
            raise self._refusal(i, legal)
        t = self.t
        n = t.players
        seat = self.to_move
        s = self._copy()
        s._hands = self._hands ^ bit << 52 * seat
        trick = self.trick + (i,)
        if out is not None:
            out.append(ev.CardPlayed(seat, CARD_NAMES[i], self.tricks_played + 1))
        if not self.hearts_broken and (bit & HEARTS_MASK or (i == QS and t.qs_breaks)):
            s.hearts_broken = True
            if out is not None:
                out.append(ev.HeartsBroken(seat, CARD_NAMES[i]))
        if len(trick) < n:
            s.trick = trick
            s.to_move = seat + 1 if seat + 1 < n else 0
            return s
        # The trick is complete: the highest card of the led suit takes it.
        led = SUIT_OF[trick[0]]
        best = trick[0]
        best_k = 0
        tmask = 0
        points = 0
        values = t.values
        for k, c in enumerate(trick):
            tmask |= 1 << c
            points += values[c]
            if c > best and SUIT_OF[c] == led:
                best = c
                best_k = k
        winner = (self.leader + best_k) % n
        taken = list(self.taken)
        taken[winner] |= tmask
        s.taken = tuple(taken)
        if points:
            pts = list(self.points)
            pts[winner] += points
            s.points = tuple(pts)
        won = list(self.tricks_won)
        won[winner] += 1
        s.tricks_won = tuple(won)
        s.tricks_played = self.tricks_played + 1
        s.last_trick = (self.leader, trick, winner, points)
        s.trick = ()
        s.leader = winner
        s.to_move = winner
        if out is not None:
            out.append(ev.TrickWon(s.tricks_played, self.leader, tuple(CARD_NAMES[c] for c in trick), winner, points))
        if s.tricks_played == t.hand_size:
            s._end_hand(out)
        return s

    # -- scoring (RULES.md §2 rules 7 to 9, §3) -----------------------------------------------------

    def _end_hand(self, out: list | None) -> None:
        """(On a fresh copy.) Every trick is played: score the hand, or wait for the moon choice."""
        t = self.t
        self.to_move = -1
        shooter = None
        if t.sun:
            for seat, won in enumerate(self.tricks_won):
                if won == t.hand_size:
                    shooter = (seat, "sun")
        if shooter is None and t.moon != "none" and t.penalty_mask:
            for seat, m in enumerate(self.taken):
                if m & t.penalty_mask == t.penalty_mask:
                    shooter = (seat, "moon")
        if shooter is None:
            self._score(None, out)
        elif t.moon == "choice":
            self.phase = MOON
            self.shooter = shooter
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
        s.shooter = None
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
            for seat, taken in enumerate(self.taken):
                if taken & t.bonus_bit:
                    points[seat] += t.bonus
        return tuple(points)

    def _new_totals(self, points: tuple[int, ...]) -> tuple[int, ...]:
        t = self.t
        totals = tuple(a + b for a, b in zip(self.totals, points))
        if t.exact_target_reset is not None:
            totals = tuple(t.exact_target_reset if x == t.target else x for x in totals)
        return totals

    def _winners(self, totals: tuple[int, ...], hand_no: int) -> tuple[int, ...] | None:
        """Rule 9 steps 4 and 5: the winners if the game is over after these totals, else None."""
        t = self.t
        if t.end_after_hands is not None:
            ended = hand_no >= t.end_after_hands
        else:
            ended = any(x >= t.target for x in totals)
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
        self.totals = totals
        self.history = self.history + ((points, totals, moon),)
        winners = self._winners(totals, self.hand_no)
        if out is not None:
            out.append(ev.HandScored(self.hand_no, points, totals, moon, self.tricks_won))
        self.to_move = -1
        if winners is None:
            self.phase = DEAL
            return
        self.phase = OVER
        self.winners = winners
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
            "deck": [names[i] for i in self.deck],
            "hands": [list(cards_of(m)) for m in self.hands],
            "passes": [None if p is None else [names[i] for i in p] for p in self.passes],
            "received": [list(cards_of(m)) for m in self.received],
            "trick": [names[i] for i in self.trick],
            "leader": self.leader,
            "to_move": self.to_move,
            "tricks_played": self.tricks_played,
            "hearts_broken": self.hearts_broken,
            "taken": [list(cards_of(m)) for m in self.taken],
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
    def from_dict(cls, d: dict[str, Any]) -> "GameState":
        def mask(cards: Iterable[str]) -> int:
            m = 0
            for c in cards:
                m |= 1 << CARD_INDEX[c]
            return m

        s = cls.new(Rules.from_dict(d["rules"]))
        s.phase = d["phase"]
        s.hand_no = d["hand_no"]
        s.dealer = d["dealer"]
        s.pass_direction = d["pass_direction"]
        s.deck = tuple(CARD_INDEX[c] for c in d["deck"])
        s._hands = _pack([mask(h) for h in d["hands"]])
        s.passes = tuple(None if p is None else tuple(CARD_INDEX[c] for c in p) for p in d["passes"])
        s.received = tuple(mask(r) for r in d["received"])
        s.trick = tuple(CARD_INDEX[c] for c in d["trick"])
        s.leader = d["leader"]
        s.to_move = d["to_move"]
        s.tricks_played = d["tricks_played"]
        s.hearts_broken = d["hearts_broken"]
        s.taken = tuple(mask(m) for m in d["taken"])
        s.tricks_won = tuple(d["tricks_won"])
        lt = d["last_trick"]
        s.last_trick = None if lt is None else (
            lt["leader"], tuple(CARD_INDEX[c] for c in lt["cards"]), lt["winner"], lt["points"])
        s.totals = tuple(d["totals"])
        s.history = tuple(
            (tuple(h["points"]), tuple(h["totals"]),
             None if h["moon"] is None else ev.Moon(h["moon"]["seat"], h["moon"]["kind"], h["moon"]["scoring"]))
            for h in d["history"]
        )
        sh = d["shooter"]
        s.shooter = None if sh is None else (sh["seat"], sh["kind"])
        s.winners = tuple(d["winners"])
        return s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<GameState hand {self.hand_no} {self.phase} to_move={self.to_move} "
                f"trick={[CARD_NAMES[c] for c in self.trick]} totals={list(self.totals)}>")


def _pack(masks: Sequence[int]) -> int:
    """Every seat's hand mask in one int (seat s at bit 52*s)."""
    packed = 0
    for seat, m in enumerate(masks):
        packed |= m << 52 * seat
    return packed


def new_game(rules: Rules | None = None) -> GameState:
    """A game under ``rules`` (standard by default), waiting for its first deal."""
    return GameState.new(rules or Rules())
