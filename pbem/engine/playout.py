"""A hand's card play on plain masks and lists, changed in place: the fast path of a bot's rollouts.

:class:`~pbem.engine.state.GameState` is immutable, checks every card and keeps the history a server
needs; a search that plays thousands of hands out a decision needs none of that. A :class:`Playout`
starts from a state in the play phase and plays legal cards (the caller's, unchecked) to the hand's
end, with the same rules as the state: :mod:`~pbem.engine.trick_rules` holds them for both.

It covers the rules whose card play is a trick's highest card of the led suit taking its penalty
points (:meth:`Playout.supports`): one deck, no kitty, partnership, Turbo or Booster Nines, no score
for who takes which trick (``sun``, ``avoid_all_tricks_bonus``), and a moon scored ``old``, ``new``
or not at all. Elsewhere a bot plays through the state.
"""

from __future__ import annotations

from typing import Any

from . import events as ev
from .rules import Table
from .trick_rules import breaks_hearts, legal_of, plain_hand_points, trick_taken


class Playout:
    """The rest of a hand's card play (RULES.md §2 rules 6 to 9), mutable. ``hands``, ``taken``:
    masks by seat; ``points``: penalty points taken by seat; ``played``: every card played this hand,
    the trick's included; ``trick``: the cards on the table (indices), led by ``leader``."""

    __slots__ = ("t", "n", "hands", "taken", "points", "played", "trick", "leader", "to_move",
                 "tricks_played", "hearts_broken", "over")

    @staticmethod
    def supports(t: Table) -> bool:
        """Whether the card play of rules ``t`` is this class's (see the module docstring)."""
        return (not t.two_decks and not t.kitty_size and not t.turbo and not t.booster and t.partnership == "none"
                and not t.tricks_matter and t.moon in ("old", "new", "none"))

    def __init__(self, state: Any) -> None:
        t = state.t
        n = t.players
        self.t = t
        self.n = n
        self.hands = [state.hand_mask(seat) for seat in range(n)]
        self.taken = list(state.taken)
        self.points = list(state.points)
        played = 0
        for m in self.taken:
            played |= m
        for c in state.trick:
            played |= 1 << c
        self.played = played
        self.trick = state.trick
        self.leader = state.leader
        self.to_move = state.to_move
        self.tricks_played = state.tricks_played
        self.hearts_broken = state.hearts_broken
        self.over = state.phase != "play"

    def legal(self) -> int:
        """The legal cards of the seat to move (a mask)."""
        return legal_of(self.t, self.hands[self.to_move], self.trick, self.tricks_played == 0, self.hearts_broken)

    def play(self, c: int) -> bool:
        """The seat to move plays card ``c`` (legal: not checked). Returns whether it ended a trick;
        after the hand's last trick ``over`` is true."""
        bit = 1 << c
        seat = self.to_move
        self.hands[seat] ^= bit
        self.played |= bit
        if not self.hearts_broken and breaks_hearts(self.t, c):
            self.hearts_broken = True
        trick = self.trick + (c,)
        n = self.n
        if len(trick) < n:
            self.trick = trick
            self.to_move = seat + 1 if seat + 1 < n else 0
            return False
        tmask, points, winner = trick_taken(self.t, trick, self.leader)
        self.taken[winner] |= tmask
        self.points[winner] += points
        self.trick = ()
        self.leader = self.to_move = winner
        self.tricks_played += 1
        if self.tricks_played == self.t.hand_size:
            self.over = True
        return True

    def hand_points(self) -> tuple[int, ...]:
        """Each seat's hand score once the hand is played, or once no card left to play can score
        (rule 9): the points taken, or a moon's (``moon=old`` or ``new``: a seat took every penalty card)."""
        t = self.t
        moon = None
        pen = t.penalty_mask
        if t.moon != "none" and pen:
            for seat, m in enumerate(self.taken):
                if m & pen == pen:
                    moon = ev.Moon(seat, "moon", t.moon, False, t.moon_total)
        copies = [1 if m & t.bonus_bit else 0 for m in self.taken] if t.bonus_bit else ()
        return plain_hand_points(t, self.points, (), copies, moon)
