"""Queueing pbem's tasks by name, for fronts and tasks alike.

``send_task`` by name means a front (the SMTP server, the web app) needs the
Celery app but not the task modules, their imports or their dependencies.  Queue
only ids whose rows are committed: call these *after* the transaction that wrote
the rows, never inside it (a worker could otherwise look for a row not there yet,
or for one that a rollback removed).

Publishing is retried briefly (``task_publish_retry_policy`` in ``workers.app``)
and then raises: a caller that already committed the rows logs the failure and
carries on, since the periodic sweep re-queues whatever was left pending.

``InboundQueue`` is ``queue_inbound`` for a front that queues one task per received mail:
the same messages, published on a producer each thread keeps instead of going through
``send_task`` (which takes a producer from the app's pool and sorts its options out again for
every task).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from celery import Celery
from kombu import Connection, Producer
from kombu.utils.uuid import uuid

__all__ = [
    "CONTINUE_GAME",
    "PROCESS_INBOUND",
    "SEND_MAIL",
    "SEND_MAIL_BATCH",
    "SWEEP",
    "InboundQueue",
    "queue_continue",
    "queue_inbound",
    "queue_outbound",
]

PROCESS_INBOUND = "pbem.process_inbound"
SEND_MAIL = "pbem.send_mail"
SWEEP = "pbem.sweep"
CONTINUE_GAME = "pbem.continue_game"

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


def queue_continue(app: Celery, games: Iterable[tuple[int, int]]) -> None:
    """``pbem.continue_game`` for each (game id, mark): the next step of its automatic moves."""
    for game_id, mark in games:
        app.send_task(CONTINUE_GAME, args=[int(game_id), int(mark)])


class InboundQueue:
    """``queue_inbound(app, ids)`` for a front, cheaper per task: ``queue(ids)``.

    Each thread that queues keeps its own producer and broker connection (kombu's are not
    thread-safe), opened on first use and reopened by kombu's retry when it breaks; ``close``
    releases them.  The message is what ``app.send_task`` would publish for the task (Celery
    builds it, from the route Celery gives the name, computed once), with the app's publish
    retry policy; a failure raises kombu's ``OperationalError`` as ``send_task`` does.

    For fronts only: ``send_task`` inside a task also records the task as the new one's parent,
    which this does not.
    """

    def __init__(self, app: Celery) -> None:
        self.app = app
        self._route: dict[str, Any] = app.amqp.router.route({}, PROCESS_INBOUND)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[Connection] = []

    def __call__(self, ids: Iterable[int]) -> None:
        producer = self._producer()
        amqp, conf = self.app.amqp, self.app.conf
        with producer.connection._reraise_as_library_errors():
            for inbound_id in ids:
                args = [int(inbound_id)]
                message = amqp.create_task_message(
                    uuid(), PROCESS_INBOUND, args, None,
                    reply_to=self.app.thread_oid, create_sent_event=conf.task_send_sent_event,
                    # send_task's defaults; the reprs saferepr would give a list of ints.
                    ignore_result=None, argsrepr=repr(args), kwargsrepr="{}",
                )  # fmt: skip
                amqp.send_task_message(producer, PROCESS_INBOUND, message, **self._route)

    def _producer(self) -> Producer:
        producer: Producer | None = getattr(self._local, "producer", None)
        if producer is None:
            connection = self.app.connection_for_write()
            producer = self._local.producer = self.app.amqp.Producer(connection)
            with self._lock:
                self._connections.append(connection)
        return producer

    def close(self) -> None:
        """Release every thread's broker connection (a later call opens new ones)."""
        with self._lock:
            connections, self._connections = self._connections, []
        self._local = threading.local()
        for connection in connections:
            connection.release()
