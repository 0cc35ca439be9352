"""kombu's Redis transport, keeping one Redis client per channel for its short commands.

kombu's Redis channel builds a new ``redis.Redis`` client object for every command it sends
outside its consuming loop: each task published by a front, and each acknowledgement and
"unacked" bookkeeping of the worker (``Channel.conn_or_acquire``).  A client is only a handle
on the channel's connection pool, but making one costs more than the command (redis-py fills a
table of a hundred response callbacks): about a tenth of the worker's main process per task.
This channel makes that client once and reuses it; the connections still come from, and go
back to, the same pool, so nothing else changes.  ``workers.app`` selects it for ``redis://``
and ``rediss://`` brokers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from kombu.transport import redis

__all__ = ["Channel", "Transport"]


class Channel(redis.Channel):  # type: ignore[misc]
    @cached_property
    def _command_client(self) -> Any:
        return self._create_client()

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        yield client if client else self._command_client


class Transport(redis.Transport):  # type: ignore[misc]
    Channel = Channel
