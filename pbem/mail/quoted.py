"""What quote removal needs of a mail pbem sends, worked out once, when the mail is composed.

A reply often quotes the mail it answers in a way that no quote pattern recognises; the reader then
drops what is left of that mail's lines (``reply_text.drop_answered``, README "Playing by mail").
Those lines are the keys (``reply_text.line_key``) of the mail's text part and of its HTML part read
as text, and a reply with no new text is read from its Subject without the subject of the mail
answered. Rather than parse the answered mail again for every reply (its MIME structure and its
HTML, a millisecond or two a reply), the outbox keeps them beside the mail's bytes, in its
``quoted`` column, as one text: the subject on the first line, then one key a line. Mail retention
and ``pbem player forget`` empty that column with the bytes. A mail sent before the column existed
has none, and its bytes are read as before (``pbem.services.reading``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.mail.reading.clean import clean_subject
from pbem.mail.reading.html_text import own_html_to_text
from pbem.mail.reading.reply_text import answered_lines

__all__ = ["QuotedLines", "quoted_record", "read_quoted"]


@dataclass(frozen=True, slots=True)
class QuotedLines:
    """A sent mail as a reply to it is read against: its subject and the keys of its lines."""

    subject: str
    keys: frozenset[str]


def quoted_record(subject: str, text: str, html: str) -> str:
    """The ``quoted`` column of a mail with this Subject and these parts, as written by pbem."""
    keys = answered_lines(text, own_html_to_text(html))
    return "\n".join((clean_subject(subject)[0], *sorted(keys)))


def read_quoted(record: str) -> QuotedLines:
    """The :class:`QuotedLines` that :func:`quoted_record` wrote."""
    subject, *keys = record.split("\n")
    return QuotedLines(subject, frozenset(keys))
