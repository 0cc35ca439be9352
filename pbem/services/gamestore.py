"""Loading and saving games: the move log is the truth, the snapshot a cache of it.

Every change to a game happens inside one transaction that first locks the game row
(``SELECT … FOR UPDATE`` on PostgreSQL; on SQLite the whole transaction already holds the write
lock, taken by ``BEGIN IMMEDIATE``), reads the snapshot, applies moves through the engine, appends
them to ``moves`` (``UNIQUE(game_id, seq)``) and writes the new snapshot. The row's ``version``
column is checked and bumped by every UPDATE (SQLAlchemy's version counter), so even without the
lock two writers could not both commit on the same version.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.orm.attributes import set_committed_value

from pbem.db.models import Game, Move, Seat, TableTalk
from pbem.db.writes import add_row
from pbem.engine import GameState, Rules, move_from_dict, move_to_dict, replay
from pbem.engine import Move as EngineMove

from .observed import note_move


class GameNotFound(LookupError):
    pass


def load_game(session: Session, game_id: int, *, lock: bool = True) -> Game:
    """The game row, locked for this transaction when ``lock`` (the default), with its seats
    and their players.

    A move reads every seat and every seated player (who is told what, in which language);
    loading them lazily cost a query each, plus a flush of the pending changes before each
    (so the game row was updated twice per move).  Locked, two statements load everything:

    1. the game row, ``SELECT .. FOR UPDATE``: once the lock is granted, PostgreSQL returns the
       locked row as the worker that held it committed it (READ COMMITTED re-reads the locked
       row, and only it);
    2. then its seats, their players and the newest talk id, in a statement issued *after* the
       lock was granted: joined into the locking statement, they would be as they were when it
       started waiting, i.e. from before the move of the worker that held the lock.

    The game's own columns (its rules and snapshot: JSON) are read once, not once per seat as
    a join would repeat them.  Unlocked, one joined statement.
    """
    if not lock:
        row = session.execute(_LOAD_GAME, {"game_id": game_id}).unique().one_or_none()
        if row is None:
            raise GameNotFound(game_id)
        return row[0]
    game = session.execute(_LOCK_GAME, {"game_id": game_id}).scalar_one_or_none()
    if game is None:
        raise GameNotFound(game_id)
    rows = session.execute(_LOAD_SEATS, {"game_id": game_id}).all()
    set_committed_value(game, "seats", [seat for seat, _talk in rows])
    if rows:  # talk is only written under the game's lock: this stays true in the transaction
        note_last_talk(session, game_id, rows[0][1] or 0)
    return game


# The newest line of table talk of the game, read with it: when every seat has seen it, a turn's
# mails need no query for unseen talk (pbem.services.talk.take_unseen_for).
_TALK = TableTalk.__table__
_LAST_TALK_KEY = "pbem.last_talk"


def note_last_talk(session: Session, game_id: int, talk_id: int) -> None:
    """Remember the newest talk id of a game locked in this transaction."""
    session.info.setdefault(_LAST_TALK_KEY, {})[game_id] = talk_id


def last_talk(session: Session, game_id: int) -> int | None:
    """The newest talk id of a game locked in this transaction (None: not known here)."""
    return session.info.get(_LAST_TALK_KEY, {}).get(game_id)


# Built once, the game id bound at each run: SQLAlchemy then finds their compiled form without
# building the statement and its cache key anew for every move.  Objects this session loaded
# before (the sender's player) are refreshed too (populate_existing).
# The game row, locked: every writer of a game takes this lock first.
_LOCK_GAME = (
    select(Game).where(Game.id == bindparam("game_id")).with_for_update()
    .execution_options(populate_existing=True)
)
# Its seats and their players, and the newest talk id, read once the lock is held.
_LOAD_SEATS = (
    select(Seat, select(func.max(_TALK.c.id)).where(_TALK.c.game_id == bindparam("game_id")).scalar_subquery())
    .where(Seat.game_id == bindparam("game_id"))
    .order_by(Seat.seat)
    .options(joinedload(Seat.player))
    .execution_options(populate_existing=True)
)
# Unlocked: everything in one statement.
_LOAD_GAME = (
    select(Game)
    .where(Game.id == bindparam("game_id"))
    .options(joinedload(Game.seats).joinedload(Seat.player))
    .execution_options(populate_existing=True)
)


def current_state(game: Game) -> GameState:
    """The engine state of a game, from its snapshot (a game without one has not started)."""
    if game.snapshot is None:
        return GameState.new(Rules.from_dict(game.rules))
    return GameState.from_dict(game.snapshot)


def append_move(session: Session, game: Game, move: EngineMove, *, inbound_id: int | None,
                now: datetime) -> int:
    """Append ``move`` to the game's log; returns its sequence number.

    The row is buffered (:func:`pbem.db.writes.add_row`): the moves of a turn go into the log
    with one INSERT, before the transaction's next query or its commit."""
    seq = game.next_seq
    payload = move_to_dict(move)
    add_row(session, _MOVES, {"game_id": game.id, "seq": seq, "kind": payload["type"], "seat": payload.get("seat"),
                              "payload": payload, "inbound_id": inbound_id, "created_at": now})
    game.next_seq = seq + 1
    note_move(session, game.id, seq, payload["type"], payload.get("seat"), inbound_id)  # told once committed
    return seq


_MOVES = Move.__table__


def save_state(game: Game, state: GameState, now: datetime) -> None:
    game.snapshot = state.to_dict()
    game.updated_at = now


def logged_moves(session: Session, game: Game) -> list[EngineMove]:
    rows = session.scalars(select(Move.payload).where(Move.game_id == game.id).order_by(Move.seq))
    return [move_from_dict(payload) for payload in rows]


def rebuild_state(session: Session, game: Game) -> GameState:
    """The state obtained by replaying the whole move log (what the snapshot must equal)."""
    return replay(Rules.from_dict(game.rules), logged_moves(session, game))


def snapshot_agrees(session: Session, game: Game) -> bool:
    """Whether the cached snapshot equals the replay of the log (``pbem game check``)."""
    if game.snapshot is None:
        return game.next_seq == 1
    return rebuild_state(session, game) == current_state(game)
