"""``InboundQueue``: the front's way of queueing ``pbem.process_inbound``, on a real Redis.

It must publish exactly what ``send_task`` would (the worker cannot tell them apart), keep one
broker connection per thread instead of one per task, raise kombu's error when the broker is
down (the front then logs and leaves the row to the sweep), and work again once it is back.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from kombu.exceptions import KombuError

from pbem.config import Settings
from pbem.devservers.waiting import wait_for
from tests.harness.ports import free_port
from workers import make_celery
from workers.queueing import PROCESS_INBOUND, InboundQueue, queue_inbound

REDIS_DB = 4  # this module's own database on the shared test Redis


def settings_for(tmp_path: Path, broker_url: str) -> Settings:
    return Settings.from_env({
        "PBEM_DATA_DIR": str(tmp_path), "PBEM_DATABASE_URL": f"sqlite:///{tmp_path / 'pbem.db'}",
        "PBEM_BROKER_URL": broker_url, "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "test",
    })


@pytest.fixture
def broker(redis_url: str) -> Iterator[tuple[str, redis.Redis]]:
    url = redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url, client
    client.close()


def _queued(client: redis.Redis) -> list[dict[str, Any]]:
    return [json.loads(item) for item in reversed(client.lrange("celery", 0, -1))]


def _without_ids(message: dict[str, Any]) -> dict[str, Any]:
    """A published message with its random parts (task id, delivery tag) blanked."""
    message = json.loads(json.dumps(message))
    for part, key in [("headers", "id"), ("headers", "root_id"), ("properties", "correlation_id"),
                      ("properties", "delivery_tag")]:
        assert message[part][key]
        message[part][key] = "-"
    return message


def test_it_publishes_what_send_task_publishes(tmp_path: Path, broker) -> None:
    url, client = broker
    app = make_celery(settings_for(tmp_path, url))
    queue = InboundQueue(app)
    try:
        queue_inbound(app, [41])
        queue([41, 42])
    finally:
        queue.close()
        app.close()
    by_send_task, by_queue, second = _queued(client)
    assert by_send_task["headers"]["task"] == PROCESS_INBOUND
    assert _without_ids(by_queue) == _without_ids(by_send_task)
    assert (second["headers"]["argsrepr"], by_queue["headers"]["argsrepr"]) == ("[42]", "[41]")
    ids = {m["headers"]["id"] for m in (by_send_task, by_queue, second)}
    assert len(ids) == 3


def _clients(client: redis.Redis) -> int:
    return sum(1 for c in client.client_list() if int(c["db"]) == REDIS_DB)


def test_one_connection_per_thread_kept_across_tasks(tmp_path: Path, broker) -> None:
    url, client = broker
    before = _clients(client)
    queue = InboundQueue(make_celery(settings_for(tmp_path, url)))
    try:
        queue([0])
        per_thread = _clients(client) - before  # kombu's check at connect, and the channel's
        assert per_thread >= 1
        for k in range(1, 30):
            queue([k])
        assert _clients(client) == before + per_thread
        threads = [threading.Thread(target=queue, args=([100 + k],)) for k in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert _clients(client) == before + 3 * per_thread
        assert len(_queued(client)) == 32
    finally:
        queue.close()
    wait_for(lambda: _clients(client) == before, timeout=10, message="the connections to close")


class _OwnRedis:
    """A redis-server on a fixed port, so it can be stopped and started again at the same address."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is needed"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        try:
            wait_for(lambda: _pings(probe), timeout=20, message="redis-server to answer")
        finally:
            probe.close()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=20)
            self.process = None


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


def test_broker_down_raises_then_the_kept_connection_recovers(tmp_path: Path) -> None:
    server = _OwnRedis(tmp_path)
    server.start()
    queue = InboundQueue(make_celery(settings_for(tmp_path, f"redis://127.0.0.1:{server.port}/0")))
    client = redis.Redis(port=server.port)
    try:
        queue([1])  # the thread's connection is open now
        server.stop()
        with pytest.raises(KombuError):
            queue([2])
        server.start()
        queue([3])
        assert [m["headers"]["argsrepr"] for m in _queued(client)] == ["[3]"]  # a fresh server
    finally:
        queue.close()
        client.close()
        server.stop()
