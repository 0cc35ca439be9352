"""Hostile mail for ``pbem bench fuzz``: mutations of real mails, and generators of cases.

Pure functions of a ``random.Random`` and bytes (no I/O, no database), so one seed gives the same
mails on every machine.  A mail is built as a *template*: its envelope addresses are the
placeholders :data:`FROM` and :data:`TO` (the sender and the pbem address it is sent to), put in
place only when the mail is sent to a live target (``instantiate``).  A template that crashed
the server can then be kept in the regression corpus and replayed against the targets of
another run.

Two kinds of input:

* **mutations** (``MUTATIONS``): each takes a mail and returns a damaged one: a charset or a
  transfer encoding no reader expects, RFC 2047 and RFC 2231 in odd places, nesting, NULs, long
  lines and headers, bytes flipped, inserted, cut or repeated, line ends changed...
* **generators** (``GENERATORS``): each builds one whole mail of about a given size, aimed at
  one kind of target, so the CPU a case costs can be measured at 10 kB, 100 kB, 1 MB and
  10 MB (the SMTP front's ``PBEM_MAX_MESSAGE_SIZE``) to see whether reading it is linear.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "FROM", "GENERATORS", "MUTATIONS", "TO", "Generator", "build_mail", "get_header", "instantiate",
    "mutate", "normalise_line_ends", "set_header",
]

#: Placeholders for the envelope's addresses in a template (see the module docstring).
FROM = b"@@FROM@@"
TO = b"@@TO@@"

CRLF = b"\r\n"

# Declared charsets that readers trip over: bytes-to-bytes codecs Python knows by name ("uu",
# "base64", "hex", "zlib", "rot13", "quopri"), names nobody knows, NULs and 8-bit bytes in the
# name, multi-byte charsets with bytes that are not valid in them, and ordinary ones.
CHARSETS: tuple[bytes, ...] = (
    b"uu", b"base64", b"hex", b"zlib", b"bz2", b"rot13", b"quopri", b"uu_codec", b"base64_codec",
    b"punycode", b"idna", b"undefined", b"x-unknown", b"unknown-8bit", b"utf\x00-8", b"\x00",
    b"\xe9t\xe9", b"utf-8\xff", b"", b'""', b"utf-7", b"utf-16", b"utf-16-le", b"utf-32", b"utf-8-sig",
    b"unicode-escape", b"raw-unicode-escape", b"mbcs", b"oem", b"iso-2022-jp", b"shift_jis", b"gb18030",
    b"big5", b"euc-kr", b"cp1252", b"iso-8859-1", b"iso-8859-2", b"koi8-r", b"mac-roman",
    b"x-mac-ce", b"windows-1250", b"us-ascii", b"utf-8", b"UTF-8", b"a" * 300, b"utf-8; charset=latin1",
    b"=?utf-8?q?x?=", b"*", b"'", b"utf-8''",
)

TRANSFER_ENCODINGS: tuple[bytes, ...] = (
    b"base64", b"quoted-printable", b"8bit", b"7bit", b"binary", b"x-uuencode", b"uuencode", b"x-uue",
    b"BASE64", b"base-64", b"gzip", b"", b"\x00", b"quoted-printable; x=1", b"\xff\xfe",
)

# What an RFC 2047 display name may carry: a line break and a header, a NUL, a bidi override,
# quotes and brackets that could end the header's address.
NAME_PAYLOADS: tuple[bytes, ...] = (
    b"Bob\r\nBcc: victim@elsewhere.test", b"Bob\nBcc: victim@elsewhere.test", b"Bob\rX: y", b"B\x00ob",
    "Ana \u202eevil\u202c".encode(), b'"><script>', b"<victim@elsewhere.test>", b"a" * 2000,
    "Jos\u00e9 Mar\u00eda".encode(), "\u0414\u043c\u0438\u0442\u0440\u0438\u0439".encode(), b"\xff\xfe\x00",
    b"=?utf-8?b?nested?=", b"\r\n\r\nbody", b"", b" ", b"\t\t",
)

# Bytes that mean something to one of the parsers: header and MIME syntax, RFC 2047 markers,
# quoting, addresses, NUL and bare CR/LF, 8-bit bytes, UTF-8 of the card symbols.
INTERESTING: tuple[bytes, ...] = (
    b"\x00", b"\r", b"\n", b"\r\n", b"\r\n\r\n", b"\xff", b"\x80", b"\xc3", b"=?", b"?=", b"=?utf-8?b?",
    b"=?uu?q?x?=", b"--", b"\r\n--", b">", b"> > >", b"@", b":", b";", b'"', b"(", b")", b"<", b">",
    b"\\", b"=\r\n", b"=", b"\t", b" ", "\u2660".encode(), "\u2665".encode(), b"QS", b"pass:", b"say ",
    b"*0*=", b"''", b"%ff", b"\x1b", b"&#x", b"<br>", b"<!--", b"]]>", b"\xef\xbb\xbf",
)

COMMAND_LINES: tuple[str, ...] = (
    "help", "status", "games", "rules", "history", "say good luck everyone", "queue QS AH 2C", "queue clear",
    "autopilot", "autopilot off", "autoplay off", "autoplay on", "notify every card", "notify digest",
    "notify turn only everywhere", "vacation for 2 weeks", "vacation off", "timezone Europe/Lisbon",
    "timezone Mars/Olympus", "language pt", "language xx", "old", "new", "pause", "resume", "extend 24h",
    "extend Bob", "replace Bob ana@example.org", "extend Player 3", "replace Player 2 sub@friends.test",
    "replace Player 5 player1@players.test", "abort", "ajuda", "estado", "reguli", "desisto", "f\u00e9rias at\u00e9 5 de janeiro",
    "queen of spades", "dama de espadas", "dam\u0103 de pic\u0103", "Q\u2660", "10h", "pass: QS AH KH", "QS AS",
    "yes", "no", "maybe", "sim", "nu pot", "vacation until 32 Smarch", "extend 99999999999h",
)


# -- building mails ------------------------------------------------------------------------------------


def build_mail(headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """A mail from (name, value) headers and a body, CRLF line ends."""
    head = b"".join(name + b": " + value + CRLF for name, value in headers)
    return head + CRLF + body


def instantiate(template: bytes, sender: str, recipient: str) -> bytes:
    """The mail a template stands for, sent by ``sender`` to ``recipient`` (in UTF-8: an address
    someone was invited at may hold any character, RFC 6532)."""
    return template.replace(FROM, sender.encode("utf-8", "surrogateescape")).replace(
        TO, recipient.encode("utf-8", "surrogateescape"))


def normalise_line_ends(raw: bytes) -> bytes:
    """CRLF line ends throughout (the corpus files may be stored with LF)."""
    return raw.replace(b"\r\n", b"\n").replace(b"\n", CRLF)


def _split(raw: bytes) -> tuple[bytes, bytes, bytes]:
    """(header section, separator, body); no separator when the mail has no blank line."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        index = raw.find(sep)
        if index >= 0:
            return raw[:index + len(sep) // 2], sep[len(sep) // 2:], raw[index + len(sep):]
    return raw, b"", b""


def _fields(head: bytes) -> list[bytes]:
    """The header section cut into fields, each with its continuation lines and line end."""
    lines = head.splitlines(keepends=True)
    fields: list[bytes] = []
    for line in lines:
        if line[:1] in (b" ", b"\t") and fields:
            fields[-1] += line
        else:
            fields.append(line)
    return fields


def _name(field: bytes) -> bytes:
    return field.split(b":", 1)[0].strip().lower() if b":" in field else b""


def get_header(raw: bytes, name: bytes) -> bytes | None:
    """The first ``name`` field's value (continuations kept), or None."""
    head, _, _ = _split(raw)
    for field in _fields(head):
        if _name(field) == name.lower():
            return field.split(b":", 1)[1].strip()
    return None


def set_header(raw: bytes, name: bytes, value: bytes, *, add: bool = False) -> bytes:
    """``raw`` with its first ``name`` field's value replaced (added first when absent, or with
    ``add`` added as one more)."""
    head, sep, body = _split(raw)
    fields = _fields(head)
    new = name + b": " + value + CRLF
    for index, field in enumerate(fields):
        if not add and _name(field) == name.lower():
            fields[index] = new
            break
    else:
        fields.insert(0, new)
    return b"".join(fields) + (sep or CRLF) + body


def drop_header(raw: bytes, name: bytes) -> bytes:
    head, sep, body = _split(raw)
    return b"".join(f for f in _fields(head) if _name(f) != name.lower()) + sep + body


def _body_of(raw: bytes) -> bytes:
    return _split(raw)[2]


def _with_body(raw: bytes, body: bytes) -> bytes:
    head, sep, _ = _split(raw)
    return head + (sep or CRLF) + body


# -- mutations -----------------------------------------------------------------------------------------

Mutation = Callable[[random.Random, bytes], bytes]


def _pos(rng: random.Random, raw: bytes) -> int:
    return rng.randrange(len(raw) + 1)


def flip_bits(rng: random.Random, raw: bytes) -> bytes:
    data = bytearray(raw)
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def insert_interesting(rng: random.Random, raw: bytes) -> bytes:
    for _ in range(rng.randint(1, 6)):
        at = _pos(rng, raw)
        raw = raw[:at] + rng.choice(INTERESTING) * rng.choice((1, 1, 2, 10, 100)) + raw[at:]
    return raw


def insert_random(rng: random.Random, raw: bytes) -> bytes:
    at = _pos(rng, raw)
    return raw[:at] + rng.randbytes(rng.randint(1, 64)) + raw[at:]


def delete_chunk(rng: random.Random, raw: bytes) -> bytes:
    at = _pos(rng, raw)
    return raw[:at] + raw[at + rng.randint(1, 200):]


def repeat_chunk(rng: random.Random, raw: bytes) -> bytes:
    at = _pos(rng, raw)
    chunk = raw[at:at + rng.randint(1, 80)]
    return raw[:at] + chunk * rng.choice((2, 10, 100, 500)) + raw[at:]


def truncate(rng: random.Random, raw: bytes) -> bytes:
    return raw[:_pos(rng, raw)]


def line_ends(rng: random.Random, raw: bytes) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:
        return raw.replace(CRLF, b"\n")
    if choice == 1:
        return raw.replace(CRLF, b"\r")
    if choice == 2:
        return raw.replace(CRLF, b"\n\r")
    return b"".join(line + rng.choice((b"\r\n", b"\n", b"\r")) for line in raw.split(CRLF))


def odd_charset(rng: random.Random, raw: bytes) -> bytes:
    charset = rng.choice(CHARSETS)
    quoted = rng.random() < 0.5
    value = b'text/plain; charset="' + charset + b'"' if quoted else b"text/plain; charset=" + charset
    if rng.random() < 0.5:  # in a part of a multipart, when there is one
        body = _body_of(raw)
        index = body.lower().find(b"content-type: text/")
        if index >= 0:
            end = body.find(b"\n", index)
            end = len(body) if end < 0 else end
            return _with_body(raw, body[:index] + b"Content-Type: " + value.rstrip(b"\r") + b"\r" + body[end:])
    return set_header(raw, b"Content-Type", value)


def odd_transfer_encoding(rng: random.Random, raw: bytes) -> bytes:
    return set_header(raw, b"Content-Transfer-Encoding", rng.choice(TRANSFER_ENCODINGS))


def _encoded_word(rng: random.Random, payload: bytes) -> bytes:
    charset = rng.choice((b"utf-8", b"utf-8", b"iso-8859-1", b"uu", b"base64", b"undefined", b"utf\x00-8",
                          b"\xe9t\xe9", b"utf-8*en", b"x-unknown", b"utf-16"))
    if rng.random() < 0.5:
        encoded = base64.b64encode(payload)
        if rng.random() < 0.2:
            encoded = encoded[:-1]  # bad padding
        return b"=?" + charset + b"?B?" + encoded + b"?="
    q = b"".join(bytes([c]) if 48 <= c < 123 and c not in (61, 63, 95) else b"=%02X" % c for c in payload)
    return b"=?" + charset + b"?Q?" + q + b"?="


def encoded_display_name(rng: random.Random, raw: bytes) -> bytes:
    """From with an RFC 2047 display name that decodes to a line break and a header, a NUL..."""
    name = _encoded_word(rng, rng.choice(NAME_PAYLOADS))
    return set_header(raw, b"From", name + b" <" + FROM + b">")


def encoded_subject(rng: random.Random, raw: bytes) -> bytes:
    words = b" ".join(_encoded_word(rng, rng.choice(NAME_PAYLOADS)) for _ in range(rng.randint(1, 30)))
    return set_header(raw, b"Subject", b"Re: " + words)


def rfc2231_parameters(rng: random.Random, raw: bytes) -> bytes:
    kind = rng.choice((b"multipart/mixed", b"multipart/alternative", b"text/plain", b"text/html"))
    charset = rng.choice(CHARSETS)
    params = rng.choice((
        b"; charset*=" + charset + b"''%e9t%e9",
        b"; charset*0*=utf-8''%ff; charset*1*=%fe",
        b"; charset*=''", b"; charset*=utf-8'en'", b"; boundary*=utf-8''%00%ff",
        b"; charset*0=us; charset*1=-ascii; charset*5=x",
        b"; name*=" + charset + b"''file.txt; charset*=" + charset + b"''",
    ))
    boundary = b'; boundary="' + (get_header(raw, b"Content-Type") or b"x").split(b'boundary="')[-1].split(b'"')[0] + b'"'
    return set_header(raw, b"Content-Type", kind + params + (boundary if kind.startswith(b"multipart") else b""))


def nested_parentheses(rng: random.Random, raw: bytes) -> bytes:
    depth = rng.choice((10, 100, 500, 1000, 3000))
    header = rng.choice((b"To", b"From", b"Cc", b"Reply-To", b"Sender"))
    address = FROM if header == b"From" else TO
    value = b"(" * depth + b"x" + b")" * rng.choice((depth, 0, depth // 2)) + b" <" + address + b">"
    return set_header(raw, header, value)


def long_header(rng: random.Random, raw: bytes) -> bytes:
    header = rng.choice((b"Subject", b"From", b"To", b"References", b"Message-ID", b"In-Reply-To", b"X-Long",
                         b"Content-Type", b"Cc"))
    length = rng.choice((1000, 5000, 20000, 60000))
    unit = rng.choice((b"a", b"a.", b"<a@b>", b"=?utf-8?q?a?=", b"a,", b" a", b"\r\n a", b"@", b"<", b'"'))
    value = (unit * (length // len(unit) + 1))[:length]
    if header == b"From":
        value += b" <" + FROM + b">"
    return set_header(raw, header, value, add=rng.random() < 0.3)


def many_headers(rng: random.Random, raw: bytes) -> bytes:
    count = rng.choice((100, 1000, 5000))
    extra = b"".join(b"X-H%d: v%d\r\n" % (k, k) for k in range(count))
    return extra + raw


def nul_bytes(rng: random.Random, raw: bytes) -> bytes:
    data = bytearray(raw)
    for _ in range(rng.randint(1, 20)):
        data.insert(rng.randrange(len(data) + 1), 0)
    return bytes(data)


def long_line(rng: random.Random, raw: bytes) -> bytes:
    length = rng.choice((1000, 10000, 50000))
    unit = rng.choice((b"x", b"QS ", b"> ", b"=", b"a@", b"\xe9", "\u2660".encode()))
    at = len(raw) - len(_body_of(raw)) + rng.randrange(len(_body_of(raw)) + 1)
    return raw[:at] + (unit * (length // len(unit)))[:length] + CRLF + raw[at:]


def base64_garbage(rng: random.Random, raw: bytes) -> bytes:
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n!*-_\x00\xff "
    body = bytes(rng.choice(alphabet) for _ in range(rng.randint(10, 3000)))
    raw = set_header(raw, b"Content-Transfer-Encoding", b"base64")
    return _with_body(raw, body)


def wrap_multipart(rng: random.Random, raw: bytes) -> bytes:
    depth = rng.choice((1, 2, 5, 50, 200, 1000))
    body = _body_of(raw)
    inner_type = get_header(raw, b"Content-Type") or b"text/plain"
    part = b"Content-Type: " + inner_type + CRLF + CRLF + body
    for level in range(depth):
        boundary = b"b%d" % level if rng.random() < 0.9 else b""
        closing = b"--" + boundary + b"--" + CRLF if rng.random() < 0.8 else b""
        kind = rng.choice((b"mixed", b"alternative", b"related", b"report", b"signed"))
        part = (b"Content-Type: multipart/" + kind + b'; boundary="' + boundary + b'"' + CRLF + CRLF
                + b"--" + boundary + CRLF + part + CRLF + closing)
    head, body2 = part.split(CRLF + CRLF, 1)
    raw = set_header(raw, b"Content-Type", head.split(b": ", 1)[1])
    raw = drop_header(raw, b"Content-Transfer-Encoding")
    return _with_body(raw, body2)


def wrap_message(rng: random.Random, raw: bytes) -> bytes:
    depth = rng.choice((1, 3, 30, 300))
    inner = raw
    for _ in range(depth):
        inner = (b"Content-Type: message/rfc822" + CRLF + CRLF + inner)
    head, body = inner.split(CRLF + CRLF, 1)
    return _with_body(set_header(raw, b"Content-Type", b"message/rfc822"), body)


def deep_quotes(rng: random.Random, raw: bytes) -> bytes:
    body = _body_of(raw)
    depth = rng.choice((1, 5, 50, 500))
    lines = body.split(CRLF)
    start = rng.randrange(len(lines) + 1)
    lines[start:] = [b">" * (depth + k) + b" " + line for k, line in enumerate(lines[start:])]
    return _with_body(raw, CRLF.join(lines))


def no_blank_line(rng: random.Random, raw: bytes) -> bytes:
    return raw.replace(b"\r\n\r\n", CRLF, 1)


def drop_some_header(rng: random.Random, raw: bytes) -> bytes:
    return drop_header(raw, rng.choice((b"From", b"To", b"Content-Type", b"MIME-Version", b"Message-ID", b"Subject",
                                        b"Content-Transfer-Encoding", b"Date")))


def duplicate_header(rng: random.Random, raw: bytes) -> bytes:
    name = rng.choice((b"From", b"Content-Type", b"Subject", b"To", b"Content-Transfer-Encoding"))
    value = {b"From": b"Someone Else <other@elsewhere.test>", b"Content-Type": b"text/html; charset=uu",
             b"Subject": b"=?utf-8?q?dup?=", b"To": b"new@hearts.test",
             b"Content-Transfer-Encoding": b"base64"}[name]
    return set_header(raw, name, value, add=True)


def odd_content_type(rng: random.Random, raw: bytes) -> bytes:
    value = rng.choice((
        b"multipart/alternative", b"multipart/mixed; boundary=", b'multipart/mixed; boundary=""', b"text/plain; charset=",
        b"multipart/report; report-type=delivery-status; boundary=zz", b"message/delivery-status", b"message/rfc822",
        b"text/html", b"application/octet-stream", b"text", b"/", b"text/plain;;;;;", b"text/plain; format=flowed; delsp=yes",
        b"text/plain; format=flowed", b"message/partial; id=x; number=1", b"image/png", b";", b"\x00/\x00",
        b"multipart/digest; boundary=q", b"text/enriched",
    ))
    return set_header(raw, b"Content-Type", value)


def automatic_headers(rng: random.Random, raw: bytes) -> bytes:
    name, value = rng.choice((
        (b"Auto-Submitted", b"auto-replied"), (b"Auto-Submitted", b"auto-generated\x00"), (b"Precedence", b"bulk"),
        (b"Precedence", b"junk"), (b"X-Autoreply", b"yes"), (b"List-Id", b"<x.example>"), (b"Return-Path", b"<>"),
        (b"X-Failed-Recipients", FROM), (b"Auto-Submitted", b"=?utf-8?q?no?="),
    ))
    return set_header(raw, name, value)


def html_body(rng: random.Random, raw: bytes) -> bytes:
    depth = rng.choice((1, 10, 1000, 5000))
    text = _body_of(raw)[:500]
    body = b"<div>" * depth + b"<p>" + text + b"&#x2660;&amp;&#99999999;&nbsp;<br>" + b"</div>" * (depth // 2)
    raw = set_header(raw, b"Content-Type", b"text/html; charset=utf-8")
    raw = drop_header(raw, b"Content-Transfer-Encoding")
    return _with_body(raw, body)


def confusable_cards(rng: random.Random, raw: bytes) -> bytes:
    text = rng.choice(("\uff31\u2660", "Q\u0338S", "\u202eSQ", "Q\u200bS", "\U0001F0AD", "q\u2664", "10\u2661",
                       "Q\ufe0f\u2660\ufe0f", "\u0051\u0300S", "\u00a0QS\u00a0", "Q\u2660 " * 300))
    at = len(raw) - len(_body_of(raw))
    return raw[:at] + text.encode("utf-8") + CRLF + raw[at:]


def splice_lines(rng: random.Random, raw: bytes) -> bytes:
    lines = raw.split(CRLF)
    if len(lines) < 2:
        return raw
    a, b = sorted(rng.sample(range(len(lines)), 2))
    lines[a], lines[b] = lines[b], lines[a]
    return CRLF.join(lines)


MUTATIONS: dict[str, Mutation] = {
    "flip_bits": flip_bits, "insert_interesting": insert_interesting, "insert_random": insert_random,
    "delete_chunk": delete_chunk, "repeat_chunk": repeat_chunk, "truncate": truncate, "line_ends": line_ends,
    "odd_charset": odd_charset, "odd_transfer_encoding": odd_transfer_encoding,
    "encoded_display_name": encoded_display_name, "encoded_subject": encoded_subject,
    "rfc2231_parameters": rfc2231_parameters, "nested_parentheses": nested_parentheses, "long_header": long_header,
    "many_headers": many_headers, "nul_bytes": nul_bytes, "long_line": long_line, "base64_garbage": base64_garbage,
    "wrap_multipart": wrap_multipart, "wrap_message": wrap_message, "deep_quotes": deep_quotes,
    "no_blank_line": no_blank_line, "drop_some_header": drop_some_header, "duplicate_header": duplicate_header,
    "odd_content_type": odd_content_type, "automatic_headers": automatic_headers, "html_body": html_body,
    "confusable_cards": confusable_cards, "splice_lines": splice_lines,
}
# The mutations that destroy a mail outright (a cut anywhere, bits flipped anywhere) are drawn
# less often than those that keep it readable, so most mails still reach a command: the
# interesting paths are past the reader, not only in it.
_WEIGHTS: dict[str, float] = {"truncate": 0.3, "flip_bits": 0.6, "no_blank_line": 0.3, "drop_some_header": 0.5,
                              "insert_random": 0.6, "splice_lines": 0.5, "line_ends": 0.6}


def mutate(rng: random.Random, raw: bytes, count: int | None = None) -> tuple[bytes, list[str]]:
    """``raw`` with ``count`` (1 to 3 when None) mutations drawn at random; their names."""
    names = list(MUTATIONS)
    weights = [_WEIGHTS.get(name, 1.0) for name in names]
    applied = rng.choices(names, weights, k=count if count is not None else rng.choice((1, 1, 1, 2, 2, 3)))
    for name in applied:
        raw = MUTATIONS[name](rng, raw)
    return raw, applied


# -- generators ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Generator:
    """Builds one mail of about ``size`` bytes aimed at a target of kind ``target``."""

    name: str
    target: str  # a target kind of pbem.bench.fuzz (seat, new-unknown...)
    build: Callable[[random.Random, int], bytes]
    source: str = "smtp"  # "webhook" when its lines are longer than SMTP allows (998 octets)


def _reply_headers(subject: bytes = b"Re: [Hearts] Your turn", content_type: bytes = b'text/plain; charset="utf-8"',
                   encoding: bytes = b"8bit", sender: bytes = b"Player <" + FROM + b">",
                   to: bytes = TO) -> list[tuple[bytes, bytes]]:
    return [(b"From", sender), (b"To", to), (b"Subject", subject), (b"Date", b"Mon, 30 Nov 2026 10:00:00 +0000"),
            (b"MIME-Version", b"1.0"), (b"Content-Type", content_type), (b"Content-Transfer-Encoding", encoding)]


def _fill(unit: bytes, size: int) -> bytes:
    return (unit * (size // max(len(unit), 1) + 1))[:size]


def gen_charsets(rng: random.Random, size: int) -> bytes:
    """A body in a declared charset of the list, words of the reply in that charset's bytes."""
    charset = rng.choice(CHARSETS)
    text = "QS\r\n\r\n" + "Ol\u00e1, r\u00e2ndul meu: dam\u0103 de pic\u0103. " * (size // 40 + 1)
    body = text.encode("utf-8", "replace")[:size]
    subject = b"Re: " + b" ".join(_encoded_word(rng, "Jogo n\u00ba 1".encode()) for _ in range(5))
    return build_mail(_reply_headers(subject, b"text/plain; charset=" + charset), body)


def gen_encodings(rng: random.Random, size: int) -> bytes:
    """A body in base64 and quoted-printable, valid and broken, in nested parts."""
    text = ("QS\r\n\r\n" + "> On Monday you wrote: =E2=99=A0 trick 5\r\n" * (size // 40 + 1))[:size].encode()
    b64 = base64.encodebytes(text).replace(b"\n", CRLF)[:size // 2]
    qp = (b"QS=\r\n=E2=99=A0 =\r\n" + b"a=3D=XX=\r\n" * (size // 20 + 1))[:size // 2]
    boundary = b"enc"
    body = (b"--enc\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" + b64
            + b"\r\n--enc\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            + qp + b"\r\n--enc--\r\n")
    return build_mail(_reply_headers(content_type=b'multipart/alternative; boundary="' + boundary + b'"'), body)


def gen_nesting(rng: random.Random, size: int) -> bytes:
    """Multipart parts nested as deep as the size allows (about 60 bytes a level)."""
    depth = max(size // 60, 1)
    opening = b"".join(b'--n%d\r\nContent-Type: multipart/mixed; boundary="n%d"\r\n\r\n' % (k, k + 1) for k in range(depth))
    inner = b"--n%d\r\nContent-Type: text/plain\r\n\r\nQS\r\n" % depth
    closing = b"".join(b"--n%d--\r\n" % k for k in range(depth, -1, -1))
    return build_mail(_reply_headers(content_type=b'multipart/mixed; boundary="n0"'), opening + inner + closing)


def gen_header_lengths(rng: random.Random, size: int) -> bytes:
    """A Subject of ``size`` bytes of words, folded as clients fold, and a long References."""
    words = b" ".join(b"word%d" % k for k in range(size // 8 + 1))[:size // 2]
    folded = CRLF.join(words[k:k + 76] for k in range(0, len(words), 76)).replace(CRLF, CRLF + b" ")
    refs = CRLF.join(b" <%d.ref@hearts.test>" % k for k in range(size // 40 + 1))[:size // 2]
    headers = _reply_headers(subject=b"Re: " + folded)
    headers.append((b"References", refs.strip()))
    return build_mail(headers, b"QS\r\n")


def gen_nuls(rng: random.Random, size: int) -> bytes:
    """NULs through the headers and the body."""
    body = _fill(b"QS\x00 \x00\x00> text\x00\r\n", size)
    headers = _reply_headers(subject=b"Re: \x00[Hearts]\x00", content_type=b"text/plain; charset=utf-8\x00")
    headers.append((b"X-\x00", b"\x00"))
    return build_mail(headers, body)


def gen_long_lines(rng: random.Random, size: int) -> bytes:
    """One body line of ``size`` bytes of words (no line break at all)."""
    return build_mail(_reply_headers(), b"QS " + _fill(b"and then the queen of spades ", size))


def gen_base64_garbage(rng: random.Random, size: int) -> bytes:
    """A base64 body of garbage: characters outside the alphabet, padding in the middle."""
    unit = bytes(rng.choice(b"ABCDEFabcdef0123456789+/=!*\x00\xff- ") for _ in range(997)) + CRLF
    return build_mail(_reply_headers(encoding=b"base64"), _fill(unit, size))


def gen_nested_quotes(rng: random.Random, size: int) -> bytes:
    """The reply on top, then ``size`` bytes of quotes nested ever deeper (as a long thread)."""
    lines = []
    total = 0
    depth = 1
    while total < size:
        line = b">" * depth + b" On Monday, Hearts <hearts@hearts.test> wrote: play the QS"
        lines.append(line)
        total += len(line) + 2
        depth = depth % 300 + 1
    return build_mail(_reply_headers(), b"QS\r\n\r\n" + CRLF.join(lines))


def gen_token_no_at(rng: random.Random, size: int) -> bytes:
    """``new@`` with a players line of one token of ``size`` bytes and no ``@``."""
    body = b"new game\r\nplayers: " + _fill(b"a.b-c", size) + b"\r\nbots: 2\r\n"
    return build_mail(_reply_headers(subject=b"new game"), body)


def gen_from_no_spaces(rng: random.Random, size: int) -> bytes:
    """A From of ``size`` bytes without a space (the raw webhook has no line-length limit)."""
    sender = _fill(b"a.b<c(d", size) + b"<" + FROM + b">"
    return build_mail(_reply_headers(sender=sender, subject=b"new game"),
                      b"new game\r\nbots: 3\r\n")


def gen_to_no_spaces(rng: random.Random, size: int) -> bytes:
    """A To of ``size`` bytes without a space."""
    return build_mail(_reply_headers(to=_fill(b"x,y@z<", size) + TO), b"QS\r\n")


def gen_parentheses(rng: random.Random, size: int) -> bytes:
    """A To of nested parentheses (comments, RFC 5322 §3.2.2), ``size // 2`` deep."""
    return build_mail(_reply_headers(to=b"(" * (size // 2) + b")" * (size // 2) + b" <" + TO + b">"), b"QS\r\n")


def gen_many_addresses(rng: random.Random, size: int) -> bytes:
    """``new@`` listing ``size`` bytes of addresses."""
    body = b"new game\r\nplayers: " + _fill(b"someone@elsewhere.test, ", size) + b"\r\n"
    return build_mail(_reply_headers(subject=b"new game"), body)


def gen_html_nesting(rng: random.Random, size: int) -> bytes:
    """An HTML-only reply of tags nested ``size // 11`` deep."""
    depth = size // 11
    body = b"<div><b>" * (depth // 2) + b"QS" + b"</b></div>" * (depth // 4)
    return build_mail(_reply_headers(content_type=b"text/html; charset=utf-8"), body)


def gen_many_headers(rng: random.Random, size: int) -> bytes:
    """``size`` bytes of header fields."""
    headers = _reply_headers()
    headers += [(b"X-Filler-%d" % k, b"v") for k in range(size // 16)]
    return build_mail(headers, b"QS\r\n")


GENERATORS: dict[str, Generator] = {g.name: g for g in (
    Generator("charsets", "seat", gen_charsets),
    Generator("encodings", "seat", gen_encodings),
    Generator("nesting", "seat", gen_nesting),
    Generator("header_lengths", "seat", gen_header_lengths),
    Generator("nuls", "seat", gen_nuls),
    Generator("long_lines", "seat", gen_long_lines, source="webhook"),
    Generator("base64_garbage", "seat", gen_base64_garbage),
    Generator("nested_quotes", "seat", gen_nested_quotes),
    Generator("html_nesting", "seat", gen_html_nesting, source="webhook"),
    Generator("many_headers", "seat", gen_many_headers),
    Generator("token_no_at", "new-unknown", gen_token_no_at, source="webhook"),
    Generator("many_addresses", "new-known", gen_many_addresses, source="webhook"),
    Generator("from_no_spaces", "new-unknown", gen_from_no_spaces, source="webhook"),
    Generator("to_no_spaces", "seat", gen_to_no_spaces, source="webhook"),
    Generator("parentheses", "seat", gen_parentheses, source="webhook"),
)}
