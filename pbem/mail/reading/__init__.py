"""Reading inbound mail, all pure: raw bytes -> :class:`IncomingMail` -> new reply text -> command.

The pieces, each usable alone:

* :func:`read_mail` (``message.py``): decoding, any charset and transfer encoding, HTML to text;
* :func:`classify` (``autoreply.py``): bounces, auto-replies and bulk mail, never to be answered;
* :func:`extract_reply` (``reply_text.py``): the new text, without quotes and signatures;
* :func:`parse_command` (``commands.py``): that text to a command, or a refusal with a reason code.

:func:`read_command` chains the last two for a decoded mail.

None of them raises, whatever the bytes, and each is linear in its input and reads a bounded
prefix of it (the bounds are documented where they apply). What :func:`read_mail` had to
degrade is in ``IncomingMail.problems``; display names and subjects are cleaned there for
echoing into headers, by the rules of ``clean.py``, which the CLI uses too.
"""

from __future__ import annotations

from collections.abc import Sequence

from .autoreply import Bounce, Verdict, bounce_details, classify
from .commands import (
    Abort, Accept, Ambiguous, Autopilot, Command, Decline, Games, Help, History, MoonChoice,
    NewGame, Pass, Pause, Play, Queue, Resign, Resume, Rules, Say, Status, Unreadable, Vacation,
    parse_command, table_talk,
)
from .message import DeliveryReport, IncomingMail, RecipientStatus, read_mail
from .reply_text import DEFAULT_LANGUAGES, extract_reply


def read_command(
    mail: IncomingMail,
    *,
    expected: str | None = None,
    pass_count: int = 3,
    language_hint: str | None = None,
    languages: Sequence[str] = DEFAULT_LANGUAGES,
) -> Command:
    """The command in the new text of ``mail`` (see :func:`parse_command` for the arguments),
    without what is left of the mail it answers (``mail.answered``)."""
    return parse_command(
        extract_reply(mail.text, languages, mail.answered), language_hint, expected=expected,
        pass_count=pass_count,
    )


__all__ = [
    "Abort", "Accept", "Ambiguous", "Autopilot", "Bounce", "Command", "Decline", "DeliveryReport",
    "Games", "Help", "History", "IncomingMail", "MoonChoice", "NewGame", "Pass", "Pause", "Play",
    "Queue", "RecipientStatus", "Resign", "Resume", "Rules", "Say", "Status", "Unreadable",
    "Vacation", "Verdict", "bounce_details", "classify", "extract_reply", "parse_command",
    "read_command", "read_mail", "table_talk",
]
