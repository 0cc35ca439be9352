"""kombu's Redis transport, with fewer client objects and fewer commands per task.

- **One Redis client per channel** for its short commands.  kombu's Redis channel builds a new
  ``redis.Redis`` client object for every command it sends outside its consuming loop: each task
  published by a front, and each acknowledgement and "unacked" bookkeeping of the worker
  (``Channel.conn_or_acquire``).  A client is only a handle on the channel's connection pool, but
  making one costs more than the command (redis-py fills a table of a hundred response
  callbacks): about a tenth of the worker's main process per task.  This channel makes that
  client once and reuses it; the connections still come from, and go back to, the same pool.
- **The ack emulation in one command each way** (``QoS``).  With ``acks_late`` every task
  delivered is first recorded as unacknowledged (``ZADD unacked_index`` + ``HSET unacked``) and
  forgotten once acknowledged (``ZREM`` + ``HDEL``), each pair a ``MULTI``/``EXEC`` transaction
  of four commands through redis-py's pipeline machinery: together about a third of the
  worker's main process per task.  Here each pair is one Lua script (``EVALSHA``), which Redis
  runs as atomically as the transaction; the keys and the recorded values are kombu's own, so
  restoring unacknowledged tasks (at shutdown, or after the visibility timeout) is unchanged.
  With a ``global_keyprefix`` kombu's own commands are used.

``workers.app`` selects this transport for ``redis://`` and ``rediss://`` brokers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from time import time
from typing import Any

from kombu.transport import redis, virtual
from kombu.utils.json import dumps

__all__ = ["Channel", "QoS", "Transport"]

_RECORD_UNACKED = """
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
_FORGET_UNACKED = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""


class QoS(redis.QoS):  # type: ignore[misc]
    """kombu's Redis ack emulation, each step one script instead of a transaction."""

    def append(self, message: Any, delivery_tag: str) -> None:
        channel = self.channel
        if channel.global_keyprefix:
            super().append(message, delivery_tag)
            return
        delivery = message.delivery_info
        record = dumps([message._raw, delivery["exchange"], delivery["routing_key"]])
        channel._scripts.record(keys=[self.unacked_index_key, self.unacked_key],
                                args=[time(), delivery_tag, record])
        virtual.QoS.append(self, message, delivery_tag)

    def ack(self, delivery_tag: str) -> None:
        channel = self.channel
        if channel.global_keyprefix:
            super().ack(delivery_tag)
            return
        channel._scripts.forget(keys=[self.unacked_index_key, self.unacked_key], args=[delivery_tag])
        virtual.QoS.ack(self, delivery_tag)


class _Scripts:
    """The two scripts, registered on the channel's client (``EVALSHA``; loaded again by redis-py
    if the server lost them, e.g. after a restart)."""

    def __init__(self, client: Any) -> None:
        self.record = client.register_script(_RECORD_UNACKED)
        self.forget = client.register_script(_FORGET_UNACKED)


class Channel(redis.Channel):  # type: ignore[misc]
    QoS = QoS

    @cached_property
    def _command_client(self) -> Any:
        return self._create_client()

    @cached_property
    def _scripts(self) -> _Scripts:
        return _Scripts(self._command_client)

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        yield client if client else self._command_client


class Transport(redis.Transport):  # type: ignore[misc]
    Channel = Channel
