"""Outgoing mail: a `MailContext` rendered by the templates and wrapped as MIME bytes.

`MailComposer` is built once per process (no module-level instance) and holds the cached
template environments.  `MailComposer.compose` renders the text and HTML parts and writes
the message directly as bytes (CRLF line ends), instead of building an
`email.message.EmailMessage` with the default policy: that object model costs about 1.3 ms
a message (README, "Benchmarks"), several times the cost of writing the few headers and two
quoted-printable parts ourselves.  `bench` measures both; tests parse our output back with
`email.policy.default` to check it.

What every message carries:

- ``multipart/alternative`` with a ``text/plain`` and a ``text/html`` part, UTF-8,
  quoted-printable (lines stay under 77 characters; mostly-ASCII text stays readable);
- RFC 2047 encoded-words for non-ASCII display names and subjects;
- ``Date``, a unique ``Message-ID`` (given, or generated on the mail domain);
- ``In-Reply-To``/``References`` to the game's root Message-ID, and the stable subject
  ``[Hearts #42] <game title>`` from the templates, so all mails of a game form one thread;
- ``Auto-Submitted: auto-generated`` (RFC 3834: auto-responders must not answer it) and
  ``X-Auto-Response-Suppress: All`` (the same for Exchange/Outlook), against mail loops;
- ``Reply-To``: the seat's signed reply address (on news mails too: a command such as
  ``status`` or a ``say`` line may answer any mail, and the decision number in the address
  keeps a card from being applied twice);
- for bots and filters: ``X-Hearts-Kind``, ``X-Hearts-Game``, ``X-Hearts-Seat``,
  ``X-Hearts-Phase``, ``X-Hearts-Hand`` (canonical cards, space separated);
  ``X-Hearts-Decision`` and ``X-Hearts-Legal`` on the one mail that asks for a decision
  (``your_turn``: one decision, one mail) and on no other (`legal_header`); with them
  ``X-Hearts-Decline`` (a pass that may be declined) and ``X-Hearts-Charge-Limit`` (a charge).

News mails (a context with ``unsubscribe``) also carry ``List-Unsubscribe`` (the https link
first, then the mailto) and ``List-Unsubscribe-Post: List-Unsubscribe=One-Click`` (RFC 8058).
A context with inline images (the game summary's chart) wraps the HTML part and the images in
``multipart/related``; the images are base64 parts named by their ``Content-ID``.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from pathlib import Path

from pbem.resources import templates_dir as find_templates

from .context import GameContext, InlineImage, MailContext, YourTurn
from .quoted import quoted_record
from .render import MailRenderer, RenderedMail
from .samples import sample_contexts

__all__ = ["ComposedMail", "MailComposer", "bench", "canonical_cards", "legal_header"]

CRLF = "\r\n"
#: Encoded-words are at most 75 characters: ``=?utf-8?b?`` + base64 + ``?=``; 45 bytes of
#: UTF-8 make 60 base64 characters, 72 in all.
_EW_CHUNK_BYTES = 45
_SPECIALS = re.compile(r'[()<>\[\]:;@\\,."]')
_HEADER_NAME = re.compile(r"^[!-9;-~]+$")
_CANONICAL_SUIT_ORDER = {"C": 0, "D": 1, "H": 2, "S": 3}
_CANONICAL_RANK_ORDER = {r: i for i, r in enumerate("23456789TJQKA")}

Address = str | tuple[str, str]


@dataclass(frozen=True, slots=True)
class ComposedMail:
    """A message ready for the outbox: its Message-ID and the bytes to send."""

    message_id: str  # with angle brackets, as in the header
    raw: bytes
    recipient: str  # the bare envelope recipient address
    subject: str
    kind: str
    quoted: str = ""  # what quote removal needs of it (pbem.mail.quoted), for the outbox


def canonical_cards(cards: Sequence[str]) -> str:
    """Cards for machine headers: canonical strings, deck order (clubs first, 2 low)."""
    ordered = sorted(cards, key=lambda c: (_CANONICAL_SUIT_ORDER[c[1]], _CANONICAL_RANK_ORDER[c[0]]))
    return " ".join(ordered)


def call_reply(call: Sequence[Sequence[object]]) -> str:
    """A dealer's call (RULES.md §6.3) as its English reply: ``2 left 1 right``, ``3 across``, ``mix``."""
    return " ".join(str(d) if d == "mix" else f"{n} {d}" for d, n in call)


def legal_header(detail: YourTurn, game: GameContext) -> str:
    """``X-Hearts-Legal`` of a decision mail: what a reply may name.  To play: the legal cards;
    to pass: the hand (any ``pass_count`` of them); to discard (``kitty_exchange``, RULES.md
    §6.2): the hand with the kitty (any ``discard_count`` of them); a moon choice: ``old new``; to
    charge (Turbo Hearts, RULES.md §6.4): the chargeable cards held, any of them up to
    ``X-Hearts-Charge-Limit``, then ``none`` (the reply that charges nothing): ``QS TC none``."""
    if detail.decision == "charge":
        return " ".join(filter(None, (canonical_cards(game.charge_choices), "none")))
    if detail.decision == "call":  # dealer_calls_pass (RULES.md §6.3): the calls, as replies
        return ", ".join(call_reply(call) for call in game.call_choices)
    if detail.decision in ("pass", "discard"):
        return canonical_cards(game.hand)
    if detail.decision == "moon":
        return "old new"
    return canonical_cards(game.legal)


def _folded(name: str, value: str, width: int = 76) -> str:
    """``name: value`` folded after its commas (RFC 5322 §2.2.3) so that no line passes ``width``:
    the dealer's calls (RULES.md §6.3) make a long ``X-Hearts-Legal``."""
    first, *rest = value.split(", ")
    line, out = f"{name}: {first}", []
    for part in rest:
        if len(line) + 2 + len(part) > width:
            out.append(line + ",")
            line = " " + part
        else:
            line += ", " + part
    out.append(line)
    return CRLF.join(out)


def _check_header_value(value: str) -> str:
    if "\r" in value or "\n" in value:
        raise ValueError(f"header value with a line break: {value!r}")
    return value


def _encoded_words(text: str, first_line_used: int = 1) -> list[str]:
    """``text`` as RFC 2047 base64 encoded-words, never splitting a UTF-8 character.

    Each word goes on its own (folded) line; the first shares its line with
    ``first_line_used`` characters (``Subject: ``), so every line stays within 76.
    """

    def capacity(used: int) -> int:  # UTF-8 bytes that fit: 12 chars of =?utf-8?b??=
        return max(3, (76 - used - 12) // 4 * 3)

    words: list[str] = []
    chunk = bytearray()
    limit = min(capacity(first_line_used), _EW_CHUNK_BYTES)
    for char in text:
        encoded = char.encode("utf-8")
        if chunk and len(chunk) + len(encoded) > limit:
            words.append(f"=?utf-8?b?{base64.b64encode(bytes(chunk)).decode('ascii')}?=")
            chunk.clear()
            limit = _EW_CHUNK_BYTES
        chunk += encoded
    if chunk:
        words.append(f"=?utf-8?b?{base64.b64encode(bytes(chunk)).decode('ascii')}?=")
    return words


def _fold_ascii(name: str, text: str) -> str:
    """Fold an ASCII unstructured value at spaces so lines stay near 78 characters."""
    limit = 78
    if len(name) + 2 + len(text) <= limit:
        return text
    lines: list[str] = []
    current = ""
    used = len(name) + 2
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if current and used + len(candidate) > limit:
            lines.append(current)
            current, used = word, 1
        else:
            current = candidate
    lines.append(current)
    return (CRLF + " ").join(lines)


def encode_unstructured(name: str, text: str) -> str:
    """A header value for free text (Subject): ASCII as is (folded), else encoded-words."""
    _check_header_value(text)
    if text.isascii():
        return _fold_ascii(name, text)
    return (CRLF + " ").join(_encoded_words(text, len(name) + 2))


def _ascii_address(address: str) -> str:
    address = _check_header_value(address.strip())
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain:
        raise ValueError(f"not a mail address: {address!r}")
    if not domain.isascii():
        domain = domain.encode("idna").decode("ascii")
    if not local.isascii():
        raise ValueError(f"non-ASCII local part needs SMTPUTF8, not supported: {address!r}")
    return f"{local}@{domain}"


def can_address(address: str) -> bool:
    """Whether a mail can be addressed to ``address``: an addr-spec with no line break, an ASCII
    local part (the relay does not speak SMTPUTF8) and a domain that is ASCII or IDNA-encodable."""
    try:
        _ascii_address(address)
    except ValueError:  # UnicodeError (IDNA) is one too
        return False
    return True


def format_address(value: Address, header: str = "To") -> tuple[str, str]:
    """(header text, bare address) for ``"a@b"`` or ``("Name", "a@b")``.

    Non-ASCII names become encoded-words, one per folded line, the address on the last.
    """
    if isinstance(value, str):
        bare = _ascii_address(value)
        return bare, bare
    name, address = value
    bare = _ascii_address(address)
    name = " ".join(_check_header_value(name).split())
    if not name:
        return bare, bare
    if not name.isascii():
        return (CRLF + " ").join(_encoded_words(name, len(header) + 2) + [f"<{bare}>"]), bare
    if _SPECIALS.search(name):
        quoted = name.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{quoted}" <{bare}>', bare
    return f"{name} <{bare}>", bare


def _qp(text: str) -> bytes:
    """UTF-8 quoted-printable with CRLF line ends and soft breaks under 77 characters."""
    data = text.replace("\r\n", "\n").replace("\n", CRLF).encode("utf-8")
    return binascii.b2a_qp(data, quotetabs=False, istext=True, header=False)


class MailComposer:
    """Renders and assembles outgoing mail; build one per process and share it.

    ``domain`` is the mail domain for generated Message-IDs and the default sender
    (``hearts@<domain>``); ``clock`` gives the ``Date`` (tests pass a fixed one).
    """

    def __init__(
        self,
        templates_dir: str | Path,
        *,
        domain: str,
        sender: Address | None = None,
        clock: Callable[[], datetime] | None = None,
        locale_dir: Path | None = None,
        default_language: str = "en",
        renderer: MailRenderer | None = None,
    ) -> None:
        self.domain = domain.strip().lower()
        self.renderer = renderer or MailRenderer(
            templates_dir, locale_dir=locale_dir, default_language=default_language
        )
        self.sender: Address = sender or f"hearts@{self.domain}"
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._counter = itertools.count()
        self._id_prefix = secrets.token_hex(6)

    def new_message_id(self) -> str:
        """A unique Message-ID on our domain (random per process, then a counter)."""
        return f"<{self._id_prefix}.{next(self._counter)}.{secrets.token_hex(6)}@{self.domain}>"

    def render(self, context: MailContext, *, subject_tail: str | None = None) -> RenderedMail:
        return self.renderer.render(context, subject_tail=subject_tail)

    def compose(
        self,
        kind: str,
        context: MailContext,
        *,
        sender: Address | None = None,
        recipient: Address | None = None,
        reply_to: str | None = None,
        subject_tail: str | None = None,
        thread: str | Sequence[str] | None = None,
        headers: Mapping[str, str] | None = None,
        message_id: str | None = None,
        date: datetime | None = None,
    ) -> ComposedMail:
        """Render ``context`` and return the complete message.

        ``recipient`` defaults to the context's recipient; ``reply_to`` to the context's
        signed reply address; ``thread`` is the game's root Message-ID (or a References
        chain, oldest first); ``headers`` are extra headers (e.g. ``List-Unsubscribe``).
        """
        if kind != context.kind:
            raise ValueError(f"kind {kind!r} does not match the context's detail ({context.kind!r})")
        rendered = self.renderer.render(context, subject_tail=subject_tail)
        return self.assemble(
            rendered,
            context,
            sender=sender,
            recipient=recipient,
            reply_to=reply_to,
            thread=thread,
            headers=headers,
            message_id=message_id,
            date=date,
        )

    def assemble(
        self,
        rendered: RenderedMail,
        context: MailContext,
        *,
        sender: Address | None = None,
        recipient: Address | None = None,
        reply_to: str | None = None,
        thread: str | Sequence[str] | None = None,
        headers: Mapping[str, str] | None = None,
        message_id: str | None = None,
        date: datetime | None = None,
    ) -> ComposedMail:
        """Write the MIME bytes for already rendered parts."""
        message_id = message_id or self.new_message_id()
        from_value = sender or self.sender
        if isinstance(from_value, str) and rendered.from_name:
            from_value = (rendered.from_name, from_value)
        from_header, _ = format_address(from_value, "From")
        to_value = recipient or (context.recipient.name, context.recipient.address)
        to_header, to_bare = format_address(to_value)
        reply_address = reply_to if reply_to is not None else context.reply_address

        lines = [
            f"From: {from_header}",
            f"To: {to_header}",
        ]
        if reply_address:
            lines.append(f"Reply-To: {format_address(reply_address)[0]}")
        lines += [
            f"Subject: {encode_unstructured('Subject', rendered.subject)}",
            f"Date: {format_datetime(date or self._clock())}",
            f"Message-ID: {_check_header_value(message_id)}",
        ]
        if thread:
            chain = [thread] if isinstance(thread, str) else list(thread)
            chain = [_check_header_value(t) for t in chain if t and t != message_id]
            if chain:
                lines.append(f"In-Reply-To: {chain[-1]}")
                lines.append("References: " + (CRLF + " ").join(chain))
        lines += [
            "Auto-Submitted: auto-generated",
            "X-Auto-Response-Suppress: All",
            f"Content-Language: {self.renderer.language_for(context)}",
            f"X-Hearts-Kind: {context.kind}",
        ]
        game_id = context.game_id
        if game_id is not None:
            lines.append(f"X-Hearts-Game: {game_id}")
        game = context.game
        if game is not None:
            lines += [
                f"X-Hearts-Seat: {game.seat}",
                f"X-Hearts-Phase: {game.phase}",
                f"X-Hearts-Hand: {canonical_cards(game.hand)}",
            ]
            if isinstance(context.detail, YourTurn):  # one decision, one mail: only this one
                # The header values: the dealer's call is ``call_pass`` (RULES.md §6.3).
                decision = "call_pass" if context.detail.decision == "call" else context.detail.decision
                lines.append(f"X-Hearts-Decision: {decision}")
                lines.append(_folded("X-Hearts-Legal", legal_header(context.detail, game)))
                if context.detail.decision == "pass" and game.may_decline:  # pass_optional (RULES.md §6.3)
                    lines.append("X-Hearts-Decline: no pass")
                if context.detail.decision == "charge":  # Turbo Hearts (RULES.md §6.4)
                    lines.append(f"X-Hearts-Charge-Limit: {int(game.charge_limit)}")
        unsubscribe = context.unsubscribe
        if unsubscribe is not None:
            targets = [f"<{_check_header_value(unsubscribe.url)}>"]
            if unsubscribe.mailto:
                targets.append(f"<{_check_header_value(unsubscribe.mailto)}>")
            lines.append("List-Unsubscribe: " + ("," + CRLF + " ").join(targets))
            lines.append("List-Unsubscribe-Post: List-Unsubscribe=One-Click")
        for name, value in (headers or {}).items():
            if not _HEADER_NAME.match(name):
                raise ValueError(f"bad header name {name!r}")
            lines.append(f"{name}: {encode_unstructured(name, value)}")

        boundary = f"=_hearts_{secrets.token_hex(12)}"  # "=_" never occurs in QP bodies
        lines += [
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative;",
            f' boundary="{boundary}"',
            "",
            f"--{boundary}",
            'Content-Type: text/plain; charset="utf-8"',
            "Content-Transfer-Encoding: quoted-printable",
            "",
            "",
        ]
        head = CRLF.join(lines).encode("ascii")
        images = context.inline_images
        related = f"=_hearts_rel_{secrets.token_hex(12)}" if images else ""
        html_lines = ["", f"--{boundary}"]
        if related:
            html_lines += [
                'Content-Type: multipart/related; type="text/html";',
                f' boundary="{related}"',
                "",
                f"--{related}",
            ]
        html_lines += [
            'Content-Type: text/html; charset="utf-8"',
            "Content-Transfer-Encoding: quoted-printable",
            "",
            "",
        ]
        html_head = CRLF.join(html_lines).encode("ascii")
        tail = f"{CRLF}--{boundary}--{CRLF}".encode("ascii")
        # The CRLF before a boundary belongs to the boundary (RFC 2046), so each part's
        # own final line break is kept and one more separates it from the boundary.
        text_qp = _qp(rendered.text)
        html_qp = _qp(rendered.html)
        raw = b"".join((head, text_qp, html_head, html_qp, _image_parts(images, related), tail))
        return ComposedMail(
            message_id=message_id,
            raw=raw,
            recipient=to_bare,
            subject=rendered.subject,
            kind=context.kind,
            quoted=quoted_record(rendered.subject, rendered.text, rendered.html),
        )


def _image_parts(images: Sequence[InlineImage], boundary: str) -> bytes:
    """The inline images of a ``multipart/related`` part, then its closing boundary."""
    if not images:
        return b""
    out = []
    for image in images:
        name = _check_header_value(image.filename)
        if not re.fullmatch(r"[\w.-]+", name):
            raise ValueError(f"image file name must be a plain token: {name!r}")
        out.append(CRLF.join([
            "",
            f"--{boundary}",
            f"Content-Type: {_check_header_value(image.mime_type)}",
            "Content-Transfer-Encoding: base64",
            f"Content-ID: <{_check_header_value(image.cid)}>",
            f'Content-Disposition: inline; filename="{name}"',
            "",
            base64.encodebytes(image.data).decode("ascii").replace("\n", CRLF),
        ]))
    out.append(f"{CRLF}--{boundary}--")
    return "".join(out).encode("ascii")


def _compose_with_email_message(
    rendered: RenderedMail, context: MailContext, *, sender: str, message_id: str
) -> bytes:
    """The same message through the standard library's object model (for `bench` only)."""
    message = EmailMessage()
    message["From"] = f"{rendered.from_name} <{sender}>"
    message["To"] = f"{context.recipient.name} <{context.recipient.address}>"
    if context.reply_address:
        message["Reply-To"] = context.reply_address
    message["Subject"] = rendered.subject
    message["Date"] = format_datetime(datetime.now(timezone.utc))
    message["Message-ID"] = message_id
    message["Auto-Submitted"] = "auto-generated"
    if context.game is not None:
        message["X-Hearts-Game"] = str(context.game.game_id)
        message["X-Hearts-Seat"] = str(context.game.seat)
        message["X-Hearts-Phase"] = context.game.phase
        message["X-Hearts-Hand"] = canonical_cards(context.game.hand)
    message.set_content(rendered.text, cte="quoted-printable")
    message.add_alternative(rendered.html, subtype="html", cte="quoted-printable")
    return message.as_bytes(policy=SMTP)


def bench(n: int = 2000, *, templates_dir: str | Path | None = None, language: str = "en") -> dict[str, float]:
    """Print and return messages per second: rendering, and MIME assembly both ways.

    Uses the sample `your_turn` context (the most common mail) and counts CPU time.
    Figures are for reading, never for asserting.
    """
    if templates_dir is None:
        templates_dir = find_templates()
    composer = MailComposer(templates_dir, domain="hearts.example.org")
    context = sample_contexts(language)["your_turn"][0]
    composer.compose("your_turn", context, thread="<root@hearts.example.org>")  # warm caches
    rendered = composer.render(context)

    def rate(fn: Callable[[], object]) -> float:
        # CPU time of this process: steadier than wall time on a shared machine.
        start = time.process_time()
        for _ in range(n):
            fn()
        return n / (time.process_time() - start)

    results = {
        "render (text + html)": rate(lambda: composer.render(context)),
        "assemble, direct bytes": rate(
            lambda: composer.assemble(rendered, context, thread="<root@hearts.example.org>")
        ),
        "assemble, EmailMessage (policy.default)": rate(
            lambda: _compose_with_email_message(
                rendered, context, sender="hearts@hearts.example.org", message_id="<x@y>"
            )
        ),
        "compose (render + direct bytes)": rate(
            lambda: composer.compose("your_turn", context, thread="<root@hearts.example.org>")
        ),
    }
    size = len(composer.compose("your_turn", context).raw)
    print(f"pbem mail compose benchmark: {n} x your_turn ({language}), {size} bytes each")
    for label, value in results.items():
        print(f"  {label:<42} {value:10.0f} msgs/s  {1e6 / value:8.1f} µs/msg")
    return results


if __name__ == "__main__":  # python -m pbem.mail.compose
    bench()
