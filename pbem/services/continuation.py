"""Continuing a game whose automatic moves stopped at the bound of one step.

A turn applies at most ``turns.AUTOMATIC_MOVES_PER_STEP`` automatic moves (bots, forced cards, a
hand played out) in its transaction.  When more are left, as in a game whose every seat is played
by computers, the game is marked (``game.continue_at``) and continued here, one committed step at a
time: the worker queues ``pbem.continue_game`` after each step's commit, and the sweep re-queues
the games whose step was lost (:func:`due_continuations`).  A step is a turn with no decision of a
person in it: it loads the game under its lock, lets the automation move, and writes the mails,
exactly as the end of any other turn does.  Each step is queued with the mark it continues (the
sequence number of the game's next move when the previous step ended, ``turns.continue_mark``): a step whose game no longer
carries that mark does nothing, so a duplicate task, or a sweep that raced the game's own
follow-up, never starts a second chain of steps.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from pbem.db.models import Game, GameStatus
from pbem.db.session import transaction
from pbem.db.writes import write_all

from .app import Services
from .games import settle
from .gamestore import GameNotFound, current_state, load_game
from .mailing import QueuedMail, claim_for_sending
from .observed import received_at
from .turns import begin_turn, continue_mark, games_to_continue

__all__ = ["Applied", "CONTINUE_STALE_AFTER", "continue_game", "continue_to_rest", "due_continuations", "write_turn"]

log = logging.getLogger("pbem.worker")

#: Retries of a step that lost a race with a move of the same game.
RACE_RETRIES = 5
#: A game marked to continue this long ago lost its follow-up task: the sweep queues it again.
CONTINUE_STALE_AFTER = timedelta(seconds=15)
#: Most steps :func:`continue_to_rest` runs for one game (a whole game of computers is far below).
MAX_STEPS = 2_000


@dataclass
class Applied:
    """What one committed unit of work did: the mails it wrote, and the games whose automatic moves
    stopped at the bound of a step and are to be continued."""

    mails: list[QueuedMail] = field(default_factory=list)
    #: (game id, mark) of each game to continue.
    continue_games: list[tuple[int, int]] = field(default_factory=list)
    #: When the received mail it processed was answered with 250 (None: no mail), for the metrics.
    received_at: datetime | None = None


def continue_game(svc: Services, game_id: int, mark: int | None = None, *,
                  send_lease: timedelta | None = None) -> Applied:
    """One step of a game marked to continue (with ``mark``, when given), in one transaction;
    what it did (committed).

    ``send_lease``: as for ``inbound.apply_inbound``, the caller sends the mails itself.
    """
    last: Exception | None = None
    for _ in range(RACE_RETRIES):
        try:
            with transaction(svc.session_factory) as session:
                try:
                    game = load_game(session, game_id)
                except GameNotFound:
                    return Applied()
                if game.continue_at is None or (mark is not None and continue_mark(game) != mark):
                    return Applied()
                now = svc.clock.now()
                if game.status != GameStatus.ACTIVE:
                    game.continue_at = None  # paused games settle when resumed; ended ones never
                    return Applied()
                claimed = claim_for_sending(session, now + send_lease) if send_lease is not None else None
                written = settle(session, svc, begin_turn(game, list(game.seats), current_state(game), now))
                return write_turn(session, written, claimed)
        except (StaleDataError, IntegrityError, OperationalError) as error:
            log.info("game %s: continuing again after a concurrent change (%s)", game_id, type(error).__name__)
            last = error
    assert last is not None
    raise last


def write_turn(session: Session, written: list[QueuedMail], claimed: list[QueuedMail] | None) -> Applied:
    """The end of a turn's transaction: everything it changed written (the move log, the game, its
    seats, the mails, in one statement on PostgreSQL: ``pbem.db.writes``), and what it did: the
    mails (all those the transaction wrote when its caller sends them itself, ``claimed``) with
    their ids, and the games left to continue."""
    write_all(session)
    mails = list(claimed) if claimed is not None else list(written)
    for mail in mails:
        mail.id  # noqa: B018 (written now, inside the transaction)
    return Applied(mails, games_to_continue(session), received_at(session))


def continue_to_rest(svc: Services, games: list[tuple[int, int]]) -> list[int]:
    """Continue these games step by step right here until none is left marked; the ids of the
    outbox rows written.  For callers without a worker to queue steps on (the command line, tests)."""
    ids: list[int] = []
    for game_id, mark in games:
        for _ in range(MAX_STEPS):
            applied = continue_game(svc, game_id, mark)
            ids += [mail.id for mail in applied.mails if mail.id is not None]
            mark = dict(applied.continue_games).get(game_id)
            if mark is None:
                break
    return ids


def due_continuations(svc: Services, now: datetime, *, older_than: timedelta = CONTINUE_STALE_AFTER,
                      limit: int = 500) -> list[tuple[int, int]]:
    """Active games marked to continue ``older_than`` ago or earlier, with their marks: their step
    was lost (a worker died, the broker was down).  Found through the partial index of marked games."""
    with transaction(svc.session_factory) as session:
        rows = session.execute(
            select(Game.id, Game.next_seq)
            .where(Game.continue_at.is_not(None), Game.continue_at <= now - older_than,
                   Game.status == GameStatus.ACTIVE)
            .order_by(Game.continue_at, Game.id)
            .limit(limit)
        ).all()
    return [(game_id, next_seq) for game_id, next_seq in rows]
