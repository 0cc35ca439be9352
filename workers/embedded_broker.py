"""kombu's SQLAlchemy transport (the embedded broker of ``pbem serve``), polled every 100 ms.

The SQLAlchemy transport has no way to wait for a message: the worker's consumer asks the
database for one and, when the queue is empty, sleeps ``polling_interval`` before asking again.
kombu's default is a second, so a reply waited half a second on average (up to a whole one) in
the queue before the worker even saw it: under ``pbem serve`` a move's next mail took 0.7 s at
the median on an idle machine, nearly all of it that sleep (README, "Benchmarks":
``pbem bench serve``).  Polled every ``POLLING_INTERVAL_S``, it waits at most that long, and a
move's last mail is out about 0.1 s after its reply was accepted.  A poll is one short
``BEGIN IMMEDIATE`` transaction on the broker's own SQLite file (``broker.db``, never the game
database): an idle ``pbem serve`` used about 3% of a core with 100 ms (1.3% with 200 ms, whose
p99 was 0.3 s; 0.5% with kombu's second), the price of a quick answer on a small server.

The interval cannot be given as a transport option: the SQLAlchemy channel hands every option
it does not know to ``create_engine``, which refuses ``polling_interval``; so it is this class's
attribute.  ``workers.app`` selects this transport for ``sqla+``/``sqlalchemy+`` broker URLs
(kombu takes the transport from such a URL's prefix, so the app is given the URL without it
and this transport by name).

A delivered message is deleted.  kombu's channel marks the row it hands to a consumer invisible
(``visible = false``) and never looks at it again: the consumer holds the message in memory until
it acknowledges it, and gives back what it did not acknowledge by publishing it anew when it stops
(``restore_unacked``), so an invisible row is dead weight that kombu never deletes (no transport
option does), and an idle ``pbem serve``, with a sweep every 15 s and a tick every minute, added
about 7,200 rows (7 MB) a day to ``broker.db``.  Here the session's flush deletes a message instead
of hiding it, in the same transaction, so the file holds only the messages waiting
(``python -m pbem.bench.broker_day`` prints its size after a simulated day).  A process killed
while it held a message loses it either way; the sweep queues again whatever it was about
(README, "Under faults and hostile mail").  ``prepare`` deletes the rows an older server left invisible.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from kombu import Connection
from kombu.transport import sqlalchemy
from kombu.transport.sqlalchemy.models import Message
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

__all__ = ["MESSAGE_TABLE", "POLLING_INTERVAL_S", "Channel", "Transport", "prepare"]

#: Seconds the worker's consumer sleeps when the queue was empty.
POLLING_INTERVAL_S = 0.1
#: kombu's table of messages (its default ``message_tablename``, which pbem keeps).
MESSAGE_TABLE = "kombu_message"


def _delete_delivered(session: Session, _context: Any, _instances: Any) -> None:
    """Before a flush: each message about to be marked delivered (invisible) is deleted instead."""
    for instance in list(session.dirty):
        if isinstance(instance, Message) and instance.visible is False:
            session.delete(instance)


class Channel(sqlalchemy.Channel):  # type: ignore[misc]
    """kombu's SQLAlchemy channel whose sessions delete the messages they deliver, and which takes
    a queue another process created at the same moment (serve's workers start together on a new
    ``broker.db``; kombu's own channel catches only ``OperationalError`` there, and the worker that
    lost the race stopped with ``UNIQUE constraint failed: kombu_queue.name``)."""

    #: Engines and session classes of this channel's own, not shared with kombu's channel (whose
    #: sessions keep what they deliver) in the same process.
    _engines: dict[str, tuple[Any, Any]] = {}

    def _get_or_create(self, queue: str) -> Any:
        try:
            return super()._get_or_create(queue)
        except IntegrityError:
            self.session.rollback()
            return super()._get_or_create(queue)  # now found

    def _open(self) -> tuple[Any, Any]:
        engine, session_class = super()._open()
        if not event.contains(session_class, "before_flush", _delete_delivered):
            event.listen(session_class, "before_flush", _delete_delivered)
        return engine, session_class


class Transport(sqlalchemy.Transport):  # type: ignore[misc]
    """kombu's SQLAlchemy transport with a shorter sleep between polls, deleting what it delivers."""

    Channel = Channel
    polling_interval = POLLING_INTERVAL_S


def prepare(broker_file: Path, connection: Connection) -> int:
    """Ready ``broker_file`` for processes that start together, before any of them opens it: the
    messages kombu's own transport left delivered are deleted and their space given back to the
    file system (``VACUUM``, which wants the file to itself), and kombu's tables are created through
    ``connection`` (to that file, with this transport; the app's, so the engine kombu keeps for the
    file has the app's options): two of serve's workers creating them at the same moment had one of
    them see "table kombu_queue already exists" and reconnect.  Returns how many delivered messages
    were deleted."""
    deleted = 0
    if broker_file.exists():
        with closing(sqlite3.connect(broker_file, timeout=30, isolation_level=None)) as db:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if MESSAGE_TABLE in tables:
                deleted = db.execute(f"DELETE FROM {MESSAGE_TABLE} WHERE visible = 0").rowcount
                if deleted:
                    db.execute("VACUUM")
    with connection:
        connection.default_channel.session  # noqa: B018 (a channel's first session creates kombu's tables)
    return deleted
