"""The ``pbem`` command line: a front, like the SMTP server and the web app.

Its commands call the services (and start the other fronts); they queue work only through
``workers.queueing``. One module per area of commands:

- ``game``: ``pbem game …``, the operator's games (new, list, show, check, pause, resume, abort,
  extend, replace, tick);
- ``mail``: ``pbem mail inject|list|show|retry``;
- ``player``: ``pbem player export|forget`` (a player's data);
- ``db``: ``pbem db upgrade|current``;
- ``dns``: ``pbem dns`` (the DNS records to publish) and ``pbem dkim keygen`` (a signing key);
- ``run``: the running processes ``pbem serve``, ``smtp``, ``worker``, ``beat``;
- ``web``: ``pbem web`` (gunicorn);
- ``sim``: ``pbem simulate``; ``bench``: ``pbem bench …``.

A command is imported only when it is run (:mod:`pbem.cli.lazy`): ``COMMANDS`` below names each by
``module:attribute`` with its short help, so ``pbem --help`` and a command that only reads load no
more than they use (README, "Benchmarks": ``pbem bench cli``). To add a command, write a click
command in one of these modules (or a new module here), taking the settings with ``@pass_settings``
from :mod:`pbem.cli.settings` if it needs them, and list it in ``COMMANDS`` with the first sentence
of its help (``tests/test_cli_start.py`` checks that they agree); a command of ``pbem game`` or
``pbem mail`` goes in that group's own table.
"""

from __future__ import annotations

import click

from pbem import __version__
from pbem.cli.lazy import Lazy, LazyGroup

__all__ = ["COMMANDS", "main"]

COMMANDS = {
    "bench": Lazy("pbem.cli.bench:bench", "Measure speed (figures are printed, never asserted)."),
    "db": Lazy("pbem.cli.db:db", "The database schema (Alembic migrations)."),
    "dkim": Lazy("pbem.cli.dns:dkim", 'DKIM signing keys (README, "Mail that providers accept").'),
    "dns": Lazy("pbem.cli.dns:dns", "Print the DNS records to publish for PBEM_MAIL_DOMAIN (MX, SPF, DKIM, DMARC), "
                "each explained."),
    "game": Lazy("pbem.cli.game:game", "Create and inspect games."),
    "mail": Lazy("pbem.cli.mail:mail", "Mail operations."),
    "player": Lazy("pbem.cli.player:player", "A player's data: export it, or forget them."),
    "beat": Lazy("pbem.cli.run:beat", "Run Celery beat, which queues the periodic sweep (run exactly one)."),
    "serve": Lazy("pbem.cli.run:serve", "Run everything: SMTP front, web front, Celery workers and beat, on SQLite "
                  "(migrates the database first)."),
    "smtp": Lazy("pbem.cli.run:smtp", "Run the SMTP front on PBEM_SMTP_LISTEN until SIGTERM or Ctrl-C."),
    "worker": Lazy("pbem.cli.run:worker",
                   "Run a Celery worker (`celery -A workers.worker worker`; extra args pass through)."),
    "simulate": Lazy("pbem.cli.sim:simulate", "Bots play duplicate deals (every deal replayed with the seats "
                     "rotated); prints mean points per hand with 95% confidence intervals, win rates (games), "
                     "moons, and paired differences."),
    "web": Lazy("pbem.cli.web:web", "Serve the web front (webhooks, /healthz, game pages, dev mailbox)."),
}


@click.group(cls=LazyGroup, lazy=COMMANDS)
@click.version_option(__version__, prog_name="pbem")
def main() -> None:
    """pbem: Hearts by email.  Configuration comes from PBEM_* environment variables."""
