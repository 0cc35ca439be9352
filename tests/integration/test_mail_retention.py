"""Mail retention (``pbem.services.retention``): the sweep empties the bytes of settled mails
older than ``PBEM_MAIL_RETENTION_DAYS`` and keeps their rows, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from psycopg.sql import Literal
from sqlalchemy import select

from pbem.db.models import InboundMessage, InboundSource, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.retention import _OLDEST_OUT, Forgotten, forget_old_mail
from tests.harness.services import make_settings

RAW = b"From: Hearts <hearts@hearts.test>\r\nSubject: your turn\r\n\r\nPlay a card.\r\n"
QUOTED = "your turn\nplay a card."  # what quote removal needs of it (pbem.mail.quoted)


def add_outbound(svc: Services, status: OutboundStatus, age_days: float) -> int:
    created = svc.clock.now() - timedelta(days=age_days)
    with transaction(svc.session_factory) as session:
        row = OutboundMessage(recipient="ana@example.com", kind="your_turn", message_id=f"<o{age_days}@hearts.test>",
                              raw=RAW, quoted=QUOTED, status=status, created_at=created, next_attempt_at=created)
        session.add(row)
        session.flush()
        return row.id


def add_inbound(svc: Services, status: InboundStatus, age_days: float, key: str) -> int:
    with transaction(svc.session_factory) as session:
        row = InboundMessage(message_key=f"<{key}@example.com>", recipient="g1.s0.x@hearts.test",
                             mail_from="ana@example.com", raw=RAW, source=InboundSource.SMTP,
                             received_at=svc.clock.now() - timedelta(days=age_days), status=status)
        session.add(row)
        session.flush()
        return row.id


def raws(svc: Services, model: type[InboundMessage] | type[OutboundMessage]) -> dict[int, bytes]:
    with svc.session_factory() as session:
        return dict(session.execute(select(model.id, model.raw)).all())  # type: ignore[arg-type]


def test_settled_mails_past_the_retention_lose_their_bytes_and_keep_their_rows(services) -> None:
    svc = services(PBEM_MAIL_RETENTION_DAYS="30")
    old_sent = add_outbound(svc, OutboundStatus.SENT, 31)
    old_failed = add_outbound(svc, OutboundStatus.FAILED, 40)
    old_pending = add_outbound(svc, OutboundStatus.PENDING, 31)  # still to be sent: kept
    new_sent = add_outbound(svc, OutboundStatus.SENT, 29)
    settled_in = [add_inbound(svc, status, 31, status.value)
                  for status in (InboundStatus.DONE, InboundStatus.IGNORED, InboundStatus.REJECTED)]
    kept_in = [add_inbound(svc, InboundStatus.PENDING, 31, "pending"),  # not processed yet
               add_inbound(svc, InboundStatus.FAILED, 31, "failed"),  # set aside for an operator
               add_inbound(svc, InboundStatus.DONE, 29, "recent")]

    forgotten = forget_old_mail(svc, svc.clock.now())

    assert (forgotten.inbound, forgotten.outbound) == (3, 2)
    out = raws(svc, OutboundMessage)
    assert {i for i, raw in out.items() if raw == b""} == {old_sent, old_failed}
    assert out[old_pending] == RAW and out[new_sent] == RAW
    inn = raws(svc, InboundMessage)
    assert {i for i, raw in inn.items() if raw == b""} == set(settled_in)
    assert all(inn[i] == RAW for i in kept_in)
    assert len(out) == 4 and len(inn) == 6  # every row stays
    with svc.session_factory() as session:  # the lines kept for quote removal go with the bytes
        quoted = dict(session.execute(select(OutboundMessage.id, OutboundMessage.quoted)).all())
    assert {i for i, kept in quoted.items() if kept is None} == {old_sent, old_failed}
    assert quoted[old_pending] == QUOTED == quoted[new_sent]
    # Done is done: the next sweep finds nothing.
    assert forget_old_mail(svc, svc.clock.now()) == Forgotten()


def test_a_backlog_goes_in_batches_over_several_sweeps(services) -> None:
    svc = services(PBEM_MAIL_RETENTION_DAYS="7")
    ids = [add_outbound(svc, OutboundStatus.SENT, 8 + n) for n in range(5)]
    first = forget_old_mail(svc, svc.clock.now(), batch=2, max_batches=2)
    assert first.outbound == 4
    emptied = {i for i, raw in raws(svc, OutboundMessage).items() if raw == b""}
    assert emptied == set(ids[1:])  # oldest first
    assert forget_old_mail(svc, svc.clock.now(), batch=2, max_batches=2).outbound == 1


def test_retention_zero_keeps_every_mail(services) -> None:
    svc = services(PBEM_MAIL_RETENTION_DAYS="0")
    add_outbound(svc, OutboundStatus.SENT, 3650)
    add_inbound(svc, InboundStatus.DONE, 3650, "old")
    assert forget_old_mail(svc, svc.clock.now()) == Forgotten()
    assert set(raws(svc, OutboundMessage).values()) == {RAW} == set(raws(svc, InboundMessage).values())


@pytest.mark.postgres
def test_postgresql_finds_the_candidates_through_the_partial_index(tmp_path: Path, pg_migrated_url: str) -> None:
    svc = Services.from_settings(make_settings(tmp_path, pg_migrated_url), clock=ManualClock())
    try:
        with svc.engine.begin() as conn:  # a month of sent mail, the oldest day past the retention
            conn.exec_driver_sql(
                "INSERT INTO outbound_messages (recipient, kind, message_id, raw, status, created_at, next_attempt_at)"
                " SELECT 'ana@example.com', 'your_turn', '<o' || n || '@hearts.test>', %(raw)s, 'sent',"
                " %(now)s - n * interval '10 minutes', %(now)s FROM generate_series(1, 31 * 24 * 6) AS n",
                {"raw": RAW, "now": svc.clock.now()})
            conn.exec_driver_sql("ANALYZE outbound_messages")
        with svc.engine.connect() as conn:
            oldest = _OLDEST_OUT.params(cutoff=svc.clock.now() - timedelta(days=30), batch=1000)
            state = oldest.compile(dialect=conn.dialect).construct_expanded_state()
            # The plan a prepared statement gets after a few runs (psycopg prepares them): made for
            # any parameters, so a partial index is usable only by a predicate without one.
            names: list[str] = []
            numbered = re.sub(r"%\((\w+)\)s", lambda m: names.append(m[1]) or f"${len(names)}", state.statement)
            conn.exec_driver_sql(f"PREPARE oldest AS {numbered}")
            conn.exec_driver_sql("SET plan_cache_mode = force_generic_plan")
            driver = conn.connection.driver_connection
            values = ", ".join(Literal(state.parameters[name]).as_string(driver) for name in names)
            plan = "\n".join(row[0] for row in conn.exec_driver_sql(f"EXPLAIN EXECUTE oldest({values})"))
    finally:
        svc.close()
    # Usable only because the statement's predicate is the index's own (length(raw) > 0, not a parameter).
    assert "ix_outbound_messages_raw_kept" in plan, plan
