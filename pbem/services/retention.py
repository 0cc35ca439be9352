"""Mail retention: the raw bytes of settled mails are emptied once they are old enough.

Every mail in and out is stored whole (the benchmarks measured about 20 KiB a move with every player on
"every card"), which is what lets the server answer for it: a received mail survives any crash
until it is processed, an outgoing one until the relay took it.  Once a mail is settled, its
bytes serve nobody but an operator looking into a recent problem.  So after
``PBEM_MAIL_RETENTION_DAYS`` (30 by default; 0 keeps them forever) the sweep empties them, oldest
first, and keeps the row: its ids, addresses, Message-ID (a received mail's stays its duplicate
check), status, outcome and times, and the moves that refer to it.

Settled means:

- out: ``sent``, or ``failed`` for good (a mail still being retried is never touched);
- in: ``done``, ``ignored`` or ``rejected``.  A mail set aside as ``failed`` keeps its bytes for
  the operator who looks into it; a ``pending`` one has not been processed yet.

The candidates are found through partial indexes of the rows still keeping their bytes
(migration 0006), which therefore hold only the retention window.  Each batch is one statement
committed on its own, so the sweep never holds many rows locked at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session, sessionmaker

from pbem.config import Settings
from pbem.db.models import RAW_KEPT, InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import single_statement

__all__ = ["RETENTION_BATCH", "Forgotten", "forget_old_mail"]

log = logging.getLogger("pbem.retention")

RETENTION_BATCH = 1000
#: Batches per table and sweep: a backlog (retention switched on, or shortened) is worked off
#: over several sweeps rather than in one long one.
MAX_BATCHES = 50

_SETTLED_OUT = (OutboundStatus.SENT, OutboundStatus.FAILED)
_SETTLED_IN = (InboundStatus.DONE, InboundStatus.IGNORED, InboundStatus.REJECTED)


@dataclass(frozen=True)
class Forgotten:
    """How many mails had their bytes emptied, by direction."""

    inbound: int = 0
    outbound: int = 0


class _RetentionServices(Protocol):
    """What retention needs of ``pbem.services.app.Services``."""

    settings: Settings
    session_factory: sessionmaker[Session]


def _oldest_kept(table: Table, age: str, settled: tuple[str, ...]) -> Any:
    """The ids of a batch of settled mails still keeping their bytes, the oldest first."""
    return (
        select(table.c.id)
        # RAW_KEPT as written in the partial index's predicate, so the planner can use it.
        .where(RAW_KEPT, table.c[age] < bindparam("cutoff"), table.c.status.in_(settled))
        .order_by(table.c[age])
        .limit(bindparam("batch"))
    )


def _forget_statement(table: Table, oldest: Any, **emptied: Any) -> Any:
    return update(table).where(table.c.id.in_(oldest.scalar_subquery())).values(raw=b"", **emptied)


_OUTBOX = OutboundMessage.__table__
_INBOX = InboundMessage.__table__
_OLDEST_OUT = _oldest_kept(_OUTBOX, "created_at", _SETTLED_OUT)
_OLDEST_IN = _oldest_kept(_INBOX, "received_at", _SETTLED_IN)
_FORGET_OUT = _forget_statement(_OUTBOX, _OLDEST_OUT, quoted=None)  # its lines for quote removal too
_FORGET_IN = _forget_statement(_INBOX, _OLDEST_IN)


def forget_old_mail(svc: _RetentionServices, now: datetime, *, batch: int = RETENTION_BATCH,
                    max_batches: int = MAX_BATCHES) -> Forgotten:
    """Empty the bytes of the settled mails older than the retention; how many were emptied."""
    days = svc.settings.mail_retention_days
    if not days:
        return Forgotten()
    cutoff = now - timedelta(days=days)
    counts = [_forget(svc, statement, cutoff, batch, max_batches) for statement in (_FORGET_IN, _FORGET_OUT)]
    forgotten = Forgotten(inbound=counts[0], outbound=counts[1])
    if counts[0] or counts[1]:
        log.info("retention: emptied %d received and %d outgoing mails older than %s days",
                 forgotten.inbound, forgotten.outbound, days)
    return forgotten


def _forget(svc: _RetentionServices, statement: Any, cutoff: datetime, batch: int, max_batches: int) -> int:
    total = 0
    for _ in range(max_batches):
        with single_statement(svc.session_factory) as conn:
            emptied = conn.execute(statement, {"cutoff": cutoff, "batch": batch}).rowcount
        total += emptied
        if emptied < batch:
            break
    return total
