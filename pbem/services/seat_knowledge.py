"""What one seat may know of a partnership and of a kitty (RULES.md §6.1, §6.2), as plain values.

Pages (:mod:`pbem.services.game_views`) and mails read the teams and the kitty from here, never from
the state directly, so that no template can show another seat's hidden cards by mistake: the kitty's
cards are in the facts of its taker only (RULES.md §6.2: "the other players learn only who took
it"), and so are the cards a ``kitty_exchange`` taker discarded face down.  For every other seat,
the cards the taker holds that way are left out of what it has taken, and their points out of its
points so far (else the taker's points would jump by the kitty's value, which tells what it held).

Once a hand's tricks are all played, the kitty (and the discards) may be shown to the whole table:
every other card of the hand has been played face up, so they are no secret any more (the pages'
choice; README, "The game page").

Pure: imports the engine only (mails and pages both use it, without an import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.engine import CARD_NAMES, DEAL, MOON, OVER, GameState, Rules, card_points

__all__ = ["SeatFacts", "discards_of", "hand_over", "hidden_from", "seat_facts", "team_values", "teams_of"]


@dataclass(frozen=True, slots=True)
class SeatFacts:
    """The variant parts of a state as one seat may see them.

    Without a partnership ``teams``/``team_totals``/``team_points`` are empty and ``partner`` is None;
    without a kitty ``kitty_size`` is 0 and the kitty fields are empty.
    """

    seat: int
    partnership: str  # "none", "team" or "individual" (RULES.md §6.1)
    teams: tuple[tuple[int, ...], ...]  # ((0, 2), (1, 3)) with a partnership
    partner: int | None
    team_totals: tuple[int, ...]  # by team: team mode the team's total, individual mode the partners' sum
    team_points: tuple[int, ...]  # by team: the points its players took so far this hand (as this seat sees them)
    points: tuple[int, ...]  # by seat: points taken so far this hand, hidden cards' points left out
    taken: tuple[tuple[str, ...], ...]  # by seat: the cards taken so far this hand, hidden cards left out
    kitty_size: int
    kitty_taker: int | None  # None while the kitty lies on the table (or without a kitty)
    kitty_trick: int | None  # the trick at whose end it was taken
    kitty: tuple[str, ...]  # its cards: only for the taker, or for everyone once the hand is over
    discarded: tuple[str, ...]  # kitty_exchange: the taker's face-down discards, on the same terms
    kitty_open: bool  # the hand is over: the kitty is shown to the whole table

    @property
    def my_team(self) -> int | None:
        return next((k for k, team in enumerate(self.teams) if self.seat in team), None)

    @property
    def took_kitty(self) -> bool:
        return self.kitty_taker is not None and self.kitty_taker == self.seat


def teams_of(rules: Rules) -> tuple[tuple[int, ...], ...]:
    """The teams of ``rules`` (RULES.md §6.1: partners sit opposite), ``()`` without a partnership."""
    teams = getattr(rules, "teams", ())
    return tuple(tuple(team) for team in teams)


def team_values(rules: Rules, by_seat: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Per-seat values summed per team: in ``team`` mode partners carry the team's value already
    (RULES.md §6.8: per-seat scores are not kept), so the team's value is its first seat's."""
    teams = teams_of(rules)
    if getattr(rules, "partnership", "none") == "team":
        return tuple(by_seat[team[0]] for team in teams)
    return tuple(sum(by_seat[s] for s in team) for team in teams)


def hand_over(state: GameState) -> bool:
    """Every trick of the current hand is played (scored, or waiting for a moon choice)."""
    return state.hand_no > 0 and state.phase in (DEAL, MOON, OVER)


def hidden_from(state: GameState, seat: int) -> tuple[str, ...]:
    """The cards in the kitty taker's tricks that ``seat`` may not see (empty for the taker, and once
    the hand is over): the kitty itself, or with ``kitty_exchange`` the taker's discards."""
    taker = getattr(state, "kitty_taker", None)
    if taker is None or taker == seat or hand_over(state):
        return ()
    if getattr(state.rules, "kitty_exchange", False):
        return discards_of(state)
    return tuple(getattr(state, "kitty", ()) or ())


def discards_of(state: GameState) -> tuple[str, ...]:
    """The taker's face-down discards (``kitty_exchange``), ``()`` before them or without them."""
    return tuple(getattr(state, "kitty_discards", None) or getattr(state, "discarded", None) or ())


def _names(mask: int) -> tuple[str, ...]:
    return tuple(CARD_NAMES[i] for i in range(52) if mask >> i & 1)


def seat_facts(state: GameState, seat: int) -> SeatFacts:
    """What ``seat`` may know of the teams and the kitty of ``state``."""
    rules = state.rules
    teams = teams_of(rules)
    partnership = str(getattr(rules, "partnership", "none"))
    taker = getattr(state, "kitty_taker", None)
    hidden = hidden_from(state, seat)
    points = list(state.points)
    taken = [_names(mask) for mask in state.taken]
    if hidden and taker is not None:
        secret = frozenset(hidden)
        points[taker] -= card_points(rules, [c for c in taken[taker] if c in secret])
        taken[taker] = tuple(c for c in taken[taker] if c not in secret)
    open_ = hand_over(state)
    sees = taker is not None and (taker == seat or open_)
    kitty = tuple(getattr(state, "kitty", ()) or ()) if sees else ()
    discarded = discards_of(state) if sees else ()
    partner = next((s for team in teams if seat in team for s in team if s != seat), None)
    engine_team_totals = getattr(state, "team_totals", None)
    team_totals = tuple(engine_team_totals) if engine_team_totals else team_values(rules, state.totals)
    return SeatFacts(
        seat=seat,
        partnership=partnership,
        teams=teams,
        partner=partner,
        team_totals=team_totals if teams else (),
        team_points=tuple(sum(points[s] for s in team) for team in teams),
        points=tuple(points),
        taken=tuple(taken),
        kitty_size=int(getattr(rules.table, "kitty_size", 0) or 0),
        kitty_taker=taker,
        kitty_trick=getattr(state, "kitty_trick", None) if taker is not None else None,
        kitty=kitty,
        discarded=discarded,
        kitty_open=open_ and taker is not None,
    )
