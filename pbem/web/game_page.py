"""What one seat's game page shows, as plain values (pure: no Flask, no database).

Two sources, both filtered to what the seat may know:

* the engine's ``seat_view`` of the current state (own hand, the trick on the table, the
  last trick, totals, hand-by-hand results);
* the move log, for the history of play: every card played is seen by the whole table,
  and so is a moon choice; of the passes a seat sees only its own cards (that the others
  have passed, not what); of a deal, nothing (the log keeps the whole deck).

Moves of a kind this module does not know are left out rather than shown raw: a new kind
of move must be taught here before the page reveals anything of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pbem.engine import GameState, Rules, card_points, seat_view, trick_winner
from pbem.mail.cards_display import group_by_suit

__all__ = ["GamePage", "HandLog", "LoggedMove", "TrickLog", "build_page", "visible_history"]


@dataclass(frozen=True, slots=True)
class LoggedMove:
    """One row of the move log, as the page reads it."""

    kind: str
    seat: int | None
    payload: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TrickLog:
    number: int
    leader: int
    plays: tuple[tuple[int, str], ...]  # (seat, card) in playing order
    winner: int | None  # None while the trick is on the table
    points: int | None


@dataclass(slots=True)
class HandLog:
    number: int
    pass_direction: str
    passed: tuple[str, ...] | None = None  # this seat's own pass
    seats_passed: int = 0  # how many seats have passed (not what)
    tricks: list[TrickLog] = field(default_factory=list)
    moon_choices: list[tuple[int, str]] = field(default_factory=list)
    result: Mapping[str, Any] | None = None  # the view's history entry once scored


def visible_history(
    moves: Iterable[LoggedMove], *, seat: int, rules: Rules, results: Sequence[Mapping[str, Any]] = ()
) -> list[HandLog]:
    """The hands so far as ``seat`` may see them, oldest first."""
    players = rules.players
    table = rules.table
    hands: list[HandLog] = []

    def trick_points(rules: Rules, cards: list[str]) -> int:
        """What the trick scores its taker: penalty points, and the bonus card's bonus (Omnibus JD)."""
        bonus = rules.jd_bonus if rules.jd_bonus and rules.bonus_card in cards else 0
        return card_points(rules, cards) + bonus

    plays: list[tuple[int, str]] = []

    def close_trick(force: bool) -> None:
        if not hands or not plays or (len(plays) < players and not force):
            return
        hand = hands[-1]
        complete = len(plays) == players
        leader = plays[0][0]
        cards = [card for _, card in plays]
        hand.tricks.append(
            TrickLog(
                number=len(hand.tricks) + 1,
                leader=leader,
                plays=tuple(plays),
                winner=trick_winner(cards, leader, players) if complete else None,
                points=trick_points(rules, cards) if complete else None,
            )
        )
        plays.clear()

    for move in moves:
        payload = move.payload
        mover = move.seat if move.seat is not None else payload.get("seat")
        if move.kind == "deal":
            close_trick(force=True)
            number = len(hands) + 1
            direction = payload.get("pass_direction") or table.pass_direction(number)
            hands.append(HandLog(number=number, pass_direction=str(direction)))
        elif not hands:
            continue  # nothing is played before the first deal
        elif move.kind == "pass":
            hands[-1].seats_passed += 1
            if mover == seat:
                hands[-1].passed = tuple(str(c) for c in payload.get("cards", ()))
        elif move.kind == "play" and isinstance(mover, int):
            plays.append((mover, str(payload["card"])))
            close_trick(force=False)
        elif move.kind == "moon" and isinstance(mover, int):
            hands[-1].moon_choices.append((mover, str(payload.get("choice", ""))))
    close_trick(force=True)
    for hand, result in zip(hands, results):
        hand.result = result
    return hands


@dataclass(frozen=True, slots=True)
class GamePage:
    """Everything ``templates/web/game.html`` reads."""

    game_id: int
    seat: int
    status: str
    names: tuple[str, ...]
    rules: Mapping[str, Any]
    view: Mapping[str, Any] | None  # None until the first deal
    hand_by_suit: tuple[tuple[str, tuple[str, ...]], ...]
    hands: tuple[HandLog, ...]
    my_turn: bool

    @property
    def players(self) -> int:
        return len(self.names)


def build_page(
    *,
    game_id: int,
    seat: int,
    status: str,
    names: Sequence[str],
    snapshot: Mapping[str, Any] | None,
    rules: Mapping[str, Any],
    moves: Iterable[LoggedMove],
) -> GamePage:
    """The page of ``seat``: the engine's view of the snapshot plus the visible log."""
    if snapshot is None:
        return GamePage(
            game_id=game_id, seat=seat, status=status, names=tuple(names), rules=rules,
            view=None, hand_by_suit=(), hands=(), my_turn=False,
        )
    state = GameState.from_dict(dict(snapshot))
    view = seat_view(state, seat)
    hands = visible_history(moves, seat=seat, rules=state.rules, results=view["history"])
    return GamePage(
        game_id=game_id,
        seat=seat,
        status=status,
        names=tuple(names),
        rules=state.rules.to_dict(),
        view=view,
        hand_by_suit=tuple((suit, tuple(cards)) for suit, cards in group_by_suit(view["hand"])),
        hands=tuple(hands),
        my_turn=seat in view["to_act"],
    )
