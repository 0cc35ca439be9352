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
from kombu.exceptions import KombuError
from sqlalchemy.exc import OperationalError

from pbem.services.outbox import (
    DEFAULT_RETRY,
    SendResult,
    due_outbound,
    next_attempts,
    send_claimed,
    send_outbound_batch,
    stale_inbound,
)
from pbem.services.retention import forget_old_mail
from workers.queueing import PROCESS_INBOUND, SEND_MAIL, SWEEP, queue_inbound, queue_outbound
from workers.app import TICK

log = logging.getLogger("pbem.worker")

_DB_RETRY: dict[str, Any] = {
    "autoretry_for": (OperationalError,),
    "retry_backoff": 2,
    "retry_backoff_max": 120,
    "retry_jitter": True,
    "max_retries": 8,
}


def run_move(svc: Any, inbound_id: int, *, queue_retry: Callable[[int, float], None]) -> list[int]:
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
    """
    # Imported here: the service is the lead engineer's module and heavy; the
    # worker (and this module) load without it.
    from pbem.services.inbound import apply_inbound

    mails = apply_inbound(svc, inbound_id, send_lease=DEFAULT_RETRY.claimed_lease)
    if mails:
        results = send_claimed(svc, mails, policy=DEFAULT_RETRY)
        _queue_retries(svc, results, queue_retry)
    return [mail.id for mail in mails]


def send_now(svc: Any, outbound_ids: list[int], *, queue_retry: Callable[[int, float], None]) -> dict[int, SendResult]:
    """Send these outbox rows, each on its own (one failing does not hold up the
    others); hand each that failed for now to ``queue_retry`` with the seconds until
    its backoff ends."""
    results = send_outbound_batch(svc, [int(outbound_id) for outbound_id in outbound_ids])
    _queue_retries(svc, results, queue_retry)
    return results


def _queue_retries(svc: Any, results: dict[int, SendResult], queue_retry: Callable[[int, float], None]) -> None:
    to_retry = [outbound_id for outbound_id, result in results.items() if result is SendResult.RETRY]
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


@shared_task(bind=True, name=PROCESS_INBOUND, **_DB_RETRY)
def process_inbound(self: Task, inbound_id: int) -> list[int]:
    """Apply one received mail and send the mails it wrote (``run_move``)."""
    return run_move(self.app.services(), inbound_id, queue_retry=_retry_queuer(self.app))


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
    task was lost) and outbox rows due for (re)sending; then empty the bytes of the
    settled mails older than the retention (``pbem.services.retention``).  Queued by beat."""
    svc = self.app.services()
    now = svc.clock.now()
    inbound_ids = stale_inbound(svc, now)
    outbound_ids = due_outbound(svc, now)
    queue_inbound(self.app, inbound_ids)
    queue_outbound(self.app, outbound_ids)
    if inbound_ids or outbound_ids:
        log.info("sweep re-queued %d inbound, %d outbound", len(inbound_ids), len(outbound_ids))
    forgotten = forget_old_mail(svc, now)
    return {"inbound": len(inbound_ids), "outbound": len(outbound_ids),
            "inbound_emptied": forgotten.inbound, "outbound_emptied": forgotten.outbound}


@shared_task(bind=True, name=TICK, **_DB_RETRY)
def tick(self: Task) -> dict[str, int]:
    """Time-driven work (issue 4): reminders, deadline policies, vacations that end and the
    daily digests (``pbem.services.deadlines.tick``, one transaction per game), then ONE
    ``pbem.send_mail`` for the mails it wrote.  Queued by beat every ``PBEM_TICK_SECONDS``;
    running it twice does each step once (the seats record what was done)."""
    from pbem.services.deadlines import tick as run_tick

    outbound_ids = run_tick(self.app.services())
    if outbound_ids:
        try:
            queue_outbound(self.app, outbound_ids)
        except (KombuError, OSError):  # broker down; the rows are committed and pending
            log.exception("tick: could not queue outbound %s; the sweep will send them", outbound_ids)
    return {"outbound": len(outbound_ids)}
