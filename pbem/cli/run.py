"""The running commands: ``pbem serve``, ``pbem smtp``, ``pbem worker``, ``pbem beat``.

``serve`` is the one-command development server (see ``pbem.serve``); the others
are the production processes, one per container in ``docker-compose.yml``.
``worker`` and ``beat`` replace themselves with Celery's own command line
(``celery -A workers.worker ...``), so signals and exit codes are Celery's and any
extra arguments pass through.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from typing import Any

import click

from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.serve import PortInUse
from pbem.serve import serve as run_everything
from pbem.services.app import Services
from pbem.smtp.server import SmtpFront
from workers import make_celery
from workers.app import embedded_broker_file
from workers.queueing import InboundQueue

__all__ = ["LOG_FORMAT", "beat", "serve", "smtp", "worker"]

LOG_FORMAT = "[%(asctime)s: %(levelname)s/%(name)s] %(message)s"


def _configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    # aiosmtpd logs every SMTP command at INFO; pbem.smtp says what matters.
    logging.getLogger("mail.log").setLevel(logging.WARNING)


@click.command()
@click.option("--concurrency", default=2, show_default=True,
              help="Celery worker processes, of the solo pool (the machine's cores are a good number).")
@pass_settings
def serve(settings: Settings, concurrency: int) -> None:
    """Run everything: SMTP front, web front, Celery workers and beat, on SQLite
    (migrates the database first).  Ctrl-C stops it all."""
    _configure_logging()
    try:
        status = run_everything(settings, concurrency=concurrency, echo=click.echo)
    except PortInUse as error:
        raise click.ClickException(f"pbem serve: {error}") from error
    sys.exit(status)


@click.command()
@pass_settings
def smtp(settings: Settings) -> None:
    """Run the SMTP front on PBEM_SMTP_LISTEN until SIGTERM or Ctrl-C."""
    _configure_logging()
    broker_file = embedded_broker_file(settings)
    if broker_file is not None:
        broker_file.parent.mkdir(parents=True, exist_ok=True)
    svc = Services.from_settings(settings)
    queue = InboundQueue(make_celery(settings))
    front = SmtpFront(settings, session_factory=svc.session_factory, queue=queue, clock=svc.clock.now)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: stop.set())
    front.start()
    click.echo(f"pbem smtp: listening on {settings.smtp_listen} for *@{settings.mail_domain}")
    try:
        stop.wait()
    finally:
        front.stop()
        queue.close()
        svc.close()


_PASS_THROUGH: dict[str, Any] = {"ignore_unknown_options": True, "allow_extra_args": True}


@click.command(context_settings=_PASS_THROUGH)
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
@pass_settings
def worker(settings: Settings, celery_args: tuple[str, ...]) -> None:
    """Run a Celery worker (`celery -A workers.worker worker`; extra args pass through)."""
    _exec_celery(settings, "worker", "--loglevel=INFO", *celery_args)


@click.command(context_settings=_PASS_THROUGH)
@click.argument("celery_args", nargs=-1, type=click.UNPROCESSED)
@pass_settings
def beat(settings: Settings, celery_args: tuple[str, ...]) -> None:
    """Run Celery beat, which queues the periodic sweep (run exactly one)."""
    _exec_celery(settings, "beat", "--loglevel=INFO", *celery_args)


def _exec_celery(settings: Settings, *args: str) -> None:
    # The settings were checked above (a bad PBEM_* fails here, readably); the
    # worker module reads the same environment again.
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "celery", "-A", "workers.worker", *args]
    os.execve(sys.executable, argv, os.environ | {"PBEM_DATA_DIR": str(settings.data_dir)})
