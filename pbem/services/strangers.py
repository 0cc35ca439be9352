"""What an address that no player has verified may receive: the one rule against backscatter.

Anyone can put any address in a From header, so a mail answered to its sender can be a mail sent
to a stranger in someone else's name.  An address is *verified* once a player has taken a seat by
replying from it (``inbound.is_verified``).  To an unverified address pbem sends (README, "What a
stranger may receive"):

- at most one answer per mail sent to ``new@``: the invitation to confirm the sender's own seat, or
  what was wrong with the request; and to a new-game text sent to another address of the domain,
  one answer saying where to send it;
- no more than ``PBEM_INVITES_PER_DAY`` such answers to one address in any 24 hours, and no more
  than ``PBEM_STRANGER_ANSWERS_PER_HOUR`` to all unverified addresses together in any hour;
- nothing else for mail to any other address (a seat's, an invitation's with a forged sender,
  ``help@``…), and never anything for an auto-reply or a bounce (``pbem.mail.reading.autoreply``).

Every answer sent is a ``stranger_answers`` row, which is what the caps count.  The caps are
counted and the answer recorded under one lock (on PostgreSQL a transaction-level advisory lock; a
SQLite transaction begins IMMEDIATE and so holds the write lock already), so two workers answering
at the same moment never pass a cap together.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from pbem.db.models import StrangerAnswer
from pbem.mail import context as mc

from .app import Services
from .mailing import QueuedMail, queue_mail

__all__ = ["may_answer_stranger", "record_stranger_answer", "answer_stranger", "stranger_recipient"]


#: The advisory lock key (PostgreSQL) under which the answers to unverified addresses are counted.
STRANGER_ANSWERS_LOCK = 0x53545241  # "STRA"


def may_answer_stranger(session: Session, svc: Services, address: str, now: datetime) -> bool:
    """Whether one more answer to the unverified ``address`` stays within both caps.  Takes the
    lock that keeps the count true until this transaction ends (and records its answer)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": STRANGER_ANSWERS_LOCK})
    settings = svc.settings
    to_address = session.scalar(
        select(func.count()).select_from(StrangerAnswer).where(
            StrangerAnswer.address == address, StrangerAnswer.sent_at > now - timedelta(days=1))
    ) or 0
    if to_address >= settings.invites_per_day:
        return False
    this_hour = session.scalar(
        select(func.count()).select_from(StrangerAnswer).where(StrangerAnswer.sent_at > now - timedelta(hours=1))
    ) or 0
    return this_hour < settings.stranger_answers_per_hour


def record_stranger_answer(session: Session, address: str, kind: str, now: datetime,
                           inbound_id: int | None) -> None:
    """Count an answer sent to the unverified ``address``."""
    session.add(StrangerAnswer(address=address, kind=kind, sent_at=now, inbound_id=inbound_id))


def stranger_recipient(svc: Services, address: str, name: str) -> mc.Recipient:
    """The recipient of an answer to an address with no player behind it (the server's language)."""
    return mc.Recipient(name=name or address.split("@")[0], address=address,
                        language=svc.settings.default_language, timezone="UTC")


def answer_stranger(session: Session, svc: Services, recipient: mc.Recipient, detail: object, now: datetime,
                    inbound_id: int, thread: Sequence[str] | None = None,
                    reply_to: str | None = None) -> list[QueuedMail]:
    """The one answer a mail to ``new@`` (or a new game's request sent to another address of the
    domain) from an unverified address may get, if the caps allow (else nothing); counted.
    ``thread``: the request's (``mailing.answer_thread``); ``reply_to``: where a reply should go."""
    if not may_answer_stranger(session, svc, recipient.address, now):
        return []
    ctx = mc.MailContext(recipient=recipient, detail=detail)
    mail = queue_mail(session, svc, ctx, player=None, game=None, now=now, inbound_id=inbound_id, thread=thread,
                      reply_to=reply_to)
    if mail is None:
        return []
    record_stranger_answer(session, recipient.address, ctx.kind, now, inbound_id)
    return [mail]
