"""The outbox sender against real SMTP servers on 127.0.0.1 and real databases.

The relays are aiosmtpd servers: the shared ``smtp_sink`` for the happy path, and
small ones here that refuse, stall or ask for a password.  Time is a ManualClock.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from sqlalchemy import select

from pbem.db.models import InboundMessage, InboundSource, OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.mail.relay import dev_mailbox_dir
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.outbox import (
    DEFAULT_RETRY,
    RetryPolicy,
    SendResult,
    due_outbound,
    send_outbound,
    stale_inbound,
)
from tests.harness.ports import free_port
from tests.harness.services import DOMAIN
from tests.harness.smtp_sink import SmtpSink
from tests.harness.tls import self_signed_certificate

RAW = (
    b"From: Hearts <hearts@hearts.test>\r\nTo: ana@example.com\r\n"
    b"Subject: [Hearts #1] your turn\r\nMessage-ID: <o1@hearts.test>\r\n\r\nPlay a card.\r\n"
)


def relay_env(port: int, **extra: str) -> dict[str, str]:
    return {"PBEM_RELAY_HOST": "127.0.0.1", "PBEM_RELAY_PORT": str(port)} | extra


def add_outbound(svc: Services, recipient: str = "ana@example.com") -> int:
    with transaction(svc.session_factory) as session:
        row = OutboundMessage(
            recipient=recipient,
            kind="your_turn",
            message_id="<o1@hearts.test>",
            raw=RAW,
            next_attempt_at=svc.clock.now(),
        )
        session.add(row)
        session.flush()
        return row.id


def load(svc: Services, outbound_id: int) -> OutboundMessage:
    with svc.session_factory() as session:
        row = session.get(OutboundMessage, outbound_id)
        assert row is not None
        return row


# --- relays that misbehave -------------------------------------------------------------


@dataclass
class ScriptedRelay:
    """An SMTP server answering RCPT from a script ("451 ...", "550 ..."; then 250),
    keeping what it accepted.  ``hold`` makes DATA wait until released."""

    rcpt_answers: list[str] = field(default_factory=list)
    hold: threading.Event | None = None
    accepted: list[tuple[str, list[str], bytes]] = field(default_factory=list)
    rcpt_calls: int = 0
    in_data: threading.Event = field(default_factory=threading.Event)

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          options: list[str]) -> str:
        self.rcpt_calls += 1
        if self.rcpt_answers:
            return self.rcpt_answers.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.in_data.set()
        if self.hold is not None:
            await asyncio.to_thread(self.hold.wait, 20)
        self.accepted.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 OK"


@pytest.fixture
def start_relay() -> Iterator[Callable[..., tuple[ScriptedRelay, int]]]:
    controllers: list[Controller] = []

    def start(relay: ScriptedRelay, **smtp_kwargs: Any) -> tuple[ScriptedRelay, int]:
        port = free_port()
        controller = Controller(relay, hostname="127.0.0.1", port=port,
                                server_hostname="relay.test", ready_timeout=10, **smtp_kwargs)
        controller.start()
        controllers.append(controller)
        return relay, port

    yield start
    for controller in controllers:
        controller.stop(no_assert=True)


# --- tests ---------------------------------------------------------------------------


def test_backoff_doubles_up_to_a_cap() -> None:
    policy = RetryPolicy(first_delay=timedelta(seconds=30), max_delay=timedelta(minutes=30))
    assert [policy.delay(n).total_seconds() for n in range(1, 9)] == [
        30, 60, 120, 240, 480, 960, 1800, 1800,
    ]


def test_a_mail_is_sent_once_with_our_bounce_address(services, smtp_sink: SmtpSink) -> None:
    smtp_sink.clear()
    svc = services(**relay_env(smtp_sink.port))
    outbound_id = add_outbound(svc)

    assert send_outbound(svc, outbound_id) == SendResult.SENT
    assert send_outbound(svc, outbound_id) == SendResult.ALREADY_SENT

    [mail] = smtp_sink.wait_for_messages(1)
    assert mail.mail_from == f"bounces@{DOMAIN}"
    assert mail.rcpt_tos == ("ana@example.com",)
    assert mail.raw.replace(b"\r\n", b"\n") == RAW.replace(b"\r\n", b"\n")
    row = load(svc, outbound_id)
    assert (row.status, row.attempts, row.sent_at, row.last_error) == (
        OutboundStatus.SENT, 1, svc.clock.now(), None,
    )
    assert len(smtp_sink.to("ana@example.com")) == 1  # the second call sent nothing


def test_a_refusing_relay_is_retried_with_backoff(services, start_relay) -> None:
    relay, port = start_relay(ScriptedRelay(rcpt_answers=["451 4.3.0 try later"] * 2))
    svc = services(**relay_env(port))
    clock: ManualClock = svc.clock  # type: ignore[assignment]
    outbound_id = add_outbound(svc)

    assert send_outbound(svc, outbound_id) == SendResult.RETRY
    row = load(svc, outbound_id)
    assert (row.status, row.attempts) == (OutboundStatus.PENDING, 1)
    first = DEFAULT_RETRY.first_delay  # the default backoff: first_delay, then twice as long
    assert row.next_attempt_at == clock.now() + first
    assert "451" in (row.last_error or "")

    # Not due yet: nobody even connects to the relay.
    assert send_outbound(svc, outbound_id) == SendResult.NOT_DUE
    assert relay.rcpt_calls == 1

    clock.advance(seconds=first.total_seconds())
    assert send_outbound(svc, outbound_id) == SendResult.RETRY
    row = load(svc, outbound_id)
    assert row.attempts == 2 and row.next_attempt_at == clock.now() + 2 * first

    clock.advance(seconds=2 * first.total_seconds())
    assert send_outbound(svc, outbound_id) == SendResult.SENT
    row = load(svc, outbound_id)
    assert (row.status, row.attempts, row.last_error) == (OutboundStatus.SENT, 3, None)
    assert [(sender, rcpts) for sender, rcpts, _ in relay.accepted] == [
        (f"bounces@{DOMAIN}", ["ana@example.com"])
    ]


def test_a_permanent_refusal_gives_up_at_once(services, start_relay) -> None:
    relay, port = start_relay(ScriptedRelay(rcpt_answers=["550 5.1.1 no such user"]))
    svc = services(**relay_env(port))
    outbound_id = add_outbound(svc)
    assert send_outbound(svc, outbound_id) == SendResult.FAILED
    row = load(svc, outbound_id)
    assert row.status is OutboundStatus.FAILED and "550" in (row.last_error or "")
    svc.clock.advance(hours=1)  # type: ignore[attr-defined]
    assert send_outbound(svc, outbound_id) == SendResult.GAVE_UP
    assert relay.accepted == [] and relay.rcpt_calls == 1


def test_attempts_run_out(services) -> None:
    svc = services(**relay_env(free_port()))  # nothing listens: connection refused
    policy = RetryPolicy(max_attempts=2)
    outbound_id = add_outbound(svc)
    assert send_outbound(svc, outbound_id, policy=policy) == SendResult.RETRY
    assert "unreachable" in (load(svc, outbound_id).last_error or "")
    svc.clock.advance(minutes=1)  # type: ignore[attr-defined]
    assert send_outbound(svc, outbound_id, policy=policy) == SendResult.FAILED
    row = load(svc, outbound_id)
    assert (row.status, row.attempts) == (OutboundStatus.FAILED, 2)


def test_two_senders_at_once_send_it_once(services, start_relay) -> None:
    """The first sender is held inside DATA; the second finds the row claimed."""
    hold = threading.Event()
    relay, port = start_relay(ScriptedRelay(hold=hold))
    svc = services(**relay_env(port))
    outbound_id = add_outbound(svc)
    results: list[SendResult] = []
    first = threading.Thread(target=lambda: results.append(send_outbound(svc, outbound_id)))
    first.start()
    try:
        assert relay.in_data.wait(20), "the first sender never reached DATA"
        assert send_outbound(svc, outbound_id) == SendResult.NOT_DUE
    finally:
        hold.set()
        first.join(30)
    assert results == [SendResult.SENT]
    assert len(relay.accepted) == 1


def test_a_sender_that_died_mid_send_is_retried_after_its_lease(services, smtp_sink) -> None:
    smtp_sink.clear()
    svc = services(**relay_env(smtp_sink.port))
    policy = RetryPolicy(lease=timedelta(minutes=10))
    outbound_id = add_outbound(svc, recipient="dies@example.com")
    # A claim with no record after it is what a killed sender leaves behind.
    with transaction(svc.session_factory) as session:
        row = session.get(OutboundMessage, outbound_id)
        row.attempts = 1
        row.next_attempt_at = svc.clock.now() + policy.lease
    assert due_outbound(svc, svc.clock.now()) == []
    svc.clock.advance(minutes=10)  # type: ignore[attr-defined]
    assert due_outbound(svc, svc.clock.now()) == [outbound_id]
    assert send_outbound(svc, outbound_id, policy=policy) == SendResult.SENT
    assert len(smtp_sink.to("dies@example.com")) == 1


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")
def test_relay_login(services, start_relay) -> None:
    def authenticator(server: Any, session: Any, envelope: Any, mechanism: str,
                      data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login, data.password) == (b"pbem", b"s3cret")
        return AuthResult(success=ok, handled=False)

    relay, port = start_relay(ScriptedRelay(), authenticator=authenticator,
                              auth_required=True, auth_require_tls=False)
    wrong = services(**relay_env(port, PBEM_RELAY_USER="pbem", PBEM_RELAY_PASSWORD="nope"))
    bad_id = add_outbound(wrong)
    # A refused login is the operator's to fix: retried, not given up.
    assert send_outbound(wrong, bad_id) == SendResult.RETRY
    assert "535" in (load(wrong, bad_id).last_error or "")

    right = services(**relay_env(port, PBEM_RELAY_USER="pbem", PBEM_RELAY_PASSWORD="s3cret"))
    good_id = add_outbound(right)
    assert send_outbound(right, good_id) == SendResult.SENT
    assert len(relay.accepted) == 1


def test_without_a_relay_mail_goes_to_the_dev_mailbox(services) -> None:
    svc = services()  # PBEM_RELAY_HOST empty
    outbound_id = add_outbound(svc)
    assert send_outbound(svc, outbound_id) == SendResult.SENT
    files = sorted(dev_mailbox_dir(svc.settings).iterdir())
    assert [f.name for f in files] == [f"{outbound_id:010d}.eml"]
    parsed = message_from_bytes(files[0].read_bytes(), policy=policy.default)
    assert parsed["Return-Path"] == f"<bounces@{DOMAIN}>"
    assert parsed["Delivered-To"] == "ana@example.com"
    assert parsed["Subject"] == "[Hearts #1] your turn"
    assert files[0].read_bytes().endswith(RAW)
    assert load(svc, outbound_id).status is OutboundStatus.SENT


def test_missing_row(services) -> None:
    assert send_outbound(services(), 987654) == SendResult.MISSING


def test_the_sweep_finds_due_mail_and_stale_inbound_mail(services) -> None:
    svc = services()
    clock: ManualClock = svc.clock  # type: ignore[assignment]
    due_id = add_outbound(svc)
    with transaction(svc.session_factory) as session:
        later = OutboundMessage(recipient="b@example.com", kind="your_turn", message_id="<o2@x>",
                                raw=RAW, next_attempt_at=clock.now() + timedelta(minutes=5))
        sent = OutboundMessage(recipient="c@example.com", kind="your_turn", message_id="<o3@x>",
                               raw=RAW, next_attempt_at=clock.now(), status=OutboundStatus.SENT)
        old = InboundMessage(message_key="<i1@x>", recipient=f"new@{DOMAIN}", raw=b"x",
                             source=InboundSource.SMTP, received_at=clock.now())
        session.add_all([later, sent, old])
        session.flush()
        later_id, old_id = later.id, old.id
    assert due_outbound(svc, clock.now()) == [due_id]
    assert stale_inbound(svc, clock.now()) == []
    clock.advance(minutes=5)
    assert due_outbound(svc, clock.now()) == [due_id, later_id]
    assert stale_inbound(svc, clock.now()) == [old_id]
    with transaction(svc.session_factory) as session:
        session.get(InboundMessage, old_id).status = "done"  # type: ignore[union-attr]
    assert stale_inbound(svc, clock.now()) == []
    with svc.session_factory() as session:
        assert session.scalar(select(OutboundMessage.status).where(OutboundMessage.id == due_id)) \
            is OutboundStatus.PENDING


# --- TLS to the relay (PBEM_RELAY_TLS) ----------------------------------------------------


def server_tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    return context


@pytest.mark.parametrize("mode", ["starttls", "ssl"])
def test_mail_goes_to_the_relay_over_verified_tls(services, start_relay, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    cert, key = self_signed_certificate(tmp_path, "relay.test")
    context = server_tls_context(cert, key)
    # starttls: the relay refuses MAIL before STARTTLS; ssl: it speaks TLS from the first byte.
    tls_kwargs = ({"tls_context": context, "require_starttls": True} if mode == "starttls"
                  else {"ssl_context": context})
    relay, port = start_relay(ScriptedRelay(), **tls_kwargs)

    # The relay's certificate is checked against the system's CAs: ours is self-signed.
    unverified = services(**relay_env(port, PBEM_RELAY_TLS=mode))
    refused_id = add_outbound(unverified)
    assert send_outbound(unverified, refused_id) == SendResult.RETRY
    assert "CERTIFICATE_VERIFY_FAILED" in (load(unverified, refused_id).last_error or "")
    assert relay.accepted == []

    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # an operator's private CA, as OpenSSL reads it
    trusted = services(**relay_env(port, PBEM_RELAY_TLS=mode))
    sent_id = add_outbound(trusted)
    assert send_outbound(trusted, sent_id) == SendResult.SENT
    assert len(relay.accepted) == 1 and relay.accepted[0][2].endswith(RAW)


def test_starttls_asked_of_a_relay_without_it_sends_nothing(services, smtp_sink: SmtpSink) -> None:
    smtp_sink.clear()
    svc = services(**relay_env(smtp_sink.port, PBEM_RELAY_TLS="starttls"))  # the sink offers no STARTTLS
    outbound_id = add_outbound(svc)
    assert send_outbound(svc, outbound_id) == SendResult.RETRY  # never a silent fall back to plain text
    assert smtp_sink.to("ana@example.com") == []
    assert load(svc, outbound_id).status is OutboundStatus.PENDING
