"""What a received mail says: its reply text and the command in it.

Both the routing (:mod:`pbem.services.inbound`), the mail commands (:mod:`pbem.services.commands`)
and the table talk (:mod:`pbem.services.talk`) read a mail through here, so that its reply text is
extracted once.

**The mail answered.** pbem keeps every mail it sends (the outbox, until the retention empties it:
``PBEM_MAIL_RETENTION_DAYS``, :mod:`pbem.services.retention`), with the lines that quote removal
needs of it (:mod:`pbem.mail.quoted`). :func:`answered_mail` finds the one a reply answers — by its ``In-Reply-To``, else the newest of its ``References``, else the newest mail of
the game to that player that gave the reply address written to — and gives its lines to the reader,
which drops what of them is left in the new text (``reply_text.drop_answered``): a quote that no
pattern recognised is never read as the player's words.

**The subject.** A reply whose body has no new text may carry its command in the Subject
(:func:`subject_command`); the caller says so in the answer.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import replace

from sqlalchemy import case, select

from pbem.db.models import RAW_KEPT, OutboundMessage
from pbem.mail.addresses import BadAddress, parse_reply_address
from pbem.mail.quoted import read_quoted
from pbem.mail.reading import commands as cmd
from pbem.mail.reading.message import IncomingMail, quoted_mail
from pbem.mail.reading.reply_text import answered_lines as lines_of
from pbem.mail.reading.reply_text import extract_reply
from pbem.mail.reading.subject import subject_text

from .app import Services

#: ``session.info`` key: {player id: subject text} for the replies of this transaction whose command
#: was read from their Subject, so that the mails written to that player can say so.
READ_FROM_SUBJECT = "pbem.read_from_subject"
#: Message-IDs of a reply's ``References`` looked up (the newest), and mails of a game searched
#: for the reply address when no Message-ID is ours.
MAX_REFERENCES = 10
MAX_GAME_MAILS = 20


@functools.lru_cache(maxsize=64)
def reply_of(text: str, answered: frozenset[str] = frozenset()) -> str:
    """``extract_reply`` of a mail's text (without the lines of the mail it answers), kept for the
    few mails at hand: a seat's mail is read for its table talk (``talk.record_talk``) and then for
    its command."""
    return extract_reply(text, answered=answered)


def read_command(mail: IncomingMail, *, expected: str | None, pass_count: int,
                 language: str | None = None, suggest_from: Collection[str] | None = None) -> cmd.Command:
    """The command of a mail's reply text (``expected``: the decision the sender is asked for;
    ``suggest_from``: the cards a typo may be read as, ``cmd.parse_command``)."""
    text = reply_of(mail.text, mail.answered)
    return cmd.parse_command(text, language, expected=expected, pass_count=pass_count, suggest_from=suggest_from)


def with_answered(svc: Services, mail: IncomingMail, recipient: str) -> IncomingMail:
    """``mail`` with the lines of the mail it answers (``IncomingMail.answered``) and that mail's
    subject, when that mail is found and still kept: read from what the outbox kept for quote
    removal (``pbem.mail.quoted``), or, for a mail sent before that was kept, from its bytes; the
    mail unchanged otherwise."""
    quoted, raw = answered_mail(svc, mail, recipient)
    if quoted is not None:
        lines = read_quoted(quoted)
        return replace(mail, answered=lines.keys, answered_subject=lines.subject)
    if not raw:
        return mail
    parsed = quoted_mail(raw)
    return replace(mail, answered=lines_of(*parsed.texts), answered_subject=parsed.subject)


def subject_command(mail: IncomingMail, *, expected: str | None, pass_count: int, language: str | None = None,
                    titles: tuple[str, ...] = ()) -> tuple[cmd.Command, str] | None:
    """For a reply whose body has no new text: the command written in its Subject, and the text it
    was read from (``subject.subject_text``: without reply prefixes, the subject of the mail answered,
    ``titles`` and the game tag); None when the subject holds nothing readable."""
    text = subject_text(mail.subject, (mail.answered_subject, *titles))
    if not text:
        return None
    command = cmd.parse_command(text, language, expected=expected, pass_count=pass_count)
    if isinstance(command, cmd.Unreadable):
        return None
    return command, text


def _storable(text: str) -> bool:
    """Whether ``text`` can be a SQL parameter: no lone surrogates (an undecodable byte read
    with ``surrogateescape``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: The answered mail's kept lines, or its bytes when it has none (sent before they were kept).
_OUTBOX = OutboundMessage.__table__
_QUOTED_OR_RAW = (_OUTBOX.c.quoted, case((_OUTBOX.c.quoted.is_(None), _OUTBOX.c.raw)))


def answered_mail(svc: Services, mail: IncomingMail, recipient: str) -> tuple[str | None, bytes]:
    """What the outbox kept of our mail that ``mail`` (sent to ``recipient``) answers: its
    ``quoted`` lines (``pbem.mail.quoted``) and, when it has none, its bytes; (None, b"") when
    no such mail is found or its bytes are no longer kept.

    Only mails sent to the replying address are candidates (a reply quotes what its sender got),
    which also keeps the look-up on the outbox's (recipient, created_at) index."""
    sender = mail.from_address
    if not sender or not _storable(sender):
        return None, b""
    wanted = [mail.in_reply_to] if mail.in_reply_to else []
    wanted += [ref for ref in reversed(mail.references[-MAX_REFERENCES:]) if ref not in wanted]
    # Our Message-IDs are ASCII; a reference with surrogate-escaped bytes (an undecodable header)
    # can name none of them, and no database driver takes it as a parameter.
    wanted = [ref for ref in wanted if ref.isascii()]
    table = _OUTBOX
    with svc.kept_connections.reads() as conn:
        if wanted:
            rows = {message_id: (quoted, raw) for message_id, quoted, raw in conn.execute(
                select(table.c.message_id, *_QUOTED_OR_RAW)
                .where(table.c.recipient == sender, table.c.message_id.in_(wanted), RAW_KEPT)
            )}
            found = next((rows[ref] for ref in wanted if ref in rows), None)
            if found:
                return found[0], bytes(found[1] or b"")
        try:
            token = parse_reply_address(svc.settings.secret_key, svc.settings.mail_domain, recipient)
        except BadAddress:
            return None, b""
        needle = recipient.lower().encode("ascii", "replace")
        for quoted, raw in conn.execute(
            select(table.c.quoted, table.c.raw)
            .where(table.c.recipient == sender, table.c.game_id == token.game_id, RAW_KEPT)
            .order_by(table.c.created_at.desc(), table.c.id.desc())
            .limit(MAX_GAME_MAILS)
        ):
            raw = bytes(raw)
            head = raw[: raw.find(b"\r\n\r\n")].lower()
            if b"\nreply-to:" in head and needle in head:
                return quoted, (b"" if quoted is not None else raw)
    return None, b""
