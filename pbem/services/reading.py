"""What a received mail says: its reply text and the command in it.

Both the routing (:mod:`pbem.services.inbound`), the mail commands (:mod:`pbem.services.commands`)
and the table talk (:mod:`pbem.services.talk`) read a mail through here, so that its reply text is
extracted once.
"""

from __future__ import annotations

import functools

from pbem.mail.reading import commands as cmd
from pbem.mail.reading.message import IncomingMail
from pbem.mail.reading.reply_text import extract_reply


@functools.lru_cache(maxsize=64)
def reply_of(text: str) -> str:
    """``extract_reply`` of a mail's text, kept for the few mails at hand: a seat's mail is read
    for its table talk (``talk.record_talk``) and then for its command."""
    return extract_reply(text)


def read_command(mail: IncomingMail, *, expected: str | None, pass_count: int,
                 language: str | None = None) -> cmd.Command:
    """The command of a mail's reply text (``expected``: the decision the sender is asked for)."""
    text = reply_of(mail.text)
    return cmd.parse_command(text, language, expected=expected, pass_count=pass_count)
