"""HTML-only mail to plain text, keeping what reply extraction needs.

Reply extraction works on text where quoted mail is marked the way plain-text clients mark it, so
this converter writes the contents of ``<blockquote>`` and of the quote containers that clients
wrap around earlier mail (Gmail's ``gmail_quote``, Thunderbird's ``moz-cite-prefix``, Yahoo's
``yahoo_quoted``…) as ``> `` lines; everything after Outlook's ``appendonsend`` /
``divRplyFwdMsg`` markers is quoted too (Outlook puts the earlier mail *after* them, not inside).
Signature containers (``gmail_signature``, ``moz-signature``, Outlook's ``Signature``, Apple's
``AppleMailSignature``) are dropped. ``<hr>`` becomes Outlook's underscore separator line.

The standard library's tolerant ``html.parser`` is enough: no layout, no CSS, just text. It is
given at most :data:`MAX_HTML_CHARS` (a reply's own text is at the top of its HTML; the rest is
the quoted thread), with two things it handles slowly or not at all rewritten first, as a
browser reads them: a ``<`` that opens no tag is text (``&lt;``; the parser would take each one
alone, some microseconds apiece), and a numeric character reference of more digits than any code
point has is U+FFFD (the parser converts the digits to an int, which Python refuses beyond
4,300 digits with ``ValueError``).
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

_SKIP = frozenset({"head", "style", "script", "title", "template", "xml", "o:smarttagtype"})
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "wbr", "area", "base", "col", "source"})
_BLOCK = frozenset({
    "p", "div", "tr", "li", "ul", "ol", "table", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
    "blockquote", "dl", "dt", "dd", "section", "article", "header", "footer", "address", "center",
})
_QUOTE_CLASSES = frozenset({
    "gmail_quote", "gmail_quote_container", "gmail_attr", "moz-cite-prefix", "yahoo_quoted",
    "protonmail_quote", "outlookmessageheader", "zmail_extra", "x_gmail_quote", "x_yahoo_quoted",
})
_QUOTE_IDS = frozenset({"mail-editor-reference-message-container", "reply-intro"})
_QUOTE_REST_IDS = frozenset({"appendonsend", "divrplyfwdmsg", "x_appendonsend", "x_divrplyfwdmsg"})
_SIGNATURE_CLASSES = frozenset({"gmail_signature", "moz-signature", "x_gmail_signature"})
_SIGNATURE_IDS = frozenset({"signature", "applemailsignature", "ms-outlook-mobile-signature"})
_OUTLOOK_SEPARATOR = "_" * 32
#: Quote marks written for the deepest quotes: any depth reads as quoted, and more marks would
#: make the text grow with the square of the nesting.
MAX_QUOTE_MARKS = 16
_SPACES = re.compile(r"[ \t\r\n\f\u00a0\u200b]+")
#: Characters of HTML that are converted (see the module docstring).
MAX_HTML_CHARS = 128 * 1024
_TEXT_LT = re.compile(r"<(?![A-Za-z/!?])")
_HUGE_CHARREF = re.compile(r"&#(?:[xX][0-9A-Fa-f]{7,}|[0-9]{8,});?")


class _TextWriter(HTMLParser):
    """Collects lines of text, each with the quote depth it was written at."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[tuple[int, str]] = []
        self._line: list[str] = []
        self._line_depth = 0
        self._stack: list[tuple[str, int, int, bool]] = []  # tag, quote added, skip added, pre
        self._open: dict[str, int] = {}  # how many of each tag are on the stack
        self._quote = 0
        self._skip = 0
        self._pre = 0
        self._quote_rest = False

    # -- structure --------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self._newline(force=True)
            return
        if tag == "hr":
            self._newline()
            self._text(_OUTLOOK_SEPARATOR)
            self._newline()
            return
        if tag in _VOID:
            return
        quote = skip = 0
        attr = dict(attrs)
        classes = set((attr.get("class") or "").lower().split())
        ident = (attr.get("id") or "").lower()
        if tag in _SKIP or classes & _SIGNATURE_CLASSES or ident in _SIGNATURE_IDS:
            skip = 1
        if tag == "blockquote" or classes & _QUOTE_CLASSES or ident in _QUOTE_IDS:
            quote = 1
        if ident in _QUOTE_REST_IDS:
            self._newline()
            self._quote_rest = True
        if tag in _BLOCK:
            self._newline()
        pre = tag == "pre"
        self._stack.append((tag, quote, skip, pre))
        self._open[tag] = self._open.get(tag, 0) + 1
        self._quote += quote
        self._skip += skip
        self._pre += pre

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if not self._open.get(tag):
            return  # a stray end tag: ignore, as browsers do
        while self._stack:
            open_tag, quote, skip, pre = self._stack.pop()
            self._open[open_tag] -= 1
            if open_tag in _BLOCK:
                self._newline()
            self._quote -= quote
            self._skip -= skip
            self._pre -= pre
            if open_tag == tag:
                break

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    # -- text -------------------------------------------------------------------------------
    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre:
            first, *rest = data.split("\n")
            self._text(first)
            for piece in rest:
                self._newline(force=True)
                self._text(piece)
            return
        text = _SPACES.sub(" ", data)
        if not self._line:
            text = text.lstrip()
        if text:
            self._text(text)

    def _text(self, text: str) -> None:
        if not self._line:
            self._line_depth = self._quote + (1 if self._quote_rest else 0)
        self._line.append(text)

    def _newline(self, force: bool = False) -> None:
        if self._line:
            self.lines.append((self._line_depth, "".join(self._line).rstrip()))
            self._line = []
        elif force and not self._skip:
            self.lines.append((self._quote + (1 if self._quote_rest else 0), ""))

    def text(self) -> str:
        self._newline()
        out: list[str] = []
        for depth, line in self.lines:
            out.append(("> " * min(depth, MAX_QUOTE_MARKS) + line).rstrip() if depth else line)
        return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def html_to_text(html: str) -> str:
    """The readable text of an HTML mail body, earlier mail marked with ``> `` (module doc)."""
    html = _HUGE_CHARREF.sub("\ufffd", _TEXT_LT.sub("&lt;", html[:MAX_HTML_CHARS]))
    writer = _TextWriter()
    writer.feed(html)
    writer.close()
    return writer.text()


# -- our own HTML, read as text quickly ------------------------------------------------------------
# pbem keeps what quote removal needs of every mail it sends (``pbem.mail.quoted``), worked out when
# the mail is composed, so that a reply never parses the mail it answers. The tolerant parser above
# takes a millisecond or two for a table's mail; the HTML that pbem's templates write (autoescaped:
# no stray ``<``, no oversized character references; inline styles: no class or id, so no quote or
# signature container) reads the same through a few regular expressions, in a fifth of the time.
# HTML with a ``<pre>``, a ``<blockquote>``, a class, an id or a tag name in capitals goes to
# :func:`html_to_text` itself.
# tests/mail/test_quoted.py checks that both give the same lines for every sample mail.
_NOT_SIMPLE_MARKERS = ("<pre", "<blockquote", "class=", "id=")
_CAPITAL_TAG = re.compile(r"</?[A-Z]")
_COMMENT_OR_DECL = re.compile(r"<!--.*?-->|<![^>]*>|<\?[^>]*>", re.DOTALL)
_SKIPPED_ELEMENT = re.compile(
    r"<(" + "|".join(sorted(re.escape(tag) for tag in _SKIP)) + r")\b[^>]*>.*?</\1\s*>", re.DOTALL)
_BREAK = "\x00"  # a line break between tags, apart from the white space of the text
_HR_TAG = re.compile(r"<hr\b[^>]*>")
_BREAKING_TAG = re.compile(r"</?(?:" + "|".join(sorted(_BLOCK | {"br"})) + r")(?![^\s/>])[^>]*>")
_OTHER_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def own_html_to_text(html: str) -> str:
    """The lines that :func:`html_to_text` reads from HTML written by pbem's templates (blank lines
    left out), quickly (see above); other HTML goes through :func:`html_to_text`."""
    html = html[:MAX_HTML_CHARS]
    if any(marker in html for marker in _NOT_SIMPLE_MARKERS) or _CAPITAL_TAG.search(html):
        return html_to_text(html)
    text = _SKIPPED_ELEMENT.sub("", _COMMENT_OR_DECL.sub("", html))
    text = _HR_TAG.sub(_BREAK + _OUTLOOK_SEPARATOR + _BREAK, text)
    text = _OTHER_TAG.sub("", _BREAKING_TAG.sub(_BREAK, text))
    pieces = unescape(text).replace("\u200b", " ").split(_BREAK)
    return "\n".join(filter(None, (" ".join(piece.split()) for piece in pieces)))
