"""The embedded broker (``workers.embedded_broker``) keeps only the messages waiting: a delivered
message is deleted, one given back unacknowledged is delivered again, and ``prepare`` cleans a
file that kombu's own transport filled with delivered messages.

Real SQLite files and kombu's real channels; no worker is needed to deliver a message."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kombu import Connection

from workers.embedded_broker import MESSAGE_TABLE, Transport, prepare


def rows(broker_file: Path) -> dict[bool, int]:
    """The broker's messages, counted by visibility (True: waiting; False: delivered, kept)."""
    with sqlite3.connect(broker_file) as db:
        found = db.execute(f"SELECT visible, count(*) FROM {MESSAGE_TABLE} GROUP BY visible").fetchall()
    return {bool(visible): count for visible, count in found}


def connection(broker_file: Path, transport: object = Transport) -> Connection:
    return Connection(f"sqlite:///{broker_file}", transport=transport)


def test_a_delivered_message_is_deleted_and_an_unacknowledged_one_comes_back(tmp_path: Path) -> None:
    broker_file = tmp_path / "broker.db"
    with connection(broker_file) as conn:
        queue = conn.SimpleQueue("pbem-test")
        for n in range(30):
            queue.put({"n": n})
        for n in range(25):
            message = queue.get(timeout=10)
            assert message.payload == {"n": n}
            message.ack()
        assert rows(broker_file) == {True: 5}
        held = queue.get(timeout=10)  # delivered, not acknowledged: gone from the file, held here
        assert held.payload == {"n": 25}
        assert rows(broker_file) == {True: 4}
        queue.close()  # gives back what it holds, as a stopping worker does
    assert rows(broker_file) == {True: 5}
    with connection(broker_file) as conn:
        queue = conn.SimpleQueue("pbem-test")
        payloads = []
        for _ in range(5):
            message = queue.get(timeout=10)
            payloads.append(message.payload["n"])
            message.ack()
        queue.close()
    assert sorted(payloads) == [25, 26, 27, 28, 29]
    assert rows(broker_file) == {}


def test_prepare_cleans_what_kombus_own_transport_kept(tmp_path: Path) -> None:
    broker_file = tmp_path / "broker.db"
    assert prepare(broker_file, connection(broker_file)) == 0  # no file yet: made, with kombu's tables
    assert rows(broker_file) == {}
    with connection(broker_file, transport="sqlalchemy") as conn:
        queue = conn.SimpleQueue("pbem-test")
        for n in range(102):
            queue.put({"n": n, "padding": "x" * 4000})
        for _ in range(100):
            queue.get(timeout=10).ack()
        queue.close()
    assert rows(broker_file) == {False: 100, True: 2}
    size = broker_file.stat().st_size

    assert prepare(broker_file, connection(broker_file)) == 100
    assert rows(broker_file) == {True: 2}
    assert broker_file.stat().st_size < size / 10  # the space given back (VACUUM)
    assert prepare(broker_file, connection(broker_file)) == 0
    with connection(broker_file) as conn:
        queue = conn.SimpleQueue("pbem-test")
        assert [queue.get(timeout=10).payload["n"] for _ in range(2)] == [100, 101]
        queue.close()
