"""``pbem mail …``: the operator's mail (README, "Operating pbem").

``pbem mail inject`` feeds a raw message in as if it had arrived by SMTP: it is stored the way the
SMTP front stores a received mail (once per recipient in our domain, by ``pbem.services.intake``)
and queued for the worker through ``workers.queueing``.

``pbem mail list`` shows received and sent mail (set-aside first), ``pbem mail show in:N|out:N`` one
mail's record, headers and the start of its text, and ``pbem mail retry in:N|out:N`` gives a
set-aside mail a fresh bounded set of attempts (recorded) and queues it
(:mod:`pbem.services.operator_mail`). What a sender wrote is printed escaped (:mod:`pbem.cli.output`).
"""

from __future__ import annotations

from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses, parseaddr
import json
from typing import Any

import click

from kombu.exceptions import KombuError

from pbem.cli.game import require_migrated
from pbem.cli.output import as_json, safe, table, when
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.db.models import InboundSource
from pbem.services.app import Services
from pbem.services.inbound import MAX_ATTEMPTS
from pbem.services.intake import accepted_recipient, receive_inbound
from pbem.services.operator_mail import (IN, IN_STATUSES, OUT, OUT_STATUSES, BadMailRef, RetryRefused, list_mail,
                                         parse_ref, retry_mail, show_mail)
from pbem.services.outbox import DEFAULT_RETRY
from workers import make_celery
from workers.queueing import queue_inbound, queue_outbound

__all__ = ["mail"]


@click.group()
def mail() -> None:
    """Mail operations."""


@mail.command()
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


def _mail_ref(text: str) -> tuple[str, int]:
    try:
        return parse_ref(text)
    except BadMailRef as error:
        raise click.BadParameter(f"{text!r}: name a mail as in:N (received) or out:N (sent), as "
                                 "`pbem mail list` shows them", param_hint="ID") from error


@mail.command("list")
@click.option("--status", "statuses", multiple=True, type=click.Choice(sorted(set(IN_STATUSES + OUT_STATUSES))),
              help="only mails with this status (repeat)")
@click.option("--in", "direction", flag_value=IN, help="received mail only")
@click.option("--out", "direction", flag_value=OUT, help="sent mail only")
@click.option("--address", default=None, metavar="ADDR", help="received from / sent to this address")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@click.option("--json", "as_json_output", is_flag=True, help="JSON instead of a table")
@pass_settings
def list_command(settings: Settings, statuses: tuple[str, ...], direction: str | None, address: str | None,
                 limit: int, as_json_output: bool) -> None:
    """Received (in:N) and sent (out:N) mail: set aside (failed) first, then pending, then the
    rest, newest first."""
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        rows = list_mail(svc, directions=(direction,) if direction else (IN, OUT), statuses=statuses,
                         address=address, limit=limit)
    if as_json_output:
        click.echo(as_json([r.as_json() for r in rows]))
        return
    if not rows:
        click.echo("no mail")
        return
    click.echo(table(["ID", "STATUS", "AT (UTC)", "FROM", "TO", "TRIES", "OUTCOME", "SUBJECT/KIND"], [
        [r.ref, r.status, when(r.at), r.sender or "-", r.recipient, str(r.attempts) + (f" r{r.retries}" if r.retries
                                                                                        else ""),
         r.what or "-", r.subject or "-"] for r in rows]))


@mail.command("show")
@click.argument("mail_ref", metavar="ID")
@click.option("--json", "as_json_output", is_flag=True, help="JSON instead of text")
@pass_settings
def show_command(settings: Settings, mail_ref: str, as_json_output: bool) -> None:
    """One mail (in:N or out:N): its record, outcome, attempts, retries, headers and the start of
    its text (escaped: nothing in it reaches the terminal as a control character)."""
    direction, mail_id = _mail_ref(mail_ref)
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        detail = show_mail(svc, direction, mail_id)
    if detail is None:
        raise click.ClickException(f"no mail {direction}:{mail_id}")
    if as_json_output:
        click.echo(as_json(detail.as_json()))
        return
    lines = [f"mail {detail.ref}"]
    for key, value in detail.record.items():
        shown = json.dumps(value, ensure_ascii=True) if isinstance(value, (dict, list)) else value
        lines.append(f"  {key}: {safe('-' if shown is None else shown)}")
    for retry in detail.retries:
        lines.append(f"  retried: {retry['at']} after {retry['attempts_before']} attempts "
                     f"({safe(json.dumps(retry['before'], ensure_ascii=True))})")
    if not detail.kept:
        lines.append("  (its bytes were emptied: mail retention, or `pbem player forget`)")
    else:
        if detail.reading:
            lines.append(f"  reading: {safe(', '.join(detail.reading))}")
        lines.append("headers:")
        lines += [f"  {safe(name)}: {safe(value)}" for name, value in detail.headers]
        lines.append("text (start):")
        lines += [f"  | {safe(line)}" for line in detail.excerpt.split("\n")]
    click.echo("\n".join(lines))


@mail.command("retry")
@click.argument("mail_ref", metavar="ID")
@pass_settings
def retry_command(settings: Settings, mail_ref: str) -> None:
    """Give a set-aside (failed) mail, in:N or out:N, a fresh bounded set of attempts, record that,
    and queue it."""
    direction, mail_id = _mail_ref(mail_ref)
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        try:
            retried = retry_mail(svc, direction, mail_id)
        except RetryRefused as refused:
            reasons = {"NO_SUCH_MAIL": "there is no such mail",
                       "NOT_SET_ASIDE": f"it is {refused.details.get('status')}, not set aside (failed)",
                       "BYTES_EMPTIED": "its bytes were emptied (mail retention, or `pbem player forget`)"}
            raise click.ClickException(f"{direction}:{mail_id} not retried: {reasons[refused.code]}") from refused
    bound = MAX_ATTEMPTS if direction == IN else DEFAULT_RETRY.max_attempts
    try:
        (queue_inbound if direction == IN else queue_outbound)(make_celery(settings), [mail_id])
        state = "queued"
    except (KombuError, OSError):  # committed: the sweep finds it (pending, never attempted / due)
        state = "NOT queued (broker down; the sweep will queue it)"
    click.echo(f"{direction}:{mail_id}: retry {retried.retries} recorded ({retried.attempts_before} attempts before); "
               f"up to {bound} more attempts; {state}")
