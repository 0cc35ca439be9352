"""What a bot may know when it decides: one seat's knowledge of a game, as card masks.

A bot must decide from what its seat may know, never from other seats' hidden cards. A
:class:`BotView` is built from a :class:`~pbem.engine.GameState` by reading only the seat's own hand,
its own pass, what it received, and what the whole table has seen (every card played, who took what,
the totals). Bots read masks (see :mod:`pbem.engine.cards`) because their search runs on them.

Why the finished tricks travel with the view: an engine state keeps only the last finished trick, but
inference needs every one (a seat that did not follow suit is void in it). Callers that have the move
log give the tricks (``from_moves``, or ``from_state(..., tricks=...)``); without them the view holds
the last trick only and says so (``tricks_complete``), and bots infer less.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from pbem.engine import Deal, GameState, Move, PlayCard, Rules, apply, new_game
from pbem.engine.cards import CARD_INDEX, FULL_DECK, cards_of, mask_of
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

    # -- derived knowledge -------------------------------------------------------------------------

    @property
    def table(self) -> Table:
        return self.rules.table

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def played(self) -> int:
        """Every card played this hand, the trick on the table included."""
        m = 0
        for taken in self.taken:
            m |= taken
        for c in self.trick:
            m |= 1 << c
        return m

    @property
    def unseen(self) -> int:
        """The cards in play this seat has not seen: in the other seats' hands."""
        return self.table.deck_mask & ~self.hand & ~self.played & FULL_DECK

    def cards_held(self, seat: int) -> int:
        """How many cards ``seat`` holds now (during play every seat plays one card per trick)."""
        t = self.table
        n = t.players
        played_now = (seat - self.leader) % n < len(self.trick)
        return t.hand_size - self.tricks_played - (1 if played_now else 0)

    def pass_targets(self) -> tuple[int, ...]:
        """The seat that received each card this seat passed (same order as ``passed``)."""
        if not self.passed:
            return ()
        n = self.players
        direction = self.pass_direction
        if direction == "scatter":
            k = len(self.passed) // (n - 1)
            return tuple((self.seat + 1 + j // k) % n for j in range(len(self.passed)))
        step = {"left": 1, "right": n - 1, "across": n // 2}[direction]
        return ((self.seat + step) % n,) * len(self.passed)

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
        return cls(
            rules=state.rules,
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
            taken=tuple(state.taken),
            points=tuple(state.points),
            tricks_won=tuple(state.tricks_won),
            totals=tuple(state.totals),
            shooter_kind=shooter[1] if shooter is not None and shooter[0] == seat else None,
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
        )


def as_bot_view(view: "BotView | Mapping[str, Any]") -> BotView:
    """Bots accept a :class:`BotView` or the engine's ``seat_view`` dict."""
    if isinstance(view, BotView):
        return view
    return BotView.from_seat_view(view)


def bot_view(state: GameState, seat: int, tricks: Sequence[SeenTrick] | None = None) -> BotView:
    """The view a bot in ``seat`` decides from (see :meth:`BotView.from_state`)."""
    return BotView.from_state(state, seat, tricks)
