"""Sending the outbox: each stored mail goes out once, with retries and a record.

Rows are written by the services in the same transaction as the move that
caused them; here they are sent (``send_outbound``) and found again by the
periodic sweep (``due_outbound``, ``stale_inbound``).

How one row is sent, so that two senders never send it twice at once:

1. *Claim*, in a short transaction with the row locked (``SELECT .. FOR UPDATE``
   on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` serialises writers): skip it when
   it is sent, given up, or not due yet; otherwise count the attempt and push
   ``next_attempt_at`` one *lease* ahead.  Another sender (a duplicate task, the
   sweep) now finds it "not due" and leaves it alone.
2. *Deliver* through the relay with no transaction open: a slow relay must not
   hold a database lock (on SQLite that would stall the SMTP front).
3. *Record* the result in a second short transaction: ``sent`` with ``sent_at``;
   or, for a temporary failure, ``pending`` again with ``next_attempt_at`` after
   an exponential backoff and ``last_error``; or ``failed`` for a permanent
   refusal or when the attempts are used up.

A sender that dies between 1 and 3 leaves the row pending with its lease: once
the lease expires the row is due again and the sweep re-queues it.  The lease is
much longer than a delivery can take (``RELAY_TIMEOUT_S`` per socket operation),
so a live sender is never overtaken.

Delivery is at least once, not exactly once: a sender that dies after the relay
took the mail but before step 3 committed leaves a claimed row, which is sent
again after the lease.  No protocol can close that gap with an SMTP relay; the
window is one database commit wide.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from pbem.config import Settings
from pbem.db.models import InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.mail.relay import Relay, RelayError, make_relay

__all__ = [
    "DEFAULT_RETRY",
    "INBOUND_STALE_AFTER",
    "OutboxServices",
    "RetryPolicy",
    "SendResult",
    "due_outbound",
    "next_attempts",
    "send_outbound",
    "stale_inbound",
]

log = logging.getLogger("pbem.worker")

INBOUND_STALE_AFTER = timedelta(minutes=1)
"""An inbound row still pending this long after it arrived lost its task: re-queue it."""

SWEEP_BATCH = 500
"""Most rows one sweep re-queues of each kind (the next sweep takes the rest)."""


class _Clock(Protocol):
    def now(self) -> datetime: ...


class OutboxServices(Protocol):
    """What the outbox needs of ``pbem.services.app.Services``."""

    settings: Settings
    session_factory: sessionmaker[Session]
    clock: _Clock


class SendResult(enum.StrEnum):
    """What ``send_outbound`` did with a row."""

    SENT = "sent"  # handed to the relay now
    RETRY = "retry"  # temporary failure; due again at next_attempt_at
    FAILED = "failed"  # permanent failure, or out of attempts: given up now
    ALREADY_SENT = "already_sent"  # nothing to do (a duplicate task)
    GAVE_UP = "gave_up"  # failed earlier; nothing to do
    NOT_DUE = "not_due"  # another sender holds it, or its backoff has not passed
    MISSING = "missing"  # no such row


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: ``first_delay * 2**(n-1)`` after the n-th failed attempt,
    at most ``max_delay``; give up after ``max_attempts`` attempts.

    The defaults retry for about two hours (30 s, 1, 2, 4, 8, 16 min, then every
    30 min).  ``max_delay`` stays well under the Redis broker's visibility timeout
    (``workers.app.REDIS_VISIBILITY_TIMEOUT_S``) because a retry is a task with a
    countdown, which Redis would otherwise hand out a second time.
    """

    first_delay: timedelta = timedelta(seconds=30)
    max_delay: timedelta = timedelta(minutes=30)
    max_attempts: int = 10
    lease: timedelta = timedelta(minutes=10)
    #: A task due "now" may run a moment before next_attempt_at (clocks, ETA
    #: rounding); it still counts as due.  Far shorter than any lease or backoff.
    grace: timedelta = timedelta(seconds=1)

    def delay(self, attempts: int) -> timedelta:
        """How long to wait after the ``attempts``-th failed attempt (1-based)."""
        return min(self.first_delay * 2 ** max(attempts - 1, 0), self.max_delay)


DEFAULT_RETRY = RetryPolicy()


@dataclass(frozen=True)
class _Claim:
    raw: bytes
    recipient: str
    attempt: int


def send_outbound(
    svc: OutboxServices,
    outbound_id: int,
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
    relay: Relay | None = None,
) -> SendResult:
    """Send outbox row ``outbound_id`` if it is due, and record what happened.

    Idempotent: a row already sent (or being sent by someone else) is skipped.
    ``relay`` defaults to the configured one (``make_relay(svc.settings)``).
    """
    claim_or_result = _claim(svc, outbound_id, policy)
    if isinstance(claim_or_result, SendResult):
        return claim_or_result
    claim = claim_or_result
    relay = relay or make_relay(svc.settings)
    try:
        relay.deliver(claim.raw, recipients=[claim.recipient], key=outbound_id)
    except RelayError as error:
        return _record_failure(svc, outbound_id, claim, error, policy)
    return _record_sent(svc, outbound_id)


def _claim(svc: OutboxServices, outbound_id: int, policy: RetryPolicy) -> _Claim | SendResult:
    with transaction(svc.session_factory) as session:
        now = svc.clock.now()
        row = session.get(OutboundMessage, outbound_id, with_for_update=True)
        if row is None:
            return SendResult.MISSING
        if row.status is OutboundStatus.SENT:
            return SendResult.ALREADY_SENT
        if row.status is OutboundStatus.FAILED:
            return SendResult.GAVE_UP
        if row.next_attempt_at > now + policy.grace:
            return SendResult.NOT_DUE
        row.attempts += 1
        row.next_attempt_at = now + policy.lease
        return _Claim(raw=row.raw, recipient=row.recipient, attempt=row.attempts)


def _record_sent(svc: OutboxServices, outbound_id: int) -> SendResult:
    with transaction(svc.session_factory) as session:
        row = session.get(OutboundMessage, outbound_id, with_for_update=True)
        if row is None:  # deleted while we sent it: nothing left to record on
            return SendResult.SENT
        row.status = OutboundStatus.SENT
        row.sent_at = svc.clock.now()
        row.last_error = None
    log.info("outbound %s sent to %s", outbound_id, row.recipient)
    return SendResult.SENT


def _record_failure(
    svc: OutboxServices,
    outbound_id: int,
    claim: _Claim,
    error: RelayError,
    policy: RetryPolicy,
) -> SendResult:
    with transaction(svc.session_factory) as session:
        row = session.get(OutboundMessage, outbound_id, with_for_update=True)
        if row is None:
            return SendResult.FAILED
        if row.status is OutboundStatus.SENT:
            # Our lease ran out and another sender got it through meanwhile.
            return SendResult.ALREADY_SENT
        row.last_error = str(error)
        if error.permanent or claim.attempt >= policy.max_attempts:
            row.status = OutboundStatus.FAILED
            result = SendResult.FAILED
        else:
            row.status = OutboundStatus.PENDING
            row.next_attempt_at = svc.clock.now() + policy.delay(claim.attempt)
            result = SendResult.RETRY
    level = logging.WARNING if result is SendResult.RETRY else logging.ERROR
    log.log(level, "outbound %s attempt %s: %s (%s)", outbound_id, claim.attempt, error, result)
    return result


def next_attempts(svc: OutboxServices, outbound_ids: Sequence[int]) -> dict[int, datetime]:
    """``next_attempt_at`` of those of ``outbound_ids`` still pending (to schedule retries)."""
    if not outbound_ids:
        return {}
    with transaction(svc.session_factory) as session:
        rows = session.execute(
            select(OutboundMessage.id, OutboundMessage.next_attempt_at).where(
                OutboundMessage.id.in_(outbound_ids),
                OutboundMessage.status == OutboundStatus.PENDING,
            )
        )
        return {row.id: row.next_attempt_at for row in rows}


def due_outbound(svc: OutboxServices, now: datetime, *, limit: int = SWEEP_BATCH) -> list[int]:
    """Pending outbox rows whose (re)send time has come, oldest first: the sweep
    queues them.  Includes rows whose sender died (their lease ran out)."""
    with transaction(svc.session_factory) as session:
        return list(
            session.scalars(
                select(OutboundMessage.id)
                .where(
                    OutboundMessage.status == OutboundStatus.PENDING,
                    OutboundMessage.next_attempt_at <= now,
                )
                .order_by(OutboundMessage.next_attempt_at, OutboundMessage.id)
                .limit(limit)
            )
        )


def stale_inbound(
    svc: OutboxServices,
    now: datetime,
    *,
    older_than: timedelta = INBOUND_STALE_AFTER,
    limit: int = SWEEP_BATCH,
) -> list[int]:
    """Inbound rows still ``pending`` ``older_than`` after they arrived, oldest first:
    their task was lost (broker down when they arrived, a worker killed with the
    embedded broker...).  Processing is idempotent, so re-queuing one whose task is
    merely slow costs a no-op."""
    with transaction(svc.session_factory) as session:
        return list(
            session.scalars(
                select(InboundMessage.id)
                .where(
                    InboundMessage.status == InboundStatus.PENDING,
                    InboundMessage.received_at <= now - older_than,
                )
                .order_by(InboundMessage.received_at, InboundMessage.id)
                .limit(limit)
            )
        )
