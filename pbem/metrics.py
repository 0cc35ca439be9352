"""Prometheus metrics of every pbem process (README, "Metrics and logs").

What is counted, and where:

- ``pbem_moves_applied_total{kind}``: moves appended to a game's move log and committed, by the
  worker process that committed them (``pbem.services.observed``);
- ``pbem_mail_received_total{front, outcome}``: mails as the SMTP front and the webhooks answered
  them (``stored``, ``duplicate``, ``refused`` for good, ``failed`` for now);
- ``pbem_mail_sent_total``, ``pbem_mail_failed_total`` (given up), ``pbem_mail_retried_total``
  (an attempt that failed for now, tried again after its backoff), by the worker that sent;
- ``pbem_reply_seconds``: a histogram of the time from the 250 that answered a received mail to
  the last mail its processing sent;
- ``pbem_processes{kind}``: the live pbem processes of the host, by kind;
- and, read from the database when scraped (``pbem.services.backlog``), the received mails and
  outbox rows still waiting and the age of the oldest of each.

One host, many processes: Celery's prefork pool, gunicorn's workers, the SMTP front, ``pbem
serve`` and its worker all record into one directory (``PBEM_METRICS_DIR``) in prometheus_client's
multiprocess mode, and one process per host, the one given ``PBEM_METRICS_LISTEN``, serves the sum
of them all (https://prometheus.github.io/client_python/multiprocess/). A counter's file stays
when its process ends, so totals never go down when a pool process is replaced; a process's
``pbem_processes`` file is removed when it ends (``mark_process_dead``: at exit, by Celery's
``worker_process_shutdown`` and gunicorn's ``child_exit``), and a scrape also removes those of
processes that no longer exist (killed ones), so the directory must belong to one host (one PID
namespace).

The metrics are process-wide, as Prometheus' are: :func:`enable`, called by each long-running
entry point before it forks, turns recording on (and :func:`process_started` counts the process); until then (one-shot commands, unit tests) every
``count_*`` call does nothing and prometheus_client is not even imported.  It is imported only
once ``PROMETHEUS_MULTIPROC_DIR`` is set, since it picks its storage when imported.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pbem.config import HostPort

__all__ = [
    "Backlog",
    "REPLY_BUCKETS",
    "count_move",
    "count_received",
    "count_sent",
    "enable",
    "enabled",
    "exposition",
    "observe_reply",
    "process_ended",
    "process_started",
    "serve_metrics",
]

log = logging.getLogger("pbem.metrics")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: Seconds from a reply's 250 to its last mail: a move's mails leave within a second when idle.
REPLY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0, float("inf"))


class _Instruments:
    """The process's metric objects (made by :func:`enable`, once ``MULTIPROC_ENV`` is set)."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        self.moves = Counter("pbem_moves_applied", "Moves committed to games' move logs, by kind",
                             ["kind"], registry=None)
        self.received = Counter("pbem_mail_received", "Received mails as a front answered them, by front "
                                "(smtp, webhook, mailgun) and outcome (stored, duplicate, refused, failed)",
                                ["front", "outcome"], registry=None)
        self.sent = Counter("pbem_mail_sent", "Outgoing mails handed to the relay", registry=None)
        self.failed = Counter("pbem_mail_failed", "Outgoing mails given up (a permanent failure, or out "
                              "of attempts)", registry=None)
        self.retried = Counter("pbem_mail_retried", "Sending attempts that failed for now and are tried "
                               "again after their backoff", registry=None)
        self.reply = Histogram("pbem_reply_seconds", "From the 250 answering a received mail to the last "
                               "mail its processing sent", buckets=REPLY_BUCKETS, registry=None)
        self.processes = Gauge("pbem_processes", "Live pbem processes of this host, by kind", ["kind"],
                               multiprocess_mode="livesum", registry=None)


_instruments: _Instruments | None = None
_lock = threading.Lock()


def enable(directory: Path) -> None:
    """Record this process's metrics (and those of the processes it forks or starts) in
    ``directory`` from now on.  A second call changes nothing."""
    global _instruments
    with _lock:
        directory.mkdir(parents=True, exist_ok=True)
        os.environ[MULTIPROC_ENV] = str(directory)  # inherited by the pool, the workers, serve's worker
        from prometheus_client import values

        if values.ValueClass.__name__ != "MmapedValue":  # imported before the variable was set
            values.ValueClass = values.get_value_class()
        if _instruments is None:
            _instruments = _Instruments()
            atexit.register(_process_exiting)


def enabled() -> bool:
    return _instruments is not None


def process_started(kind: str) -> None:
    """Count this process in ``pbem_processes`` as a ``kind`` (``smtp``, ``worker``, ``beat``,
    ``web``, ``serve``); each forked pool process calls it again, for its own file."""
    if _instruments is not None:
        _instruments.processes.labels(kind=kind).set(1)


def process_ended(pid: int | None = None) -> None:
    """Remove the live-gauge files of process ``pid`` (default: this one), which has ended."""
    if _instruments is None:
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(os.getpid() if pid is None else pid, os.environ[MULTIPROC_ENV])


def _process_exiting() -> None:
    """``process_ended`` at this process's exit, SIGTERM and SIGINT ignored from now on: a process
    that gets its stop signal twice (systemd signals every process of a service, and ``pbem serve``
    sends one more to its worker and beat) would otherwise have the second one's ``SystemExit``
    raised inside this cleanup, leaving its files.  The process is exiting already."""
    if threading.current_thread() is threading.main_thread():  # atexit runs there, as a rule
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
    process_ended()


def count_move(kind: str, n: int = 1) -> None:
    if _instruments is not None:
        _instruments.moves.labels(kind=kind).inc(n)


def count_received(front: str, outcome: str, n: int = 1) -> None:
    if _instruments is not None and n:
        _instruments.received.labels(front=front, outcome=outcome).inc(n)


def count_sent(*, sent: int = 0, failed: int = 0, retried: int = 0) -> None:
    if _instruments is not None:
        if sent:
            _instruments.sent.inc(sent)
        if failed:
            _instruments.failed.inc(failed)
        if retried:
            _instruments.retried.inc(retried)


def observe_reply(seconds: float) -> None:
    if _instruments is not None:
        _instruments.reply.observe(max(seconds, 0.0))


# --- serving ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backlog:
    """What waits in the database: received mails not yet processed, outbox rows not yet sent,
    and the age in seconds of the oldest of each (0 when none waits)."""

    inbound: int
    inbound_oldest_s: float
    outbound: int
    outbound_oldest_s: float


_LIVE_FILE = re.compile(r"gauge_live\w*?_(\d+)\.db$")


def _forget_dead_processes(directory: Path) -> None:
    """``mark_process_dead`` for every process that left live-gauge files and no longer exists
    (killed: nothing ran at its exit)."""
    pids = {int(m.group(1)) for name in os.listdir(directory) if (m := _LIVE_FILE.search(name))}
    for pid in sorted(pids):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            process_ended(pid)
        except PermissionError:  # alive, another user's
            pass


class _HostCollector:
    """Every process's files in the directory, summed (``MultiProcessCollector``), after the
    files of vanished processes are forgotten."""

    def __init__(self, directory: Path) -> None:
        from prometheus_client.multiprocess import MultiProcessCollector

        self.directory = directory
        self._inner = MultiProcessCollector(None, path=str(directory))

    def collect(self) -> Iterable[Any]:
        _forget_dead_processes(self.directory)
        return self._inner.collect()


class _BacklogCollector:
    """The database's backlog, queried at each scrape."""

    def __init__(self, read: Callable[[], Backlog]) -> None:
        self.read = read

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        try:
            backlog = self.read()
        except Exception:  # noqa: BLE001 (a scrape must answer; the database's state is the metric)
            log.warning("metrics: could not read the backlog from the database", exc_info=True)
            yield GaugeMetricFamily("pbem_database_up", "Whether the last scrape could read the database", 0)
            return
        yield GaugeMetricFamily("pbem_database_up", "Whether the last scrape could read the database", 1)
        yield GaugeMetricFamily("pbem_inbound_pending", "Received mails not processed yet (pending or "
                                "processing)", backlog.inbound)
        yield GaugeMetricFamily("pbem_inbound_oldest_pending_seconds", "Age of the oldest received mail not "
                                "processed yet (0: none)", backlog.inbound_oldest_s)
        yield GaugeMetricFamily("pbem_outbound_pending", "Outbox rows not sent yet", backlog.outbound)
        yield GaugeMetricFamily("pbem_outbound_oldest_pending_seconds", "Age of the oldest outbox row not "
                                "sent yet (0: none)", backlog.outbound_oldest_s)


def _registry(directory: Path, backlog: Callable[[], Backlog] | None) -> Any:
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_HostCollector(directory))  # type: ignore[arg-type]
    if backlog is not None:
        registry.register(_BacklogCollector(backlog))  # type: ignore[arg-type]
    return registry


def exposition(directory: Path, backlog: Callable[[], Backlog] | None = None) -> Callable[[], tuple[bytes, str]]:
    """A function giving the host's metrics as Prometheus text, and its content type (for a
    ``/metrics`` route of a web front that already listens)."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    registry = _registry(directory, backlog)
    return lambda: (generate_latest(registry), CONTENT_TYPE_LATEST)


def serve_metrics(listen: HostPort, directory: Path, backlog: Callable[[], Backlog] | None = None) -> Any:
    """Serve the host's metrics on ``listen`` (``/metrics``, and any path) from a daemon thread;
    the server (``.shutdown()`` stops it), or None when the address cannot be bound (logged: a
    metrics port taken must not stop the mail)."""
    from prometheus_client import start_http_server

    try:
        server, _thread = start_http_server(listen.port, addr=listen.host, registry=_registry(directory, backlog))
    except OSError as error:
        log.error("metrics: cannot listen on %s (%s); this process serves no metrics", listen, error)
        return None
    log.info("metrics of this host's pbem processes on http://%s/metrics", listen)
    return server
