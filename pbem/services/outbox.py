"""Sending the outbox: each stored mail goes out once, with retries and a record.

Rows are written by the services in the same transaction as the move that
caused them; here they are sent (``send_outbound``) and found again by the
periodic sweep (``due_outbound``, ``stale_inbound``).

How rows are sent, so that two senders never send one twice at once
(``send_outbound_batch``: the mails of one move together; ``send_outbound``: one):

1. *Claim*, with one ``UPDATE .. WHERE status = 'pending' AND next_attempt_at <= now
   RETURNING ..``, a transaction by itself (``single_statement``: it locks the rows it
   changes; SQLite's ``BEGIN IMMEDIATE`` serialises writers): count the attempt and push
   ``next_attempt_at`` one *lease* ahead.  Another sender (a duplicate task, the
   sweep) now finds them "not due" and leaves them alone.  Rows not claimed are
   looked at again only to say why (sent, given up, not due, missing).
2. *Deliver* each through the relay with no transaction open (a slow relay must not
   hold a database lock: on SQLite that would stall the SMTP front), on one relay
   connection for the batch; each mail succeeds or fails on its own.
3. *Record* the results: ``sent`` with ``sent_at`` (one UPDATE, on its own, for all
   that went out); or, for a temporary failure, ``pending``
   again with ``next_attempt_at`` after an exponential backoff and ``last_error``;
   or ``failed`` for a permanent refusal or when the attempts are used up.

A sender that dies between 1 and 3 leaves the row pending with its lease: once
the lease expires the row is due again and the sweep re-queues it.  The lease is
much longer than a delivery can take (``RELAY_TIMEOUT_S`` per socket operation),
so a live sender is never overtaken.

The mails of a move skip step 1 (``send_claimed``): the worker that applies the move
writes them already claimed by itself (one attempt counted, ``next_attempt_at`` a
short ``claimed_lease`` ahead: ``pbem.services.mailing.claim_for_sending``) and sends
them right after the commit, from the bytes it just composed.  A worker that dies
before sending leaves them to the sweep once that short lease has run out (within
about three minutes); a delivery that is still going on when half of it has passed
first extends the lease of the rest to the full one (``_renew``), as step 1 would have.

With ``PBEM_DKIM_KEY_FILE`` set, step 2 signs each mail (DKIM, ``pbem.mail.signing``) as it goes
out, from the unsigned stored bytes: every attempt carries one signature of its own, valid however
late the retry.  A key that cannot be read is a temporary failure of every mail (none goes out
unsigned; the operator fixes the key and they go with their next attempt).

Delivery is at least once, not exactly once: a sender that dies after the relay
took the mail but before step 3 committed leaves a claimed row, which is sent
again after the lease.  No protocol can close that gap with an SMTP relay; the
window is one database commit wide.  On PostgreSQL the "sent" record is committed
asynchronously (``synchronous_commit = off`` on its own connections,
``Services.kept_connections``): one WAL flush fewer per batch, at the price of a second,
rarer way into the same gap: a crash of the database server within about half a second
of the record loses it, and the mails go again after their lease.  Everything else (the
move and its mails, claims, failures) is committed durably.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import and_, bindparam, or_, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from pbem.config import Settings
from pbem.db.models import InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import KeptConnections, single_statement, transaction
from pbem.mail.relay import OutgoingMail, Relay, RelayError, deliver_each, make_relay, relay_session
from pbem.mail.signing import DkimSigner, SigningError, SigningKeyError, load_signer

__all__ = [
    "DEFAULT_RETRY",
    "ATTEMPT_STALE_AFTER",
    "INBOUND_STALE_AFTER",
    "OutboxServices",
    "RetryPolicy",
    "SendResult",
    "due_outbound",
    "next_attempts",
    "send_outbound",
    "send_claimed",
    "send_outbound_batch",
    "stale_inbound",
]

log = logging.getLogger("pbem.worker")

INBOUND_STALE_AFTER = timedelta(seconds=15)
"""An inbound row never attempted this long after it arrived lost its task (the broker was down
when it arrived, or the embedded broker lost it): re-queue it."""
ATTEMPT_STALE_AFTER = timedelta(seconds=25)
"""An inbound row still pending this long after its latest attempt began lost that attempt (its
worker died, or a retry waits for a broker that was restarted): re-queue it.  A mail takes
milliseconds, and the longest legitimate task (a turn's bounded automatic moves with the slowest
bot) well under this; one re-queued while still running costs one of its attempts, and the row
lock keeps it from being applied twice."""

SWEEP_BATCH = 500
"""Most rows one sweep re-queues of each kind (the next sweep takes the rest)."""


class _Clock(Protocol):
    def now(self) -> datetime: ...


class OutboxServices(Protocol):
    """What the outbox needs of ``pbem.services.app.Services``."""

    settings: Settings
    session_factory: sessionmaker[Session]
    clock: _Clock

    @property
    def kept_connections(self) -> KeptConnections: ...


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

    The defaults retry for about an hour and a half (15 s, 30 s, 1, 2, 4, 8, 16 min, then
    every 30 min): a relay down for a minute gets its mails within a minute of coming back.  ``max_delay`` stays well under the Redis broker's visibility timeout
    (``workers.app.REDIS_VISIBILITY_TIMEOUT_S``) because a retry is a task with a
    countdown, which Redis would otherwise hand out a second time.
    """

    first_delay: timedelta = timedelta(seconds=15)
    max_delay: timedelta = timedelta(minutes=30)
    max_attempts: int = 10
    lease: timedelta = timedelta(minutes=10)
    #: The claim a move's mails are written with when the worker that applied the move sends
    #: them itself (``send_claimed``): short, so that if that worker dies the sweep sends them soon
    #: (they go out milliseconds after the commit, and the lease is renewed before each mail).
    claimed_lease: timedelta = timedelta(seconds=20)
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
    return send_outbound_batch(svc, [outbound_id], policy=policy, relay=relay)[outbound_id]


def send_outbound_batch(
    svc: OutboxServices,
    outbound_ids: Sequence[int],
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
    relay: Relay | None = None,
) -> dict[int, SendResult]:
    """Send those of ``outbound_ids`` that are due, each on its own, and record what
    happened to each: one claim and one record transaction for the lot, one relay
    connection, but a result (and retries) per row."""
    ids = list(dict.fromkeys(int(i) for i in outbound_ids))
    if not ids:
        return {}
    claims, results = _claim(svc, ids, policy)
    if claims:
        results.update(_deliver(svc, claims, policy, relay, lease_until=None))
    return {outbound_id: results[outbound_id] for outbound_id in ids}


class ClaimedMail(Protocol):
    """A mail written already claimed by its sender (``pbem.services.mailing.QueuedMail``)."""

    @property
    def id(self) -> int: ...

    raw: bytes
    recipient: str
    attempts: int
    next_attempt_at: datetime


def send_claimed(
    svc: OutboxServices,
    mails: Sequence[ClaimedMail],
    *,
    policy: RetryPolicy = DEFAULT_RETRY,
    relay: Relay | None = None,
) -> dict[int, SendResult]:
    """Send mails whose rows were written already claimed by this sender, in a transaction
    that committed (``claim_for_sending``): no claim statement, no reading the bytes back.
    Each mail still succeeds, fails or is retried on its own, as in ``send_outbound_batch``."""
    claims = {
        mail.id: _Claim(raw=mail.raw, recipient=mail.recipient, attempt=mail.attempts)
        for mail in sorted(mails, key=lambda mail: mail.id)
    }
    if not claims:
        return {}
    lease_until = min(mail.next_attempt_at for mail in mails)
    return _deliver(svc, claims, policy, relay, lease_until=lease_until)


def _deliver(
    svc: OutboxServices,
    claims: dict[int, _Claim],
    policy: RetryPolicy,
    relay: Relay | None,
    *,
    lease_until: datetime | None,
) -> dict[int, SendResult]:
    """Hand the claimed mails to the relay on one connection, then record the results.  With
    ``lease_until`` (a short claim taken at commit), the lease of the mails not yet sent is
    extended to the full one once half of it has passed."""
    relay = relay or getattr(svc, "relay", None) or make_relay(svc.settings)
    results: dict[int, SendResult] = {}
    renew_at = None if lease_until is None else lease_until - policy.claimed_lease / 2
    try:
        signer = load_signer(svc.settings)
    except SigningKeyError as error:
        # The operator can fix the key: every mail waits with a temporary failure, none goes unsigned.
        log.error("outbound %s: cannot sign: %s", ", ".join(str(i) for i in claims), error)
        unsignable = RelayError(f"DKIM: {error}", permanent=False)
        return _record(svc, claims, dict.fromkeys(claims, unsignable), policy)
    not_signed: dict[int, RelayError] = {}

    def to_send() -> Iterator[OutgoingMail]:
        """The claimed mails in order, each taken just before it goes out (mails ahead of it may
        still be on their way: the relay pipelines them)."""
        nonlocal renew_at
        for outbound_id in list(claims):
            if outbound_id not in claims:  # lost when the lease was renewed
                continue
            if renew_at is not None and svc.clock.now() >= renew_at:
                rest = [i for i in claims if i >= outbound_id]
                kept = _renew(svc, rest, lease_until, policy)  # type: ignore[arg-type]
                for lost in set(rest) - kept:  # another sender took over: leave them to it
                    claims.pop(lost)
                    results[lost] = SendResult.NOT_DUE
                renew_at = None
                if outbound_id not in kept:
                    continue
            claim = claims[outbound_id]
            raw = _signed(signer, claim.raw, outbound_id, not_signed)
            if raw is not None:
                yield raw, [claim.recipient], outbound_id

    with relay_session(relay) as session:
        failures = deliver_each(session, to_send())
    results.update(_record(svc, claims, failures | not_signed, policy))
    return results


def _signed(signer: DkimSigner | None, raw: bytes, outbound_id: int, not_signed: dict[int, RelayError]) -> bytes | None:
    """``raw`` as it goes out: with a DKIM signature made now (README, "Mail that providers accept"),
    at every attempt, from the unsigned stored bytes, so a retried mail carries one valid signature.
    None when dkimpy refuses the message (recorded in ``not_signed`` as a permanent failure: the same
    bytes would be refused again)."""
    if signer is None:
        return raw
    try:
        return signer.sign(raw)
    except SigningError as error:
        log.error("outbound %s: dkimpy cannot sign it: %s", outbound_id, error)
        not_signed[outbound_id] = RelayError(f"DKIM: {error}", permanent=True)
        return None


_OUTBOX = OutboundMessage.__table__
# Built once (Core, parameters bound at each run): the statements of every batch.
_CLAIM = (
    update(_OUTBOX)
    .where(
        _OUTBOX.c.id.in_(bindparam("ids", expanding=True)),
        _OUTBOX.c.status == OutboundStatus.PENDING,
        _OUTBOX.c.next_attempt_at <= bindparam("due"),
    )
    .values(attempts=_OUTBOX.c.attempts + 1, next_attempt_at=bindparam("lease_until"))
    .returning(_OUTBOX.c.id, _OUTBOX.c.raw, _OUTBOX.c.recipient, _OUTBOX.c.attempts)
)
_STATUSES = select(_OUTBOX.c.id, _OUTBOX.c.status).where(_OUTBOX.c.id.in_(bindparam("ids", expanding=True)))
_RENEW = (
    update(_OUTBOX)
    .where(
        _OUTBOX.c.id.in_(bindparam("ids", expanding=True)),
        _OUTBOX.c.status == OutboundStatus.PENDING,
        _OUTBOX.c.next_attempt_at == bindparam("held_until"),
    )
    .values(next_attempt_at=bindparam("lease_until"))
    .returning(_OUTBOX.c.id)
)
_SENT = (
    update(_OUTBOX)
    .where(_OUTBOX.c.id.in_(bindparam("ids", expanding=True)))
    .values(status=OutboundStatus.SENT, sent_at=bindparam("sent_at"), last_error=None)
)


def _claim(
    svc: OutboxServices, ids: list[int], policy: RetryPolicy
) -> tuple[dict[int, _Claim], dict[int, SendResult]]:
    """Claim the due rows among ``ids``; say why each other one was not claimed."""
    now = svc.clock.now()
    # One statement, committed as it runs: the claim is atomic on its own.
    with single_statement(svc.session_factory) as conn:
        claimed = conn.execute(
            _CLAIM, {"ids": ids, "due": now + policy.grace, "lease_until": now + policy.lease}
        ).all()
    claims = {
        row.id: _Claim(raw=row.raw, recipient=row.recipient, attempt=row.attempts)
        for row in sorted(claimed, key=lambda row: row.id)
    }
    results: dict[int, SendResult] = {}
    others = [i for i in ids if i not in claims]
    if others:  # only to say why (a duplicate task, a row not due): nothing is changed
        with single_statement(svc.session_factory) as conn:
            statuses = {row.id: row.status for row in conn.execute(_STATUSES, {"ids": others})}
        for outbound_id in others:
            status = statuses.get(outbound_id)
            if status is None:
                results[outbound_id] = SendResult.MISSING
            elif status is OutboundStatus.SENT:
                results[outbound_id] = SendResult.ALREADY_SENT
            elif status is OutboundStatus.FAILED:
                results[outbound_id] = SendResult.GAVE_UP
            else:
                results[outbound_id] = SendResult.NOT_DUE
    return claims, results


def _renew(svc: OutboxServices, ids: list[int], held_until: datetime, policy: RetryPolicy) -> set[int]:
    """Extend the short claim of ``ids`` (still held until ``held_until``) to a full lease; the ids
    still ours (a row whose lease ran out and that someone else claimed is not)."""
    if not ids:
        return set()
    with single_statement(svc.session_factory) as conn:
        rows = conn.execute(_RENEW, {"ids": ids, "held_until": held_until,
                                     "lease_until": svc.clock.now() + policy.lease})
        return {row.id for row in rows}


def _record(
    svc: OutboxServices,
    claims: dict[int, _Claim],
    failures: dict[int, RelayError],
    policy: RetryPolicy,
) -> dict[int, SendResult]:
    sent = [outbound_id for outbound_id in claims if outbound_id not in failures]
    results: dict[int, SendResult] = {}
    if sent:
        # A row deleted while we sent it has nothing left to record on: still sent.  Committed
        # asynchronously (``Services.kept_connections``): see "Delivery is at least once" above.
        _record_sent(svc, sent)
        results.update(dict.fromkeys(sent, SendResult.SENT))
        log.info("outbound %s sent", ", ".join(str(i) for i in sent))
    if failures:
        with transaction(svc.session_factory) as session:
            now = svc.clock.now()
            for outbound_id, error in failures.items():
                results[outbound_id] = _record_failure(
                    session, now, outbound_id, claims[outbound_id], error, policy
                )
    return results


def _record_failure(
    session: Session,
    now: datetime,
    outbound_id: int,
    claim: _Claim,
    error: RelayError,
    policy: RetryPolicy,
) -> SendResult:
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
        row.next_attempt_at = now + policy.delay(claim.attempt)
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


def _record_sent(svc: OutboxServices, sent: list[int]) -> None:
    """Record these rows as sent, on the kept connection; once more on a new connection if that
    one was lost (the database server restarted since it was opened): the UPDATE is idempotent,
    and without it the mails, already with the relay, would go again after their lease."""
    for attempt in (1, 2):
        try:
            with svc.kept_connections.single_statement() as conn:
                conn.execute(_SENT, {"ids": sent, "sent_at": svc.clock.now()})
            return
        except DBAPIError as error:
            if attempt == 2 or not error.connection_invalidated:
                raise
            log.info("outbound %s: the connection for the sent record was lost; again on a new one",
                     ", ".join(str(i) for i in sent))


def stale_inbound(
    svc: OutboxServices,
    now: datetime,
    *,
    older_than: timedelta = INBOUND_STALE_AFTER,
    attempt_older_than: timedelta = ATTEMPT_STALE_AFTER,
    limit: int = SWEEP_BATCH,
) -> list[int]:
    """Inbound rows still ``pending`` whose task was lost, oldest first: never attempted
    ``older_than`` after they arrived, or attempted last ``attempt_older_than`` ago.  Processing
    is idempotent, so re-queuing one whose task is merely slow costs one attempt and a no-op."""
    attempted_at = InboundMessage.attempted_at
    with transaction(svc.session_factory) as session:
        return list(
            session.scalars(
                select(InboundMessage.id)
                .where(
                    InboundMessage.status == InboundStatus.PENDING,
                    or_(
                        and_(attempted_at.is_(None), InboundMessage.received_at <= now - older_than),
                        attempted_at <= now - attempt_older_than,
                    ),
                )
                .order_by(InboundMessage.received_at, InboundMessage.id)
                .limit(limit)
            )
        )
