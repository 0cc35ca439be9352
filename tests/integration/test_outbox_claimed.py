"""A move's mails sent by the task that applied it (README, "Running in production"), on SQLite and PostgreSQL, to real
SMTP servers on 127.0.0.1: written already claimed, sent without a claim statement, left to the
sweep once their short lease runs out when the task dies first; the relay connection kept open
from move to move."""

from __future__ import annotations

import random
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import event, update

from pbem.db.models import OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.mail.relay import KeptSmtpConnection, make_relay
from pbem.services.inbound import apply_inbound
from pbem.services.intake import store_inbound
from pbem.services.outbox import DEFAULT_RETRY, SendResult, due_outbound, send_claimed, send_outbound_batch
from tests.harness.players import Received, choose, reply_bytes
from tests.integration.mailplay import make_services, new_game
from tests.integration.test_outbox_batch import CountingRelay
from tests.integration.test_outbox_send import (  # noqa: F401  (fixtures)
    RAW,
    load,
    relay_env,
    start_relay,
)
from workers.tasks import run_move

LEASE = DEFAULT_RETRY.claimed_lease


def a_move(svc: Any) -> int:
    """A game of four people without passing, and the first card played: stored, not processed."""
    _, mails = new_game(svc, pass_cycle=["hold"])
    asked = next(m for m in mails if m.kind == "your_turn")
    received = Received.parse(asked.raw)
    raw = reply_bytes(received, sender=asked.recipient, body=choose(received, random.Random(1)))
    with transaction(svc.session_factory) as session:
        [inbound_id] = store_inbound(session, raw=raw, mail_from=asked.recipient, recipients=[received.reply_to],
                                     source="inject", received_at=svc.clock.now())
    return inbound_id


def test_a_moves_mails_are_sent_by_its_task_without_a_claim(db_url, tmp_path, smtp_sink) -> None:  # type: ignore[no-untyped-def]
    svc = make_services(db_url, tmp_path, **relay_env(smtp_sink.port))
    try:
        inbound_id = a_move(svc)
        smtp_sink.clear()
        seen: list[str] = []
        event.listen(svc.engine, "before_cursor_execute",
                     lambda conn, cursor, sql, params, context, many: seen.append(" ".join(sql.split()[:3])))
        ids = run_move(svc, inbound_id, queue_retry=lambda outbound_id, countdown: None)
        assert ids and len(smtp_sink.messages) == len(ids)
        assert seen.count("UPDATE outbound_messages SET") == 1  # the record only: no claim
        rows = [load(svc, i) for i in ids]
        assert all(row.status is OutboundStatus.SENT and row.attempts == 1 for row in rows)
        assert sorted(m.rcpt_tos[0] for m in smtp_sink.messages) == sorted(row.recipient for row in rows)
    finally:
        svc.close()


def test_mails_of_a_task_that_died_are_sent_by_the_sweep_after_the_short_lease(db_url, tmp_path,  # type: ignore[no-untyped-def]
                                                                                smtp_sink) -> None:
    svc = make_services(db_url, tmp_path, **relay_env(smtp_sink.port))
    try:
        inbound_id = a_move(svc)
        now = svc.clock.now()
        mails = apply_inbound(svc, inbound_id, send_lease=LEASE).mails  # committed; then the task "dies"
        ids = [mail.id for mail in mails]
        assert ids
        for outbound_id in ids:
            row = load(svc, outbound_id)
            assert row.status is OutboundStatus.PENDING and row.attempts == 1 and row.next_attempt_at == now + LEASE
        assert not set(ids) & set(due_outbound(svc, now + LEASE / 2))  # still held: nobody else sends them
        svc.clock.advance(seconds=LEASE.total_seconds() + 1)
        assert set(ids) <= set(due_outbound(svc, svc.clock.now()))  # the sweep finds them
        smtp_sink.clear()
        assert send_outbound_batch(svc, ids) == dict.fromkeys(ids, SendResult.SENT)
        assert len(smtp_sink.messages) == len(ids)
        assert all(load(svc, i).attempts == 2 for i in ids)
        # The task, delivered again by the broker, finds the mail done and writes nothing more.
        assert apply_inbound(svc, inbound_id, send_lease=LEASE).mails == []
    finally:
        svc.close()


@dataclass
class Written:
    """A row written already claimed (what ``QueuedMail`` carries)."""

    id: int
    raw: bytes
    recipient: str
    attempts: int
    next_attempt_at: datetime


def write_claimed(svc: Any, recipients: list[str]) -> list[Written]:
    until = svc.clock.now() + LEASE
    written = []
    with transaction(svc.session_factory) as session:
        for recipient in recipients:
            row = OutboundMessage(recipient=recipient, kind="your_turn", message_id="<o1@hearts.test>", raw=RAW,
                                  attempts=1, next_attempt_at=until)
            session.add(row)
            session.flush()
            written.append(Written(row.id, RAW, recipient, 1, until))
    return written


@dataclass
class SlowRelay(CountingRelay):
    """Time passes while it takes the first mail (the services' ManualClock moves on)."""

    clock: Any = None
    advance: timedelta = timedelta(0)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.advance:
            self.clock.advance(seconds=self.advance.total_seconds())
            self.advance = timedelta(0)
        return await super().handle_DATA(server, session, envelope)


def test_a_slow_delivery_extends_the_claim_of_the_rest_and_skips_what_another_sender_took(services,  # type: ignore[no-untyped-def]
                                                                                           start_relay) -> None:
    relay = SlowRelay()
    _, port = start_relay(relay)
    svc = services(**relay_env(port))
    relay.clock = svc.clock
    first, second, third = write_claimed(svc, ["a@example.com", "b@example.com", "c@example.com"])
    relay.advance = LEASE * 3 / 4  # past half the lease once the first mail is in
    with transaction(svc.session_factory) as session:  # the third's lease ran out and another sender took it
        session.execute(update(OutboundMessage).where(OutboundMessage.id == third.id)
                        .values(next_attempt_at=svc.clock.now() + timedelta(minutes=5), attempts=2))

    results = send_claimed(svc, [first, second, third])

    assert results == {first.id: SendResult.SENT, second.id: SendResult.SENT, third.id: SendResult.NOT_DUE}
    assert relay.accepted == ["a@example.com", "b@example.com"]
    assert load(svc, third.id).status is OutboundStatus.PENDING  # left to the sender that holds it


def test_the_relay_connection_is_kept_from_batch_to_batch(services, start_relay) -> None:  # type: ignore[no-untyped-def]
    relay, port = start_relay(CountingRelay())
    svc = services(**relay_env(port))
    for recipients in (["a@example.com", "b@example.com"], ["c@example.com"]):
        written = write_claimed(svc, recipients)
        assert send_claimed(svc, written) == {w.id: SendResult.SENT for w in written}
    assert relay.ehlo == 1
    assert relay.accepted == ["a@example.com", "b@example.com", "c@example.com"]


def test_a_kept_connection_the_relay_dropped_is_replaced_before_a_mail_fails(services, start_relay) -> None:  # type: ignore[no-untyped-def]
    relay, port = start_relay(CountingRelay())
    svc = services(**relay_env(port))
    kept = KeptSmtpConnection(make_relay(svc.settings), check_after_s=0.0)  # checked before every batch
    kept.deliver(RAW, recipients=["a@example.com"], key=1)
    kept._session._client.sock.shutdown(socket.SHUT_RDWR)  # the connection dies while idle
    kept.deliver(RAW, recipients=["b@example.com"], key=2)
    assert relay.accepted == ["a@example.com", "b@example.com"]
    assert relay.ehlo == 2
    kept.close()
