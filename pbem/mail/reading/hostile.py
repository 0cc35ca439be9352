"""Mail a hostile sender might write, made to size: for the reading path's benchmark and tests.

Each generator takes a size in bytes and returns raw message bytes of about that size, built to
hit one weakness a reader of untrusted mail can have (a regex that backtracks, a recursive
parser, a loop over lines that copies the text). :data:`GENERATORS` names them;
``python -m pbem.mail.reading.bench --hostile`` times the whole reading path on each at 10 kB,
100 kB, 1 MB and 10 MB (the default ``PBEM_MAX_MESSAGE_SIZE``).

Nothing here is used when mail is received; it is pure and deterministic (no randomness), so a
test may run any generator at a small size.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Final

_HEAD: Final = (
    b"From: Mallory <mallory@example.org>\r\nTo: new@hearts.example\r\n"
    b"Subject: hello\r\nMessage-ID: <m1@example.org>\r\n"
)


def _text_mail(body: bytes, headers: bytes = _HEAD, content_type: bytes = b"text/plain; charset=utf-8") -> bytes:
    return headers + b"Content-Type: " + content_type + b"\r\n\r\n" + body


def token_without_at(size: int) -> bytes:
    """One word-character token with no ``@``: the worst case of an unanchored address regex."""
    return _text_mail(b"new game " + b"a" * size + b"\r\n")


def token_with_dots(size: int) -> bytes:
    """``a.a.a.…`` with an ``@`` at the very end: backtracking over a dotted domain or local part."""
    return _text_mail(b"a." * (size // 2) + b"@x\r\n")


def from_without_spaces(size: int) -> bytes:
    """A From header of one long run of address characters (the webhook has no line limit)."""
    head = b"From: " + b"a" * size + b"\r\nTo: new@hearts.example\r\nSubject: x\r\n"
    return _text_mail(b"new game\r\n", head)


def to_without_spaces(size: int) -> bytes:
    """A To header of one long run of characters with many ``@`` and no separator."""
    head = b"From: m@example.org\r\nTo: " + b"a@" * (size // 2) + b"\r\nSubject: x\r\n"
    return _text_mail(b"help\r\n", head)


def many_recipients(size: int) -> bytes:
    """A To and a Cc with tens of thousands of addresses each."""
    one = b"Person <p@example.org>, "
    count = max(1, size // (2 * len(one)))
    head = b"From: m@example.org\r\nTo: " + one * count + b"\r\nCc: " + one * count + b"\r\nSubject: x\r\n"
    return _text_mail(b"help\r\n", head)


def nested_parentheses(size: int) -> bytes:
    """A To of nested comments ``((((…))))``: the standard library's address parser recurses."""
    depth = max(1, size // 2)
    head = b"From: m@example.org\r\nTo: " + b"(" * depth + b")" * depth + b"\r\nSubject: x\r\n"
    return _text_mail(b"help\r\n", head)


def nested_quotes(size: int) -> bytes:
    """Quoted text of ever-growing depth (``>``, ``> >``…) under a one-line reply."""
    lines = [b"QS", b"", b"On Mon, 3 Jun 2024 at 10:15, Bob <b@example.org> wrote:"]
    total, depth = 0, 1
    while total < size:
        line = b"> " * depth + b"text at this depth"
        lines.append(line)
        total += len(line) + 2
        depth = depth % 400 + 1
    return _text_mail(b"\r\n".join(lines) + b"\r\n")


def one_line_of_quote_marks(size: int) -> bytes:
    """A single line of nothing but ``>``: one quote of depth ``size``."""
    return _text_mail(b"QS\r\n\r\n" + b">" * size + b"\r\n")


def long_lines(size: int) -> bytes:
    """A few lines of a million characters of words, no quote, no newline (webhook mail)."""
    return _text_mail((b"word " * (size // 5)).strip() + b"\r\n")


def many_short_lines(size: int) -> bytes:
    """Lines of ``QS`` and filler: the line loops of the command reader at full length."""
    return _text_mail(b"QS please\r\n" * (size // 11))


def flowed_text(size: int) -> bytes:
    """``format=flowed`` with every line soft-broken: one paragraph ``size`` long."""
    return _text_mail(b"word \r\n" * (size // 7), content_type=b"text/plain; charset=utf-8; format=flowed")


def html_nesting(size: int) -> bytes:
    """HTML-only mail of deeply nested blockquotes and divs with a card on top."""
    depth = max(1, size // 40)
    body = b"<div>QS</div>" + b"<blockquote><div>" * depth + b"x" + b"</div></blockquote>" * depth
    return _text_mail(body, content_type=b"text/html; charset=utf-8")


def html_unclosed_tags(size: int) -> bytes:
    """HTML-only mail of many tags that are never closed, and stray end tags."""
    body = b"<p>QS" + b"<div><span></b>" * (size // 15)
    return _text_mail(body, content_type=b"text/html; charset=utf-8")


def base64_garbage(size: int) -> bytes:
    """A base64 body of arbitrary bytes declared as a charset that is not a text encoding."""
    data = bytes(range(256)) * (size * 3 // 4 // 256 + 1)
    body = base64.encodebytes(data[: size * 3 // 4]).replace(b"\n", b"\r\n")
    head = _HEAD + b"Content-Transfer-Encoding: base64\r\n"
    return _text_mail(body, head, b"text/plain; charset=uu")


def encoded_words(size: int) -> bytes:
    """A Subject and a From name made of thousands of RFC 2047 encoded words."""
    word = b"=?utf-8?q?caf=C3=A9?= "
    count = max(1, size // (2 * len(word)))
    head = (b"From: " + word * count + b"<m@example.org>\r\nTo: new@hearts.example\r\nSubject: "
            + word * count + b"\r\n")
    return _text_mail(b"help\r\n", head)


def deep_mime(size: int) -> bytes:
    """Multiparts nested inside each other (the parser recurses once per level)."""
    depth = max(1, size // 60)
    open_parts = b"".join(
        b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (k, k) for k in range(depth)
    )
    close_parts = b"".join(b"\r\n--b%d--\r\n" % k for k in reversed(range(depth)))
    return _HEAD + open_parts + b"Content-Type: text/plain\r\n\r\nQS" + close_parts


def many_parts(size: int) -> bytes:
    """One multipart/mixed of thousands of small attachments and a text part last."""
    part = b"--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment\r\n\r\nxx\r\n"
    count = max(1, size // len(part))
    body = part * count + b"--b\r\nContent-Type: text/plain\r\n\r\nQS\r\n--b--\r\n"
    return _HEAD + b"Content-Type: multipart/mixed; boundary=b\r\n\r\n" + body


def nul_bytes(size: int) -> bytes:
    """NUL bytes in headers, the charset name and the body."""
    head = b"From: Bob\x00 <b\x00@example.org>\r\nTo: new@hearts.example\r\nSubject: a\x00b\r\n"
    return _text_mail(b"Q\x00S\r\n" * (size // 5), head, b'text/plain; charset="utf\x008"')


def long_new_game(size: int) -> bytes:
    """A new-game request of many option lines and addresses (every line is read)."""
    lines = b"bots: 1\r\nbob@example.org\r\ntarget: 100\r\n" * (size // 40)
    return _text_mail(b"new game\r\n" + lines)


#: Every generator, by name.
GENERATORS: Final[dict[str, Callable[[int], bytes]]] = {
    fn.__name__: fn for fn in (
        token_without_at, token_with_dots, from_without_spaces, to_without_spaces, many_recipients,
        nested_parentheses, nested_quotes, one_line_of_quote_marks, long_lines, many_short_lines,
        flowed_text, html_nesting, html_unclosed_tags, base64_garbage, encoded_words, deep_mime,
        many_parts, nul_bytes, long_new_game,
    )
}
