"""What mail retention does to the database's size over the days: ``pbem bench retention``.

A throwaway PostgreSQL (``pbem.devservers.postgres``), migrated; each simulated day stores
``mails_per_day`` sent mails (real ones, composed from the sample contexts, about 5 to 9 KB each),
then moves the services' clock on a day and runs what the sweep runs
(``pbem.services.retention.forget_old_mail``) and a ``VACUUM`` (what autovacuum does within a
minute).  Prints the outbox's size on disk (table, TOAST and indexes) at intervals: it grows for
``PBEM_MAIL_RETENTION_DAYS`` days, then stays, while without retention it grows for ever.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import UTC, datetime

from pbem.config import Settings
from pbem.db import migrate
from pbem.db.models import OutboundMessage, OutboundStatus
from pbem.db.session import single_statement
from pbem.db.writes import insert_rows
from pbem.devservers.postgres import PostgresServer
from pbem.mail.compose import MailComposer
from pbem.mail.samples import sample_contexts
from pbem.resources import templates_dir
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.retention import forget_old_mail

__all__ = ["run"]


def _sample_mails() -> list[bytes]:
    composer = MailComposer(templates_dir(), domain="hearts.test")
    return [composer.compose(kind, context).raw
            for language in ("en", "pt", "ro")
            for kind, contexts in sample_contexts(language).items()
            for context in contexts]


def run(*, days: int, mails_per_day: int, retention_days: float, echo: Callable[[str], None] = print) -> None:
    mails = _sample_mails()
    echo(f"pbem bench retention: {mails_per_day} sent mails a day for {days} days, "
         f"PBEM_MAIL_RETENTION_DAYS={retention_days:g}; {len(mails)} sample mails of "
         f"{min(map(len, mails))} to {max(map(len, mails))} bytes")
    with PostgresServer() as postgres:
        url = postgres.create_database("pbem_retention")
        migrate.upgrade(url)
        settings = Settings.from_env({
            "PBEM_DATABASE_URL": url, "PBEM_DATA_DIR": tempfile.mkdtemp(prefix="pbem-retention-"),
            "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "bench",
            "PBEM_MAIL_RETENTION_DAYS": str(retention_days),
        })
        clock = ManualClock(datetime(2027, 1, 1, tzinfo=UTC))
        svc = Services.from_settings(settings, clock=clock)
        table = OutboundMessage.__table__
        try:
            every = max(1, days // 10)
            first_emptied = True
            for day in range(1, days + 1):
                now = clock.now()
                rows = [{"recipient": f"p{n % 400}@example.com", "kind": "your_turn",
                         "message_id": f"<d{day}.{n}@hearts.test>", "raw": mails[n % len(mails)],
                         "status": OutboundStatus.SENT, "created_at": now, "sent_at": now,
                         "next_attempt_at": now} for n in range(mails_per_day)]
                with svc.engine.begin() as conn:
                    insert_rows(conn, table, rows)
                clock.advance(seconds=86400)
                forgotten = forget_old_mail(svc, clock.now(), max_batches=10**6)
                with single_statement(svc.session_factory) as conn:  # autocommit: VACUUM runs outside a transaction
                    conn.exec_driver_sql("VACUUM outbound_messages")
                with svc.engine.connect() as conn:
                    size = conn.exec_driver_sql("SELECT pg_total_relation_size('outbound_messages')").scalar()
                    kept = conn.exec_driver_sql(
                        "SELECT count(*) FROM outbound_messages WHERE length(raw) > 0").scalar()
                if day % every == 0 or day == days or (forgotten.outbound and first_emptied):
                    first_emptied = first_emptied and not forgotten.outbound
                    echo(f"  day {day:4d}: {size / 2**20:8.1f} MiB on disk, {kept:7d} mails kept whole, "
                         f"{day * mails_per_day - kept:7d} emptied ({forgotten.outbound} by this day's sweep)")
        finally:
            svc.close()
