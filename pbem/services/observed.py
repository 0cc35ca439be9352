"""The moves a transaction committed, told once it committed: counted (``pbem.metrics``) and
logged, one line each (README, "Metrics and logs").

``gamestore.append_move`` notes each move in the session (``note_move``), the processing of a
received mail notes when the front answered it with 250 (``note_received``), and a process that
wants to know (a worker: ``watch_moves`` on its session factory) gets them after each commit; a
transaction rolled back (a race retried, an error) tells nothing.  Each line names the game, the
move's number and kind, the seat, the received mail that led to it and how long after that
mail's 250 the move was committed::

    game 12 move 57 play seat 2 (inbound 345): committed 0.084 s after its 250
    game 12 move 58 play seat 3 (inbound 345): committed 0.084 s after its 250
    game 40 move 9 deal (no mail)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from pbem import metrics

from .clock import Clock

__all__ = ["MoveCommitted", "note_move", "note_received", "received_at", "watch_moves"]

log = logging.getLogger("pbem.worker")

_MOVES = "pbem.moves_noted"
_RECEIVED = "pbem.received_at"


@dataclass(frozen=True)
class MoveCommitted:
    game_id: int
    seq: int
    kind: str
    seat: int | None
    inbound_id: int | None


def note_move(session: Session, game_id: int, seq: int, kind: str, seat: int | None, inbound_id: int | None) -> None:
    """Note a move written in this transaction (told after its commit)."""
    session.info.setdefault(_MOVES, []).append(MoveCommitted(game_id, seq, kind, seat, inbound_id))


def note_received(session: Session, at: datetime) -> None:
    """Note when the mail this transaction processes was answered with 250 (its ``received_at``)."""
    session.info[_RECEIVED] = at


def received_at(session: Session) -> datetime | None:
    """When the mail processed in this transaction was received (None: no mail)."""
    value = session.info.get(_RECEIVED)
    return value if isinstance(value, datetime) else None


def watch_moves(session_factory: sessionmaker[Session], clock: Clock) -> None:
    """After each commit of a session from ``session_factory``: count and log the moves it wrote."""

    def committed(session: Session) -> None:
        moves: list[MoveCommitted] = session.info.pop(_MOVES, [])
        received = session.info.pop(_RECEIVED, None)
        if not moves:
            return
        now = clock.now()
        for move in moves:
            metrics.count_move(move.kind)
            _log_move(move, now, received)

    def rolled_back(session: Session, *_args: Any) -> None:
        session.info.pop(_MOVES, None)
        session.info.pop(_RECEIVED, None)

    event.listen(session_factory, "after_commit", committed)
    event.listen(session_factory, "after_rollback", rolled_back)


def _log_move(move: MoveCommitted, now: datetime, received: datetime | None) -> None:
    seat = "" if move.seat is None else f" seat {move.seat}"
    if move.inbound_id is None:
        log.info("game %s move %s %s%s (no mail)", move.game_id, move.seq, move.kind, seat)
    elif received is None:
        log.info("game %s move %s %s%s (inbound %s)", move.game_id, move.seq, move.kind, seat, move.inbound_id)
    else:
        log.info("game %s move %s %s%s (inbound %s): committed %.3f s after its 250", move.game_id, move.seq,
                 move.kind, seat, move.inbound_id, (now - received).total_seconds())
