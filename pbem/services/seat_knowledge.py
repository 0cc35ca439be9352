"""What one seat may know of a partnership and of a kitty (RULES.md §6.1, §6.2), as plain values.

Pages (:mod:`pbem.services.game_views`) and mails read the teams and the kitty from here, never from
the state directly, so that no template can show another seat's hidden cards by mistake: the kitty's
cards are in the facts of its taker only (RULES.md §6.2: "the other players learn only who took
it"), and so are the cards a ``kitty_exchange`` taker discarded face down.  For every other seat,
the cards the taker holds that way are left out of what it has taken, and their points out of its
points so far (else the taker's points would jump by the kitty's value, which tells what it held).

Once a hand is scored, the kitty (and the discards) may be shown to the whole table: every other
card of the hand has been played face up, so they are no secret any more (as the engine's
``seat_view`` and the hand's summary mail do).

The passing variants (RULES.md §6.3) are told the same way: everyone sees the dealer's call for the
hand (``dealer_calls_pass``: "2 left 1 right", or mix), that a hand's pass is a mix, and whether
declining is allowed; whether a seat declined only that seat knows (the engine tells the table only
that it has passed), and neither the cards gathered for a mix nor the cards forwarded through a
decliner are in any seat's facts (a decliner's ``received`` is empty: RULES.md §6.3 "a player who
declined never sees the forwarded cards").

Turbo (RULES.md §6.4): a seat's charge is its own until every seat has decided; then the whole
table's.  During the CHARGE phase ``charges`` holds the seat's own decision (None while it is still to
make it) and None for every other seat, and nothing here says who is still to decide: the engine
records "none" at once for a seat holding no chargeable card (AH, QS, TC, the bonus card), so naming
the seats still to charge would tell who holds one.  ``charge_choices`` (the chargeable cards the seat
holds) is the seat's own, in CHARGE only.  Booster Nines (RULES.md §6.5) is public: whether the trick
on the table is boosted, and whether it is in its second round.

Pure: imports the engine only (mails and pages both use it, without an import cycle).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pbem.engine import CALL, CHARGE, DEAL, OVER, GameState, Rules

__all__ = ["Call", "SeatFacts", "decline_allowed", "hand_over", "sees_kitty", "seat_facts", "team_values", "teams_of"]

#: A dealer's call (RULES.md §6.3): ``(direction, count)`` pairs, e.g. ``(("left", 2), ("right", 1))``
#: or ``(("mix", 3),)``; ``(("hold", 0),)`` only as the deadline's default on a hold hand.
Call = tuple[tuple[str, int], ...]


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
    kitty: tuple[str, ...]  # its cards: only for the taker, or for everyone once the hand is scored
    discarded: tuple[str, ...]  # kitty_exchange: the taker's face-down discards, on the same terms
    kitty_open: bool  # the hand is scored: the kitty is shown to the whole table
    #: RULES.md §6.3, told to the whole table: the dealer's call for this hand and who called it
    #: (``dealer_calls_pass``; ``()``/None otherwise), whether the hand's pass is a mix, whether
    #: declining is allowed on it (``pass_optional``, a hand that passes, not a mix).
    pass_call: Call = ()
    caller: int | None = None
    mixed: bool = False
    decline_allowed: bool = False
    #: This seat's own: it declined this hand's pass (nobody else is told).
    declined: bool = False
    #: Between hands with ``dealer_calls_pass`` (phase ``call``): the dealer who calls the coming
    #: hand's pass, and the calls it may make (in the dealer's own facts only).
    calling: int | None = None
    call_choices: tuple[Call, ...] = ()
    #: Turbo (RULES.md §6.4): by seat, the cards charged: in CHARGE this seat's own only (None while
    #: undecided), every other None; all once revealed; ``()`` without turbo or before the charge phase.
    charges: tuple[tuple[str, ...] | None, ...] = ()
    charges_revealed: bool = False
    charge_choices: tuple[str, ...] = ()  # this seat's chargeable cards, in CHARGE while it is to decide
    charge_limit: int = 0  # the most cards one player may charge (0 without turbo)
    #: Booster Nines (RULES.md §6.5), public: the trick on the table is boosted / in its second round.
    trick_boosted: bool = False
    boost_round: bool = False

    @property
    def charging(self) -> bool:
        """This seat is still to make its charge decision (told to itself only)."""
        return bool(self.charge_choices)

    @property
    def my_team(self) -> int | None:
        return next((k for k, team in enumerate(self.teams) if self.seat in team), None)

    @property
    def took_kitty(self) -> bool:
        return self.kitty_taker is not None and self.kitty_taker == self.seat


def teams_of(rules: Rules) -> tuple[tuple[int, ...], ...]:
    """The teams of ``rules`` (RULES.md §6.1: partners sit opposite), ``()`` without a partnership."""
    return tuple(tuple(team) for team in rules.teams)


def team_values(rules: Rules, by_seat: Sequence[int]) -> tuple[int, ...]:
    """Per-seat values by team: in ``team`` mode partners carry the team's value already (RULES.md
    §6.8: per-seat scores are not kept), so a team's value is its first seat's; in ``individual``
    mode the partners' sum (RULES.md §6.1)."""
    teams = rules.teams
    if rules.partnership == "team":
        return tuple(by_seat[team[0]] for team in teams)
    return tuple(sum(by_seat[s] for s in team) for team in teams)


def hand_over(state: GameState) -> bool:
    """The current hand is scored (not waiting for a moon choice any more; with ``dealer_calls_pass``
    the next hand's call is awaited)."""
    return state.hand_no > 0 and state.phase in (CALL, DEAL, OVER)


def decline_allowed(rules: Rules, direction: str) -> bool:
    """A hand passing ``direction`` may be declined (RULES.md §6.3 ``pass_optional``; §6.8: not a mix)."""
    return rules.pass_optional and bool(rules.pass_count) and direction not in ("hold", "mix")


def sees_kitty(state: GameState, seat: int) -> bool:
    """``seat`` may be shown the kitty's cards (and the discards): it took them, or the hand is
    scored (RULES.md §6.2)."""
    taker = state.kitty_taker
    return taker is not None and (taker == seat or hand_over(state))


def seat_facts(state: GameState, seat: int) -> SeatFacts:
    """What ``seat`` may know of the teams and the kitty of ``state``."""
    rules = state.rules
    teams = teams_of(rules)
    taker = state.kitty_taker
    sees = sees_kitty(state, seat)
    # The engine says which cards lie face down in the taker's tricks (one place for that rule).
    public = taker is None or sees
    points = state.points if public else state.public_points()
    # By name, a card taken twice named twice (RULES.md §6.6: two decks).
    taken = state.taken_cards() if public else state.public_taken_cards()
    return SeatFacts(
        seat=seat,
        partnership=rules.partnership,
        teams=teams,
        partner=next((s for team in teams if seat in team for s in team if s != seat), None),
        team_totals=tuple(state.team_totals),
        team_points=tuple(sum(points[s] for s in team) for team in teams),  # the tricks' points, pooled
        points=tuple(points),
        taken=tuple(tuple(cards) for cards in taken),
        kitty_size=rules.table.kitty_size,
        kitty_taker=taker,
        kitty_trick=state.kitty_trick if taker is not None else None,
        kitty=tuple(state.kitty) if sees else (),
        discarded=tuple(state.discarded) if sees else (),
        kitty_open=taker is not None and hand_over(state),
        pass_call=tuple(state.pass_call) if state.hand_no else (),
        caller=state.dealer if state.pass_call and state.hand_no else None,
        mixed=state.hand_no > 0 and state.pass_direction == "mix",
        decline_allowed=state.hand_no > 0 and decline_allowed(rules, state.pass_direction),
        declined=state.phase != CALL and seat in _declined(state),
        calling=state.next_dealer if state.phase == CALL else None,
        call_choices=tuple(state.call_choices()) if state.phase == CALL and seat == state.next_dealer else (),
        charges=_charges(state, seat),
        charges_revealed=bool(state.charges) and state.charges_revealed,
        charge_choices=tuple(state.charge_choices(seat)) if state.phase == CHARGE else (),
        charge_limit=state.charge_limit if rules.turbo else 0,
        trick_boosted=state.trick_boosted,
        boost_round=state.boost_round,
    )


def _charges(state: GameState, seat: int) -> tuple[tuple[str, ...] | None, ...]:
    """The charges ``seat`` may see (RULES.md §6.4): its own during CHARGE, all once revealed."""
    own_only = state.phase == CHARGE or not state.charges_revealed
    return tuple(None if c is None or (own_only and s != seat) else tuple(c) for s, c in enumerate(state.charges))


def _declined(state: GameState) -> tuple[int, ...]:
    """The seats that declined this hand's pass (only ever told to each of them, by :func:`seat_facts`)."""
    return tuple(state.declined) if state.rules.pass_optional and state.hand_no else ()
