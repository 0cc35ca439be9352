"""The Celery app: ``make_celery(settings)`` builds one, configured for pbem.

No module-level app: each process builds its own from its Settings (the worker in
``workers.worker``, the fronts when they first queue).  Tasks live in
``workers.tasks`` as ``@shared_task``s with explicit names; ``include`` makes the
worker import them.

Delivery settings, and why:

- ``task_acks_late``: a task is acknowledged after it ran, so a worker that dies
  mid-task leaves it in the broker for another worker.  Every task is idempotent
  (the services and the outbox check what was already done), so running one twice
  is harmless while losing one is not.
- ``task_reject_on_worker_lost``: without it, ``acks_late`` still *acknowledges*
  the task of a pool process that was killed (SIGKILL, OOM); with it the task is
  requeued at once.
- ``worker_prefetch_multiplier=1``: a worker reserves one task per pool process,
  so a long task does not hold others hostage that an idle worker could run.
- Redis ``visibility_timeout`` = ``REDIS_VISIBILITY_TIMEOUT_S`` (1 hour): Redis
  hands an unacknowledged task to another worker only after this long.  It must be
  longer than any task runs *and* than any retry countdown (a task waiting for its
  countdown is held unacknowledged; past the timeout it would be delivered twice),
  so it is twice the outbox's longest backoff (30 min).  It also means that when a
  whole worker host dies, Redis redelivers its tasks only after an hour; the sweep
  does not wait that long: it re-queues inbound rows still pending after a minute
  and outbox rows as soon as they are due.
- ``broker_connection_retry_on_startup``: a worker started before Redis waits for it.
- Publishing retries a few times within about two seconds, then raises, so a front
  answering a sender never hangs on a dead broker (the sweep catches up later).
- Results are ignored: tasks record what they did in the database.
- Redis brokers go through ``workers.broker``: kombu's transport, with one Redis
  client per channel instead of one per published task and per acknowledgement.

The embedded broker (``sqla+sqlite:///<data dir>/broker.db``, kombu's SQLAlchemy
transport; ``pbem serve``) has no visibility timeout and no fanout (so no remote
control or ``ping``); its connections get a 30 s SQLite busy timeout since the
fronts and the worker write to it at once.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from celery import Celery
from sqlalchemy.engine import make_url

from pbem.config import Settings
from workers.queueing import SWEEP

if TYPE_CHECKING:
    from pbem.services.app import Services

__all__ = [
    "REDIS_VISIBILITY_TIMEOUT_S",
    "TICK",
    "PbemCelery",
    "embedded_broker_file",
    "make_celery",
]

REDIS_VISIBILITY_TIMEOUT_S = 3600
TICK = "pbem.tick"
"""Queued by beat every ``PBEM_TICK_SECONDS`` (deadlines, reminders, vacations, digests; issue 4);
``pbem.sweep`` every ``PBEM_SWEEP_SECONDS``."""
SQLA_BUSY_TIMEOUT_S = 30


class PbemCelery(Celery):
    """A Celery app that carries the process's Settings and, in a worker, its Services.

    ``services()`` builds ``pbem.services.app.Services`` on first use *in the
    calling process*: a prefork pool child gets its own database engine instead of
    inheriting the parent's connections across ``fork``.
    """

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__("pbem", **kwargs)
        self.settings = settings
        self._services: Services | None = None
        self._services_pid: int | None = None
        self._services_lock = threading.Lock()

    def services(self) -> Services:
        pid = os.getpid()
        if self._services is None or self._services_pid != pid:
            with self._services_lock:
                if self._services is None or self._services_pid != pid:
                    from pbem.services.app import Services

                    self._services = Services.from_settings(self.settings)
                    self._services_pid = pid
        return self._services


def make_celery(settings: Settings) -> PbemCelery:
    """A Celery app for ``settings`` (broker from ``PBEM_BROKER_URL``); connects lazily."""
    app = PbemCelery(settings, broker=settings.broker_url, include=["workers.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # With acks_late, a task running when the broker connection drops cannot be
        # acknowledged and will be delivered again: stop it rather than run it twice.
        worker_cancel_long_running_tasks_on_connection_loss=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options=_transport_options(settings.broker_url),
        broker_transport=_transport(settings.broker_url),
        task_publish_retry=True,
        task_publish_retry_policy={
            "max_retries": 3,
            "interval_start": 0,
            "interval_step": 0.5,
            "interval_max": 1,
        },
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        enable_utc=True,
        timezone="UTC",
        beat_schedule={
            "pbem-sweep": {
                "task": SWEEP,
                "schedule": settings.sweep_seconds,
                # A sweep that waited longer than the interval is superseded by the next.
                "options": {"expires": settings.sweep_seconds},
            },
            "pbem-tick": {
                "task": TICK,
                "schedule": settings.tick_seconds,
                "options": {"expires": settings.tick_seconds},
            },
        },
        beat_schedule_filename=str(settings.data_dir / "celerybeat-schedule"),
    )
    return app


def _transport(broker_url: str) -> str | None:
    """Redis: kombu's transport with one client per channel (``workers.broker``); else the
    URL's own."""
    scheme = broker_url.split("://", 1)[0].lower()
    return "workers.broker:Transport" if scheme in {"redis", "rediss"} else None


def _transport_options(broker_url: str) -> dict[str, Any]:
    scheme = broker_url.split("://", 1)[0].lower()
    if scheme in {"redis", "rediss", "redis+socket", "sentinel"}:
        return {"visibility_timeout": REDIS_VISIBILITY_TIMEOUT_S}
    if scheme.startswith(("sqla+", "sqlalchemy+")) and "sqlite" in scheme:
        # kombu passes these straight to create_engine (so no visibility_timeout here).
        return {"connect_args": {"timeout": SQLA_BUSY_TIMEOUT_S}}
    return {}


def embedded_broker_file(settings: Settings) -> Path | None:
    """The SQLite file of an embedded (``sqla+sqlite``) broker, else None.  Its
    directory must exist before a worker or front connects."""
    url = settings.broker_url
    for prefix in ("sqla+", "sqlalchemy+"):
        if url.startswith(prefix):
            parsed = make_url(url.removeprefix(prefix))
            if parsed.get_backend_name() == "sqlite" and parsed.database not in (
                None,
                "",
                ":memory:",
            ):
                return Path(parsed.database)
    return None
