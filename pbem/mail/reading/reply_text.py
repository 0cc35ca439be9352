"""The new text of a reply: what the player wrote, without the quoted earlier mail or a signature.

The maintained library ``mail-parser-reply`` (``mailparser_reply``) splits a body into replies at
attribution lines ("On … wrote:") and header blocks ("From: … Sent: …") and strips signatures
and disclaimers from each. This module keeps its splitting (``EmailMessage.read``) and its
per-reply ``body``, and gives it our own patterns (:data:`LANGUAGES`) through a subclass:

* **Portuguese and Romanian**, which it lacks: "Em … escreveu:", "… escreveu no dia …:",
  "În/Pe/La … a scris:", Outlook blocks with "De:/Enviado:/Para:/Assunto:" and
  "De la:/Trimis:/Către:/Subiect:", "-----Mensagem original-----", "-----Mesaj original-----",
  "Enviado do meu iPhone", "Trimis de pe iPhone-ul meu", sign-offs;
* a **generic** attribution (any "… wrote/escreveu/a scris …:" line followed by quoted text);
* **fixes** for what it got wrong on game replies: its English sign-offs (``Thanks,``, ``Best,``)
  cut everything from such a line on, even ``Thanks, QS please`` (here a sign-off counts only
  alone on its line); its two-line "On … wrote:" pattern swallows a player's own line starting
  with "On" just above the attribution; its phone signatures allow only plain words after
  "Sent from my" (not "iPhone-ul meu"); its default signature rule cuts at any ``- word`` line
  (a pass written as a list) — ``keep_hyphen_lists`` is set; ``latest_reply`` keeps the
  signature, so the first reply's ``body`` is used;
* **speed**: its patterns are rebuilt for every message and, not being anchored, tried at every
  character (about 0.4 µs per character, some 1.5 ms for a reply quoting a game mail). Here each
  pattern is anchored at line starts and compiled once per language set.

Then, on the library's result: quoted (``>``) lines still present are dropped, so interleaved
replies keep only the new lines; when nothing new is above the quote (bottom-posting), the
unquoted text below it is taken.

**Linear time.** Only the first :data:`MAX_REPLY_CHARS` characters of a body are read (cut at a
line end): the new text of a reply is above the quote, or below a quoted game mail of a few
kilobytes, never a quarter of a megabyte down. The patterns are written so that no line makes
them backtrack more than once over it: quote marks (:data:`_Q`) are matched possessively, and a
test that a line holds something ("a digit", "escreveu no dia") is a lookahead or an atomic
group, never a greedy ``[^\n]*`` that the engine would retry at every earlier position.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Final

from mailparser_reply.constants import MAIL_LANGUAGES
from mailparser_reply.parser import EmailMessage, EmailReply

#: Characters of a body that are read (see the module docstring).
MAX_REPLY_CHARS: Final = 256 * 1024
_Q: Final = r"(?:> ?)*+"  # quote marks before a header line (iOS quotes the attribution too)


def _attribution(starts: str, verb: str) -> str:
    """An attribution line "<start> <date…> <name> <verb>:", on one line or wrapped onto two.

    Wrapped (Gmail breaks long ones), the first line must hold a digit (the date) and the second
    must not start another attribution, so a player's own line starting with the same word is
    never swallowed.
    """
    start = _Q + r"(?:" + starts + r")\s"
    return (
        r"(" + start + r"(?:[^\n]*?|(?=[^\n]*\d)[^\n]*+\n(?!" + start + r")" + _Q + r"[^\n]*?)"
        + r"\s?" + verb.replace(" ", r"\s") + r" ?:)$"  # Gmail may wrap inside "a scris"
    )


def _header_block(labels: str) -> str:
    """An Outlook-style block: two or more "Label: value" lines (a value may sit on the next line)."""
    line = _Q + r"[* ]*+(?:" + labels + r")[ *]*+:[ *]*+(?:\n(?=[^\n]))?[^\n]*+(?:\n|\Z)"
    return r"((?:" + line + r"){2,})"


def _separator(words: str) -> str:
    return r"(" + _Q + r"-{2,} ?(?:" + words + r") ?-{2,})[ \t]*$"


def _sent_from(*phrases: str) -> list[str]:
    # A phone or app signature line: the phrase and a few more characters, alone on its line.
    return [p + r"[^\n]{0,60}$" for p in phrases]


def _signoffs(*words: str) -> list[str]:
    # A sign-off counts only alone on its line (optionally with , . !), unlike the library's.
    return [w + r"[,.!]?[ \t]*$" for w in words]


#: Patterns by language. Header patterns are matched at line starts and have exactly one
#: capturing group, the whole header (the library ``findall``\ s them and looks for the text).
LANGUAGES: Final[dict[str, dict[str, list[str]]]] = {
    "en": {
        "wrote_header": [_attribution(r"On", r"wrote")],
        "from_header": [_header_block(r"From|Sent|To|Subject|Date|Cc|Organization")],
        "signatures": _signoffs(
            "Best regards", "Kind regards", "Regards", "Best wishes", "Thanks", "Thank you",
            "Many thanks", "Cheers", "Best", "All the best", "Yours", "Sincerely",
        ),
        "sent_from": _sent_from(
            "Sent from my", "Sent from Mail for", "Sent from Outlook", "Get Outlook for", "Sent via",
            "Sent from Yahoo Mail", "Sent from Proton Mail",
        ),
        "disclaimers": [r"CAUTION:", r"Disclaimer:", r"Confidentiality notice:", r"CONFIDENTIALITY:"],
    },
    "pt": {
        "wrote_header": [
            # Gmail "Em qua., 5 de jun. de 2024 às 14:03, Bob <b@x> escreveu:", Apple "Em 5 de
            # jun. de 2024, à(s) 14:03, …", pt-PT "A 05/06/2024, às 14:03, …", Thunderbird
            # "Em 05/06/2024 14:03, Bob escreveu:" / "Às 14:03 de 05/06/2024, Bob escreveu:".
            _attribution(r"Em|No dia|Na|A|Às|As", r"escreveu"),
            # Gmail pt-PT: "Bob <b@x> escreveu no dia quarta, 5/06/2024 à(s) 14:03:"
            r"(" + _Q + r"(?>[^\n]*?escreveu no dia )[^\n]*(?:\n" + _Q + r"[^\n]*)?:)$",
        ],
        "from_header": [
            _header_block(r"De|Enviado|Enviada|Enviado em|Enviada em|Para|Assunto|Data|Cc|Cco"),
            _separator(r"Mensagem [Oo]riginal|Mensagem [Rr]eencaminhada|Mensagem encaminhada"),
        ],
        "signatures": _signoffs(
            "Cumprimentos", "Atenciosamente", "Abraço", "Abraços", "Abs", "Obrigado", "Obrigada",
            "Beijos", "Bjs", "Saudações", "Um abraço",
        ),
        "sent_from": _sent_from(
            "Enviado do meu", "Enviado de meu", "Enviado a partir do", "Enviado a partir de",
            "Enviado do", "Enviado pelo", "Obter o Outlook para", "Baixe o Outlook para",
        ),
        "disclaimers": [r"AVISO:", r"ATENÇÃO:", r"Aviso de confidencialidade:"],
    },
    "ro": {
        "wrote_header": [
            # Gmail "În lun., 3 iun. 2024 la 10:15, Bob <b@x> a scris:", Apple/Thunderbird
            # "Pe 03.06.2024 10:15, Bob a scris:", "La 03.06.2024 10:15, Bob a scris:".
            _attribution(
                r"În|In|Pe|La|Luni|Marți|Marti|Miercuri|Joi|Vineri|Sâmbătă|Duminică", r"a scris"
            ),
        ],
        "from_header": [
            _header_block(r"De la|Trimis|Către|Catre|Subiect|Data|Dată|Cc|Bcc"),
            _separator(r"Mesaj(?:ul)? [Oo]riginal|Mesaj [Rr]edirecționat|Mesaj redirectionat"),
        ],
        "signatures": _signoffs(
            "Cu stimă", "Cu stima", "Cu respect", "Mulțumesc", "Multumesc", "Numai bine",
            "O zi bună", "O zi buna", "Toate cele bune", "Salutări", "Salutari",
        ),
        "sent_from": _sent_from(
            "Trimis de pe", "Trimis din", "Trimis cu", "Obțineți Outlook pentru",
            "Obtineti Outlook pentru",
        ),
        "disclaimers": [r"ATENȚIE:", r"ATENTIE:", r"Notă de confidențialitate:"],
    },
    # Whatever the language: a line ending with a "wrote:" verb followed by quoted text, and the
    # "-----Original Message-----" / "-------- Original message --------" separators.
    "pbem": {
        "wrote_header": [
            r"(?=[^\n]*:$)"  # cheap first: only lines ending with ":" are worth the search
            r"(" + _Q + r"[^\n>]{1,200}(?:wrote|escreveu|a scris|scrie|écrit|schrieb|escribió)"
            r"[^\n:]{0,80}:)$(?=\n(?:[ \t]*\n)?>)",
        ],
        "from_header": [
            _separator(r"Original [Mm]essage|Forwarded [Mm]essage|Mensaje original"),
        ],
    },
}
DEFAULT_LANGUAGES: Final = ("en", "pt", "ro")
_NEVER: Final = r"(?!)"


class _AtLineStarts:
    """A compiled pattern tried only at line starts, with the calls the library makes of it.

    A regex search tries every character position, even for a pattern starting with ``^``; a
    reply quoting a game mail has thousands of characters but only dozens of lines.
    """

    __slots__ = ("pattern", "first_only", "skip_quoted")

    def __init__(self, pattern: re.Pattern[str], first_only: bool = False, skip_quoted: bool = False) -> None:
        self.pattern = pattern
        self.first_only = first_only
        self.skip_quoted = skip_quoted

    def _matches(self, text: str):
        match = self.pattern.match
        skip_quoted = self.skip_quoted
        pos = 0
        while True:
            found = None if skip_quoted and text.startswith(">", pos) else match(text, pos)
            if found is not None:
                yield found
                pos = text.find("\n", max(found.end(), pos + 1) - 1)
            else:
                pos = text.find("\n", pos)
            if pos < 0:
                return
            pos += 1

    def findall(self, text: str) -> list:
        """Like ``Pattern.findall``: tuples of groups, or whole matches for a pattern without."""
        found = []
        for m in self._matches(text):
            found.append(m.groups() if self.pattern.groups else m.group(0))
            if self.first_only:
                break
        return found

    def search(self, text: str) -> re.Match[str] | None:
        return next(self._matches(text), None)


@dataclass(frozen=True, slots=True)
class _Patterns:
    #: Only the first header is needed: the new text is above it (or, bottom-posted, below it).
    header: _AtLineStarts
    signature: _AtLineStarts
    disclaimers: _AtLineStarts


@lru_cache(maxsize=32)
def _patterns(languages: tuple[str, ...]) -> _Patterns:
    """The compiled patterns for a set of languages (ours, else the library's unanchored ones)."""
    def collect(key: str) -> list[str]:
        found: list[str] = [_NEVER]  # an empty alternation would match everywhere
        for lang in languages:
            if lang in LANGUAGES:
                found.extend(LANGUAGES[lang].get(key, []))
            elif lang in MAIL_LANGUAGES and MAIL_LANGUAGES[lang].get(key):
                theirs = MAIL_LANGUAGES[lang][key]
                found.extend(theirs if isinstance(theirs, list) else [theirs])
        return found

    flags = re.MULTILINE | re.IGNORECASE
    header = "^(?:" + "|".join(collect("wrote_header") + collect("from_header")) + ")"
    signature = (
        r"(^" + _Q + r"(?:(?:--|__)[ \t]*\n"       # "-- " (lines are stripped by the library)
        + r"|[_-]{32,}[ \t]*$"                      # Outlook's separator line
        + r"|(?:" + "|".join(collect("sent_from")) + r")"
        + r"|(?!\A)(?:" + "|".join(collect("signatures")) + r"))[\s\S]*)"
    )
    disclaimers = r"^(?:" + "|".join(collect("disclaimers")) + r")[^\n]*mail[^\n]*(?:\n[^\n]+)*"
    return _Patterns(
        _AtLineStarts(re.compile(header, flags), first_only=True),
        # Signatures and disclaimers inside quoted text do not matter: quoted lines are dropped.
        _AtLineStarts(re.compile(signature, flags), skip_quoted=True),
        _AtLineStarts(re.compile(disclaimers, flags), skip_quoted=True),
    )


class _ReplyMessage(EmailMessage):
    """The library's message, with our compiled patterns in place of its per-message ones."""

    patterns: _Patterns | None = None

    @property
    def HEADER_REGEX(self) -> _AtLineStarts:  # noqa: N802 (the library's name)
        assert self.patterns is not None
        return self.patterns.header

    @property
    def SIGNATURE_REGEX(self) -> _AtLineStarts:  # noqa: N802
        assert self.patterns is not None
        return self.patterns.signature

    @property
    def DISCLAIMERS_REGEX(self) -> _AtLineStarts:  # noqa: N802
        assert self.patterns is not None
        return self.patterns.disclaimers


_QUOTED_LINE: Final = re.compile(r"^[ \t]*>.*$\n?", re.MULTILINE)
_INVISIBLE: Final = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")  # zero-width characters


def normalize(text: str) -> str:
    """Unix line ends, no invisible characters, no-break spaces as spaces, lines right-stripped."""
    text = _INVISIBLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).replace("\u00a0", " ")
    return "\n".join(line.rstrip() for line in text.split("\n"))


def extract_reply(text: str, languages: Sequence[str] = DEFAULT_LANGUAGES) -> str:
    """The new text of a reply body (see the module docstring); "" when there is none.

    ``languages`` are keys of :data:`LANGUAGES`, or of the library's own table (``de``, ``fr``…,
    used with its unanchored patterns); English, Portuguese and Romanian by default.
    """
    text = normalize(_read_prefix(text))
    if not text.strip():
        return ""
    patterns = _patterns(tuple(dict.fromkeys(chain(languages, ("pbem",)))))
    message = _ReplyMessage(text=text, languages=[], keep_hyphen_lists=True)
    message.patterns = patterns
    replies: list[EmailReply] = message.read().replies
    new = _clean(replies[0].body) if replies else ""
    if new:
        return new
    # Bottom-posting: nothing above the quote. Take what is not quoted, header or signature
    # anywhere in the body (the library cut signatures from each piece).
    pieces = [_clean(r.body) for r in replies]
    return "\n\n".join(p for p in pieces if p)


def _read_prefix(text: str) -> str:
    """The first :data:`MAX_REPLY_CHARS` of ``text``, cut after a line end when there is one."""
    if len(text) <= MAX_REPLY_CHARS:
        return text
    end = text.rfind("\n", 0, MAX_REPLY_CHARS)
    return text[: end if end > 0 else MAX_REPLY_CHARS]


def _clean(body: str) -> str:
    body = _QUOTED_LINE.sub("", body)
    return re.sub(r"\n{3,}", "\n\n", body).strip()
