"""``pbem mail inject FILE``: a raw message fed in as if it had arrived by SMTP, stored the way the
SMTP front stores it (once per recipient in our domain, by ``pbem.services.intake``) and queued for
the worker through ``workers.queueing``."""

from __future__ import annotations

from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses, parseaddr
from typing import Any

import click

from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.db.models import InboundSource
from pbem.services.app import Services
from pbem.services.intake import accepted_recipient, receive_inbound
from workers import make_celery
from workers.queueing import queue_inbound

__all__ = ["inject"]


@click.command()
@click.argument("file", type=click.File("rb"))
@click.option("--to", "recipients", multiple=True, metavar="ADDR",
              help="Envelope recipient (repeatable); default: the To/Cc addresses in our domain.")
@click.option("--from", "mail_from", metavar="ADDR",
              help="Envelope sender; default: the From header's address.")
@pass_settings
def inject(settings: Settings, file: Any, recipients: tuple[str, ...], mail_from: str | None) -> None:
    """Feed the raw message in FILE ('-' for stdin) in as if it had arrived: store it
    (once per recipient) and queue it for the worker."""
    raw = file.read()
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    wanted = list(recipients) or [
        address
        for _, address in getaddresses(
            [str(value) for value in headers.get_all("To", []) + headers.get_all("Cc", [])]
        )
        if address
    ]
    ours = [a for a in (accepted_recipient(w, settings.mail_domain) for w in wanted) if a]
    skipped = sorted(set(w.lower() for w in wanted) - set(ours))
    if skipped:
        click.echo(f"not ours (not @{settings.mail_domain}), skipped: {', '.join(skipped)}", err=True)
    if not ours:
        raise click.ClickException(f"no recipient in @{settings.mail_domain}: use --to ADDR")
    sender = mail_from if mail_from is not None else parseaddr(str(headers.get("From", "")))[1]

    svc = Services.from_settings(settings)
    try:
        received = receive_inbound(
            svc.session_factory,
            raw=raw,
            mail_from=sender,
            recipients=ours,
            source=InboundSource.INJECT,
            received_at=svc.clock.now(),
            queue=lambda ids: queue_inbound(make_celery(settings), ids),
        )
    finally:
        svc.close()
    if not received.ids:
        click.echo("already stored (same Message-ID and recipient): nothing to do")
        return
    state = "queued" if received.queued else "NOT queued (broker down; the sweep will queue it)"
    click.echo(f"stored inbound {', '.join(map(str, received.ids))}: {state}")
