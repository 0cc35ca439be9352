"""The operator's list of games (README, "Operating pbem"): ``pbem game list``.

Each game with its rule set, its seats (a person by address, a computer player by its kind), its
status and, from the cached state, its phase and hand, the seats it waits for (``seats.waiting_since``:
:mod:`.deadlines`), and when it last moved: its latest move's time (a game with no move yet: its
creation), and how long ago that was by the services' clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from pbem.db.models import Game, GameStatus, Move, Player, Seat
from pbem.db.session import transaction

from .database import Database

__all__ = ["GAME_STATUSES", "GameRow", "list_games"]

GAME_STATUSES = tuple(s.value for s in GameStatus)


@dataclass(frozen=True)
class GameRow:
    """One line of ``pbem game list``."""

    id: int
    preset: str
    players: tuple[str, ...]  # by seat: an address, or "bot:<kind>" (a person's seat a bot plays: "address (bot)")
    status: str
    phase: str  # the engine's phase ("" before the first deal)
    hand: int  # 1-based; 0 before the first deal
    waiting_for: tuple[str, ...]  # the seats' players the game waits for
    waiting_since: datetime | None
    last_move: datetime  # the latest move, or the game's creation
    idle: timedelta
    title: str

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "preset": self.preset, "players": list(self.players), "status": self.status,
                "phase": self.phase, "hand": self.hand, "waiting_for": list(self.waiting_for),
                "waiting_since": self.waiting_since.isoformat() if self.waiting_since else None,
                "last_move": self.last_move.isoformat(), "idle_seconds": int(self.idle.total_seconds()),
                "title": self.title}


def _seat_label(seat: Seat) -> str:
    """A person's seat by their address (with " (bot)" while a computer player has it: they
    resigned, declined, or a bot stands in), a computer player's by its kind."""
    if seat.player is not None:
        return f"{seat.player.address} (bot)" if seat.bot else seat.player.address
    return f"bot:{seat.bot}" if seat.bot else "(empty)"


def list_games(svc: Database, *, statuses: Sequence[str] = (), player: str | None = None,
               idle: timedelta | None = None, limit: int = 100) -> list[GameRow]:
    """Games in id order, at most ``limit``: with one of ``statuses``, with ``player`` (an address)
    at a seat, with no move for at least ``idle``."""
    now = svc.clock.now()
    # The latest move's time: one probe of the log's (game_id, seq) index per game.
    latest = (select(Move.created_at).where(Move.game_id == Game.id).order_by(Move.seq.desc()).limit(1)
              .correlate(Game).scalar_subquery())
    last_at = func.coalesce(latest, Game.created_at)
    query = select(Game, last_at.label("last_at")).options(selectinload(Game.seats).selectinload(Seat.player))
    if statuses:
        query = query.where(Game.status.in_([GameStatus(s) for s in statuses]))
    if player:
        query = query.where(Game.id.in_(select(Seat.game_id).join(Player, Player.id == Seat.player_id)
                                        .where(Player.address == player.strip().lower())))
    if idle is not None:
        query = query.where(last_at <= now - idle)
    query = query.order_by(Game.id).limit(limit)
    rows: list[GameRow] = []
    with transaction(svc.session_factory) as session:
        for game, last_move in session.execute(query):
            seats = sorted(game.seats, key=lambda s: s.seat)
            snapshot = game.snapshot or {}
            waiting = [s for s in seats if s.waiting_since is not None]
            rows.append(GameRow(
                id=game.id, preset=str((game.rules or {}).get("preset", "")),
                players=tuple(_seat_label(s) for s in seats), status=str(game.status),
                phase=str(snapshot.get("phase", "")), hand=int(snapshot.get("hand_no", 0) or 0),
                waiting_for=tuple(s.player.address if s.player is not None else str(s.seat) for s in waiting),
                waiting_since=min((s.waiting_since for s in waiting), default=None),  # type: ignore[type-var]
                last_move=last_move, idle=max(now - last_move, timedelta(0)), title=game.title or ""))
    return rows
