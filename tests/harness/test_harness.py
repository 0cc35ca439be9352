"""The harness itself: the servers it starts are real and answer."""

from __future__ import annotations

import smtplib
import threading

import psycopg
import pytest
import redis

from tests.harness import WaitTimeout, wait_for
from tests.harness.postgres import PostgresServer
from tests.harness.smtp_sink import SmtpSink


def test_wait_for_returns_the_value_and_times_out() -> None:
    calls = iter([0, "", "ready"])
    assert wait_for(lambda: next(calls), timeout=5, interval=0) == "ready"
    with pytest.raises(WaitTimeout, match="never"):
        wait_for(lambda: False, timeout=0.05, message="never")


@pytest.mark.postgres
def test_pg_db_url_is_a_fresh_database(pg_db_url: str, postgres_server: PostgresServer) -> None:
    conninfo = postgres_server.conninfo(pg_db_url.rsplit("/", 1)[1])
    with psycopg.connect(conninfo) as conn:
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname='public'").fetchone() == (0,)
        assert conn.execute("SHOW server_version_num").fetchone()[0] >= "150000"


@pytest.mark.redis
def test_redis_url_answers(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        client.set("pbem:harness", "ok")
        assert client.get("pbem:harness") == b"ok"
    finally:
        client.close()


def test_smtp_sink_captures_envelope_and_bytes(smtp_sink: SmtpSink) -> None:
    smtp_sink.clear()
    raw = b"From: a@example.com\r\nTo: b@example.com\r\nSubject: t\r\n\r\nhello\r\n"

    def send(n: int) -> None:
        with smtplib.SMTP(smtp_sink.host, smtp_sink.port, timeout=10) as client:
            ehlo = client.ehlo()
            assert b"sink.localhost" in ehlo[1]
            client.sendmail("a@example.com", [f"b{n}@example.com", "c@example.com"], raw)

    senders = [threading.Thread(target=send, args=(n,)) for n in range(3)]
    for sender in senders:
        sender.start()
    messages = smtp_sink.wait_for_messages(3)
    for sender in senders:
        sender.join()
    assert all(m.raw.replace(b"\r\n", b"\n") == raw.replace(b"\r\n", b"\n") for m in messages)
    assert {m.rcpt_tos for m in messages} == {(f"b{n}@example.com", "c@example.com") for n in range(3)}
    assert len(smtp_sink.to("C@example.com")) == 3
    assert smtp_sink.wait_for_message(lambda m: "b1@example.com" in m.rcpt_tos).parsed()["Subject"] == "t"
