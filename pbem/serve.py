"""``pbem serve``: the whole server in one command, on SQLite, with no outside service.

One process group:

- this process: migrates the database (``pbem db upgrade``), then runs the SMTP
  front (aiosmtpd, its own thread) and the web front (``pbem.web.create_app``
  under waitress, a production-grade pure-Python WSGI server, in a thread);
- one child: a REAL Celery worker with the scheduler embedded (``celery worker
  --beat``), never eager execution.

The broker is whatever ``PBEM_BROKER_URL`` says; by default the embedded one,
kombu's SQLAlchemy transport on ``<data dir>/broker.db`` (a SQLite file of its
own, so queue polling never competes with game transactions for the game
database's write lock).  Outgoing mail goes to the relay, or with none configured
to the dev mailbox (``<data dir>/devmail/``, shown at ``/dev/mail``).

Ctrl-C or SIGTERM stops everything: the fronts close, the worker gets SIGTERM
(a warm shutdown: running tasks finish) and is killed if it has not exited
within ``WORKER_STOP_TIMEOUT_S``.  If the worker dies on its own, serve stops too
(exit status 1) rather than keep accepting mail nobody processes.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from pbem.config import Settings
from pbem.db import migrate
from pbem.mail.relay import dev_mailbox_dir
from pbem.services.app import Services
from pbem.services.clock import Clock
from pbem.smtp.server import SmtpFront
from pbem.web import create_app
from workers.app import embedded_broker_file, make_celery
from workers.queueing import InboundQueue

__all__ = ["WORKER_STOP_TIMEOUT_S", "serve", "worker_argv"]

log = logging.getLogger("pbem.serve")

WORKER_STOP_TIMEOUT_S = 30.0
WEB_THREADS = 4


def worker_argv(*, concurrency: int, beat: bool, extra: list[str] | None = None) -> list[str]:
    """The command line of a Celery worker running pbem's app from the environment."""
    return [
        sys.executable, "-m", "celery", "-A", "workers.worker", "worker",
        f"--concurrency={concurrency}", "--loglevel=INFO",
        # No remote-control chatter between workers: a single worker here, and the
        # embedded broker has no fanout for it anyway.
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        *(["--beat"] if beat else []),
        *(extra or []),
    ]  # fmt: skip


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
    """Run until SIGINT/SIGTERM or until the worker dies; return the exit status."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    broker_file = embedded_broker_file(settings)
    if broker_file is not None:
        broker_file.parent.mkdir(parents=True, exist_ok=True)
    migrate.upgrade(settings.database_url)

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    svc = Services.from_settings(settings)
    queue = InboundQueue(make_celery(settings))
    smtp = SmtpFront(settings, session_factory=svc.session_factory, queue=queue, clock=svc.clock.now)
    worker_env = os.environ | {"PBEM_DATA_DIR": str(settings.data_dir)}
    worker: subprocess.Popen[bytes] | None = None
    web: _Web | None = None
    status = 0
    try:
        worker = subprocess.Popen(
            worker_argv(concurrency=concurrency, beat=True), env=worker_env, stdin=subprocess.DEVNULL
        )
        smtp.start()
        web = _start_web(settings, svc.clock)  # the SMTP front's clock, as the worker's
        echo(f"pbem serve: SMTP on {settings.smtp_listen} for *@{settings.mail_domain}")
        echo(f"pbem serve: web on http://{settings.web_listen} (links use {settings.base_url})")
        echo(f"pbem serve: Celery worker + beat, pid {worker.pid}, broker {_shown(settings.broker_url)}")
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
            if worker.poll() is not None:
                log.error("the Celery worker exited (status %s): stopping", worker.returncode)
                status = 1
                break
    finally:
        if web is not None:
            web.server.close()
            web.thread.join(timeout=10)
        smtp.stop()
        queue.close()
        if worker is not None:
            status = _stop_worker(worker, already_signalled=signal.SIGINT in received) or status
        svc.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        echo("pbem serve: stopped")
    return status


def _stop_worker(worker: subprocess.Popen[bytes], *, already_signalled: bool) -> int:
    """SIGTERM (warm shutdown), then SIGKILL after the timeout.  A Ctrl-C at the
    terminal already reached the worker (same process group); SIGTERM is still
    sent, which Celery treats as the same warm shutdown."""
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=WORKER_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.warning("the Celery worker did not stop in %ss: killing it", WORKER_STOP_TIMEOUT_S)
            worker.kill()
            worker.wait()
            return 1
        return 0
    # It had exited by itself: that is a failure unless we were stopping anyway.
    return 0 if already_signalled else (1 if worker.returncode else 0)


def _shown(url: str) -> str:
    """``url`` with any password hidden, for printing."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    prefix = next((p for p in ("sqla+", "sqlalchemy+") if url.startswith(p)), "")
    try:
        return prefix + make_url(url.removeprefix(prefix)).render_as_string(hide_password=True)
    except ArgumentError:
        return prefix + url.removeprefix(prefix).rpartition("@")[2]
