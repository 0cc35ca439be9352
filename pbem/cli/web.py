"""``pbem web``: run the web front with gunicorn on ``PBEM_WEB_LISTEN``.

The same server as production (``gunicorn pbem.web.wsgi:app`` in docker-compose), embedded
through gunicorn's documented custom-application API so that the settings are read once,
by pbem's CLI, and the listen address comes from ``PBEM_WEB_LISTEN``.  Each worker process
builds its own app after the fork, so no database connection is shared across processes.
"""

from __future__ import annotations

from typing import Any

import click
from gunicorn.app.base import BaseApplication

from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.web import create_app, gunicorn_conf

__all__ = ["web"]


class WebFront(BaseApplication):  # type: ignore[misc]
    """gunicorn serving ``create_app(settings)`` with these options (set before gunicorn reads them)."""

    def __init__(self, settings: Settings, options: dict[str, Any]) -> None:
        self.settings = settings
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return create_app(self.settings)


@click.command()
@click.option("--workers", default=2, show_default=True, help="gunicorn worker processes.")
@click.option("--threads", default=4, show_default=True, help="Threads per worker.")
@click.option("--access-log/--no-access-log", default=True, show_default=True,
              help="Log each request to stderr.")
@pass_settings
def web(settings: Settings, workers: int, threads: int, access_log: bool) -> None:
    """Serve the web front (webhooks, /healthz, game pages, dev mailbox)."""
    options = {
        "bind": str(settings.web_listen),
        "workers": workers,
        "threads": threads,
        "accesslog": "-" if access_log else None,
        "proc_name": "pbem-web",
        # The master serves the workers' metrics and forgets those that exit (README, "Metrics and logs").
        "when_ready": gunicorn_conf.when_ready,
        "child_exit": gunicorn_conf.child_exit,
    }
    click.echo(f"pbem web: listening on http://{settings.web_listen} (public {settings.base_url})")
    WebFront(settings, options).run()
