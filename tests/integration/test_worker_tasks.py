"""A real Celery worker subprocess on a real Redis, running pbem's tasks end to end.

The worker is started with the test's settings in its environment; outgoing mail
goes to SMTP servers on 127.0.0.1.  Time moves with the services' offset clock
(``PBEM_CLOCK_OFFSET_FILE``), which the worker reads too.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import redis
from aiosmtpd.controller import Controller
from sqlalchemy import select

from pbem.config import Settings
from pbem.db.models import InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.clock import OffsetClock
from pbem.services.intake import receive_inbound
from tests.harness.celery_worker import CeleryWorker
from tests.harness.ports import free_port
from tests.harness.smtp_sink import SmtpSink
from tests.harness.waiting import wait_for
from workers import make_celery
from workers.queueing import SWEEP, queue_inbound, queue_outbound

pytestmark = pytest.mark.redis

DOMAIN = "hearts.test"
REDIS_DB = 4  # this module's own database on the shared test Redis


class Env:
    """The settings shared by the test process and its worker."""

    def __init__(self, tmp_path: Path, db_url: str, redis_url: str, relay_port: int) -> None:
        self.vars = {
            "PBEM_DATA_DIR": str(tmp_path / "data"),
            "PBEM_DATABASE_URL": db_url,
            "PBEM_BROKER_URL": redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}",
            "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SECRET_KEY": "test-secret",
            "PBEM_RELAY_HOST": "127.0.0.1",
            "PBEM_RELAY_PORT": str(relay_port),
            "PBEM_CLOCK_OFFSET_FILE": str(tmp_path / "clock-offset"),
        }
        self.settings = Settings.from_env(self.vars)
        self.svc = Services.from_settings(self.settings)
        self.celery = make_celery(self.settings)

    @property
    def clock(self) -> OffsetClock:
        assert isinstance(self.svc.clock, OffsetClock)
        return self.svc.clock

    def add_outbound(self, recipient: str) -> int:
        with transaction(self.svc.session_factory) as session:
            row = OutboundMessage(
                recipient=recipient,
                kind="your_turn",
                message_id=f"<{recipient}@hearts.test>",
                raw=f"From: hearts@{DOMAIN}\r\nTo: {recipient}\r\nSubject: hi\r\n\r\nPlay.\r\n".encode(),
                next_attempt_at=self.svc.clock.now(),
            )
            session.add(row)
            session.flush()
            return row.id

    def outbound(self, outbound_id: int) -> OutboundMessage:
        with self.svc.session_factory() as session:
            row = session.get(OutboundMessage, outbound_id)
            assert row is not None
            return row

    def close(self) -> None:
        self.svc.close()


@pytest.fixture
def make_env(tmp_path: Path, db_url: str, redis_url: str) -> Iterator[Callable[[int], Env]]:
    client = redis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}")
    client.flushdb()
    client.close()
    made: list[Env] = []

    def make(relay_port: int) -> Env:
        env = Env(tmp_path, db_url, redis_url, relay_port)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


class HeldRelay:
    """An SMTP server that keeps what it accepts; with ``hold`` set, RCPT waits for it
    (so a sender can be caught before any of its message was transferred)."""

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.hold = hold
        self.in_rcpt = threading.Event()
        self.accepted: list[tuple[str, ...]] = []

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          options: list[str]) -> str:
        self.in_rcpt.set()
        if self.hold is not None:
            await asyncio.to_thread(self.hold.wait, 30)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.accepted.append(tuple(envelope.rcpt_tos))
        return "250 OK"


@pytest.fixture
def start_relay() -> Iterator[Callable[[HeldRelay, int], HeldRelay]]:
    controllers: list[Controller] = []

    def start(relay: HeldRelay, port: int) -> HeldRelay:
        controller = Controller(relay, hostname="127.0.0.1", port=port,
                                server_hostname="relay.test", ready_timeout=10)
        controller.start()
        controllers.append(controller)
        return relay

    yield start
    for controller in controllers:
        controller.stop(no_assert=True)


def test_send_mail_end_to_end(make_env, smtp_sink: SmtpSink) -> None:
    smtp_sink.clear()
    env = make_env(smtp_sink.port)
    ids = [env.add_outbound("ana@example.com"), env.add_outbound("bob@example.com")]
    with CeleryWorker(env.vars) as worker:
        queue_outbound(env.celery, ids)  # ONE task for the mails of one move
        wait_for(lambda: all(env.outbound(i).status is OutboundStatus.SENT for i in ids),
                 timeout=30, message="both outbox rows sent")
        worker.wait_for_log("Task pbem.send_mail[")  # its "succeeded" line ("received" lines are off)
    log_text = worker.log_text()
    assert log_text.count("Task pbem.send_mail[") == 1  # one task, not one per mail
    assert log_text.count("Task pbem.send_mail[") == log_text.count(" succeeded in ")
    assert sorted(m.rcpt_tos for m in smtp_sink.messages) == [
        ("ana@example.com",), ("bob@example.com",)
    ]
    assert {m.mail_from for m in smtp_sink.messages} == {f"bounces@{DOMAIN}"}
    assert [env.outbound(i).attempts for i in ids] == [1, 1]


def test_a_failed_send_is_retried_after_its_backoff_by_the_sweep(make_env, start_relay) -> None:
    port = free_port()
    env = make_env(port)  # nothing listens on the relay port yet
    outbound_id = env.add_outbound("ana@example.com")
    # DEBUG: a sweep that re-queued nothing logs its result at DEBUG (README, "Metrics and logs").
    with CeleryWorker(env.vars, extra_args=["--loglevel=DEBUG"]) as worker:
        queue_outbound(env.celery, [outbound_id])
        wait_for(lambda: env.outbound(outbound_id).last_error, timeout=30,
                 message="the first attempt's failure recorded")
        first = env.outbound(outbound_id)
        assert first.status is OutboundStatus.PENDING and "unreachable" in (first.last_error or "")

        relay = start_relay(HeldRelay(), port)
        env.celery.send_task(SWEEP)  # too early: the row is not due for 30 s
        worker.wait_for_log("'outbound': 0, ")
        assert env.outbound(outbound_id).attempts == 1

        env.clock.advance(seconds=31)  # the worker reads the same offset file
        env.celery.send_task(SWEEP)
        wait_for(lambda: env.outbound(outbound_id).status is OutboundStatus.SENT, timeout=30,
                 message="the retried mail sent")
    assert relay.accepted == [("ana@example.com",)]
    assert env.outbound(outbound_id).attempts == 2


def test_a_pool_process_killed_mid_send_loses_nothing_and_sends_once(make_env, start_relay) -> None:
    """SIGKILL the pool process while it talks to the relay: the task comes back
    (task_reject_on_worker_lost), finds the row claimed, and the mail goes out once
    after the claim's lease, through the sweep."""
    hold = threading.Event()
    port = free_port()
    relay = start_relay(HeldRelay(hold), port)
    env = make_env(port)
    outbound_id = env.add_outbound("ana@example.com")
    with CeleryWorker(env.vars) as worker:
        [pool_pid] = worker.pool_pids()
        queue_outbound(env.celery, [outbound_id])
        assert relay.in_rcpt.wait(30), "the worker never reached the relay"
        os.kill(pool_pid, signal.SIGKILL)
        worker.wait_for_log("WorkerLostError")
        hold.set()
        # The task is delivered again and finds the row still claimed by the dead sender.
        worker.wait_for_log("'not_due'")
        assert env.outbound(outbound_id).status is OutboundStatus.PENDING

        env.clock.advance(minutes=11)  # past the lease
        env.celery.send_task(SWEEP)
        wait_for(lambda: env.outbound(outbound_id).status is OutboundStatus.SENT, timeout=30,
                 message="the mail sent after the lease")
    assert relay.accepted == [("ana@example.com",)]
    assert env.outbound(outbound_id).attempts == 2


def test_process_inbound_runs_the_service_for_a_queued_mail(make_env, smtp_sink) -> None:
    env = make_env(smtp_sink.port)
    raw = (b"From: stranger@example.com\r\nTo: new@hearts.test\r\n"
           b"Message-ID: <w1@example.com>\r\nSubject: hello\r\n\r\nhelp\r\n")
    with CeleryWorker(env.vars) as worker:
        received = receive_inbound(
            env.svc.session_factory, raw=raw, mail_from="stranger@example.com",
            recipients=[f"new@{DOMAIN}"], source="smtp", received_at=env.clock.now(),
            queue=lambda ids: queue_inbound(env.celery, ids),
        )
        assert received.queued and len(received.ids) == 1

        def processed() -> InboundMessage | None:
            with env.svc.session_factory() as session:
                row = session.scalars(select(InboundMessage)).one()
                return row if row.status is not InboundStatus.PENDING else None

        row = wait_for(processed, timeout=30, message="the inbound row processed")
        assert row.attempts == 1 and isinstance(row.processed_at, datetime)
    # The task of every move runs without Celery's routine "received"/"succeeded" lines (the
    # log itself is written: the worker's "ready" line is there).
    log_text = worker.log_text()
    assert " ready." in log_text and "Task pbem.process_inbound[" not in log_text
