"""``pbem mail inject FILE``: a raw message fed in as if it had arrived (stored, queued)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner
from sqlalchemy import select

from pbem.cli import main
from pbem.db.models import InboundMessage, InboundSource
from pbem.db.session import make_engine, make_session_factory
from tests.harness.ports import free_port
from workers.queueing import PROCESS_INBOUND

DOMAIN = "hearts.test"
REDIS_DB = 5
RAW = (
    f"From: Ana <ana@example.com>\r\nTo: new@{DOMAIN}, friend@example.com\r\n"
    f"Cc: Postmaster@{DOMAIN.upper()}\r\nSubject: hi\r\nMessage-ID: <inj-1@example.com>\r\n\r\nhelp\r\n"
).encode()


def env(tmp_path: Path, database_url: str, broker_url: str) -> dict[str, str]:
    return {
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_DATABASE_URL": database_url,
        "PBEM_BROKER_URL": broker_url,
        "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "test-secret",
    }


def stored(database_url: str) -> list[tuple[str, str, InboundSource]]:
    engine = make_engine(database_url)
    try:
        with make_session_factory(engine)() as session:
            return [(r.recipient, r.mail_from, r.source)
                    for r in session.scalars(select(InboundMessage).order_by(InboundMessage.id))]
    finally:
        engine.dispose()


@pytest.fixture
def broker(redis_url: str):
    url = redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url, client
    client.close()


def test_inject_stores_for_our_header_recipients_and_queues(
    tmp_path: Path, sqlite_migrated_url: str, broker
) -> None:
    broker_url, client = broker
    message = tmp_path / "mail.eml"
    message.write_bytes(RAW)
    runner = CliRunner()
    result = runner.invoke(main, ["mail", "inject", str(message)],
                           env=env(tmp_path, sqlite_migrated_url, broker_url))
    assert result.exit_code == 0, result.output
    assert "queued" in result.output and "friend@example.com" in result.output
    assert stored(sqlite_migrated_url) == [
        (f"new@{DOMAIN}", "ana@example.com", InboundSource.INJECT),
        (f"postmaster@{DOMAIN}", "ana@example.com", InboundSource.INJECT),
    ]
    tasks = [json.loads(item)["headers"]["task"] for item in client.lrange("celery", 0, -1)]
    assert tasks == [PROCESS_INBOUND, PROCESS_INBOUND]

    again = runner.invoke(main, ["mail", "inject", str(message)],
                          env=env(tmp_path, sqlite_migrated_url, broker_url))
    assert again.exit_code == 0 and "already stored" in again.output
    assert client.llen("celery") == 2


def test_inject_with_explicit_envelope_from_stdin_and_a_dead_broker(
    tmp_path: Path, sqlite_migrated_url: str
) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    result = CliRunner().invoke(
        main, ["mail", "inject", "-", "--to", f"hearts+1.0.0.x@{DOMAIN}", "--from", "bob@example.com"],
        input=RAW, env=env(tmp_path, sqlite_migrated_url, dead),
    )
    assert result.exit_code == 0, result.output
    assert "NOT queued" in result.output  # stored; the sweep queues it later
    assert stored(sqlite_migrated_url) == [
        (f"hearts+1.0.0.x@{DOMAIN}", "bob@example.com", InboundSource.INJECT)
    ]


def test_inject_refuses_a_mail_with_no_recipient_of_ours(tmp_path: Path, sqlite_migrated_url: str,
                                                         broker) -> None:
    result = CliRunner().invoke(
        main, ["mail", "inject", "-", "--to", "someone@example.com"],
        input=RAW, env=env(tmp_path, sqlite_migrated_url, broker[0]),
    )
    assert result.exit_code != 0 and "no recipient" in result.output
    assert stored(sqlite_migrated_url) == []
