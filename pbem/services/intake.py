"""Intake: the one way a received mail enters pbem, whichever front received it.

The SMTP front, the webhooks and ``pbem mail inject`` all call ``store_inbound``
inside a transaction and queue the returned ids only *after* that transaction
commits (``workers.queueing.queue_inbound``), so a worker never looks for a row
that is not there yet, and a mail that could not be stored is never answered
with success.

One row is stored per envelope recipient (never per header recipient: headers
are the sender's to forge), keyed by the Message-ID, or ``sha256:<hex>`` of the
raw bytes when there is none.  The key and recipient are UNIQUE together, and
the insert is ``INSERT .. ON CONFLICT DO NOTHING`` on both databases: a mail
delivered twice, or by both SMTP and a webhook, or by two fronts at the same
moment, is stored (and so processed) once, without a race between a "does it
exist?" query and the insert.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from kombu.exceptions import KombuError
from sqlalchemy.orm import Session, sessionmaker

from pbem.db.models import ADDRESS_LENGTH as MAILBOX_LENGTH
from pbem.db.models import MESSAGE_ID_LENGTH, InboundMessage, InboundSource
from pbem.db.session import KeptConnections, single_statement

__all__ = [
    "Received",
    "accepted_recipient",
    "envelope_address_problem",
    "message_key",
    "normalise_recipients",
    "receive_inbound",
    "store_inbound",
]

log = logging.getLogger("pbem.intake")

_WHITESPACE = re.compile(r"\s+")


def message_key(raw: bytes) -> str:
    """The deduplication key of a raw message: its Message-ID, else a hash.

    The Message-ID is taken as written (unfolded, whitespace removed), since the
    same mail delivered twice carries the same header byte for byte.  A missing,
    empty or absurdly long one falls back to ``sha256:<hex>`` of the raw bytes,
    so identical bytes still deduplicate.
    """
    block = _header_block(raw)
    value = _message_id_scanned(block)
    if value is _UNSURE:
        value = _message_id_parsed(block)
    if value is not None:
        key = _WHITESPACE.sub("", str(value))
        if key and len(key) <= MESSAGE_ID_LENGTH:
            return key
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def _message_id_parsed(block: bytes) -> Any:
    """The first Message-ID header's value as the standard library's header parser reads it.

    compat32 keeps the header text as is, whatever its syntax: a malformed
    Message-ID is still a stable key, and parsing can never fail on it.
    """
    return BytesHeaderParser(policy=compat32).parsebytes(block).get("Message-ID")


_UNSURE = object()
_FIELD_NAME = re.compile(rb"[\x21-\x39\x3b-\x7e]*:")  # the email package's headerRE, in bytes
_NON_ASCII = re.compile(rb"[^\x00-\x7f]")


def _message_id_scanned(block: bytes) -> str | None | object:
    """What ``_message_id_parsed`` returns, found by scanning the lines: the value of the first
    ``Message-ID`` field (its folded lines joined), None when the header section has none, or
    ``_UNSURE`` for what the scan leaves to the parser (a bare CR, a "From " line, a non-ASCII
    value).  The parser is the reference: this follows its rules (``email.feedparser``: the
    header section ends at the first line that is neither a field nor a continuation; a
    continuation with no field before it, and a line starting with ':', are skipped) for the
    mails that really arrive, about ten times cheaper."""
    if block.count(b"\r") != block.count(b"\r\n"):
        return _UNSURE  # a bare CR ends a line for the parser
    found: list[bytes] | None = None
    for line in block.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            if found is not None:
                found.append(line)
            continue
        if found is not None:
            break  # the field found is complete
        if line.startswith(b"From "):
            return _UNSURE
        name = _FIELD_NAME.match(line)
        if name is None:
            break  # the blank line, or one the parser takes as the start of the body
        if line[: name.end() - 1].lower() == b"message-id":
            found = [line[name.end():].lstrip(b" \t")]
    if found is None:
        return None
    value = b"".join(found)
    if _NON_ASCII.search(value):
        return _UNSURE  # the parser makes a Header of it
    return value.decode("ascii").rstrip("\r\n")


def _header_block(raw: bytes) -> bytes:
    """The header section of ``raw`` with its blank line (all of ``raw`` if it has none): the
    header parser then does not split the body into lines only to skip them."""
    for separator in (b"\r\n\r\n", b"\n\n"):
        end = raw.find(separator)
        if end >= 0:
            return raw[: end + len(separator)]
    return raw


def accepted_recipient(address: str, mail_domain: str) -> str | None:
    """``address`` normalised (lowercase) when it is ours to receive, else None: an address of
    ``mail_domain``, or a bare ``postmaster`` (RFC 5321 §4.5.1 says it must be accepted).  The
    SMTP front judges RCPT TO with it, and ``pbem mail inject`` its recipients."""
    address = address.strip().lower()
    if address == "postmaster":
        return f"postmaster@{mail_domain}"
    local, at, domain = address.rpartition("@")
    if not at or not local or domain != mail_domain.lower():
        return None
    return address


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def envelope_address_problem(address: str) -> str | None:
    """Why an envelope address (MAIL FROM, RCPT TO, or a webhook's envelope) can never be stored,
    or None.  A front refuses such a mail *permanently* (SMTP 553, HTTP 400): storing would fail
    the same way on every try (PostgreSQL refuses a NUL in text; a lone surrogate cannot be
    encoded), and SQLite would store what no reply can go back to.

    - ``CONTROL_CHARACTER``: a NUL, CR, LF or other control character (RFC 5321 §4.1.2 allows
      none in a path);
    - ``TOO_LONG``: longer than a mailbox can be (RFC 5321 §4.5.3.1: 64 + 1 + 255);
    - ``NOT_UTF8``: text that is not Unicode (undecodable bytes the front kept as surrogates).
    """
    if _CONTROL.search(address):
        return "CONTROL_CHARACTER"
    if len(address) > MAILBOX_LENGTH:
        return "TOO_LONG"
    try:
        address.encode("utf-8")
    except UnicodeEncodeError:
        return "NOT_UTF8"
    return None


def normalise_recipients(recipients: Iterable[str]) -> list[str]:
    """Envelope recipients lowercased and stripped, duplicates dropped, order kept."""
    seen: dict[str, None] = {}
    for recipient in recipients:
        address = recipient.strip().lower()
        if address:
            seen.setdefault(address, None)
    return list(seen)


def store_inbound(
    session: Session,
    *,
    raw: bytes,
    mail_from: str,
    recipients: list[str],
    source: str,
    received_at: datetime,
) -> list[int]:
    """Store ``raw`` once per envelope recipient; return the ids of rows newly stored.

    Runs inside the caller's transaction (the caller commits, then queues the
    ids).  A recipient that already has a row for this message key is skipped
    silently: its id is not returned, so it is not queued again.
    """
    prepared = _insert_statement(session.get_bind().dialect.name, raw=raw, mail_from=mail_from,
                                 recipients=recipients, source=source, received_at=received_at)
    return _run_insert(session.connection(), prepared)


def _insert_statement(
    dialect: str,
    *,
    raw: bytes,
    mail_from: str,
    recipients: list[str],
    source: str,
    received_at: datetime,
) -> tuple[Any, list[dict[str, Any]]] | None:
    """The INSERT and its rows, one per recipient (None: no recipient)."""
    key = message_key(raw)
    origin = InboundSource(source)
    rows = [
        {
            "message_key": key,
            "recipient": recipient,
            "mail_from": mail_from.strip(),
            "raw": raw,
            "source": origin,
            "received_at": received_at,
        }
        # Sorted, so two fronts inserting the same mail lock its rows in the same
        # order (PostgreSQL would otherwise be free to deadlock them).
        for recipient in sorted(normalise_recipients(recipients))
    ]
    if not rows:
        return None
    return _insert_for(dialect), rows


_INBOUND = InboundMessage.__table__


@functools.cache
def _insert_for(dialect: str) -> Any:
    """``INSERT .. ON CONFLICT DO NOTHING RETURNING id`` on the table, built once per dialect
    (Core, executed with the rows as parameters: no statement to build and no ORM bookkeeping
    per received mail)."""
    if dialect == "postgresql":
        insert = postgresql.insert
    elif dialect == "sqlite":
        insert = sqlite.insert
    else:
        raise NotImplementedError(f"store_inbound supports PostgreSQL and SQLite, not {dialect}")
    return (
        insert(_INBOUND)
        .on_conflict_do_nothing(index_elements=["message_key", "recipient"])
        .returning(_INBOUND.c.id)
    )


def _run_insert(conn: Any, prepared: tuple[Any, list[dict[str, Any]]] | None) -> list[int]:
    if prepared is None:
        return []
    statement, rows = prepared
    if len(rows) == 1:  # the usual mail: one execute, not SQLAlchemy's executemany path
        return list(conn.execute(statement, rows[0]).scalars())
    return sorted(conn.execute(statement, rows).scalars())


@dataclass(frozen=True)
class Received:
    """What ``receive_inbound`` did: the rows it stored, and whether they were queued."""

    ids: list[int]
    queued: bool


def receive_inbound(
    session_factory: sessionmaker[Session],
    *,
    raw: bytes,
    mail_from: str,
    recipients: list[str],
    source: str,
    received_at: datetime,
    queue: Callable[[list[int]], None],
    connections: KeptConnections | None = None,
) -> Received:
    """Store a received mail in its own transaction, then queue the new rows.

    The fronts' whole job in one call.  A failure to *store* propagates (the
    front must then refuse the mail: SMTP 451, HTTP 503), while a failure to
    *queue* after the commit is only logged: the rows are safe and the worker's
    periodic sweep re-queues inbound rows left pending.  ``connections``: the
    calling thread's kept connection, rather than one from the pool.
    """
    # One statement, so it commits as it runs (one round trip on PostgreSQL).
    statement = connections.single_statement() if connections else single_statement(session_factory)
    with statement as conn:
        ids = _run_insert(conn, _insert_statement(conn.dialect.name, raw=raw, mail_from=mail_from,
                                                  recipients=recipients, source=source,
                                                  received_at=received_at))
    if not ids:
        return Received(ids=[], queued=True)
    try:
        queue(ids)
    except (KombuError, OSError):
        log.exception("inbound %s stored but not queued; the sweep will queue it", ids)
        return Received(ids=ids, queued=False)
    return Received(ids=ids, queued=True)
