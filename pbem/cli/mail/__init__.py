"""``pbem mail …``: the operator's mail (README, "Operating pbem").

``pbem mail inject`` feeds a raw message in as if it had arrived by SMTP: it is stored the way the
SMTP front stores a received mail (once per recipient in our domain, by ``pbem.services.intake``)
and queued for the worker through ``workers.queueing``.

``pbem mail list`` shows received and sent mail (set-aside first), ``pbem mail show in:N|out:N`` one
mail's record, headers and the start of its text, and ``pbem mail retry in:N|out:N`` gives a
set-aside mail a fresh bounded set of attempts (recorded) and queues it
(:mod:`pbem.services.operator_mail`). What a sender wrote is printed escaped (:mod:`pbem.cli.output`).

Each command is loaded only when run (:mod:`pbem.cli.lazy`), from a module with the imports it needs
(``inject``, ``listing``, ``retry``): ``pbem mail list`` loads neither Celery nor the mail reader's
command parsing.
"""

from __future__ import annotations

import click

from pbem.cli.lazy import Lazy, LazyGroup

__all__ = ["mail"]

COMMANDS = {
    "inject": Lazy("pbem.cli.mail.inject:inject", "Feed the raw message in FILE ('-' for stdin) in as if it had "
                   "arrived: store it (once per recipient) and queue it for the worker."),
    "list": Lazy("pbem.cli.mail.listing:list_command", "Received (in:N) and sent (out:N) mail: set aside "
                 "(failed) first, then pending, then the rest, newest first."),
    "show": Lazy("pbem.cli.mail.listing:show_command", "One mail (in:N or out:N): its record, outcome, attempts, "
                 "retries, headers and the start of its text (escaped: nothing in it reaches the terminal as a "
                 "control character)."),
    "retry": Lazy("pbem.cli.mail.retry:retry_command", "Give a set-aside (failed) mail, in:N or out:N, a fresh "
                  "bounded set of attempts, record that, and queue it."),
}


@click.group(cls=LazyGroup, lazy=COMMANDS)
def mail() -> None:
    """Mail operations."""
