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
"""

from __future__ import annotations

from kombu.transport import sqlalchemy

__all__ = ["POLLING_INTERVAL_S", "Transport"]

#: Seconds the worker's consumer sleeps when the queue was empty.
POLLING_INTERVAL_S = 0.1


class Transport(sqlalchemy.Transport):  # type: ignore[misc]
    """kombu's SQLAlchemy transport with a shorter sleep between polls."""

    polling_interval = POLLING_INTERVAL_S
