"""``pbem mail list`` and ``pbem mail show in:N|out:N``: the operator's view of received and sent mail
(:mod:`pbem.services.operator_mail`). What a sender wrote is printed escaped (:mod:`pbem.cli.output`)."""

from __future__ import annotations

import json

import click

from pbem.cli.migrated import require_migrated
from pbem.cli.output import as_json, listing, safe, when
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.services.database import Database
from pbem.services.operator_mail import IN, IN_STATUSES, OUT, OUT_STATUSES, BadMailRef, list_mail, parse_ref, show_mail

__all__ = ["list_command", "mail_argument", "show_command"]


def mail_argument(text: str) -> tuple[str, int]:
    """A mail named on the command line (``in:N``, ``out:N``) as (direction, id); a usage error otherwise."""
    try:
        return parse_ref(text)
    except BadMailRef as error:
        raise click.BadParameter(f"{text!r}: name a mail as in:N (received) or out:N (sent), as "
                                 "`pbem mail list` shows them", param_hint="ID") from error


@click.command("list")
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
    with Database.from_settings(settings) as svc:
        rows = list_mail(svc, directions=(direction,) if direction else (IN, OUT), statuses=statuses,
                         address=address, limit=limit)
    click.echo(listing(
        rows, as_json_output=as_json_output, nothing="no mail",
        headers=["ID", "STATUS", "AT (UTC)", "FROM", "TO", "TRIES", "OUTCOME", "SUBJECT/KIND"],
        cells=lambda r: [r.ref, r.status, when(r.at), r.sender or "-", r.recipient,
                         str(r.attempts) + (f" r{r.retries}" if r.retries else ""), r.what or "-",
                         r.subject or "-"]))


@click.command("show")
@click.argument("mail_ref", metavar="ID")
@click.option("--json", "as_json_output", is_flag=True, help="JSON instead of text")
@pass_settings
def show_command(settings: Settings, mail_ref: str, as_json_output: bool) -> None:
    """One mail (in:N or out:N): its record, outcome, attempts, retries, headers and the start of
    its text (escaped: nothing in it reaches the terminal as a control character)."""
    direction, mail_id = mail_argument(mail_ref)
    require_migrated(settings)
    with Database.from_settings(settings) as svc:
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
