"""``pbem serve``: the whole server in one command, on SQLite, with no outside service.

- this process: checks that its ports are free, migrates the database (``pbem db upgrade``),
  then runs the SMTP front (aiosmtpd, its own thread) and the web front (``pbem.web.create_app``
  under waitress, a production-grade pure-Python WSGI server, in a thread);
- its Celery processes (``workers.supervisor``): ``--concurrency`` REAL Celery workers of the solo
  pool, one process each (never eager execution; why not one prefork worker: see there), and Celery
  beat, which queues the periodic sweep and tick; each leads a process group of its own, and one
  that dies is started again.

Beat runs as its own process, not embedded in a worker (``worker --beat``): the embedded beat is a
child of the worker that the worker's main process waits for at exit, so a beat slow to stop held
the whole worker after "beat: Shutting down".

Before anything else serve binds each of its listening addresses once: a second ``pbem serve``
on the same ports stops there, naming the variable to set (``PortInUse``), before it migrates or
starts a worker and beat on a live database.

The broker is whatever ``PBEM_BROKER_URL`` says; by default the embedded one,
kombu's SQLAlchemy transport on ``<data dir>/broker.db`` (a SQLite file of its
own, so queue polling never competes with game transactions for the game
database's write lock; polled every 100 ms, a message deleted once delivered:
``workers.embedded_broker``, whose ``prepare`` serve runs on the file first).  Outgoing
mail goes to the relay, or with none configured to the dev mailbox (``<data dir>/devmail/``, shown
at ``/dev/mail``).

Ctrl-C or SIGTERM, to serve's process or to its group, stops everything within ``STOP_TIMEOUT_S``
(15 s): serve sends SIGTERM to each Celery process (a worker finishes its running task), closes the
fronts, and kills whatever of a process group has not exited by its deadline (``workers.supervisor``;
a task cut short is run again: every task is idempotent, and the sweep re-queues its mail).  If a
Celery process keeps dying (``RESTART_LIMIT`` times in ``RESTART_WINDOW_S``), serve stops too (exit
status 1) rather than keep accepting mail nobody processes.

Run as root (a container's default), the workers would print Celery's "running the worker with
superuser privileges" SecurityWarning at every start: serve's workers are a development server's,
accepting only JSON (Celery refuses pickle as root anyway), so ``worker_argv(quiet_root=True)``
filters that one warning; production runs workers as an unprivileged user (the Dockerfile's
``pbem``), where it never appears.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from pbem.config import HostPort, Settings
from pbem.db import migrate
from pbem.mail.relay import dev_mailbox_dir
from pbem.services.app import Services
from pbem.services.clock import Clock
from pbem.smtp.server import SmtpFront
from pbem.web import create_app
from workers.app import embedded_broker_file, make_celery
from workers.embedded_broker import prepare as prepare_broker
from workers.queueing import InboundQueue
from workers.supervisor import ROOT_WARNING, STOP_TIMEOUT_S, CeleryProcesses

__all__ = ["ROOT_WARNING", "STOP_TIMEOUT_S", "PortInUse", "check_ports", "serve"]

log = logging.getLogger("pbem.serve")

WEB_THREADS = 4


class PortInUse(RuntimeError):
    """A listening address of ``pbem serve`` is taken; the message names its variable."""


def check_ports(settings: Settings) -> None:
    """Raise ``PortInUse`` unless every address serve listens on can be bound right now."""
    addresses: list[tuple[str, HostPort]] = [
        ("PBEM_SMTP_LISTEN", settings.smtp_listen),
        ("PBEM_WEB_LISTEN", settings.web_listen),
    ]
    if settings.metrics_listen is not None:
        addresses.append(("PBEM_METRICS_LISTEN", settings.metrics_listen))
    for variable, address in addresses:
        problem = _bind_problem(address)
        if problem is not None:
            raise PortInUse(
                f"{address} ({variable}) cannot be listened on: {problem}. Another pbem serve may "
                f"be running there; stop it, or set {variable} to a free HOST:PORT for this one "
                f"(and PBEM_DATA_DIR to a directory of its own for a second server)"
            )


def _bind_problem(address: HostPort) -> str | None:
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As the servers bind: a port left in TIME_WAIT by a server that just stopped is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address.host, address.port))
        except OSError as error:
            return error.strerror or str(error)
    return None


@dataclass
class _Web:
    server: Any  # waitress's server object
    thread: threading.Thread


def _start_web(settings: Settings, clock: Clock) -> _Web:
    from waitress import create_server

    server = create_server(
        create_app(settings, clock=clock),
        host=settings.web_listen.host,
        port=settings.web_listen.port,
        threads=WEB_THREADS,
        ident="pbem",
    )
    thread = threading.Thread(target=server.run, name="pbem-web", daemon=True)
    thread.start()
    return _Web(server=server, thread=thread)


def serve(
    settings: Settings,
    *,
    concurrency: int = 2,
    echo: Callable[[str], None] = print,
) -> int:
    """Run until SIGINT/SIGTERM or until a Celery process keeps dying; return the exit status.
    ``concurrency``: how many worker processes.  Raises ``PortInUse`` (before touching the
    database) when a port is taken."""
    check_ports(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    broker_file = embedded_broker_file(settings)
    queue_app = make_celery(settings)
    if broker_file is not None:
        broker_file.parent.mkdir(parents=True, exist_ok=True)
        forgotten = prepare_broker(broker_file, queue_app.connection_for_write())  # before anything else opens it
        if forgotten:
            log.info("deleted %d delivered messages from %s", forgotten, broker_file)
    migrate.upgrade(settings.database_url)

    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    svc = Services.from_settings(settings)
    queue = InboundQueue(queue_app)
    smtp = SmtpFront(settings, session_factory=svc.session_factory, queue=queue, clock=svc.clock.now)
    # serve's own process serves the host's metrics (README, "Metrics and logs"): the workers and beat
    # record into the same directory but must not try to listen on that port too.
    child_env = {k: v for k, v in (os.environ | {"PBEM_DATA_DIR": str(settings.data_dir)}).items()
                 if k != "PBEM_METRICS_LISTEN"}
    celery = CeleryProcesses.for_serve(child_env, workers=concurrency, quiet_root=True)
    web: _Web | None = None
    status = 0
    try:
        # The fronts first: a port taken since the check fails here, before any worker or beat.
        smtp.start()
        web = _start_web(settings, svc.clock)  # the SMTP front's clock, as the workers'
        celery.start()
        workers = ", ".join(str(pid) for pid in celery.pids(workers=True))
        echo(f"pbem serve: SMTP on {settings.smtp_listen} for *@{settings.mail_domain}")
        echo(f"pbem serve: web on http://{settings.web_listen} (links use {settings.base_url})")
        echo(f"pbem serve: Celery workers pid {workers} (solo pool), beat pid {celery.pids(workers=False)[0]}, "
             f"broker {_shown(settings.broker_url)}")
        echo(f"pbem serve: database {_shown(settings.database_url)}")
        if settings.relay_host:
            echo(f"pbem serve: outgoing mail via {settings.relay_host}:{settings.relay_port}")
        else:
            echo(
                f"pbem serve: outgoing mail in the dev mailbox {dev_mailbox_dir(settings)} "
                f"(http://{settings.web_listen}/dev/mail)"
            )
        echo("pbem serve: Ctrl-C stops everything")
        while not stop.wait(0.5):
            if celery.revive():
                status = 1
                break
    finally:
        # The Celery processes first, so that their deadlines run while the fronts close.
        celery.terminate()
        if web is not None:
            web.server.close()
            web.thread.join(timeout=STOP_TIMEOUT_S / 2)
        smtp.stop()
        queue.close()
        status = celery.wait() or status
        svc.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        echo("pbem serve: stopped")
    return status


def _shown(url: str) -> str:
    """``url`` with any password hidden, for printing."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    prefix = next((p for p in ("sqla+", "sqlalchemy+") if url.startswith(p)), "")
    try:
        return prefix + make_url(url.removeprefix(prefix)).render_as_string(hide_password=True)
    except ArgumentError:
        return prefix + url.removeprefix(prefix).rpartition("@")[2]
