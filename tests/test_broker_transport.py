"""Redis brokers use ``workers.broker`` (kombu's transport, one Redis client per channel), the
embedded SQLAlchemy broker ``workers.embedded_broker`` (polled every 100 ms); other brokers keep
their own transport."""

from __future__ import annotations

from hashlib import sha1
from pathlib import Path

from kombu import Connection
from kombu.transport import sqlalchemy
from redis import Redis

from pbem.config import Settings
from workers import broker, embedded_broker
from workers.app import make_celery
from workers.broker import Channel


def app_for(broker_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    return make_celery(Settings.from_env({
        "PBEM_BROKER_URL": broker_url, "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_DATABASE_URL": f"sqlite:///{tmp_path / 'pbem.db'}", "PBEM_MAIL_DOMAIN": "hearts.test",
        "PBEM_SECRET_KEY": "k",
    }))


def test_redis_brokers_keep_one_client_per_channel(tmp_path: Path) -> None:
    app = app_for("redis://127.0.0.1:1/0", tmp_path)
    connection = app.connection_for_write()
    assert connection.transport.Channel is Channel  # no connection is opened to find out
    channel = Channel.__new__(Channel)
    made = []
    channel._create_client = lambda: made.append(object()) or made[-1]  # type: ignore[method-assign]
    with channel.conn_or_acquire() as first, channel.conn_or_acquire() as second:
        assert first is second is made[0]
    given = object()
    with channel.conn_or_acquire(given) as client:
        assert client is given
    assert len(made) == 1


def test_the_embedded_broker_is_polled_often_and_still_carries_tasks(tmp_path: Path) -> None:
    """``sqla+sqlite`` (``pbem serve``'s default): kombu's SQLAlchemy transport, its consumer
    sleeping ``POLLING_INTERVAL_S`` between polls instead of kombu's second, on the same file."""
    app = app_for(f"sqla+sqlite:///{tmp_path / 'broker.db'}", tmp_path)
    with app.connection_for_write() as connection:
        assert isinstance(connection.transport, sqlalchemy.Transport)
        assert connection.transport.polling_interval == embedded_broker.POLLING_INTERVAL_S < 1
        queue = connection.SimpleQueue("pbem-test")
        queue.put({"move": 1})
        assert queue.get(timeout=10).payload == {"move": 1}
        queue.close()
    assert (tmp_path / "broker.db").exists()


def test_other_brokers_keep_their_transport(tmp_path: Path) -> None:
    app = app_for("amqp://127.0.0.1:1//", tmp_path)
    assert app.conf.broker_transport is None
    assert "amqp" in type(app.connection_for_write().transport).__module__


def test_unacked_tasks_are_recorded_forgotten_and_restored_as_kombu_does(redis_url: str) -> None:
    """A task delivered and not yet acknowledged is in kombu's "unacked" index and hash (written
    here by one script); acknowledged, it is gone from both; a consumer that goes away without
    acknowledging gives it back, and the next consumer gets the same task."""
    redis_url = redis_url.rsplit("/", 1)[0] + "/7"  # a database of its own
    client = Redis.from_url(redis_url)
    client.flushdb()
    client.script_flush()
    scripts = [sha1(source.encode()).hexdigest() for source in (broker._RECORD_UNACKED, broker._FORGET_UNACKED)]
    options = {"visibility_timeout": 3600}
    with Connection(redis_url, transport="workers.broker:Transport", transport_options=options) as conn:
        queue = conn.SimpleQueue("pbem-test")
        queue.put({"move": 1})
        queue.put({"move": 2})
        first = queue.get(timeout=10)
        assert first.payload == {"move": 1}
        assert client.zcard("unacked_index") == 1 and client.hlen("unacked") == 1
        (tag,) = client.hkeys("unacked")
        assert tag.decode() == first.delivery_tag
        first.ack()
        assert client.zcard("unacked_index") == 0 and client.hlen("unacked") == 0
        assert client.script_exists(*scripts) == [True, True]  # by the scripts, not kombu's transactions
        second = queue.get(timeout=10)
        assert second.payload == {"move": 2} and client.hlen("unacked") == 1
        queue.close()  # without acknowledging the second
    assert client.hlen("unacked") == 0
    with Connection(redis_url, transport="workers.broker:Transport", transport_options=options) as conn:
        queue = conn.SimpleQueue("pbem-test")
        again = queue.get(timeout=10)
        assert again.payload == {"move": 2}
        again.ack()
        queue.close()
    assert client.zcard("unacked_index") == 0 and client.hlen("unacked") == 0
    client.close()
