"""``pbem mail retry in:N|out:N``: a set-aside mail gets a fresh bounded set of attempts (recorded by
:mod:`pbem.services.operator_mail`) and is queued."""

from __future__ import annotations

import click
from kombu.exceptions import KombuError

from pbem.cli.mail.listing import mail_argument
from pbem.cli.migrated import require_migrated
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.services.database import Database
from pbem.services.inbound import MAX_ATTEMPTS
from pbem.services.operator_mail import IN, RetryRefused, retry_mail
from pbem.services.outbox import DEFAULT_RETRY
from workers import make_celery
from workers.queueing import queue_inbound, queue_outbound

__all__ = ["retry_command"]


@click.command("retry")
@click.argument("mail_ref", metavar="ID")
@pass_settings
def retry_command(settings: Settings, mail_ref: str) -> None:
    """Give a set-aside (failed) mail, in:N or out:N, a fresh bounded set of attempts, record that,
    and queue it."""
    direction, mail_id = mail_argument(mail_ref)
    require_migrated(settings)
    with Database.from_settings(settings) as svc:
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
