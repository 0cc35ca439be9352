"""The worker's entry point: ``celery -A workers.worker worker`` (and ``beat``).

The one module that does work at import time, because that is how Celery finds
its app: it builds the Settings from the environment and the app from them.
``pbem worker`` and ``pbem beat`` run exactly this.

The worker's main process compiles every mail template once, before it forks its pool
(``worker_init``; ``PbemCelery.compile_mail_templates``), so the first moves after a start
do not pay for it (about a second of CPU, instead of ~100 ms on each of the first mails of
each kind and language) and the pool processes inherit the compiled templates copy-on-write.
A pool process does nothing slow when it starts, so a new one is up in milliseconds even on a
busy machine: a restart of the pool never depends on how fast a process starts (see
``WORKER_PROC_ALIVE_TIMEOUT_S`` in ``workers.app``).  Each process then moves what it holds so
far out of the garbage collector's sight (``gc.freeze``): the main process before it forks, so
its children's collections never touch (and copy) the pages of what they inherited, and each
pool process again once it is set up.  A worker of the solo pool (each of ``pbem serve``'s, see
``workers.supervisor``) forks nothing: it compiles a template when it first renders it, and keeps
the tasks' time limits itself (``workers.time_limits``).

Celery's two routine lines per task at INFO ("Task … received", "Task … succeeded in …") are
dropped for the task of every move, ``pbem.process_inbound``: at a hundred moves a second they
were about a quarter of Celery's own CPU per task, and they say less than pbem's own line per
move ("outbound … sent").  Its failures and retries are still logged (WARNING and above), and
the other tasks (sweep, tick, send_mail: a few a minute) keep their "succeeded" line, which
says what they did.  "received" lines are off for every task: Celery then skips them before
making the record (a filtered line still cost the consumer ~50 µs a task, mostly in
``findCaller``), and beat already logs each task it sends.  An idle server is quiet (README,
"Metrics and logs"): the "succeeded" line of a sweep or a tick whose counts are all 0, and beat's
"Sending due task" line for either, are made DEBUG lines (dropped at INFO).

Metrics (``pbem.metrics``): every process of the worker records into ``PBEM_METRICS_DIR``, each
pool process counted in ``pbem_processes`` when it starts and forgotten when it ends
(``worker_process_shutdown``); each process counts and logs the moves it commits
(``pbem.services.observed.watch_moves``); with ``PBEM_METRICS_LISTEN`` the main process (or a beat
of its own) serves the host's metrics.
"""

import gc
import logging
import os
import re
import threading
from typing import Any

from celery.concurrency import get_implementation
from celery.concurrency.solo import TaskPool as SoloPool
from celery.signals import beat_init, worker_init, worker_process_init, worker_process_shutdown

from pbem import metrics
from pbem.config import Settings
from pbem.services.backlog import backlog_reader
from pbem.services.observed import watch_moves
from workers import time_limits
from workers.app import TICK, embedded_broker_file, make_celery
from workers.queueing import PROCESS_INBOUND, SWEEP

settings = Settings.from_env(os.environ)
# Beat keeps its schedule file in the data directory (``beat_schedule_filename``) and cannot start
# without it; the embedded broker's SQLite file may live elsewhere.
settings.data_dir.mkdir(parents=True, exist_ok=True)
_broker_file = embedded_broker_file(settings)
if _broker_file is not None:
    _broker_file.parent.mkdir(parents=True, exist_ok=True)
app = make_celery(settings)
# Before the pool forks: every process of the worker records into the host's metrics directory.
metrics.enable(settings.metrics_dir)
_exporter: list[Any] = []  # the metrics server of this process tree, when it serves them
_watching: set[int] = set()  # the processes whose moves are counted already


def _not_routine_move_line(record: logging.LogRecord) -> bool:
    """False for Celery's INFO lines about a ``pbem.process_inbound`` task."""
    args = record.args
    return not (record.levelno == logging.INFO and isinstance(args, dict)
                and args.get("name") == PROCESS_INBOUND)


_PERIODIC = frozenset({SWEEP, TICK})
_COUNT = re.compile(r":\s*(-?\d+)")


def _idle_periodic_task(name: Any, result: Any) -> bool:
    """Whether a sweep's or a tick's result says it did nothing (every count 0)."""
    return name in _PERIODIC and isinstance(result, str) and all(n == "0" for n in _COUNT.findall(result))


def _quiet_when_idle(record: logging.LogRecord) -> bool:
    """An idle server is quiet (README, "Metrics and logs"): Celery's "succeeded" line of a sweep or a
    tick that did nothing, and beat's "Sending due task" line of either, are DEBUG lines (kept only
    when the logger is at DEBUG)."""
    if record.levelno != logging.INFO:
        return True
    args = record.args
    if isinstance(args, dict):
        routine = _idle_periodic_task(args.get("name"), args.get("return_value"))
    else:
        routine = (isinstance(args, tuple) and len(args) == 2 and args[1] in _PERIODIC
                   and str(record.msg).startswith("Scheduler: Sending due task"))
    if not routine:
        return True
    if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
        return False
    record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
    return True


logging.getLogger("celery.app.trace").addFilter(_not_routine_move_line)
logging.getLogger("celery.app.trace").addFilter(_quiet_when_idle)
logging.getLogger("celery.beat").addFilter(_quiet_when_idle)
# Read by Celery when the consumer starts (``isEnabledFor(INFO)``): its "received" lines are not made.
logging.getLogger("celery.worker.strategy").setLevel(logging.WARNING)


def _serve_metrics() -> None:
    """With ``PBEM_METRICS_LISTEN``, this process serves the host's metrics (once per process tree:
    the beat embedded by ``--beat`` is forked from a worker that already serves them)."""
    if settings.metrics_listen is not None and not _exporter:
        _exporter.append(metrics.serve_metrics(settings.metrics_listen, settings.metrics_dir,
                                               backlog_reader(settings)))


def _watch_moves() -> None:
    """Count and log the moves this process commits (``pbem.services.observed``), once: the solo
    pool's process is both the worker's main process and its pool process."""
    if os.getpid() in _watching:
        return
    _watching.add(os.getpid())
    svc = app.services()
    watch_moves(svc.session_factory, svc.clock)


@worker_init.connect
def _start_worker(sender: Any = None, **_kwargs: Any) -> None:
    """In the worker's main process, before the pool forks (beat never runs this): its metrics, and
    every mail template compiled once for the pool processes to inherit.  A worker of the solo pool
    (``pbem serve``'s, ``workers.supervisor``) runs its tasks in this process and forks none: it gets
    the tasks' time limits here (``workers.time_limits``), and compiles the default language's
    templates in a thread while it waits for work (``_warm_templates``), not every one of every
    language before it starts, which would be most of its start's CPU, paid again by each of
    serve's workers; another language's are compiled when first used."""
    metrics.process_started("worker")
    _serve_metrics()
    solo = issubclass(get_implementation(sender.pool_cls), SoloPool)  # a class, or its name (``"solo"``)
    if solo:
        time_limits.install()
    else:
        try:
            app.compile_mail_templates()
        except OSError:  # templates unreadable: the tasks will say so when they need them
            logging.getLogger("pbem.worker").exception("could not compile the mail templates")
    _watch_moves()  # its Services built now: with the compiled templates, when they were
    if solo:
        _warm_templates()
    # Everything made so far (modules, the app, the compiled templates) lives as long as the
    # process, and as long as each pool process forked from it: out of the cyclic collector's
    # sight, full collections stay short and leave the inherited pages shared.
    gc.freeze()


def _warm_templates() -> None:
    """In a worker of the solo pool: the default language's templates compiled in a thread of their
    own while the worker waits for its first task, so that a player's first mail does not wait
    for them inside its transaction (holding SQLite's write lock: seconds on a busy machine); the
    other languages' are compiled when first used."""
    renderer = app.services().composer.renderer
    threading.Thread(target=renderer.preload, args=([settings.default_language],), daemon=True,
                     name="pbem-templates").start()


@worker_process_init.connect
def _freeze_pool_process(**_kwargs: Any) -> None:
    """In each pool process once Celery set it up: only what is cheap (``gc.freeze`` is, and so are
    the metrics' bookkeeping and the Services, which connect on first use)."""
    metrics.process_started("worker")
    _watch_moves()
    gc.freeze()


@worker_process_shutdown.connect
def _pool_process_ended(pid: int | None = None, **_kwargs: Any) -> None:
    """In a pool process that ends (replaced after ``--max-tasks-per-child``, the pool shrinking, a
    shutdown): its live-gauge files go (a killed one's go at the next scrape: ``pbem.metrics``)."""
    metrics.process_ended(pid)


@beat_init.connect
def _beat_metrics(**_kwargs: Any) -> None:
    """Beat on its own (``celery beat``, ``pbem beat``) or embedded in a worker (``--beat``)."""
    metrics.process_started("beat")
    _serve_metrics()
