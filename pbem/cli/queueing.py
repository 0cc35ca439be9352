"""Queueing the mails a command wrote, for the workers to send (``workers.queueing``)."""

from __future__ import annotations

import logging

from kombu.exceptions import KombuError

from pbem.config import Settings
from workers import make_celery
from workers.queueing import queue_outbound

__all__ = ["queue_mails"]

log = logging.getLogger("pbem.cli")


def queue_mails(settings: Settings, ids: list[int]) -> None:
    """Queue the outbox rows for sending; if the broker is down the sweep sends them later."""
    if not ids:
        return
    try:
        queue_outbound(make_celery(settings), ids)
    except (KombuError, OSError) as error:  # the rows are committed: the periodic sweep will send them
        log.warning("could not queue %d mails now (%s); the sweep will send them", len(ids), error)
