"""``GET /game/<token>/replay``: every trick of every hand of a game, from a signed seat link.

The link is the seat's game-page token (``pbem.mail.links``): whoever holds it already sees what
that seat sees, so the replay needs no credential of its own. What it shows depends on whether
the game is over:

* while the game is on, only what the seat may see (``game_page.visible_history``): every trick
  played, its own passes, the results;
* once it is over (finished, or called off), everything: each hand's deal as dealt, every
  seat's pass, every trick and result, so the players can go over the game together.

The hands as dealt come from replaying the move log through the engine (the log holds each
deal's whole deck), never from a second record of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flask import Blueprint

from pbem.engine import GameState, PassCards, Rules, apply, move_from_dict, seat_view

from .game import render_seat_page
from .game_page import HandLog, LoggedMove, visible_history

__all__ = ["ReplayHand", "ReplayPage", "blueprint", "build_replay"]

blueprint = Blueprint("replay", __name__)

OVER_STATUSES = ("finished", "aborted")


@dataclass(frozen=True, slots=True)
class ReplayHand:
    log: HandLog
    #: Once the game is over: each seat's cards as dealt, and what each seat passed.
    dealt: tuple[tuple[str, ...], ...] = ()
    passes: tuple[tuple[str, ...] | None, ...] = ()


@dataclass(frozen=True, slots=True)
class ReplayPage:
    game_id: int
    seat: int
    status: str
    names: tuple[str, ...]
    rules: Mapping[str, Any]
    over: bool
    hands: tuple[ReplayHand, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]

    @property
    def players(self) -> int:
        return len(self.names)


def _deals_and_passes(rules: Rules, moves: Sequence[LoggedMove]) -> list[tuple[tuple[tuple[str, ...], ...],
                                                                                 list[tuple[str, ...] | None]]]:
    """Per hand: every seat's cards as dealt, and every seat's pass (engine replay of the log)."""
    state = GameState.new(rules)
    hands: list[tuple[tuple[tuple[str, ...], ...], list[tuple[str, ...] | None]]] = []
    for logged in moves:
        move = move_from_dict(dict(logged.payload))
        state, _events = apply(state, move)
        if logged.kind == "deal":
            dealt = tuple(tuple(state.hand(s)) for s in range(rules.players))
            hands.append((dealt, [None] * rules.players))
        elif isinstance(move, PassCards) and hands:
            hands[-1][1][move.seat] = tuple(move.cards)
    return hands


def build_replay(*, game_id: int, seat: int, status: str, names: Sequence[str], snapshot: Mapping[str, Any] | None,
                 rules: Mapping[str, Any], moves: Iterable[LoggedMove]) -> ReplayPage:
    """The replay page of ``seat`` (pure: no Flask, no database)."""
    game_rules = Rules.from_dict(dict(rules))
    moves = list(moves)
    state = GameState.from_dict(dict(snapshot)) if snapshot is not None else GameState.new(game_rules)
    over = status in OVER_STATUSES or (snapshot is not None and state.is_over)
    view = seat_view(state, seat) if snapshot is not None else {"history": []}
    logs = visible_history(moves, seat=seat, rules=game_rules, results=view["history"])
    extra = _deals_and_passes(game_rules, moves) if over else []
    hands = tuple(
        ReplayHand(log=log, dealt=extra[k][0], passes=tuple(extra[k][1])) if k < len(extra) else ReplayHand(log=log)
        for k, log in enumerate(logs)
    )
    return ReplayPage(game_id=game_id, seat=seat, status=status, names=tuple(names), rules=game_rules.to_dict(),
                      over=over, hands=hands, totals=tuple(state.totals),
                      winners=tuple(state.winners or ()) if state.is_over else ())


@blueprint.get("/game/<token>/replay")
def replay_page(token: str) -> tuple[str, int, dict[str, str]]:
    return render_seat_page(token, build_replay, "replay.html")
