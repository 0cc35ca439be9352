"""Redis brokers use ``workers.broker`` (kombu's transport, one Redis client per channel);
other brokers keep their own transport."""

from __future__ import annotations

from pathlib import Path

from pbem.config import Settings
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


def test_other_brokers_keep_their_transport(tmp_path: Path) -> None:
    app = app_for(f"sqla+sqlite:///{tmp_path / 'broker.db'}", tmp_path)
    assert app.conf.broker_transport is None
    assert "sqlalchemy" in type(app.connection_for_write().transport).__module__
