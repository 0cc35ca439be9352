"""Queueing pbem's tasks by name, for fronts and tasks alike.

``send_task`` by name means a front (the SMTP server, the web app) needs the
Celery app but not the task modules, their imports or their dependencies.  Queue
only ids whose rows are committed: call these *after* the transaction that wrote
the rows, never inside it (a worker could otherwise look for a row not there yet,
or for one that a rollback removed).

Publishing is retried briefly (``task_publish_retry_policy`` in ``workers.app``)
and then raises: a caller that already committed the rows logs the failure and
carries on, since the periodic sweep re-queues whatever was left pending.
"""

from __future__ import annotations

from collections.abc import Iterable

from celery import Celery

__all__ = [
    "PROCESS_INBOUND",
    "SEND_MAIL",
    "SEND_MAIL_BATCH",
    "SWEEP",
    "queue_inbound",
    "queue_outbound",
]

PROCESS_INBOUND = "pbem.process_inbound"
SEND_MAIL = "pbem.send_mail"
SWEEP = "pbem.sweep"

SEND_MAIL_BATCH = 50
"""Most outbox ids in one ``pbem.send_mail`` task (one move makes a handful; the
sweep may find hundreds after an outage and spreads them over several tasks)."""


def queue_inbound(app: Celery, ids: Iterable[int]) -> None:
    """One ``pbem.process_inbound`` task per stored inbound row."""
    for inbound_id in ids:
        app.send_task(PROCESS_INBOUND, args=[int(inbound_id)])


def queue_outbound(app: Celery, ids: Iterable[int]) -> None:
    """``pbem.send_mail`` for these outbox rows: one task for the lot (the mails
    of one move), split only past ``SEND_MAIL_BATCH``."""
    pending = [int(outbound_id) for outbound_id in ids]
    for start in range(0, len(pending), SEND_MAIL_BATCH):
        app.send_task(SEND_MAIL, args=[pending[start : start + SEND_MAIL_BATCH]])
