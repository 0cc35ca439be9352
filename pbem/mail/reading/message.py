"""Raw inbound bytes to a small :class:`IncomingMail` value.

Parsing uses ``email.message_from_bytes(raw, policy=compat32)``: the default ``email.policy``
builds header objects for every header and costs several times more (README, "Benchmarks"). With compat32
header values stay raw strings, so this module decodes the few headers it needs itself
(RFC 2047 encoded words, raw 8-bit UTF-8 or Latin headers, folding) and decodes bodies with the
lenient rules of :mod:`.charsets`. Nothing here raises on malformed mail: the worst case is empty
fields, which later stages answer as unreadable, and :attr:`IncomingMail.problems` says why.

**Bounds** (each step is linear in what it looks at, and looks at no more than this):

* :data:`MAX_PARSED_BYTES` of the raw message are parsed; a reply's text, a report's parts and
  the headers of an attached original all come first, and what is longer is someone else's
  attachment (``TRUNCATED``);
* a From header longer than :data:`.clean.MAX_MAILBOX_CHARS` is not parsed (``ADDRESS_UNPARSEABLE``);
  To and Cc are read up to :data:`MAX_RECIPIENT_CHARS` each (``HEADER_TOO_LONG``); a header value
  is decoded up to :data:`MAX_DECODED_HEADER_CHARS` (the standard library's RFC 2047 decoder
  takes time quadratic in the number of encoded words);
* address comments nested deeper than :data:`.clean.MAX_COMMENT_DEPTH` are not given to the standard
  library's address parser (it recurses once per level); the addresses are then found token by
  token (:func:`.clean.find_addresses`);
* a message of more than :data:`MAX_CONTAINERS` multipart or message parts (counted as the
  ``Content-Type: multipart/…`` and ``message/…`` headers in its bytes, an upper bound), or nested
  deeper than the standard library's parser can follow (it recurses once per level), has its
  headers read and its body left empty (``MIME_TOO_DEEP``).

**Echoed text** (RFC 5322 §2.2: a header value has no CR or LF): ``from_name`` and ``subject`` are
cleaned by :mod:`.clean` here, when the mail is read, so whatever an answer echoes of them is safe.

**Problems** (:attr:`IncomingMail.problems`, each code at most once, in the order found):

==========================  ================================================================
``TRUNCATED``               the message was longer than :data:`MAX_PARSED_BYTES`: its start was read
``MIME_TOO_DEEP``           too many or too deeply nested parts: headers only, empty text
``UNDECODABLE_PART``        a text part could not be decoded: its text is empty
``ADDRESS_UNPARSEABLE``     the From header could not be read, or its address is over 320
                            characters or holds a control character: ``from_address`` is ""
``RECIPIENTS_UNPARSEABLE``  To or Cc too deeply nested: their addresses found token by token
``HEADER_TOO_LONG``         a header value (Subject, To, Cc) was cut before it was read
``FROM_NAME_CLEANED``       control characters removed from the display name, or it was cut
``SUBJECT_CLEANED``         control characters removed from the subject, or it was cut
==========================  ================================================================
"""

from __future__ import annotations

import email
import re
from dataclasses import dataclass, field
from email.errors import HeaderParseError
from email.header import decode_header
from email.message import Message
from email.parser import BytesHeaderParser, HeaderParser
from email.policy import compat32
from email.utils import collapse_rfc2231_value, getaddresses
from typing import Final

from .charsets import decode_bytes
from .clean import (
    MAX_COMMENT_DEPTH, MAX_DOMAIN, MAX_LOCAL_PART, MAX_MAILBOX_CHARS, clean_display_name, clean_header_text,
    clean_subject, comment_depth, find_addresses, parse_mailbox,
)
from .html_text import html_to_text

#: Bytes of a raw message that are parsed (see the module docstring).
MAX_PARSED_BYTES: Final = 512 * 1024
#: Containers (``multipart/*`` and ``message/*`` parts) a message may have and still be parsed:
#: the standard library's parser checks every line against the boundary of each open multipart,
#: so its time grows with lines × depth (honest mail has fewer than ten).
MAX_CONTAINERS: Final = 16
#: The longest address kept (RFC 5321 §4.5.3.1: a 64-octet local part, ``@``, a 255-octet domain).
MAX_ADDRESS_CHARS: Final = MAX_LOCAL_PART + 1 + MAX_DOMAIN
#: Characters of each To or Cc header that are read (some 400 addresses; the standard library
#: parses them at about a microsecond a character).
MAX_RECIPIENT_CHARS: Final = 16 * 1024
#: Characters of a header value that are decoded (RFC 2047 words, 8-bit bytes).
MAX_DECODED_HEADER_CHARS: Final = 16 * 1024

TRUNCATED: Final = "TRUNCATED"
MIME_TOO_DEEP: Final = "MIME_TOO_DEEP"
UNDECODABLE_PART: Final = "UNDECODABLE_PART"
ADDRESS_UNPARSEABLE: Final = "ADDRESS_UNPARSEABLE"
RECIPIENTS_UNPARSEABLE: Final = "RECIPIENTS_UNPARSEABLE"
HEADER_TOO_LONG: Final = "HEADER_TOO_LONG"
FROM_NAME_CLEANED: Final = "FROM_NAME_CLEANED"
SUBJECT_CLEANED: Final = "SUBJECT_CLEANED"

_FOLDING = re.compile(r"\r?\n(?=[ \t])")
#: A Content-Type header naming a container (the header name has no space before its colon).
_CONTAINER_TYPE = re.compile(rb"(?i)content-type:\s*(?:multipart|message)/")
_MSG_ID = re.compile(r"<[^<>\s]+>")
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")  # zero-width characters


@dataclass(frozen=True, slots=True)
class RecipientStatus:
    """One per-recipient block of a delivery status notification (RFC 3464)."""

    final_recipient: str  # address, lower case, the ``rfc822;`` type removed
    original_recipient: str
    action: str  # failed, delayed, delivered, relayed, expanded (lower case)
    status: str  # e.g. 5.1.1
    diagnostic: str


@dataclass(frozen=True, slots=True)
class DeliveryReport:
    """What a ``multipart/report`` says: its type, per-recipient fields, the returned headers."""

    report_type: str  # delivery-status, disposition-notification, feedback-report…
    recipients: tuple[RecipientStatus, ...] = ()
    #: Headers of the original message, from a ``message/rfc822`` or ``text/rfc822-headers`` part.
    original_headers: tuple[tuple[str, str], ...] = ()

    def original_header(self, name: str) -> str | None:
        """The first returned header of the original called ``name`` (decoded), or None."""
        key = name.lower()
        for hname, value in self.original_headers:
            if hname.lower() == key:
                return decode_header_value(value)
        return None


@dataclass(frozen=True, slots=True)
class IncomingMail:
    """An inbound message as the rest of pbem needs it; all text fields are decoded ``str``."""

    #: SMTP envelope sender as given by the front: "" for the null sender ``<>``, None if unknown.
    envelope_sender: str | None
    from_address: str  # lower case addr-spec, "" when missing or unparseable
    from_name: str
    message_id: str | None  # "<id@host>" as written, angle brackets kept
    in_reply_to: str | None
    references: tuple[str, ...]
    subject: str
    #: Addresses of the To and Cc headers, lower case (recipients come from the envelope; these
    #: say whom the sender wrote to, e.g. the other players of a new game in Cc).
    to: tuple[str, ...]
    cc: tuple[str, ...]
    content_type: str  # of the whole message, lower case ("multipart/alternative")
    text: str  # the body as text, "\n" line ends
    text_from_html: bool = False
    report: DeliveryReport | None = None
    #: Every header as (name, raw value), unfolded; decode with :meth:`header`.
    raw_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    #: What could not be read as sent, as short codes (the module docstring's table); () if nothing.
    problems: tuple[str, ...] = ()
    #: The lines of the mail this one answers, when the caller found it (``reply_text.answered_lines``):
    #: what of them is left in the new text is a quote and is dropped (``reply_text.drop_answered``).
    answered: frozenset[str] = field(default=frozenset(), repr=False)
    #: The subject of the mail this one answers, when found: pbem's own words in this one's subject.
    answered_subject: str = field(default="", repr=False)

    def header(self, name: str) -> str | None:
        """The first header called ``name``, decoded, or None."""
        key = name.lower()
        for hname, value in self.raw_headers:
            if hname.lower() == key:
                return decode_header_value(value)
        return None

    def headers(self, name: str) -> list[str]:
        """Every header called ``name``, decoded, in order."""
        key = name.lower()
        return [decode_header_value(v) for n, v in self.raw_headers if n.lower() == key]


def decode_header_value(raw: str) -> str:
    """Decode a raw (compat32) header value: unfold, RFC 2047 words, raw 8-bit bytes.

    Only the first :data:`MAX_DECODED_HEADER_CHARS` characters are decoded. Never raises.
    """
    value = _FOLDING.sub("", raw[: MAX_DECODED_HEADER_CHARS + 2])[:MAX_DECODED_HEADER_CHARS]
    if "=?" not in value:
        return _undo_surrogates(value).strip()
    try:
        chunks = decode_header(value)
    except (HeaderParseError, ValueError):
        return _undo_surrogates(value).strip()
    out: list[str] = []
    for chunk, charset in chunks:
        if isinstance(chunk, str):
            out.append(_undo_surrogates(chunk))
        elif charset is None:
            out.append(_undo_surrogates(chunk.decode("raw-unicode-escape", errors="replace")))
        else:
            out.append(decode_bytes(chunk, charset))
    return "".join(out).strip()


def _undo_surrogates(text: str) -> str:
    """compat32 keeps raw 8-bit header bytes as surrogate escapes: decode them properly."""
    if text.isascii() or not any("\udc80" <= c <= "\udcff" for c in text):
        return text
    return decode_bytes(text.encode("ascii", "surrogateescape"))


class _Problems(list):
    """The problem codes found while reading one mail, each once."""

    def add(self, code: str) -> None:
        if code not in self:
            self.append(code)


def _address(raw: str | None, problems: _Problems) -> tuple[str, str]:
    """(display name, lower-case address) of a From-like header."""
    if not raw:
        return "", ""
    value = _FOLDING.sub("", raw)
    if len(value) > MAX_MAILBOX_CHARS:
        problems.add(ADDRESS_UNPARSEABLE)
        return "", ""
    parsed = parse_mailbox(value)
    if parsed is None:
        problems.add(ADDRESS_UNPARSEABLE)
        parsed = ("", "")
    name, addr = parsed
    if "@" not in addr:
        # parseaddr gives up on some mangled headers; take the first thing that looks like one,
        # else a bare local part ("From: MAILER-DAEMON (Mail Delivery System)").
        found = find_addresses(value)
        addr = found[0] if found else addr if re.fullmatch(r"[\w.+-]+", addr) else ""
    addr = _undo_surrogates(addr).strip().lower()
    if clean_header_text(addr, MAX_ADDRESS_CHARS).changed:  # a control character, or too long
        problems.add(ADDRESS_UNPARSEABLE)
        addr = ""
    return decode_header_value(name) if name else "", addr


def _addresses(headers: tuple[tuple[str, str], ...], name: str, problems: _Problems) -> tuple[str, ...]:
    """Lower-case addresses of every address-list header called ``name``, in order."""
    values = []
    for hname, value in headers:
        if hname.lower() != name:
            continue
        if len(value) > MAX_RECIPIENT_CHARS:
            problems.add(HEADER_TOO_LONG)
            value = value[: value.rfind(",", 0, MAX_RECIPIENT_CHARS) + 1 or MAX_RECIPIENT_CHARS]
        values.append(_undo_surrogates(value))
    if any(comment_depth(v) > MAX_COMMENT_DEPTH for v in values):
        problems.add(RECIPIENTS_UNPARSEABLE)
        return tuple(a.lower() for v in values for a in find_addresses(v))
    return tuple(a.lower() for _, a in getaddresses(values) if "@" in a and len(a) <= MAX_ADDRESS_CHARS)


def _message_ids(raw: str | None) -> tuple[str, ...]:
    return tuple(_MSG_ID.findall(raw)) if raw else ()


def read_mail(raw: bytes, envelope_sender: str | None = None) -> IncomingMail:
    """Parse raw message bytes (as received) into an :class:`IncomingMail`; never raises.

    What could not be read as sent is degraded (an empty text, an absent address) and named in
    :attr:`IncomingMail.problems` (see the module docstring).
    """
    problems = _Problems()
    msg, deep = _parse(_parsed_prefix(raw, problems))
    if deep:
        problems.add(MIME_TOO_DEEP)
    headers = _raw_headers(msg)
    first: dict[str, str] = {}
    for name, value in headers:
        first.setdefault(name.lower(), value)
    from_name, from_address = _address(first.get("from"), problems)
    message_ids = _message_ids(first.get("message-id"))
    in_reply_to = _message_ids(first.get("in-reply-to"))
    text, from_html = ("", False) if deep else _body_text(msg, problems)
    content_type = msg.get_content_type()
    report = _delivery_report(msg) if content_type == "multipart/report" and not deep else None
    if envelope_sender is not None:
        envelope_sender = envelope_sender.strip().strip("<>").strip().lower()
    return IncomingMail(
        envelope_sender=envelope_sender,
        from_address=from_address,
        from_name=_cleaned(clean_display_name(from_name), FROM_NAME_CLEANED, problems),
        message_id=message_ids[0] if message_ids else None,
        in_reply_to=in_reply_to[0] if in_reply_to else None,
        references=_message_ids(first.get("references")),
        subject=_cleaned(clean_subject(_header_text(first.get("subject", ""), problems)),
                         SUBJECT_CLEANED, problems),
        to=_addresses(headers, "to", problems),
        cc=_addresses(headers, "cc", problems),
        content_type=content_type,
        text=text,
        text_from_html=from_html,
        report=report,
        raw_headers=headers,
        problems=tuple(problems),
    )


@dataclass(frozen=True, slots=True)
class QuotedMail:
    """What a reply may quote of a mail (one of ours, kept in the outbox): its Subject (cleaned as
    :attr:`IncomingMail.subject` is) and its texts, the plain part and the HTML part read as text."""

    subject: str
    texts: tuple[str, ...]


def quoted_mail(raw: bytes) -> QuotedMail:
    """A mail's :class:`QuotedMail`, parsed once; never raises."""
    problems = _Problems()
    msg, deep = _parse(_parsed_prefix(raw, problems))
    subject = clean_subject(_header_text(_raw_get(msg, "subject") or "", problems))[0]
    if deep:
        return QuotedMail(subject, ())
    plain, html = _find_text_parts(msg)
    texts = []
    if plain is not None:
        texts.append(_part_text(plain, problems))
    if html is not None:
        texts.append(html_to_text(_part_text(html, problems)))
    return QuotedMail(subject, tuple(texts))


def text_versions(raw: bytes) -> tuple[str, ...]:
    """The texts of :func:`quoted_mail`."""
    return quoted_mail(raw).texts


def _parsed_prefix(raw: bytes, problems: _Problems) -> bytes:
    """The first :data:`MAX_PARSED_BYTES` of ``raw``, cut after a line end near the limit."""
    if len(raw) <= MAX_PARSED_BYTES:
        return raw
    problems.add(TRUNCATED)
    end = raw.rfind(b"\n", MAX_PARSED_BYTES - 4096, MAX_PARSED_BYTES)
    return raw[: end + 1 if end >= 0 else MAX_PARSED_BYTES]


def _parse(raw: bytes) -> tuple[Message, bool]:
    """The parsed message, and whether its MIME structure was too large or too deep to parse
    (then only its headers are parsed; see :data:`MAX_CONTAINERS`)."""
    if sum(1 for _ in _CONTAINER_TYPE.finditer(raw)) <= MAX_CONTAINERS:
        try:
            return email.message_from_bytes(raw, policy=compat32), False
        except RecursionError:
            pass  # the parser's own recursion, once per nested part
    return BytesHeaderParser(policy=compat32).parsebytes(raw, headersonly=True), True


def _header_text(raw: str, problems: _Problems) -> str:
    if len(raw) > MAX_DECODED_HEADER_CHARS:
        problems.add(HEADER_TOO_LONG)
    return decode_header_value(raw)


def _cleaned(cleaned: tuple[str, bool], code: str, problems: _Problems) -> str:
    text, changed = cleaned
    if changed:
        problems.add(code)
    return text


# -- bodies ------------------------------------------------------------------------------------
def _body_text(msg: Message, problems: _Problems) -> tuple[str, bool]:
    plain, html = _find_text_parts(msg)
    if plain is not None:
        text = _part_text(plain, problems)
        if text.strip() or html is None:
            return text, False
    if html is not None:
        return html_to_text(_part_text(html, problems)), True
    return "", False


def _find_text_parts(msg: Message) -> tuple[Message | None, Message | None]:
    """The first inline text/plain and text/html parts, not looking inside attached messages."""
    plain = html = None
    stack = [msg]
    while stack and (plain is None or html is None):
        part = stack.pop()
        maintype = part.get_content_maintype()
        if maintype == "multipart":
            stack.extend(reversed(_subparts(part)))
            continue
        if maintype == "message" or _is_attachment(part):
            continue
        subtype = part.get_content_type()
        if subtype == "text/plain" and plain is None:
            plain = part
        elif subtype == "text/html" and html is None:
            html = part
    return plain, html


def _is_attachment(part: Message) -> bool:
    disposition = _raw_get(part, "content-disposition") or ""
    return disposition.split(";", 1)[0].strip().lower() == "attachment"


def _raw_headers(msg: Message) -> tuple[tuple[str, str], ...]:
    """(name, value) pairs as received, unfolded; 8-bit bytes still surrogate-escaped.

    ``raw_items`` rather than ``items``: compat32 turns 8-bit values into ``Header`` objects.
    """
    return tuple((name, _FOLDING.sub("", value)) for name, value in msg.raw_items())


def _raw_get(msg: Message, name: str) -> str | None:
    key = name.lower()
    for hname, value in msg.raw_items():
        if hname.lower() == key:
            return _FOLDING.sub("", value)
    return None


def _param(msg: Message, name: str) -> str:
    """A Content-Type parameter as a lower-case string ("" when absent or unreadable)."""
    try:
        value = msg.get_param(name)
        if value is None:
            return ""
        return str(collapse_rfc2231_value(value)).strip().lower()
    except (LookupError, ValueError, TypeError, UnicodeError):
        return ""


def _part_text(part: Message, problems: _Problems) -> str:
    """A text part's text; "" (and ``UNDECODABLE_PART``) when the standard library cannot take
    its payload apart. A charset parameter it cannot read (an RFC 2231 value naming a codec that
    fails, a NUL…) counts as an unknown charset (:mod:`.charsets`)."""
    try:
        payload = part.get_payload(decode=True)
    except (LookupError, ValueError, TypeError, UnicodeError):
        problems.add(UNDECODABLE_PART)
        return ""
    charset = _charset(part)
    flowed = part.get_content_type() == "text/plain" and _param(part, "format") == "flowed"
    delsp = flowed and _param(part, "delsp") == "yes"
    if not isinstance(payload, bytes):
        payload = b""
    text = decode_bytes(payload, charset)
    text = _INVISIBLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if flowed:
        text = unflow(text, delsp=delsp)
    return text


def unflow(text: str, delsp: bool = False) -> str:
    """Undo RFC 3676 ``format=flowed``: join soft-broken lines, keeping quote depth."""
    out: list[str] = []
    buf: list[str] | None = None
    buf_depth = 0
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space stuffing (or the space after the quote marks)
        flowed = content.endswith(" ") and content != "-- "
        if flowed and delsp:
            content = content[:-1]
        if buf is not None and depth == buf_depth:
            buf.append(content)
        else:
            if buf is not None:
                out.append(_quoted("".join(buf), buf_depth))
            buf, buf_depth = [content], depth
        if not flowed:
            out.append(_quoted("".join(buf), buf_depth))
            buf = None
    if buf is not None:
        out.append(_quoted("".join(buf), buf_depth))
    return "\n".join(out)


def _quoted(line: str, depth: int) -> str:
    return ">" * depth + " " + line if depth else line


# -- delivery status notifications -------------------------------------------------------------
def _delivery_report(msg: Message) -> DeliveryReport:
    report_type = _param(msg, "report-type")
    recipients: list[RecipientStatus] = []
    original: tuple[tuple[str, str], ...] = ()
    for part in _subparts(msg):
        ctype = part.get_content_type()
        if ctype in ("message/delivery-status", "message/global-delivery-status"):
            recipients.extend(_recipient_blocks(part))
        elif ctype in ("message/rfc822", "message/global") and not original:
            inner = _subparts(part)
            if inner:
                original = _raw_headers(inner[0])
            else:
                original = _parse_header_block(_decoded_payload(part))
        elif ctype in ("text/rfc822-headers", "message/global-headers") and not original:
            original = _parse_header_block(_decoded_payload(part))
    return DeliveryReport(report_type, tuple(recipients), original)


def _subparts(msg: Message) -> list[Message]:
    """The parts of a multipart or the message of a message/* part; [] for a leaf.

    Never ``get_payload()`` of a leaf: compat32 decodes an 8-bit leaf with its declared charset
    there, and raises for the charsets :mod:`.charsets` refuses.
    """
    return msg.get_payload() if msg.is_multipart() else []


def _decoded_payload(part: Message) -> str:
    """A leaf's payload as text: its transfer encoding undone, decoded by :mod:`.charsets`."""
    payload = part.get_payload(decode=True)
    return decode_bytes(payload if isinstance(payload, bytes) else b"", _charset(part))


def _charset(part: Message) -> str | None:
    """The part's declared charset; None when absent or unreadable (an RFC 2231 value with a NUL…)."""
    try:
        return part.get_content_charset()
    except (LookupError, ValueError, TypeError, UnicodeError):
        return None


def _parse_header_block(text: str) -> tuple[tuple[str, str], ...]:
    return _raw_headers(HeaderParser(policy=compat32).parsestr(text.lstrip("\r\n")))


def _recipient_blocks(part: Message) -> list[RecipientStatus]:
    """The per-recipient blocks of a message/delivery-status part (the first block is per-message)."""
    blocks = _subparts(part)
    if not blocks:  # some servers base64 the part; compat32 then leaves it unparsed
        text = _decoded_payload(part)
        blocks = [HeaderParser(policy=compat32).parsestr(b) for b in re.split(r"\r?\n\s*\r?\n", text)]
    found: list[RecipientStatus] = []
    for block in blocks:
        final = _typed_address(_raw_get(block, "final-recipient"))
        original = _typed_address(_raw_get(block, "original-recipient"))
        if not final and not original:
            continue
        found.append(RecipientStatus(
            final_recipient=final or original,
            original_recipient=original,
            action=(_raw_get(block, "action") or "").strip().lower(),
            status=(_raw_get(block, "status") or "").strip().split(" ", 1)[0],
            diagnostic=decode_header_value(_raw_get(block, "diagnostic-code") or ""),
        ))
    return found


def _typed_address(value: str | None) -> str:
    """``rfc822; User@Example.com`` → ``user@example.com``."""
    if not value:
        return ""
    addr = _undo_surrogates(_FOLDING.sub("", value.split(";", 1)[-1])).strip()
    parsed = (parse_mailbox(addr) or ("", ""))[1]
    return (parsed if "@" in parsed else addr.strip("<>").strip()[:MAX_MAILBOX_CHARS]).lower()
