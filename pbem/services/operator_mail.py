"""The operator's view of the mail (README, "Operating pbem"): ``pbem mail list|show|retry``.

Received mails (``inbound_messages``) and mails to send (``outbound_messages``) are numbered apart,
so a mail is named by its direction and id: ``in:12``, ``out:34`` (:func:`parse_ref`).

- :func:`list_mail`: both kinds, newest first, the mails set aside (``failed``) before the ones
  still ``pending`` or ``processing``, and those before the settled ones;
- :func:`show_mail`: one mail's record (status, outcome or last error, attempts and times, the
  operator's retries), its headers as sent and the start of its text, read by the hardened reader
  (:func:`pbem.mail.reading.message.read_mail`: bounded, never raises). The text is the sender's:
  the front that prints it must escape it (``pbem.cli.output``);
- :func:`retry_mail`: a set-aside mail gets a fresh bounded set of attempts (its ``attempts``
  back to 0, so the worker's ``MAX_ATTEMPTS`` or the outbox's ``RetryPolicy.max_attempts`` bound it
  again), and a ``mail_retries`` row records what it had used and what its record said; the
  caller queues it once this has committed (and the sweep finds it if that fails).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from pbem.db.models import (
    InboundMessage,
    InboundStatus,
    MailRetry,
    Move,
    OutboundMessage,
    OutboundStatus,
)
from pbem.db.session import transaction
from pbem.mail.reading.message import decode_header_value, read_mail

from .database import Database

__all__ = [
    "IN",
    "OUT",
    "BadMailRef",
    "MailDetail",
    "MailRow",
    "RetryRefused",
    "Retried",
    "list_mail",
    "parse_ref",
    "retry_mail",
    "show_mail",
]

IN, OUT = "in", "out"
#: How much of a mail's text ``show_mail`` gives, and of its headers.
EXCERPT_CHARS = 2000
EXCERPT_LINES = 40
MOST_HEADERS = 60
HEADER_CHARS = 300
#: A list's subject is read from this much of a received mail (its header section, usually).
_SUBJECT_PREFIX = 64 * 1024

_REF = re.compile(r"(in|out)\s*[:#-]?\s*(\d{1,18})")


class BadMailRef(ValueError):
    """Text that names no mail: ``in:N`` or ``out:N`` is wanted."""


def parse_ref(text: str) -> tuple[str, int]:
    """``in:12`` / ``out:34`` (also ``in12``, ``out-34``) -> (direction, id)."""
    found = _REF.fullmatch(text.strip().lower())
    if found is None:
        raise BadMailRef(text)
    return found.group(1), int(found.group(2))


def ref(direction: str, mail_id: int) -> str:
    return f"{direction}:{mail_id}"


# -- the list --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MailRow:
    """One line of ``pbem mail list``. ``sender``/``recipient``: the envelope's (a received mail)
    or ours and the player's (a mail sent); ``what``: the outcome's code, or the last error of a
    mail to send; ``subject``: a received mail's Subject, a sent mail's kind."""

    ref: str
    direction: str
    status: str
    at: datetime
    sender: str
    recipient: str
    attempts: int
    what: str
    subject: str
    retries: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"id": self.ref, "direction": self.direction, "status": self.status, "at": self.at.isoformat(),
                "from": self.sender, "to": self.recipient, "attempts": self.attempts, "outcome": self.what,
                "subject": self.subject, "retries": self.retries}


#: The order of ``pbem mail list``: set aside first, then still to do, then settled.
_SET_ASIDE = ("failed",)
_UNSETTLED = ("pending", "processing")
IN_STATUSES = tuple(s.value for s in InboundStatus)
OUT_STATUSES = tuple(s.value for s in OutboundStatus)


def _rank(column: Any, statuses: Sequence[str]) -> Any:
    """0 for set aside, 1 for still to do, 2 for settled (of the table's own ``statuses``)."""
    return case((column.in_([s for s in _SET_ASIDE if s in statuses]), 0),
                (column.in_([s for s in _UNSETTLED if s in statuses]), 1), else_=2)


def _rank_of(status: str) -> int:
    return 0 if status in _SET_ASIDE else 1 if status in _UNSETTLED else 2


def list_mail(svc: Database, *, directions: Sequence[str] = (IN, OUT), statuses: Sequence[str] = (),
              address: str | None = None, limit: int = 50) -> list[MailRow]:
    """Received and sent mail, set-aside first, then pending, then settled, newest first within
    each; at most ``limit``. ``statuses`` (any of both kinds': ``failed``, ``pending``, ``done``,
    ``sent``…) and ``address`` (a received mail's envelope sender, a sent mail's recipient)
    narrow it."""
    wanted = {s.lower() for s in statuses}
    rows: list[MailRow] = []
    with transaction(svc.session_factory) as session:
        if IN in directions and (not wanted or wanted & set(IN_STATUSES)):
            rows += _received(session, wanted, address, limit)
        if OUT in directions and (not wanted or wanted & set(OUT_STATUSES)):
            rows += _sent(session, wanted, address, limit)
    rows.sort(key=lambda r: (_rank_of(r.status), -r.at.timestamp(), r.direction, -int(r.ref.split(":")[1])))
    return rows[:limit]


def _retry_counts(session: Session, column: Any, ids: Iterable[int]) -> dict[int, int]:
    ids = list(ids)
    if not ids:
        return {}
    counts: dict[int, int] = {}
    for mail_id in session.scalars(select(column).where(column.in_(ids))):
        counts[mail_id] = counts.get(mail_id, 0) + 1
    return counts


def _received(session: Session, wanted: set[str], address: str | None, limit: int) -> list[MailRow]:
    table = InboundMessage.__table__
    query = select(table.c.id, table.c.status, table.c.received_at, table.c.mail_from, table.c.recipient,
                   table.c.attempts, table.c.outcome, table.c.raw)
    if wanted:
        query = query.where(table.c.status.in_(sorted(wanted & set(IN_STATUSES))))
    if address:
        query = query.where(func.lower(table.c.mail_from) == address.strip().lower())
    query = query.order_by(_rank(table.c.status, IN_STATUSES), table.c.received_at.desc(), table.c.id.desc()).limit(limit)
    found = session.execute(query).all()
    retries = _retry_counts(session, MailRetry.inbound_id, (r.id for r in found))
    return [MailRow(ref=ref(IN, r.id), direction=IN, status=str(r.status), at=r.received_at, sender=r.mail_from,
                    recipient=r.recipient, attempts=r.attempts, what=str((r.outcome or {}).get("code", "")),
                    subject=_subject(bytes(r.raw or b"")), retries=retries.get(r.id, 0))
            for r in found]


def _sent(session: Session, wanted: set[str], address: str | None, limit: int) -> list[MailRow]:
    table = OutboundMessage.__table__
    query = select(table.c.id, table.c.status, table.c.created_at, table.c.recipient, table.c.kind,
                   table.c.attempts, table.c.last_error)
    if wanted:
        query = query.where(table.c.status.in_(sorted(wanted & set(OUT_STATUSES))))
    if address:
        query = query.where(table.c.recipient == address.strip().lower())
    query = query.order_by(_rank(table.c.status, OUT_STATUSES), table.c.created_at.desc(), table.c.id.desc()).limit(limit)
    found = session.execute(query).all()
    retries = _retry_counts(session, MailRetry.outbound_id, (r.id for r in found))
    return [MailRow(ref=ref(OUT, r.id), direction=OUT, status=str(r.status), at=r.created_at, sender="",
                    recipient=r.recipient, attempts=r.attempts, what=(r.last_error or "")[:200], subject=r.kind,
                    retries=retries.get(r.id, 0))
            for r in found]


def _subject(raw: bytes) -> str:
    """A received mail's Subject, decoded (as the sender wrote it: the front escapes it), from its
    header section only (at most ``_SUBJECT_PREFIX`` bytes of it); "" when it has none, or its bytes
    were emptied by retention."""
    head = raw[:_SUBJECT_PREFIX]
    for separator in (b"\r\n\r\n", b"\n\n"):
        end = head.find(separator)
        if end >= 0:
            head = head[: end + len(separator)]
            break
    for name, value in BytesHeaderParser(policy=compat32).parsebytes(head).raw_items():
        if name.lower() == "subject":
            return decode_header_value(value)[:200]
    return ""


# -- one mail --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MailDetail:
    """What ``pbem mail show`` prints: the record (``record``: JSON-able facts, times as ISO text),
    the operator's retries, the headers as sent and the start of the text (the sender's words:
    escape them before printing them on a terminal)."""

    ref: str
    record: dict[str, Any]
    retries: list[dict[str, Any]]
    headers: list[tuple[str, str]]
    excerpt: str
    kept: bool  # the mail's bytes are still kept (retention empties them: README, "Running in production")
    reading: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        return {"id": self.ref, **self.record, "retries": self.retries,
                "headers": [list(h) for h in self.headers], "excerpt": self.excerpt, "bytes_kept": self.kept,
                "reading": list(self.reading)}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def show_mail(svc: Database, direction: str, mail_id: int) -> MailDetail | None:
    """One mail's record, headers and the start of its text; None when there is no such mail."""
    with transaction(svc.session_factory) as session:
        if direction == IN:
            row = session.get(InboundMessage, mail_id)
            if row is None:
                return None
            record = {
                "direction": IN, "status": str(row.status), "source": str(row.source),
                "envelope_from": row.mail_from, "envelope_to": row.recipient, "message_key": row.message_key,
                "received_at": _iso(row.received_at), "attempts": row.attempts,
                "attempted_at": _iso(row.attempted_at), "processed_at": _iso(row.processed_at),
                "outcome": row.outcome,
                "moves": list(session.scalars(select(Move.id).where(Move.inbound_id == row.id).order_by(Move.id))),
                "answers": [ref(OUT, i) for i in session.scalars(
                    select(OutboundMessage.id).where(OutboundMessage.inbound_id == row.id)
                    .order_by(OutboundMessage.id))],
            }
            retries = session.scalars(select(MailRetry).where(MailRetry.inbound_id == row.id).order_by(MailRetry.id))
            envelope = row.mail_from
        else:
            row = session.get(OutboundMessage, mail_id)
            if row is None:
                return None
            record = {
                "direction": OUT, "status": str(row.status), "kind": row.kind, "to": row.recipient,
                "game": row.game_id, "player": row.player_id, "message_id": row.message_id,
                "created_at": _iso(row.created_at), "attempts": row.attempts, "last_error": row.last_error,
                "next_attempt_at": _iso(row.next_attempt_at), "sent_at": _iso(row.sent_at),
                "answering": ref(IN, row.inbound_id) if row.inbound_id is not None else None,
            }
            retries = session.scalars(select(MailRetry).where(MailRetry.outbound_id == row.id)
                                      .order_by(MailRetry.id))
            envelope = None
        retried = [{"at": _iso(r.retried_at), "attempts_before": r.attempts, "before": r.before} for r in retries]
        raw = bytes(row.raw or b"")
    if not raw:
        return MailDetail(ref(direction, mail_id), record, retried, [], "", kept=False)
    mail = read_mail(raw, envelope_sender=envelope)
    headers = [(name[:HEADER_CHARS], decode_header_value(value)[:HEADER_CHARS])
               for name, value in mail.raw_headers[:MOST_HEADERS]]
    lines = mail.text[:EXCERPT_CHARS].split("\n")[:EXCERPT_LINES]
    return MailDetail(ref(direction, mail_id), record, retried, headers, "\n".join(lines), kept=True,
                      reading=mail.problems)


# -- a retry ---------------------------------------------------------------------------------------


class RetryRefused(Exception):
    """The mail cannot be retried: ``code`` (``NO_SUCH_MAIL``, ``NOT_SET_ASIDE`` with its
    ``status``, ``BYTES_EMPTIED``)."""

    def __init__(self, code: str, **details: Any) -> None:
        self.code = code
        self.details = details
        super().__init__(code, details)


@dataclass(frozen=True)
class Retried:
    """A mail given a fresh set of attempts: queue ``mail_id`` of ``direction`` now."""

    direction: str
    mail_id: int
    attempts_before: int
    retries: int  # the operator's retries of this mail so far, this one included


def retry_mail(svc: Database, direction: str, mail_id: int) -> Retried:
    """Give a set-aside mail a fresh bounded set of attempts and record that it did, in one
    transaction; :class:`RetryRefused` when it is not set aside (or no longer has its bytes).

    A received mail goes back to ``pending`` with no attempt counted (``inbound.MAX_ATTEMPTS`` more),
    its outcome saying it was retried; a mail to send goes back to ``pending``, due now, with no
    attempt counted (the outbox's ``RetryPolicy.max_attempts`` more, with the same backoff)."""
    now = svc.clock.now()
    with transaction(svc.session_factory) as session:
        model = InboundMessage if direction == IN else OutboundMessage
        row = session.get(model, mail_id, with_for_update=True)
        if row is None:
            raise RetryRefused("NO_SUCH_MAIL", mail=ref(direction, mail_id))
        if row.status != "failed":
            raise RetryRefused("NOT_SET_ASIDE", mail=ref(direction, mail_id), status=str(row.status))
        if not row.raw:
            raise RetryRefused("BYTES_EMPTIED", mail=ref(direction, mail_id))
        attempts = row.attempts
        column = MailRetry.inbound_id if direction == IN else MailRetry.outbound_id
        earlier = len(session.scalars(select(MailRetry.id).where(column == mail_id)).all())
        if direction == IN:
            before: dict[str, Any] = dict(row.outcome or {})
            row.status = InboundStatus.PENDING
            row.outcome = {"code": "RETRIED", "retries": earlier + 1, "before": before.get("code")}
            row.attempted_at = None
            row.processed_at = None
            session.add(MailRetry(inbound_id=mail_id, retried_at=now, attempts=attempts, before=before))
        else:
            before = {"last_error": row.last_error}
            row.status = OutboundStatus.PENDING
            row.next_attempt_at = now
            session.add(MailRetry(outbound_id=mail_id, retried_at=now, attempts=attempts, before=before))
        row.attempts = 0
    return Retried(direction, mail_id, attempts, earlier + 1)
