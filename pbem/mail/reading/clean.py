"""What a stranger wrote, made safe to echo: header text and mail addresses, in one place.

Anything taken from a received mail that an answer may put back into a header (the sender's
display name in an invitation's ``To:``, the subject as a game's title) is cleaned when the mail
is *read*, so the composer never meets a line break it has to refuse:

* every run of control characters (C0 and C1, DEL, the Unicode line and paragraph separators)
  and of lone surrogates becomes one space: a CR/LF in a header value is how a sender would
  inject a header of their own (``Bob\\r\\nBcc: victim@elsewhere.test``), and a surrogate cannot
  be encoded at all;
* the result is stripped and cut to a bound (:data:`MAX_NAME_CHARS`, :data:`MAX_SUBJECT_CHARS`).

Addresses are recognised in free text by :func:`find_addresses`, in linear time: the text is cut
into tokens of address characters first, and each token with one ``@`` is checked on its own,
with the lengths RFC 5321 §4.5.3.1 allows (a local part of at most 64 octets, a domain of at most
255). A pattern searched across the whole text would instead try every start position and, on a
long token with no ``@``, take time quadratic in its length. :func:`parse_mailbox` is the
standard library's ``parseaddr`` for values it can take (it recurses once per nested comment).
"""

from __future__ import annotations

import re
from email.utils import parseaddr
from typing import Final, NamedTuple

#: A display name longer than this is cut (an honest one is a few words).
MAX_NAME_CHARS: Final = 100
#: A subject longer than this is cut (a game's title is shown in every subject).
MAX_SUBJECT_CHARS: Final = 200
#: A mailbox header value (From, Reply-To) longer than this is not parsed.
MAX_MAILBOX_CHARS: Final = 4096
#: Deepest nesting of address comments ``(…)`` given to the standard library's parser, which
#: recurses once per level (500 levels raise ``RecursionError``).
MAX_COMMENT_DEPTH: Final = 32
#: RFC 5321 §4.5.3.1.1 and §4.5.3.1.2.
MAX_LOCAL_PART: Final = 64
MAX_DOMAIN: Final = 255

_UNSAFE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]+")
_SPACES: Final = re.compile(r"[ \t]{2,}")
#: Characters of an unquoted address: RFC 5322 ``atext``, the dot and ``@``.
_ADDRESS_CHARS: Final = re.compile(r"[\w.!#$%&'*+/=?^`{|}~@-]+")
_ATEXT: Final = r"[\w.!#$%&'*+/=?^`{|}~-]"
_LOCAL_PART: Final = re.compile(_ATEXT + "{1,%d}" % MAX_LOCAL_PART)
#: A domain of two labels or more; what follows it in a token (a trailing dot, a quote) is not part of it.
_DOMAIN: Final = re.compile(r"[\w-]{1,63}(?:\.[\w-]{1,63})+(?![\w-])")
#: An address as a whole (for input that should be one, such as an operator's ``--player``).
_WHOLE_ADDRESS: Final = re.compile(
    _ATEXT + "{1,%d}" % MAX_LOCAL_PART + r"@[\w-]{1,63}(?:\.[\w-]{1,63})+(?![\w-])"
)


class Cleaned(NamedTuple):
    """Cleaned text, and whether anything but surrounding white space had to change."""

    text: str
    changed: bool


def clean_header_text(text: str, limit: int) -> Cleaned:
    """``text`` without control characters or surrogates (each run one space), at most ``limit`` long."""
    safe, replaced = _UNSAFE.subn(" ", text)
    if replaced:
        safe = _SPACES.sub(" ", safe)
    safe = safe.strip()
    cut = len(safe) > limit
    if cut:
        safe = safe[:limit].rstrip()
    return Cleaned(safe, bool(replaced) or cut)


def clean_display_name(name: str) -> Cleaned:
    """A sender's display name, safe for a header (see the module docstring)."""
    return clean_header_text(name, MAX_NAME_CHARS)


def clean_subject(subject: str) -> Cleaned:
    """A subject, safe for a header (see the module docstring)."""
    return clean_header_text(subject, MAX_SUBJECT_CHARS)


def find_addresses(text: str) -> list[str]:
    """The mail addresses in free text, in order, as written (case kept).

    A token is a run of address characters (:data:`_ADDRESS_CHARS`); it is an address when it
    holds exactly one ``@``, the part before it is a local part of at most 64 characters and the
    part after it starts with a domain (of labels of at most 63 characters), which is where the
    address ends (``<bob@example.org>.`` gives ``bob@example.org``).
    """
    found = []
    for match in _ADDRESS_CHARS.finditer(text):
        address = _token_address(match.group(0))
        if address:
            found.append(address)
    return found


def _token_address(token: str) -> str | None:
    if token.count("@") != 1 or len(token) > MAX_LOCAL_PART + 1 + MAX_DOMAIN + 1:
        return None
    local, _, rest = token.partition("@")
    if not _LOCAL_PART.fullmatch(local):
        return None
    domain = _DOMAIN.match(rest)
    if domain is None or domain.end() > MAX_DOMAIN:
        return None
    return f"{local}@{domain.group(0)}"


def is_mail_address(text: str) -> bool:
    """Whether ``text`` is one unquoted address ``local@domain`` and nothing else: RFC 5321
    lengths, RFC 5322 ``atext`` (letters of any script, as RFC 6531 allows), no space or control."""
    return len(text) <= MAX_LOCAL_PART + 1 + MAX_DOMAIN and _WHOLE_ADDRESS.fullmatch(text) is not None


def comment_depth(value: str) -> int:
    """How deeply ``(…)`` comments nest in a header value (an upper bound: escapes and quoted
    parentheses count too)."""
    if "(" not in value:
        return 0
    depth = deepest = 0
    for paren in re.findall(r"[()]", value):
        depth = depth + 1 if paren == "(" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def parse_mailbox(value: str) -> tuple[str, str] | None:
    """``email.utils.parseaddr`` of one mailbox, or None when the value is one the standard
    library must not be given: longer than :data:`MAX_MAILBOX_CHARS` or with comments nested
    deeper than :data:`MAX_COMMENT_DEPTH`."""
    if len(value) > MAX_MAILBOX_CHARS or comment_depth(value) > MAX_COMMENT_DEPTH:
        return None
    return parseaddr(value)
