"""What waits in the database, for the metrics a scrape reads (``pbem.metrics``, README "Metrics
and logs"): received mails not processed yet, outbox rows not sent yet, and the oldest of each.

Both come from the tables' status indexes (``inbound_messages.status``,
``outbound_messages(status, next_attempt_at)``), so a scrape reads only the rows that wait.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from pbem.config import Settings
from pbem.db.models import InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import make_engine, make_session_factory, transaction
from pbem.metrics import Backlog

from .app import clock_for
from .clock import Clock

__all__ = ["backlog", "backlog_reader"]

_WAITING_IN = (InboundStatus.PENDING, InboundStatus.PROCESSING)


def backlog(session_factory: sessionmaker[Session], now: datetime) -> Backlog:
    """The backlog as of ``now``."""
    with transaction(session_factory) as session:
        inbound, oldest_in = session.execute(
            select(func.count(), func.min(InboundMessage.received_at))
            .where(InboundMessage.status.in_(_WAITING_IN))
        ).one()
        outbound, oldest_out = session.execute(
            select(func.count(), func.min(OutboundMessage.created_at))
            .where(OutboundMessage.status == OutboundStatus.PENDING)
        ).one()
    return Backlog(inbound=inbound, inbound_oldest_s=_age(now, oldest_in),
                   outbound=outbound, outbound_oldest_s=_age(now, oldest_out))


def _age(now: datetime, since: datetime | None) -> float:
    return 0.0 if since is None else max((now - since).total_seconds(), 0.0)


def backlog_reader(settings: Settings, *, clock: Clock | None = None) -> Callable[[], Backlog]:
    """A function reading the backlog of ``settings``' database (its own engine, made on the first
    scrape, so a process that serves metrics connects only when scraped)."""
    made: list[sessionmaker[Session]] = []
    time = clock if clock is not None else clock_for(settings)

    def read() -> Backlog:
        if not made:
            made.append(make_session_factory(make_engine(settings.database_url, sqlite_begin="DEFERRED")))
        return backlog(made[0], time.now())

    return read
