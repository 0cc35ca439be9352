"""The inbound-mail webhooks and /healthz, on SQLite and PostgreSQL, with a real broker.

Requests go through Flask's test client into the real app: real database (``db_url``:
both), real intake, and tasks published to a real embedded broker (kombu's SQLAlchemy
transport on a SQLite file), which the tests read back.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from kombu import Connection
from sqlalchemy import func, select

from pbem.config import Settings
from pbem.db.models import InboundMessage, InboundSource, WebhookNonce
from pbem.db.session import make_engine, make_session_factory
from pbem.services.clock import ManualClock
from pbem.web import create_app
from pbem.web.runtime import runtime
from pbem.web.signatures import NONCE_RETENTION, mailgun_signature, raw_signature

DOMAIN = "hearts.test"
WEBHOOK_SECRET = "webhook-secret-for-tests"
MAILGUN_KEY = "mailgun-signing-key"
MAILGUN_USER = "mailgun"
MAILGUN_PASSWORD = "correct horse battery staple"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

MESSAGE = (
    b"From: Alice <alice@example.com>\r\n"
    b"To: g1-abc@hearts.test\r\n"
    b"Subject: Re: [Hearts #1] your turn\r\n"
    b"Message-ID: <reply-1@example.com>\r\n"
    b"\r\n"
    b"QS\r\n"
)


def make_settings(tmp_path: Path, db_url: str, **extra: str) -> Settings:
    env = {
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_DATABASE_URL": db_url,
        "PBEM_BROKER_URL": f"sqla+sqlite:///{tmp_path / 'broker.db'}",
        "PBEM_SECRET_KEY": "secret-key-for-tests",
        "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "PBEM_MAILGUN_SIGNING_KEY": MAILGUN_KEY,
        "PBEM_MAILGUN_USER": MAILGUN_USER,
        "PBEM_MAILGUN_PASSWORD": MAILGUN_PASSWORD,
        **extra,
    }
    return Settings.from_env(env)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    return make_settings(tmp_path, db_url, PBEM_MAX_MESSAGE_SIZE="64K")


@pytest.fixture
def app(settings: Settings, clock: ManualClock) -> Iterator[Flask]:
    app = create_app(settings, clock=clock)
    yield app
    runtime(app).dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def inbound_rows(settings: Settings) -> list[InboundMessage]:
    engine = make_engine(settings.database_url)
    try:
        with make_session_factory(engine)() as session:
            return list(session.scalars(select(InboundMessage).order_by(InboundMessage.id)))
    finally:
        engine.dispose()


def nonce_count(settings: Settings) -> int:
    engine = make_engine(settings.database_url)
    try:
        with make_session_factory(engine)() as session:
            return session.scalar(select(func.count()).select_from(WebhookNonce)) or 0
    finally:
        engine.dispose()


def queued_tasks(settings: Settings) -> list[tuple[str, list[object]]]:
    """Drain the broker's default queue: (task name, args) of every message in it."""
    found = []
    with Connection(settings.broker_url) as connection:
        queue = connection.SimpleQueue("celery")
        try:
            while True:
                try:
                    message = queue.get(block=False)
                except queue.Empty:
                    break
                args, _kwargs, _embed = message.decode()
                found.append((message.headers["task"], list(args)))
                message.ack()
        finally:
            queue.close()
    return found


def raw_headers(body: bytes, *, timestamp: int, secret: str = WEBHOOK_SECRET,
                rcpt: str = f"g1-abc@{DOMAIN}", mail_from: str = "<alice@example.com>") -> dict[str, str]:
    ts = str(timestamp)
    return {
        "X-Pbem-Timestamp": ts,
        "X-Pbem-Signature": raw_signature(secret, ts, body),
        "X-Pbem-Mail-From": mail_from,
        "X-Pbem-Rcpt-To": rcpt,
        "Content-Type": "message/rfc822",
    }


def now_ts(clock: ManualClock) -> int:
    return int(clock.now().timestamp())


# --- POST /inbound/raw ---------------------------------------------------------------


def test_raw_webhook_with_good_signature_stores_once_and_queues(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    response = client.post("/inbound/raw", data=MESSAGE, headers=raw_headers(MESSAGE, timestamp=now_ts(clock)))

    assert response.status_code == 200, response.json
    rows = inbound_rows(settings)
    assert len(rows) == 1
    row = rows[0]
    assert response.json == {"stored": [row.id], "refused": []}
    assert row.raw == MESSAGE
    assert row.recipient == f"g1-abc@{DOMAIN}"
    assert row.mail_from == "alice@example.com"
    assert row.source == InboundSource.WEBHOOK
    assert row.received_at == NOW
    assert queued_tasks(settings) == [("pbem.process_inbound", [row.id])]

    # The provider delivers the same mail again (new timestamp, new signature): not a
    # replay, but the same message: nothing new stored, nothing queued.
    clock.advance(seconds=30)
    again = client.post("/inbound/raw", data=MESSAGE, headers=raw_headers(MESSAGE, timestamp=now_ts(clock)))
    assert again.status_code == 200
    assert again.json == {"stored": [], "refused": []}
    assert len(inbound_rows(settings)) == 1
    assert queued_tasks(settings) == []


def test_raw_webhook_with_bad_signature_is_401(client: FlaskClient, settings: Settings, clock: ManualClock) -> None:
    wrong_key = raw_headers(MESSAGE, timestamp=now_ts(clock), secret="not-the-secret")
    assert client.post("/inbound/raw", data=MESSAGE, headers=wrong_key).status_code == 401

    # A good signature of another body.
    altered = raw_headers(MESSAGE, timestamp=now_ts(clock))
    response = client.post("/inbound/raw", data=MESSAGE.replace(b"QS", b"AH"), headers=altered)
    assert response.status_code == 401
    assert response.json == {"error": "bad_signature"}

    # The timestamp is signed too: a fresh timestamp on an old signature fails.
    moved = raw_headers(MESSAGE, timestamp=now_ts(clock) - 100)
    moved["X-Pbem-Timestamp"] = str(now_ts(clock))
    assert client.post("/inbound/raw", data=MESSAGE, headers=moved).status_code == 401

    missing = raw_headers(MESSAGE, timestamp=now_ts(clock))
    del missing["X-Pbem-Signature"]
    assert client.post("/inbound/raw", data=MESSAGE, headers=missing).status_code == 401
    assert inbound_rows(settings) == []
    assert nonce_count(settings) == 0


@pytest.mark.parametrize("skew", [-301, 301, -3600])
def test_raw_webhook_with_stale_timestamp_is_401(
    client: FlaskClient, settings: Settings, clock: ManualClock, skew: int
) -> None:
    headers = raw_headers(MESSAGE, timestamp=now_ts(clock) + skew)
    response = client.post("/inbound/raw", data=MESSAGE, headers=headers)
    assert response.status_code == 401
    assert response.json == {"error": "stale_timestamp"}
    assert inbound_rows(settings) == []


def test_raw_webhook_accepts_timestamps_within_five_minutes(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    for skew, n in ((-299, 1), (299, 2)):
        body = MESSAGE.replace(b"reply-1", f"reply-skew-{n}".encode())
        response = client.post("/inbound/raw", data=body, headers=raw_headers(body, timestamp=now_ts(clock) + skew))
        assert response.status_code == 200, (skew, response.json)
    assert len(inbound_rows(settings)) == 2


def test_raw_webhook_replay_is_409_until_it_is_stale(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    headers = raw_headers(MESSAGE, timestamp=now_ts(clock))
    assert client.post("/inbound/raw", data=MESSAGE, headers=headers).status_code == 200
    queued_tasks(settings)

    clock.advance(seconds=200)
    replay = client.post("/inbound/raw", data=MESSAGE, headers=headers)
    assert replay.status_code == 409
    assert replay.json == {"error": "replayed"}

    # Once the request is stale its nonce may be forgotten; the replay is still refused.
    clock.advance(minutes=30)
    assert client.post("/inbound/raw", data=MESSAGE, headers=headers).status_code == 401
    assert len(inbound_rows(settings)) == 1
    assert queued_tasks(settings) == []


def test_raw_webhook_refuses_recipients_outside_the_mail_domain(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    headers = raw_headers(
        MESSAGE,
        timestamp=now_ts(clock),
        rcpt=f"<G1-ABC@{DOMAIN.upper()}>, victim@example.org, new@{DOMAIN}.evil.example",
    )
    response = client.post("/inbound/raw", data=MESSAGE, headers=headers)
    assert response.status_code == 200
    rows = inbound_rows(settings)
    assert [r.recipient for r in rows] == [f"g1-abc@{DOMAIN}"]
    assert response.json == {
        "stored": [rows[0].id],
        "refused": ["victim@example.org", f"new@{DOMAIN}.evil.example"],
    }

    clock.advance(seconds=1)
    only_outside = raw_headers(MESSAGE, timestamp=now_ts(clock), rcpt="victim@example.org")
    refused = client.post("/inbound/raw", data=MESSAGE, headers=only_outside)
    assert refused.status_code == 422
    assert refused.json["refused"] == ["victim@example.org"]
    assert len(inbound_rows(settings)) == 1


def test_raw_webhook_requires_the_envelope(client: FlaskClient, settings: Settings, clock: ManualClock) -> None:
    headers = raw_headers(MESSAGE, timestamp=now_ts(clock))
    del headers["X-Pbem-Rcpt-To"]
    response = client.post("/inbound/raw", data=MESSAGE, headers=headers)
    assert response.status_code == 400
    assert response.json == {"error": "envelope_missing"}
    assert inbound_rows(settings) == []


def test_raw_webhook_stores_a_bounce_with_the_null_sender(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    headers = raw_headers(MESSAGE, timestamp=now_ts(clock), mail_from="<>", rcpt=f"bounces@{DOMAIN}")
    assert client.post("/inbound/raw", data=MESSAGE, headers=headers).status_code == 200
    (row,) = inbound_rows(settings)
    assert row.mail_from == ""


def test_raw_webhook_over_the_size_limit_is_413(client: FlaskClient, settings: Settings, clock: ManualClock) -> None:
    big = MESSAGE + b"x" * (64 * 1024)
    response = client.post("/inbound/raw", data=big, headers=raw_headers(big, timestamp=now_ts(clock)))
    assert response.status_code == 413
    assert inbound_rows(settings) == []

    fits = MESSAGE + b"x" * (64 * 1024 - len(MESSAGE))
    response = client.post("/inbound/raw", data=fits, headers=raw_headers(fits, timestamp=now_ts(clock)))
    assert response.status_code == 200


def test_raw_webhook_is_off_without_a_secret(tmp_path: Path, db_url: str, clock: ManualClock) -> None:
    app = create_app(make_settings(tmp_path, db_url, PBEM_WEBHOOK_SECRET=""), clock=clock)
    try:
        headers = raw_headers(MESSAGE, timestamp=now_ts(clock), secret="")
        assert app.test_client().post("/inbound/raw", data=MESSAGE, headers=headers).status_code == 404
    finally:
        runtime(app).dispose()


# --- POST /inbound/mailgun -------------------------------------------------------------


def basic_auth(user: str = MAILGUN_USER, password: str = MAILGUN_PASSWORD) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def mailgun_form(clock: ManualClock, *, token: str = "a" * 50, message: bytes = MESSAGE,
                 timestamp: int | None = None, key: str = MAILGUN_KEY) -> dict[str, str | bytes]:
    ts = str(now_ts(clock) if timestamp is None else timestamp)
    return {
        "recipient": f"g1-abc@{DOMAIN}",
        "sender": "alice@example.com",
        "from": "Alice <alice@example.com>",
        "subject": "Re: [Hearts #1] your turn",
        "body-plain": "QS",
        "body-mime": message,
        "timestamp": ts,
        "token": token,
        "signature": mailgun_signature(key, ts, token),
    }


def multipart(fields: dict[str, str | bytes]) -> tuple[bytes, str]:
    """A multipart/form-data body whose text fields carry exactly the given bytes, as
    Mailgun sends the MIME (a test client would re-encode str values as UTF-8)."""
    boundary = "pbem-test-boundary-7MA4YWxkTrZu0gW"
    parts = []
    for name, value in fields.items():
        data = value if isinstance(value, bytes) else value.encode("utf-8")
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            + data + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def post_mailgun(client: FlaskClient, form: dict[str, str | bytes], headers: dict[str, str] | None = None):
    body, content_type = multipart(form)
    return client.post("/inbound/mailgun", data=body, headers=headers or {}, content_type=content_type)


def test_mailgun_without_basic_auth_is_401_even_with_a_good_signature(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    response = post_mailgun(client, mailgun_form(clock))
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Basic")

    wrong = post_mailgun(client, mailgun_form(clock), basic_auth(password="guess"))
    assert wrong.status_code == 401
    assert inbound_rows(settings) == []


def test_mailgun_with_basic_auth_and_good_signature_stores_and_queues(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    response = post_mailgun(client, mailgun_form(clock), basic_auth())
    assert response.status_code == 200, response.json
    (row,) = inbound_rows(settings)
    assert response.json == {"stored": [row.id], "refused": []}
    assert row.raw == MESSAGE
    assert row.source == InboundSource.MAILGUN
    assert row.mail_from == "alice@example.com"
    assert queued_tasks(settings) == [("pbem.process_inbound", [row.id])]


def test_mailgun_keeps_the_message_bytes_of_an_8bit_charset(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    latin1 = (
        b"From: Jo\xe3o <joao@example.com>\r\nMessage-ID: <pt-1@example.com>\r\n"
        b"Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
        b"Dama de espadas, obrigado. \xe9\xe7\xe3\r\n"
    )
    response = post_mailgun(client, mailgun_form(clock, message=latin1), basic_auth())
    assert response.status_code == 200, response.json
    (row,) = inbound_rows(settings)
    assert row.raw == latin1


def test_mailgun_with_bad_signature_or_stale_timestamp_is_401(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    assert post_mailgun(client, mailgun_form(clock, key="other-key"), basic_auth()).status_code == 401
    stale = post_mailgun(client, mailgun_form(clock, timestamp=now_ts(clock) - 3600), basic_auth())
    assert stale.status_code == 401
    assert stale.json == {"error": "stale_timestamp"}
    assert inbound_rows(settings) == []


def test_mailgun_replayed_token_is_refused(client: FlaskClient, settings: Settings, clock: ManualClock) -> None:
    form = mailgun_form(clock, token="t" * 50)
    assert post_mailgun(client, form, basic_auth()).status_code == 200

    # Same token and signature, even around another message: refused.
    clock.advance(seconds=10)
    other = dict(form, **{"body-mime": MESSAGE.replace(b"reply-1", b"reply-2")})
    replay = post_mailgun(client, other, basic_auth())
    assert replay.status_code == 409
    assert len(inbound_rows(settings)) == 1


def test_mailgun_oversized_message_is_413(client: FlaskClient, settings: Settings, clock: ManualClock) -> None:
    big = MESSAGE + b"x" * (64 * 1024)
    response = post_mailgun(client, mailgun_form(clock, message=big), basic_auth())
    assert response.status_code == 413
    assert inbound_rows(settings) == []


# --- GET /healthz ----------------------------------------------------------------------


def test_healthz_is_ok_with_a_reachable_database(client: FlaskClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "database": "ok"}


def test_healthz_is_503_when_the_database_is_unreachable(tmp_path: Path) -> None:
    from tests.harness.ports import free_port

    for url in (
        f"sqlite:///{tmp_path / 'no-such-dir' / 'pbem.db'}",
        f"postgresql+psycopg://pbem@127.0.0.1:{free_port()}/pbem",
    ):
        app = create_app(make_settings(tmp_path, url))
        try:
            response = app.test_client().get("/healthz")
            assert response.status_code == 503, url
            assert json.loads(response.data) == {"status": "error", "database": "unreachable"}
        finally:
            runtime(app).dispose()


def test_nonces_older_than_any_acceptable_request_are_pruned(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    for n in range(3):
        body = MESSAGE.replace(b"reply-1", f"reply-prune-{n}".encode())
        assert client.post("/inbound/raw", data=body, headers=raw_headers(body, timestamp=now_ts(clock))).status_code == 200
    assert nonce_count(settings) == 3
    clock.advance(seconds=NONCE_RETENTION.total_seconds() + 1)
    body = MESSAGE.replace(b"reply-1", b"reply-later")
    assert client.post("/inbound/raw", data=body, headers=raw_headers(body, timestamp=now_ts(clock))).status_code == 200
    assert nonce_count(settings) == 1


def test_mailgun_urlencoded_post_keeps_the_message_bytes(
    client: FlaskClient, settings: Settings, clock: ManualClock
) -> None:
    from urllib.parse import urlencode

    message = MESSAGE.replace(b"QS", b"Dama de espadas \xe9")
    body = urlencode(mailgun_form(clock, message=message)).encode("ascii")
    response = client.post("/inbound/mailgun", data=body, headers=basic_auth(),
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200, response.json
    (row,) = inbound_rows(settings)
    assert row.raw == message


# --- failures around the store ---------------------------------------------------------


def test_mail_is_stored_and_acknowledged_when_the_broker_is_down(
    tmp_path: Path, sqlite_migrated_url: str, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.harness.ports import free_port

    settings = make_settings(tmp_path, sqlite_migrated_url, PBEM_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0")
    app = create_app(settings, clock=clock)
    try:
        response = app.test_client().post(
            "/inbound/raw", data=MESSAGE, headers=raw_headers(MESSAGE, timestamp=now_ts(clock))
        )
    finally:
        runtime(app).dispose()
    # Stored (committed) before queueing was tried: the sender is told so, and the row
    # stays pending for the sweep to queue.
    assert response.status_code == 200
    (row,) = inbound_rows(settings)
    assert response.json == {"stored": [row.id], "refused": []}
    assert row.status == "pending"
    assert "could not queue" in caplog.text


def test_mail_that_cannot_be_stored_is_503_so_the_forwarder_retries(
    tmp_path: Path, clock: ManualClock
) -> None:
    from tests.harness.ports import free_port

    settings = make_settings(tmp_path, f"postgresql+psycopg://pbem@127.0.0.1:{free_port()}/pbem")
    app = create_app(settings, clock=clock)
    try:
        response = app.test_client().post(
            "/inbound/raw", data=MESSAGE, headers=raw_headers(MESSAGE, timestamp=now_ts(clock))
        )
    finally:
        runtime(app).dispose()
    assert response.status_code == 503
    assert response.json == {"error": "cannot_store"}
    assert response.headers["Retry-After"] == "60"


@pytest.mark.parametrize("mail_from", ["<" + "a" * 400 + "@example.com>", "<ali\x01ce@example.com>"])
def test_raw_webhook_refuses_for_good_an_envelope_no_row_can_hold(
    client: FlaskClient, settings: Settings, clock: ManualClock, mail_from: str
) -> None:
    headers = raw_headers(MESSAGE, timestamp=now_ts(clock), mail_from=mail_from)
    response = client.post("/inbound/raw", data=MESSAGE, headers=headers)
    assert response.status_code == 400
    assert response.json == {"error": "bad_envelope_address"}
    assert inbound_rows(settings) == []
