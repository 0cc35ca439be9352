"""gunicorn's configuration for the web front's metrics: ``gunicorn -c python:pbem.web.gunicorn_conf
pbem.web.wsgi:app`` (README, "Metrics and logs").

Each worker records its metrics into ``PBEM_METRICS_DIR`` (``create_app`` turns that on); the
master, which serves no request, serves the host's metrics on ``PBEM_METRICS_LISTEN`` when it is
set (``when_ready``), and forgets the live-gauge files of every worker that exits (``child_exit``,
prometheus_client's ``mark_process_dead``).  gunicorn reads this module's public names as its
settings and hooks, so only the hooks are public here.
"""

from __future__ import annotations

import os as _os
from typing import Any as _Any

from pbem import metrics as _metrics
from pbem.config import Settings as _Settings
from pbem.services.backlog import backlog_reader as _backlog_reader

_served: list[_Any] = []


def when_ready(server: _Any) -> None:
    """In the master, once it listens: the host's metrics, with ``PBEM_METRICS_LISTEN``."""
    settings = _Settings.from_env(_os.environ)
    _metrics.enable(settings.metrics_dir)  # before the workers fork: they inherit the directory
    if settings.metrics_listen is not None and not _served:
        _served.append(_metrics.serve_metrics(settings.metrics_listen, settings.metrics_dir,
                                              _backlog_reader(settings)))


def child_exit(server: _Any, worker: _Any) -> None:
    """In the master, for each worker that exited (replaced, killed, shut down)."""
    _metrics.process_ended(worker.pid)
