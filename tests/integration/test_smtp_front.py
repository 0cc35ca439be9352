"""The SMTP front on 127.0.0.1, driven by a real ``smtplib`` client.

Real database (SQLite and PostgreSQL), real Redis broker: a stored mail is
checked in the table, a queued one in the broker's queue.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import smtplib
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import select

from pbem.config import Settings
from pbem.db import migrate
from pbem.db.models import InboundMessage, InboundSource, InboundStatus
from pbem.db.session import make_engine, make_session_factory
from pbem.smtp.server import SmtpFront
from tests.harness.ports import free_port
from tests.harness.tls import self_signed_certificate
from workers import make_celery
from workers.queueing import PROCESS_INBOUND, InboundQueue

DOMAIN = "hearts.test"
RECEIVED = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
REDIS_DB = 3  # this module's own database on the shared test Redis


def message(message_id: str | None = "<m1@client.example>", body: str = "QS\r\n",
            to: str = f"hearts+1.0.0.aaaa@{DOMAIN}") -> bytes:
    headers = ["From: Ana <ana@example.com>", f"To: {to}", "Subject: Re: [Hearts #1] your turn"]
    if message_id:
        headers.append(f"Message-ID: {message_id}")
    return ("\r\n".join(headers) + "\r\n\r\n" + body).encode()


def settings_for(tmp_path: Path, database_url: str, broker_url: str, **extra: str) -> Settings:
    return Settings.from_env(
        {
            "PBEM_DATA_DIR": str(tmp_path),
            "PBEM_DATABASE_URL": database_url,
            "PBEM_BROKER_URL": broker_url,
            "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SMTP_LISTEN": f"127.0.0.1:{free_port()}",
            "PBEM_SMTP_HOSTNAME": "mx.hearts.test",
            "PBEM_SECRET_KEY": "test-secret",
            "PBEM_MAX_MESSAGE_SIZE": "64K",
        }
        | extra
    )


def broker_url(redis_url: str) -> str:
    return redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}"


class Front:
    """A running SMTP front plus what the tests look at: its rows and its queue."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine = make_engine(settings.database_url)
        self.session_factory = make_session_factory(self.engine)
        self.queue = InboundQueue(make_celery(settings))  # as ``pbem smtp`` queues
        self.server = SmtpFront(
            settings,
            session_factory=self.session_factory,
            queue=self.queue,
            clock=lambda: RECEIVED,
        )

    def client(self) -> smtplib.SMTP:
        listen = self.settings.smtp_listen
        return smtplib.SMTP(listen.host, listen.port, timeout=20)

    def rows(self) -> list[InboundMessage]:
        with self.session_factory() as session:
            return list(session.scalars(select(InboundMessage).order_by(InboundMessage.id)))

    def close(self) -> None:
        self.server.stop()
        self.queue.close()
        self.engine.dispose()


@pytest.fixture
def start_front(tmp_path: Path) -> Iterator[Callable[..., Front]]:
    fronts: list[Front] = []

    def start(settings: Settings) -> Front:
        front = Front(settings)
        front.server.start()
        fronts.append(front)
        return front

    yield start
    for front in fronts:
        front.close()


@pytest.fixture
def queued(redis_url: str) -> Iterator[Callable[[], list[tuple[str, str]]]]:
    """The tasks waiting in this module's Redis queue, as (task name, argsrepr)."""
    client = redis.Redis.from_url(broker_url(redis_url))
    client.flushdb()

    def tasks() -> list[tuple[str, str]]:
        found = []
        for item in client.lrange("celery", 0, -1):
            headers = json.loads(item)["headers"]
            found.append((headers["task"], headers["argsrepr"]))
        return found

    yield tasks
    client.close()


@pytest.fixture
def front(db_url: str, redis_url: str, tmp_path: Path, start_front: Callable[..., Front]) -> Front:
    return start_front(settings_for(tmp_path, db_url, broker_url(redis_url)))


def test_a_good_mail_is_stored_then_queued(front: Front, queued) -> None:
    raw = message()
    with front.client() as client:
        code, banner = client.ehlo("client.example")
        assert code == 250 and banner.startswith(b"mx.hearts.test")
        client.mail("ana@example.com")
        assert client.rcpt(f"hearts+1.0.0.aaaa@{DOMAIN}")[0] == 250
        assert client.rcpt(f"Postmaster@{DOMAIN.upper()}")[0] == 250
        code, reply = client.data(raw)
    assert code == 250, reply

    rows = front.rows()
    assert [(r.recipient, r.message_key, r.mail_from, r.source, r.status, r.received_at)
            for r in rows] == [
        (f"hearts+1.0.0.aaaa@{DOMAIN}", "<m1@client.example>", "ana@example.com",
         InboundSource.SMTP, InboundStatus.PENDING, RECEIVED),
        (f"postmaster@{DOMAIN}", "<m1@client.example>", "ana@example.com",
         InboundSource.SMTP, InboundStatus.PENDING, RECEIVED),
    ]
    assert rows[0].raw.replace(b"\r\n", b"\n") == raw.replace(b"\r\n", b"\n")
    assert sorted(queued()) == sorted((PROCESS_INBOUND, f"[{r.id}]") for r in rows)


def test_recipients_come_from_the_envelope_not_the_headers(front: Front) -> None:
    raw = message(to="someone-else@example.com")
    with front.client() as client:
        client.sendmail("ana@example.com", [f"new@{DOMAIN}"], raw)
    assert [r.recipient for r in front.rows()] == [f"new@{DOMAIN}"]


def test_bare_postmaster_and_null_sender_are_accepted(front: Front) -> None:
    with front.client() as client:
        client.ehlo("client.example")
        assert client.mail("<>")[0] == 250
        assert client.rcpt("postmaster")[0] == 250
        assert client.data(message(message_id=None))[0] == 250
    [row] = front.rows()
    assert (row.recipient, row.mail_from) == (f"postmaster@{DOMAIN}", "")
    assert row.message_key.startswith("sha256:")


@pytest.mark.parametrize(
    "address",
    [
        "victim@example.com",
        f"x@evil.{DOMAIN}",
        f"x@{DOMAIN}.evil.example",
        f'"x@{DOMAIN}"@evil.example',
        "postmaster@example.com",
    ],
)
def test_an_open_relay_attempt_is_refused_at_rcpt(front: Front, address: str) -> None:
    with front.client() as client:
        client.ehlo("client.example")
        client.mail("spammer@example.com")
        code, reply = client.rcpt(address)
        assert code == 550 and reply.startswith(b"5.7.1"), (code, reply)
        # No accepted recipient: DATA is refused and nothing is stored.
        with pytest.raises(smtplib.SMTPDataError) as refused:
            client.data(message())
        assert refused.value.smtp_code == 503
    assert front.rows() == []


def test_a_mixed_envelope_keeps_only_our_recipients(front: Front) -> None:
    with front.client() as client:
        refused = client.sendmail(
            "ana@example.com", ["victim@example.com", f"new@{DOMAIN}"], message()
        )
    assert refused == {"victim@example.com": (550, refused["victim@example.com"][1])}
    assert [r.recipient for r in front.rows()] == [f"new@{DOMAIN}"]


def test_an_oversized_mail_is_refused_with_552(front: Front) -> None:
    big = message(body="x" * 100 + "\r\n" * 1) + (b"y" * 998 + b"\r\n") * 80  # > 64K
    with front.client() as client:
        # A client that announces the size is refused at MAIL...
        with pytest.raises(smtplib.SMTPSenderRefused) as refused:
            client.sendmail("ana@example.com", [f"new@{DOMAIN}"], big)
        assert refused.value.smtp_code == 552
    with front.client() as client:
        # ...and one that does not, at the end of DATA.
        client.ehlo("client.example")
        client.mail("ana@example.com")
        client.rcpt(f"new@{DOMAIN}")
        code, _ = client.data(big)
        assert code == 552
    assert front.rows() == []


def test_the_same_mail_twice_is_stored_once(front: Front, queued) -> None:
    for _ in range(2):
        with front.client() as client:
            client.sendmail("ana@example.com", [f"new@{DOMAIN}"], message())
    rows = front.rows()
    assert len(rows) == 1
    assert queued() == [(PROCESS_INBOUND, f"[{rows[0].id}]")]  # queued once too


def test_stopping_the_front_gives_its_database_connections_back(front: Front) -> None:
    for k in range(3):
        with front.client() as client:
            client.sendmail("ana@example.com", [f"new@{DOMAIN}"], message(f"<m{k}@client.example>"))
    assert len(front.rows()) == 3
    front.server.stop()
    assert front.engine.pool.checkedout() == 0


def test_a_stored_mail_is_logged_at_debug_and_a_redelivery_at_info(
    front: Front, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="pbem.smtp")
    for _ in range(2):
        with front.client() as client:
            client.sendmail("ana@example.com", [f"new@{DOMAIN}"], message())
    stored = [r for r in caplog.records if r.getMessage().startswith("stored mail from")]
    assert [(r.levelno, r.getMessage().endswith("(duplicate)")) for r in stored] == [
        (logging.DEBUG, False), (logging.INFO, True)]


def test_queueing_failure_after_commit_still_answers_250(
    sqlite_migrated_url: str, tmp_path: Path, start_front: Callable[..., Front]
) -> None:
    dead_broker = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    front = start_front(settings_for(tmp_path, sqlite_migrated_url, dead_broker))
    with front.client() as client:
        assert client.sendmail("ana@example.com", [f"new@{DOMAIN}"], message()) == {}
    [row] = front.rows()
    assert row.status is InboundStatus.PENDING  # left for the sweep


def test_451_when_the_sqlite_database_is_read_only(
    sqlite_migrated_url: str, tmp_path: Path, start_front: Callable[..., Front], redis_url: str
) -> None:
    path = sqlite_migrated_url.removeprefix("sqlite:///")
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    front = start_front(settings_for(tmp_path, read_only, broker_url(redis_url)))
    with front.client() as client:
        client.ehlo("client.example")
        client.mail("ana@example.com")
        assert client.rcpt(f"new@{DOMAIN}")[0] == 250
        code, reply = client.data(message())
    assert (code, reply[:5]) == (451, b"4.3.0")
    writable = make_session_factory(make_engine(sqlite_migrated_url))
    with writable() as session:
        assert session.scalars(select(InboundMessage)).all() == []


@pytest.mark.postgres
def test_451_when_postgresql_goes_away(tmp_path: Path, start_front, redis_url: str) -> None:
    from tests.harness.postgres import PostgresServer

    with PostgresServer() as server:
        url = server.create_database("pbem_smtp_down")
        migrate.upgrade(url)
        front = start_front(settings_for(tmp_path, url, broker_url(redis_url)))
        with front.client() as client:
            assert client.sendmail("ana@example.com", [f"new@{DOMAIN}"], message("<up@x>")) == {}
        assert len(front.rows()) == 1
        front.engine.dispose()  # drop pooled connections: the next store must connect
    # The server is stopped now; the front is still listening.
    with front.client() as client:
        client.ehlo("client.example")
        client.mail("ana@example.com")
        client.rcpt(f"new@{DOMAIN}")
        code, reply = client.data(message("<down@x>"))
    assert (code, reply[:5]) == (451, b"4.3.0")


def test_starttls_is_offered_with_a_certificate(
    sqlite_migrated_url: str, tmp_path: Path, start_front, redis_url: str
) -> None:
    cert, key = self_signed_certificate(tmp_path, "mx.hearts.test")
    front = start_front(
        settings_for(tmp_path, sqlite_migrated_url, broker_url(redis_url),
                     PBEM_TLS_CERT=str(cert), PBEM_TLS_KEY=str(key))
    )
    context = ssl.create_default_context(cafile=str(cert))
    with front.client() as client:
        client.ehlo("client.example")
        assert client.has_extn("starttls")
        code, _ = client.starttls(context=context)  # verifies the cert for 127.0.0.1
        assert code == 220
        assert client.sock.version() in {"TLSv1.2", "TLSv1.3"}
        assert client.sendmail("ana@example.com", [f"new@{DOMAIN}"], message()) == {}
    assert len(front.rows()) == 1


def test_no_starttls_without_a_certificate(front: Front) -> None:
    with front.client() as client:
        client.ehlo("client.example")
        assert not client.has_extn("starttls")


def test_pipelining_is_offered_and_a_pipelined_group_is_answered_in_order(front: Front) -> None:
    """RFC 2920: MAIL, RCPT (one refused) and DATA in one write, their answers in order, then
    the message: only our recipient gets it."""
    with front.client() as client:
        client.ehlo("client.example")
        assert client.has_extn("pipelining")
        client.send(f"MAIL FROM:<ana@example.com>\r\nRCPT TO:<victim@example.com>\r\n"
                    f"RCPT TO:<new@{DOMAIN}>\r\nDATA\r\n")
        assert [client.getreply()[0] for _ in range(4)] == [250, 550, 250, 354]
        client.send(message() + b".\r\n")
        assert client.getreply()[0] == 250
        # A group whose every recipient is refused: DATA is refused too, and nothing is stored.
        client.send("MAIL FROM:<spammer@example.com>\r\nRCPT TO:<victim@example.com>\r\nDATA\r\n")
        assert [client.getreply()[0] for _ in range(3)] == [250, 550, 503]
        client.send("RSET\r\n")
        assert client.getreply()[0] == 250
    assert [r.recipient for r in front.rows()] == [f"new@{DOMAIN}"]


@pytest.mark.parametrize("sender", ["ana\x00@example.com", "ana@exa\x01mple.com", "a" * 400 + "@example.com"])
def test_a_sender_no_row_can_hold_is_refused_for_good_at_mail(front: Front, sender: str) -> None:
    with front.client() as client:
        client.ehlo("client.example")
        code, reply = client.docmd("MAIL", f"FROM:<{sender}>")
        assert code == 553 and reply.startswith(b"5.1.7"), reply
        # The session goes on: a good envelope after it is taken.
        assert client.mail("ana@example.com")[0] == 250
        assert client.rcpt(f"hearts+1.0.0.aaaa@{DOMAIN}")[0] == 250
        assert client.data(message())[0] == 250
    assert [row.mail_from for row in front.rows()] == ["ana@example.com"]


def test_a_recipient_with_a_nul_is_refused_for_good_at_rcpt(front: Front) -> None:
    with front.client() as client:
        client.ehlo("client.example")
        assert client.mail("ana@example.com")[0] == 250
        code, reply = client.docmd("RCPT", f"TO:<hearts+1.0\x00.0.aaaa@{DOMAIN}>")
        assert code == 553 and reply.startswith(b"5.1.3"), reply
        code, _ = client.docmd("DATA")
        assert code == 503  # no valid recipient: nothing to take
    assert front.rows() == []
