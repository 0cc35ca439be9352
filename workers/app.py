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
- Time limits: a task gets ``TASK_SOFT_TIME_LIMIT_S`` (120 s), then Celery raises
  ``celery.exceptions.SoftTimeLimitExceeded`` inside it, so the task can record the mail or
  the outbox row it was on as timed out instead of leaving it to be retried forever; at
  ``TASK_TIME_LIMIT_S`` (150 s: 30 s to record that) the pool process is stopped and
  replaced, and the task is acknowledged as failed (Celery's default for a timed-out task),
  not redelivered.  No legitimate task comes near: a move takes milliseconds of CPU, sending
  its mails seconds (the relay gives up on an operation after 60 s), and a game's bot and
  automatic moves run as a chain of bounded steps, each its own task.  The limits only stop
  a task that is stuck (a pathological mail, a hung connection) from holding a pool process
  and the locks it took.  The prefork pool enforces them; in a worker of the solo pool
  (``pbem serve``'s, ``pbem bench e2e --pool solo``), which does not, ``workers.time_limits``
  does.
- ``worker_proc_alive_timeout`` = ``WORKER_PROC_ALIVE_TIMEOUT_S`` (60 s, Celery's default
  is 4 s): how long a new pool process may take to report itself up before Celery kills it
  and forks another.  On a machine whose CPUs are busy a fork waits its turn for the CPU,
  and a limit near the time a start takes turns every restart of the pool (a process
  killed, OOM, a broker reconnect) into an endless loop of forks and kills while the worker
  still says "ready".  A restart must never depend on how fast a process starts: the
  worker's main process does the expensive start-up work once, before it forks
  (``PbemCelery.compile_mail_templates``, run by ``workers.worker`` on ``worker_init``), so
  a pool process is up in milliseconds of CPU, and the limit only catches one that is stuck.
- Redis brokers go through ``workers.broker``: kombu's transport, with one Redis
  client per channel instead of one per published task and per acknowledgement.

The embedded broker (``sqla+sqlite:///<data dir>/broker.db``, kombu's SQLAlchemy
transport; ``pbem serve``) has no visibility timeout and no fanout (so no remote
control or ``ping``); its connections get a 30 s SQLite busy timeout since the
fronts and the workers write to it at once, the workers poll it every 100 ms instead
of kombu's second, and a message is deleted once delivered (``workers.embedded_broker``).
``pbem serve`` runs solo workers on it, not a prefork one (``workers.supervisor`` says why).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from celery import Celery
from sqlalchemy.engine import make_url

from pbem.config import Settings
from pbem.mail.render import MailRenderer
from pbem.resources import templates_dir
from pbem.services.app import Services
from workers.queueing import SWEEP

__all__ = [
    "REDIS_VISIBILITY_TIMEOUT_S",
    "TASK_SOFT_TIME_LIMIT_S",
    "TASK_TIME_LIMIT_S",
    "TICK",
    "WORKER_PROC_ALIVE_TIMEOUT_S",
    "PbemCelery",
    "embedded_broker_file",
    "make_celery",
]

REDIS_VISIBILITY_TIMEOUT_S = 3600
#: A task past this many seconds gets ``SoftTimeLimitExceeded`` raised in it (see above).
TASK_SOFT_TIME_LIMIT_S = 120
#: A task past this many seconds has its pool process stopped; 30 s to record the soft expiry.
TASK_TIME_LIMIT_S = 150
#: How long a new pool process may take to report itself up before Celery replaces it.
WORKER_PROC_ALIVE_TIMEOUT_S = 60
TICK = "pbem.tick"
"""Queued by beat every ``PBEM_TICK_SECONDS`` (deadlines, reminders, vacations, digests);
``pbem.sweep`` every ``PBEM_SWEEP_SECONDS``."""
SQLA_BUSY_TIMEOUT_S = 30


class PbemCelery(Celery):
    """A Celery app that carries the process's Settings and, in a worker, its Services.

    ``services()`` builds ``pbem.services.app.Services`` on first use *in the
    calling process*: a prefork pool child gets its own database engine instead of
    inheriting the parent's connections across ``fork``.

    The mail renderer is the exception, on purpose: ``compile_mail_templates()``, called
    in the worker's main process before it forks its pool, builds it with every template
    compiled (about a second of CPU), and each pool process's Services render with that
    one, inherited copy-on-write, instead of compiling the templates again at its start.
    It is safe to inherit: compiled templates, translations and caches in memory, no
    thread, no open file or connection, and its lock is only taken while an environment is
    built, which the main process finishes before any fork.
    """

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__("pbem", **kwargs)
        self.settings = settings
        self.mail_renderer: MailRenderer | None = None
        self._services: Services | None = None
        self._services_pid: int | None = None
        self._services_lock = threading.Lock()

    def compile_mail_templates(self) -> MailRenderer:
        """Build the renderer the Services of this process and of its future forks use, every
        template of every language compiled; returns it."""
        # As ``Services.composer`` builds its own.
        renderer = MailRenderer(templates_dir(), default_language=self.settings.default_language)
        renderer.preload()
        self.mail_renderer = renderer
        return renderer

    def services(self) -> Services:
        pid = os.getpid()
        if self._services is None or self._services_pid != pid:
            with self._services_lock:
                if self._services is None or self._services_pid != pid:
                    self._services = Services.from_settings(self.settings, renderer=self.mail_renderer)
                    self._services_pid = pid
        return self._services


def make_celery(settings: Settings) -> PbemCelery:
    """A Celery app for ``settings`` (broker from ``PBEM_BROKER_URL``); connects lazily."""
    app = PbemCelery(settings, broker=_broker(settings.broker_url), include=["workers.tasks"])
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
        task_soft_time_limit=TASK_SOFT_TIME_LIMIT_S,
        task_time_limit=TASK_TIME_LIMIT_S,
        worker_proc_alive_timeout=WORKER_PROC_ALIVE_TIMEOUT_S,
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


_SQLA_PREFIXES = ("sqla+", "sqlalchemy+")


def _broker(broker_url: str) -> str:
    """The URL the app is given: an SQLAlchemy broker's without its ``sqla+`` prefix, since kombu
    would take the transport from the prefix and ignore ``broker_transport``."""
    for prefix in _SQLA_PREFIXES:
        if broker_url.lower().startswith(prefix):
            return broker_url[len(prefix):]
    return broker_url


def _transport(broker_url: str) -> str | None:
    """Redis: kombu's transport with one client per channel (``workers.broker``); SQLAlchemy
    (the embedded broker): kombu's, polled every 100 ms, deleting what it delivers
    (``workers.embedded_broker``); else the URL's own."""
    scheme = broker_url.split("://", 1)[0].lower()
    if scheme in {"redis", "rediss"}:
        return "workers.broker:Transport"
    if scheme.startswith(_SQLA_PREFIXES):
        return "workers.embedded_broker:Transport"
    return None


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
