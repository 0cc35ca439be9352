"""The backlog a scrape reads from the database (README, "Metrics and logs"): received mails not
processed yet and outbox rows not sent yet, with the age of the oldest of each; settled rows are
not counted.  On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from pbem.db.models import InboundMessage, InboundSource, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.metrics import Backlog
from pbem.services.backlog import backlog


def test_the_backlog_counts_what_waits_and_ages_the_oldest(services):
    svc = services()
    now = svc.clock.now()
    assert backlog(svc.session_factory, now) == Backlog(0, 0.0, 0, 0.0)
    with transaction(svc.session_factory) as session:
        for n, (status, age) in enumerate([(InboundStatus.PENDING, 90), (InboundStatus.PROCESSING, 30),
                                           (InboundStatus.DONE, 900), (InboundStatus.FAILED, 900)]):
            session.add(InboundMessage(message_key=f"<m{n}@test>", recipient="new@hearts.test", mail_from="a@b.test",
                                       raw=b"x", source=InboundSource.SMTP, received_at=now - timedelta(seconds=age),
                                       status=status))
        for n, (status, age) in enumerate([(OutboundStatus.PENDING, 45), (OutboundStatus.PENDING, 5),
                                           (OutboundStatus.SENT, 900), (OutboundStatus.FAILED, 900)]):
            session.add(OutboundMessage(recipient="a@b.test", kind="help", message_id=f"<o{n}@test>", raw=b"x",
                                        status=status, created_at=now - timedelta(seconds=age),
                                        next_attempt_at=now))
    assert backlog(svc.session_factory, now) == Backlog(inbound=2, inbound_oldest_s=90.0,
                                                        outbound=2, outbound_oldest_s=45.0)
