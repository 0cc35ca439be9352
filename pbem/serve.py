"""``pbem serve``: the whole server in one command, on SQLite, with no outside service.

One process group:

- this process: checks that its ports are free, migrates the database (``pbem db upgrade``),
  then runs the SMTP front (aiosmtpd, its own thread) and the web front (``pbem.web.create_app``
  under waitress, a production-grade pure-Python WSGI server, in a thread);
- two children: a REAL Celery worker (``celery worker``, never eager execution) and Celery beat
  (``celery beat``), which queues the periodic sweep and tick.

Beat runs as its own process, not embedded in the worker (``worker --beat``): the embedded beat
is a child of the worker that the worker's main process waits for at exit, so a beat slow to
stop held the whole worker after "beat: Shutting down", and past serve's deadline nothing killed
beat's process.  Here serve signals each child itself, waits for both together and kills what
is left of either.

Before anything else serve binds each of its listening addresses once: a second ``pbem serve``
on the same ports stops there, naming the variable to set (``PortInUse``), before it migrates or
starts a worker and beat on a live database.

The broker is whatever ``PBEM_BROKER_URL`` says; by default the embedded one,
kombu's SQLAlchemy transport on ``<data dir>/broker.db`` (a SQLite file of its
own, so queue polling never competes with game transactions for the game
database's write lock; polled every 100 ms, ``workers.embedded_broker``).  Outgoing mail goes
to the relay, or with none configured to the dev mailbox (``<data dir>/devmail/``, shown at
``/dev/mail``).

Ctrl-C or SIGTERM stops everything within ``STOP_TIMEOUT_S`` (15 s): the fronts close, the
worker and beat get SIGTERM (the worker's warm shutdown: running tasks finish), and whatever of
them has not exited by its deadline is killed with its child processes (beat after 5 s: it holds
no work; a task cut short is run again: every task is idempotent, and the sweep re-queues its
mail).  A worker about to be killed first logs where its threads were (Celery's SIGUSR1).  If a child dies on its
own, serve stops too (exit status 1) rather than keep accepting mail nobody processes.

Run as root (a container's default), the worker would print Celery's "running the worker with
superuser privileges" SecurityWarning at every start: serve's worker is a development server's,
accepting only JSON (Celery refuses pickle as root anyway), so ``worker_argv(quiet_root=True)``
filters that one warning; production runs workers as an unprivileged user (the Dockerfile's
``pbem``), where it never appears.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
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
from workers.queueing import InboundQueue

__all__ = ["STOP_TIMEOUT_S", "PortInUse", "beat_argv", "check_ports", "serve", "worker_argv"]

log = logging.getLogger("pbem.serve")

#: Seconds from the stop signal until the worker is killed if it is still running (beat: sooner).
STOP_TIMEOUT_S = 15.0
BEAT_STOP_TIMEOUT_S = 5.0
#: Seconds a worker about to be killed gets to log its threads' stacks (SIGUSR1) first.
STACKS_WAIT_S = 1.0
WEB_THREADS = 4
#: The start of Celery's warning for a worker run as root (``celery.platforms.ROOT_DISCOURAGED``).
ROOT_WARNING = "You're running the worker with superuser privileges"


class PortInUse(RuntimeError):
    """A listening address of ``pbem serve`` is taken; the message names its variable."""


def worker_argv(*, concurrency: int, beat: bool = False, quiet_root: bool = False,
                extra: list[str] | None = None) -> list[str]:
    """The command line of a Celery worker running pbem's app from the environment.

    ``quiet_root``: without Celery's SecurityWarning for a worker run as root (see above)."""
    warnings = ["-W", f"ignore:{ROOT_WARNING}:UserWarning"] if quiet_root else []
    return [
        sys.executable, *warnings, "-m", "celery", "-A", "workers.worker", "worker",
        f"--concurrency={concurrency}", "--loglevel=INFO",
        # No remote-control chatter between workers: a single worker here, and the
        # embedded broker has no fanout for it anyway.
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        *(["--beat"] if beat else []),
        *(extra or []),
    ]  # fmt: skip


def beat_argv() -> list[str]:
    """The command line of Celery beat for pbem's app (its schedule file in the data dir)."""
    return [sys.executable, "-m", "celery", "-A", "workers.worker", "beat", "--loglevel=INFO"]


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
    """Run until SIGINT/SIGTERM or until the worker or beat dies; return the exit status.
    Raises ``PortInUse`` (before touching the database) when a port is taken."""
    check_ports(settings)
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
    # serve's own process serves the host's metrics (README, "Metrics and logs"): the worker and beat
    # record into the same directory but must not try to listen on that port too.
    child_env = {k: v for k, v in (os.environ | {"PBEM_DATA_DIR": str(settings.data_dir)}).items()
                 if k != "PBEM_METRICS_LISTEN"}
    children: dict[str, subprocess.Popen[bytes]] = {}
    web: _Web | None = None
    status = 0
    try:
        # The fronts first: a port taken since the check fails here, before any worker or beat.
        smtp.start()
        web = _start_web(settings, svc.clock)  # the SMTP front's clock, as the worker's
        for name, argv in (("worker", worker_argv(concurrency=concurrency, quiet_root=True)),
                           ("beat", beat_argv())):
            children[name] = subprocess.Popen(argv, env=child_env, stdin=subprocess.DEVNULL)
        echo(f"pbem serve: SMTP on {settings.smtp_listen} for *@{settings.mail_domain}")
        echo(f"pbem serve: web on http://{settings.web_listen} (links use {settings.base_url})")
        echo(f"pbem serve: Celery worker pid {children['worker'].pid}, beat pid {children['beat'].pid}, "
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
            dead = [name for name, child in children.items() if child.poll() is not None]
            if dead:
                for name in dead:
                    log.error("the Celery %s exited (status %s): stopping", name, children[name].returncode)
                status = 1
                break
    finally:
        if web is not None:
            web.server.close()
            web.thread.join(timeout=10)
        smtp.stop()
        queue.close()
        status = _stop_children(children, stopping=bool(received)) or status
        svc.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        echo("pbem serve: stopped")
    return status


def _stop_children(children: dict[str, subprocess.Popen[bytes]], *, stopping: bool) -> int:
    """SIGTERM to each child still running (the worker's warm shutdown; a Ctrl-C at the terminal
    reached them already, SIGTERM is the same), then what is left of each is killed with its own
    children: beat after ``BEAT_STOP_TIMEOUT_S`` (it holds no work: the schedule is timestamps),
    the worker at ``STOP_TIMEOUT_S``, after SIGUSR1, on which Celery logs where each of its
    threads was, so the log says why it hung.  1 if the worker had to be killed, or a child exited by itself with a failure while serve was
    not stopping."""
    start = time.monotonic()
    status = 0
    running = {name: child for name, child in children.items() if child.poll() is None}
    for name, child in children.items():
        if name not in running and child.returncode and not stopping:
            status = 1
    # Their children (the worker's pool) now, while they can still be found from their parent.
    offspring = {name: _descendants(child.pid) for name, child in running.items()}
    for child in running.values():
        child.send_signal(signal.SIGTERM)
    for name in sorted(running, key=lambda n: n != "beat"):  # beat's shorter deadline first
        child = running[name]
        limit = BEAT_STOP_TIMEOUT_S if name == "beat" else STOP_TIMEOUT_S
        try:
            child.wait(timeout=max(start + limit - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            if name == "worker":
                log.warning("the Celery worker did not stop in %ss: killing it", limit)
                status = 1
            else:
                log.warning("Celery beat did not stop in %ss: killed (it holds no work)", limit)
            offspring[name] += _descendants(child.pid)
            if name == "worker":
                child.send_signal(signal.SIGUSR1)  # Celery logs every thread's stack: why it hung
                try:
                    child.wait(timeout=STACKS_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass
            child.kill()
            child.wait()
    # A pool process or an embedded beat outliving its parent is in this process group still.
    group = os.getpgid(0)
    for pid in {pid for pids in offspring.values() for pid in pids}:
        try:
            if os.getpgid(pid) == group:
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return status


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux ``/proc``; none where it cannot be read)."""
    found: list[int] = []
    todo = [pid]
    while todo and len(found) < 1000:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


def _shown(url: str) -> str:
    """``url`` with any password hidden, for printing."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    prefix = next((p for p in ("sqla+", "sqlalchemy+") if url.startswith(p)), "")
    try:
        return prefix + make_url(url.removeprefix(prefix)).render_as_string(hide_password=True)
    except ArgumentError:
        return prefix + url.removeprefix(prefix).rpartition("@")[2]
