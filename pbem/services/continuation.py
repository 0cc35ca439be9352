"""Continuing a game whose automatic moves stopped at the bound of one step.

A turn applies at most ``turns.AUTOMATIC_MOVES_PER_STEP`` automatic moves (bots, forced cards, a
hand played out) in its transaction.  When more are left, as in a game whose every seat is played
by computers, the game is marked (``game.continue_at``) and continued here, one committed step at a
time: the worker queues ``pbem.continue_game`` after each step's commit, and the sweep re-queues
the games whose step was lost (:func:`due_continuations`).  A step is a turn with no decision of a
person in it, bounded by ``turns.CONTINUE_STEP_CPU_SECONDS`` (short: a pool process is soon free
again for a person's mail), in three parts:

1. **claim** (:func:`claim_step`, one committed statement): the step takes the game for
   ``STEP_LEASE``, setting ``continue_at`` that far ahead, so that neither the sweep nor a
   duplicate task starts a second step while this one runs; a game whose worker died is found
   by the sweep once the lease has run out;
2. **decide** (:func:`decide_step`): the step's automatic moves are chosen from the committed game
   on a connection that only reads (on SQLite it takes no write lock), the bots' searches
   included, and kept as ``turns.Choice``s;
3. **apply**: in a short transaction under the game's lock, exactly as the end of any other turn
   (the automation moves, the mails are written), each automatic move taking the choice made
   ahead for its position (``turns.chosen``) instead of deciding again.  Had the game moved on
   meanwhile, the choices would not fit its position: the step decides again instead.

Each step is queued with the mark it continues (the sequence number of the game's next move when
the previous step ended, ``turns.continue_mark``): a step whose game no longer carries that mark
does nothing, so a duplicate task, or a sweep that raced the game's own follow-up, never starts a
second chain of steps.  Moves are applied once whatever happens: each under the game's lock, each
with its number in the log (``UNIQUE(game_id, seq)``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from pbem.db.models import Game, GameStatus
from pbem.db.session import reads, single_statement, transaction
from pbem.db.writes import write_all

from .app import Services
from .games import automate, settle
from .gamestore import GameNotFound, current_state, load_game
from .mailing import QueuedMail, claim_for_sending
from .observed import received_at
from .turns import (
    AUTOMATIC_MOVES_PER_STEP,
    CONTINUE_STEP_CPU_SECONDS,
    Choice,
    begin_turn,
    continue_mark,
    games_to_continue,
    read_logged_plays,
)

__all__ = ["Applied", "CONTINUE_STALE_AFTER", "STEP_LEASE", "Decided", "claim_step", "continue_game",
           "continue_to_rest", "decide_step", "due_continuations", "write_turn"]

log = logging.getLogger("pbem.worker")

#: Retries of a step that lost a race with a move of the same game.
RACE_RETRIES = 5
#: A game marked to continue this long ago lost its follow-up task: the sweep queues it again.
CONTINUE_STALE_AFTER = timedelta(seconds=15)
#: How long a step holds the game it claimed: far longer than a step takes on a busy machine (a
#: fraction of a second of CPU), so that the sweep never queues a second step beside a live one;
#: the sweep queues the game again ``CONTINUE_STALE_AFTER`` after the lease ran out.
STEP_LEASE = timedelta(seconds=60)
#: Most steps :func:`continue_to_rest` runs for one game (a whole game of computers is far below).
MAX_STEPS = 20_000

_GAMES = Game.__table__


@dataclass
class Applied:
    """What one committed unit of work did: the mails it wrote, and the games whose automatic moves
    stopped at the bound of a step and are to be continued."""

    mails: list[QueuedMail] = field(default_factory=list)
    #: (game id, mark) of each game to continue.
    continue_games: list[tuple[int, int]] = field(default_factory=list)
    #: When the received mail it processed was answered with 250 (None: no mail), for the metrics.
    received_at: datetime | None = None
    #: The moves a step of :func:`continue_game` applied (0: it found nothing to do).
    moves: int = 0


@dataclass(frozen=True)
class Decided:
    """A step's automatic moves decided ahead (:func:`decide_step`)."""

    #: The sequence number of the game's next move they were decided from.
    seq: int
    #: How many moves, and whether they stopped at the step's bound with more to play.
    moves: int
    bounded: bool
    #: The choices among them (``turns.Turn.choices``).
    choices: dict[int, Choice]


def continue_game(svc: Services, game_id: int, mark: int | None = None, *,
                  send_lease: timedelta | None = None) -> Applied:
    """One step of a game marked to continue (with ``mark``, when given): claimed, decided with no
    lock held, applied in one short transaction; what it did (committed).

    ``send_lease``: as for ``inbound.apply_inbound``, the caller sends the mails itself.
    """
    if not claim_step(svc, game_id, mark, svc.clock.now()):
        log.debug("game %s: nothing to continue at mark %s (ended, or continued by another step)", game_id, mark)
        return Applied()
    last: Exception | None = None
    for _ in range(RACE_RETRIES):
        decided = decide_step(svc, game_id, mark)
        try:
            applied = _apply_step(svc, game_id, mark, decided, send_lease)
        except (StaleDataError, IntegrityError, OperationalError) as error:
            log.info("game %s: continuing again after a concurrent change (%s)", game_id, type(error).__name__)
            last = error
            continue
        if applied is not None:
            return applied
        log.info("game %s: moved on while its step was decided; deciding again", game_id)
    if last is not None:
        raise last
    return Applied()  # moved on under every decision: the moves that moved it continue it


def claim_step(svc: Services, game_id: int, mark: int | None, now: datetime) -> bool:
    """Take the game for one step (``continue_at`` set ``STEP_LEASE`` ahead), in one committed
    statement; False when there is nothing to take: the game is not marked to continue (at
    ``mark``, when given), or another step holds it."""
    conditions = [_GAMES.c.id == game_id, _GAMES.c.continue_at.is_not(None), _GAMES.c.continue_at <= now]
    if mark is not None:
        conditions.append(_GAMES.c.next_seq == mark)
    with single_statement(svc.session_factory) as conn:
        claimed = conn.execute(update(_GAMES).where(*conditions)
                               .values(continue_at=now + STEP_LEASE, version=_GAMES.c.version + 1))
    return claimed.rowcount == 1


def decide_step(svc: Services, game_id: int, mark: int | None = None) -> Decided | None:
    """The automatic moves of the game's next step, decided from the committed game on a connection
    that only reads (``pbem.db.session.reads``: on SQLite no write lock is taken while the bots think;
    on PostgreSQL no transaction is held open), and nothing written; None when there is no step to
    decide.  The reads need no common snapshot: the hand's plays are read up to the game's next move
    as first read, and the log below it never changes."""
    with reads(svc.session_factory) as conn, svc.session_factory(bind=conn) as session:
        try:
            game = load_game(session, game_id, lock=False)
        except GameNotFound:
            return None
        if game.continue_at is None or game.status != GameStatus.ACTIVE or (
                mark is not None and continue_mark(game) != mark):
            return None
        turn = begin_turn(game, list(game.seats), current_state(game), svc.clock.now())
        read_logged_plays(session, turn)  # before the first move: the moves stay unwritten
        bounded = automate(session, svc, turn, cpu_seconds=CONTINUE_STEP_CPU_SECONDS)
        decided = Decided(turn.first_seq, game.next_seq - turn.first_seq, bounded, turn.choices)
        session.rollback()
    return decided


def _apply_step(svc: Services, game_id: int, mark: int | None, decided: Decided | None,
                send_lease: timedelta | None) -> Applied | None:
    """The step applied under the game's lock with the moves ``decided`` ahead; None when the game
    moved on since they were decided."""
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
        if decided is not None and decided.seq != game.next_seq:
            return None
        claimed = claim_for_sending(session, now + send_lease) if send_lease is not None else None
        turn = begin_turn(game, list(game.seats), current_state(game), now)
        moves = AUTOMATIC_MOVES_PER_STEP
        if decided is not None:
            turn.choices = dict(decided.choices)
            moves = decided.moves if decided.bounded else moves  # the step ends where it was decided to
        written = settle(session, svc, turn, moves=moves, cpu_seconds=CONTINUE_STEP_CPU_SECONDS)
        applied = write_turn(session, written, claimed)
        applied.moves = game.next_seq - turn.first_seq
        return applied


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
