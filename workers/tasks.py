"""pbem's Celery tasks: thin wrappers that call the services.

Each task is idempotent (running it twice does the work once), because with
``acks_late`` a task can run again after a worker dies.  Tasks queue their
follow-ups only after the service call returned, i.e. after its transaction
committed.  Database hiccups (SQLite busy, PostgreSQL restarting) are retried
with backoff; anything else fails the task loudly and the row stays for the
sweep and for an operator.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from kombu.exceptions import KombuError
from sqlalchemy.exc import OperationalError

from pbem import metrics
from pbem.services.outbox import (
    DEFAULT_RETRY,
    SendResult,
    due_outbound,
    next_attempts,
    send_claimed,
    send_outbound_batch,
    stale_inbound,
)
from pbem.services.continuation import Applied, continue_game, due_continuations
from pbem.services.inbound import apply_inbound, set_aside
from pbem.services.retention import forget_old_mail
from pbem.services.tick import run_tick
from workers.queueing import (
    CONTINUE_GAME,
    PROCESS_INBOUND,
    SEND_MAIL,
    SWEEP,
    queue_continue,
    queue_inbound,
    queue_outbound,
)
from workers.app import TICK

log = logging.getLogger("pbem.worker")

_DB_RETRY: dict[str, Any] = {
    "autoretry_for": (OperationalError,),
    "retry_backoff": 2,
    "retry_backoff_max": 120,
    "retry_jitter": True,
    "max_retries": 8,
}


def run_move(svc: Any, inbound_id: int, *, queue_retry: Callable[[int, float], None],
             queue_continue: Callable[[list[tuple[int, int]]], None] = lambda _ids: None) -> list[int]:
    """What ``pbem.process_inbound`` does, without Celery: apply one received mail
    (``pbem.services.inbound.apply_inbound``: one transaction), then, once that
    committed, send the mails it wrote right here.

    Sending in the same task saves a second task per move (Celery costs a couple of
    milliseconds a task, and a trip through the broker) while each mail keeps its own
    result and retries: a mail that fails for now is handed to
    ``queue_retry(outbound_id, countdown)``, which queues its own ``pbem.send_mail``.
    The mails are written already claimed by this task for a short lease
    (``RetryPolicy.claimed_lease``), so sending them needs no claim statement; if this
    process dies after the commit, the sweep sends them once that lease has run out.
    Games left with automatic moves to play (``pbem.services.continuation``) are handed to
    ``queue_continue`` once the mails are sent.
    """
    return _send_applied(svc, apply_inbound(svc, inbound_id, send_lease=DEFAULT_RETRY.claimed_lease),
                         queue_retry=queue_retry, queue_continue=queue_continue)


def run_step(svc: Any, game_id: int, mark: int | None, *, queue_retry: Callable[[int, float], None],
             queue_continue: Callable[[list[tuple[int, int]]], None]) -> list[int]:
    """What ``pbem.continue_game`` does, without Celery: one step of a game's automatic moves
    (``continuation.continue_game``: claimed for a lease, decided with no lock held, applied in one
    short transaction), its mails sent as ``run_move`` sends a move's, the next step queued."""
    return _send_applied(svc, continue_game(svc, game_id, mark, send_lease=DEFAULT_RETRY.claimed_lease),
                         queue_retry=queue_retry, queue_continue=queue_continue)


def _send_applied(svc: Any, applied: Applied, *, queue_retry: Callable[[int, float], None],
                  queue_continue: Callable[[list[tuple[int, int]]], None]) -> list[int]:
    if applied.mails:
        results = send_claimed(svc, applied.mails, policy=DEFAULT_RETRY)
        _queue_retries(svc, results, queue_retry)
        if applied.received_at is not None and SendResult.SENT in results.values():
            # From the 250 that answered the mail to its last mail sent (README, "Metrics and logs").
            metrics.observe_reply((svc.clock.now() - applied.received_at).total_seconds())
    if applied.continue_games:
        try:
            queue_continue(applied.continue_games)
        except (KombuError, OSError):  # broker down; the games are marked, the sweep queues them
            log.exception("could not queue the next step of games %s; the sweep will", applied.continue_games)
    return [mail.id for mail in applied.mails]


def send_now(svc: Any, outbound_ids: list[int], *, queue_retry: Callable[[int, float], None]) -> dict[int, SendResult]:
    """Send these outbox rows, each on its own (one failing does not hold up the
    others); hand each that failed for now to ``queue_retry`` with the seconds until
    its backoff ends."""
    results = send_outbound_batch(svc, [int(outbound_id) for outbound_id in outbound_ids])
    _queue_retries(svc, results, queue_retry)
    return results


def _queue_retries(svc: Any, results: dict[int, SendResult], queue_retry: Callable[[int, float], None]) -> None:
    to_retry = [outbound_id for outbound_id, result in results.items() if result is SendResult.RETRY]
    outcomes = list(results.values())
    metrics.count_sent(sent=outcomes.count(SendResult.SENT), failed=outcomes.count(SendResult.FAILED),
                       retried=len(to_retry))
    if to_retry:
        now = svc.clock.now()
        for outbound_id, due in next_attempts(svc, to_retry).items():
            # A countdown from the services' clock, not an absolute eta: that clock may
            # be offset from the wall clock Celery schedules by (time-travel tests).
            queue_retry(outbound_id, max((due - now).total_seconds(), 0.0))


def _retry_queuer(app: Any) -> Callable[[int, float], None]:
    def queue_retry(outbound_id: int, countdown: float) -> None:
        app.send_task(SEND_MAIL, args=[[outbound_id]], countdown=countdown)

    return queue_retry


def _continue_queuer(app: Any) -> Callable[[list[tuple[int, int]]], None]:
    return lambda games: queue_continue(app, games)


@shared_task(bind=True, name=PROCESS_INBOUND, **_DB_RETRY)
def process_inbound(self: Task, inbound_id: int) -> list[int]:
    """Apply one received mail and send the mails it wrote (``run_move``).

    Stopped at the soft time limit (``workers.app``), the mail is set aside as ``TIME_LIMIT``: it
    would take as long again.  Killed at the hard limit, or with its process, it is delivered
    again and its attempt was already counted (``inbound.begin_attempt``)."""
    svc = self.app.services()
    try:
        return run_move(svc, inbound_id, queue_retry=_retry_queuer(self.app),
                        queue_continue=_continue_queuer(self.app))
    except SoftTimeLimitExceeded:
        set_aside(svc, inbound_id, svc.clock.now(), "TIME_LIMIT")
        raise


@shared_task(bind=True, name=CONTINUE_GAME, **_DB_RETRY)
def continue_game_task(self: Task, game_id: int, mark: int | None = None) -> list[int]:
    """One step of a game's automatic moves and its mails; the next step queued (``run_step``)."""
    return run_step(self.app.services(), game_id, mark, queue_retry=_retry_queuer(self.app),
                    queue_continue=_continue_queuer(self.app))


@shared_task(bind=True, name=SEND_MAIL, **_DB_RETRY)
def send_mail(self: Task, outbound_ids: list[int]) -> dict[str, str]:
    """Send these outbox rows (queued by the sweep, by ``pbem game new`` and the web
    front, and for retries).  A row that failed for now is retried by its own task,
    queued to run when the row's backoff ends (``next_attempt_at``)."""
    results = send_now(self.app.services(), outbound_ids, queue_retry=_retry_queuer(self.app))
    return {str(outbound_id): str(result) for outbound_id, result in results.items()}


@shared_task(bind=True, name=SWEEP, **_DB_RETRY)
def sweep(self: Task) -> dict[str, int]:
    """Re-queue what was left behind: inbound rows pending for over a minute (their
    task was lost), outbox rows due for (re)sending and games whose step was lost (never one
    that a live step holds: ``continuation.claim_step``); then empty the bytes of the
    settled mails older than the retention (``pbem.services.retention``).  Queued by beat."""
    svc = self.app.services()
    now = svc.clock.now()
    inbound_ids = stale_inbound(svc, now)
    outbound_ids = due_outbound(svc, now)
    game_ids = due_continuations(svc, now)
    queue_inbound(self.app, inbound_ids)
    queue_outbound(self.app, outbound_ids)
    queue_continue(self.app, game_ids)
    if inbound_ids or outbound_ids or game_ids:
        log.info("sweep re-queued %d inbound, %d outbound, %d games to continue",
                 len(inbound_ids), len(outbound_ids), len(game_ids))
    forgotten = forget_old_mail(svc, now)
    return {"inbound": len(inbound_ids), "outbound": len(outbound_ids), "games": len(game_ids),
            "inbound_emptied": forgotten.inbound, "outbound_emptied": forgotten.outbound}


@shared_task(bind=True, name=TICK, **_DB_RETRY)
def tick(self: Task) -> dict[str, int]:
    """Time-driven work (README, "Time"): reminders, deadline policies, vacations that end and
    the daily digests (``pbem.services.tick.run_tick``, one transaction per game), then ONE
    ``pbem.send_mail`` for the mails it wrote and a ``pbem.continue_game`` for each game it left
    with automatic moves to play.  Queued by beat every ``PBEM_TICK_SECONDS``;
    running it twice does each step once (the seats record what was done)."""
    svc = self.app.services()
    ticked = run_tick(svc)
    # A deadline that gave a seat to a bot may have left a game with automatic moves to play: the
    # games the tick marked so, and only those (a game marked by its own step has its next one
    # queued already; one whose step was lost is the sweep's).
    outbound_ids, games = ticked.mail_ids, ticked.continue_games
    try:
        queue_outbound(self.app, outbound_ids)
        queue_continue(self.app, games)
    except (KombuError, OSError):  # broker down; the rows are committed and pending
        log.exception("tick: could not queue outbound %s or games %s; the sweep will", outbound_ids, games)
    return {"outbound": len(outbound_ids), "games": len(games)}
