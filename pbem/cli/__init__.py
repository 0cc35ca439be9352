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

To add a command, write a click command in one of them (or a new module here), taking the settings
with ``@pass_settings`` from :mod:`pbem.cli.settings` if it needs them, and list it in ``main`` below.
"""

from __future__ import annotations

import click

from pbem import __version__
from pbem.cli import bench, db, dns, game, mail, player, run, sim, web

__all__ = ["main"]


@click.group(commands=[bench.bench, db.db, dns.dkim, dns.dns, game.game, mail.mail, player.player, run.beat, run.serve, run.smtp,
                       run.worker, sim.simulate, web.web])
@click.version_option(__version__, prog_name="pbem")
def main() -> None:
    """pbem: Hearts by email.  Configuration comes from PBEM_* environment variables."""
