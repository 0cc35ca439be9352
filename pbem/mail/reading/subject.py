"""What a player wrote in a reply's Subject, for a reply whose body has no new text.

Some players answer by editing the subject ("QS", "Re: [Hearts #42] Friday table - QS") and send
an empty body. :func:`subject_text` takes from a subject what the player added: without the reply
and forward prefixes of any language, repeated or counted (``Re:``, ``AW:``, ``SV:``, ``RES:``,
``Fwd:``, ``WG:``, ``TR:``, ``Odp:``, ``R:``, ``Antw:``, ``Re[2]:``, ``RE (3):``…), without pbem's
own subject (the subject of the mail answered, the game's title) and without the game tag
(``[Hearts #42]``, ``[Copas #42]``: any bracketed word and ``#`` number). The services read the
rest as a command only when the body has no new text (README, "Playing by mail").

Linear: the patterns are anchored or bounded, and only :data:`MAX_SUBJECT_CHARS` are read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

#: Characters of a subject read (a subject is cleaned to far fewer when read: ``clean.py``).
MAX_SUBJECT_CHARS: Final = 1000

#: Reply and forward prefixes, by language (folded comparison: case is ignored).
REPLY_PREFIXES: Final = (
    # English, and what most clients write whatever their language
    "re", "fw", "fwd", "fwds",
    # German, Dutch, Scandinavian, Finnish, Baltic
    "aw", "wg", "antw", "antwort", "doorst", "sv", "vs", "vb", "vl", "fs", "ynt", "atb", "ats", "pd",
    # Romance
    "res", "enc", "rv", "rif", "r", "i", "tr", "ref", "réf", "rép", "rep", "fwd",
    # Slavic, Hungarian, Greek, Turkish
    "odp", "odg", "pfw", "přep", "fw", "továbbítás", "vá", "απ", "σχετ", "πρθ", "yn", "ilt",
    # Chinese, Japanese, Korean
    "回复", "答复", "回覆", "转发", "轉寄", "转寄", "返信", "転送", "답장", "회신", "전달",
)
_PREFIX: Final = re.compile(
    r"^(?:\s*(?:" + "|".join(sorted({re.escape(p) for p in REPLY_PREFIXES}, key=len, reverse=True))
    + r")\s?(?:[\[(]\d{1,4}[\])])?\s*[:：]\s*)+",
    re.IGNORECASE,
)
#: A prefix left inside, once pbem's subject is cut out ("QS Re: [Hearts #42] …" gives "QS Re:").
_INNER_PREFIX: Final = re.compile(
    r"(?<!\S)(?:" + "|".join(sorted({re.escape(p) for p in REPLY_PREFIXES}, key=len, reverse=True))
    + r")\s?(?:[\[(]\d{1,4}[\])])?\s*[:：](?!\S)",
    re.IGNORECASE,
)
#: A game tag: "[Hearts #42]", "[Copas #42]", "[Inimi #7]" (a bracketed word or two and a number).
_TAG: Final = re.compile(r"\[[^\[\]\n]{0,40}#\s?\d{1,12}\]")


def subject_text(subject: str, ours: Sequence[str] = ()) -> str:
    """What the player wrote in ``subject``: no reply prefixes, none of ``ours`` (pbem's own
    subjects and titles, longest first, wherever they stand), no game tag; spaces collapsed."""
    text = _PREFIX.sub("", subject[:MAX_SUBJECT_CHARS])
    for own in sorted((o.strip() for o in ours if o and o.strip()), key=len, reverse=True):
        start = text.casefold().find(own.casefold())
        if start >= 0 and len(own.casefold()) == len(own):  # spans agree: cut it out
            text = text[:start] + " " + text[start + len(own):]
    text = _INNER_PREFIX.sub(" ", _PREFIX.sub("", _TAG.sub(" ", text).strip()))
    return " ".join(text.split()).strip(" -–—:|,;")
