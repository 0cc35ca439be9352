"""The tick: everything time-driven that is due now (the ``pbem.tick`` task, queued by Celery beat
every minute; README, "Time").

The vacations that end or begin (:mod:`pbem.services.absence`), then, for each seat with a deadline,
the one step that is due (a reminder, or the game's absence policy: :mod:`pbem.services.deadlines`),
each game in its own transaction, then the daily digests (:mod:`pbem.services.digest`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from pbem.db.models import Game, GameStatus, OutboundMessage, Seat
from pbem.db.session import transaction

from .absence import apply_absence_policy, begin_due_vacations, end_due_vacations
from .app import Services
from .deadlines import MAX_REMINDER_HOURS, SENT_AT_DEADLINE, SENT_BEFORE, due_step, send_reminder
from .digest import send_due_digests
from .gamestore import load_game
from .turns import games_to_continue

log = logging.getLogger("pbem.worker")


@dataclass
class Ticked:
    """What a tick did: the ids of the (committed) outbox rows it wrote, and the games whose automatic
    moves it left at the bound of a step, with their marks (to continue: ``pbem.continue_game``)."""

    mail_ids: list[int] = field(default_factory=list)
    continue_games: list[tuple[int, int]] = field(default_factory=list)


def tick(svc: Services) -> list[int]:
    """Everything time-driven that is due now; returns the ids of the (committed) outbox rows."""
    return run_tick(svc).mail_ids


def run_tick(svc: Services) -> Ticked:
    """Everything time-driven that is due now: :func:`tick`, and the games it marked to continue (a
    deadline or a vacation that gave a seat to a computer), which no step has been queued for yet."""
    now = svc.clock.now()
    done = Ticked()
    done.mail_ids += end_due_vacations(svc, now)
    # After the ends: one may begin as another ends.
    done.mail_ids += begin_due_vacations(svc, now, continuing=done.continue_games)
    for game_id in _games_with_deadlines(svc, now):
        try:
            with transaction(svc.session_factory) as session:
                done.mail_ids += [m.id for m in _tick_game(session, svc, game_id, now)]
                marked = games_to_continue(session)
        except (StaleDataError, OperationalError) as error:  # a move came in meanwhile: next tick
            log.info("tick: game %s left for the next tick (%s)", game_id, type(error).__name__)
        else:
            done.continue_games += marked
    done.mail_ids += _digests(svc, now)
    return done


def _games_with_deadlines(svc: Services, now: datetime) -> list[int]:
    """Games with a seat whose earliest possible step (a reminder) may be due; checked exactly
    under the game's lock by :func:`_tick_game`."""
    horizon = now + timedelta(hours=MAX_REMINDER_HOURS)
    with transaction(svc.session_factory) as session:
        return list(session.scalars(
            select(Seat.game_id).join(Game, Game.id == Seat.game_id)
            .where(Game.status == GameStatus.ACTIVE, Seat.deadline_at.is_not(None), Seat.deadline_at <= horizon)
            .distinct().order_by(Seat.game_id)
        ))


def _tick_game(session: Session, svc: Services, game_id: int, now: datetime) -> list[OutboundMessage]:
    game = load_game(session, game_id)
    if game.status != GameStatus.ACTIVE:
        return []
    seats = sorted(game.seats, key=lambda s: s.seat)
    mails: list[OutboundMessage] = []
    for seat in seats:
        step = due_step(game, seat, now)
        if step is None:
            continue
        if step == "act":
            mails += apply_absence_policy(session, svc, game, seat, now)
            if game.status != GameStatus.ACTIVE:
                break
            continue
        row = send_reminder(session, svc, game, seats, seat, step, now)
        seat.reminders_sent = SENT_BEFORE if step == "before" else SENT_AT_DEADLINE
        if row is not None:
            mails.append(row)
    session.flush()
    return mails


def _digests(svc: Services, now: datetime) -> list[int]:
    """The daily digests that are due (:func:`pbem.services.digest.send_due_digests`)."""
    with transaction(svc.session_factory) as session:
        rows = send_due_digests(session, svc, now)
        session.flush()
        return [row.id for row in rows]
