"""The dev mailbox: read in a browser the mail that ``pbem serve`` would have sent.

With no relay configured (``PBEM_RELAY_HOST`` empty), outgoing mail is written to files
by ``pbem.mail.relay.DevMailbox`` (its docstring fixes the format: ``<data dir>/devmail/
<10-digit outbox id>.eml``, the raw message after ``Return-Path`` and ``Delivered-To``
trace headers).  These pages list and show those files; they read nothing else.

The list shows each mail's kind (``X-Hearts-Kind``: your_turn, hand_summary…), its game
(``X-Hearts-Game``) and the first line of its text, and filters by game and kind
(``/dev/mail?game=12&kind=your_turn``; each row's game and kind link to their filter).

They exist only while no relay is configured, and never with ``PBEM_ENV=production``:
every player's hand is in these mails, so a production front must not serve them even
when its relay setting is missing.  Elsewhere the routes are 404.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

from flask import Blueprint, Response, abort, render_template, request

from pbem.config import Settings
from pbem.mail.relay import dev_mailbox_dir, dev_mailbox_name

from .i18n import use_language
from .runtime import runtime

__all__ = ["DevMail", "blueprint", "dev_mailbox_enabled", "list_dev_mail", "read_dev_mail"]

blueprint = Blueprint("devmail", __name__, url_prefix="/dev/mail")

PAGE_SIZE = 100
#: With a filter, at most this many files are read for one page (newest first).
SCAN_LIMIT = 20_000
_FILE_NAME = re.compile(r"^(\d{10})\.eml$")
#: Headers shown above a message, in this order (the X-Hearts-* ones are for bots).
SHOWN_HEADERS = (
    "From", "To", "Reply-To", "Subject", "Date", "Message-ID", "In-Reply-To",
    "Auto-Submitted", "X-Hearts-Game", "X-Hearts-Seat", "X-Hearts-Phase", "X-Hearts-Hand",
    "X-Hearts-Legal",
)


def dev_mailbox_enabled(settings: Settings) -> bool:
    return not settings.relay_host and settings.environment != "production"


@dataclass(frozen=True, slots=True)
class DevMail:
    """One mail of the dev mailbox."""

    key: int
    message: EmailMessage

    @property
    def delivered_to(self) -> list[str]:
        return [str(v) for v in self.message.get_all("Delivered-To", [])]

    def header(self, name: str) -> str:
        value = self.message.get(name)
        return "" if value is None else str(value)

    @property
    def kind(self) -> str:
        return self.header("X-Hearts-Kind")

    @property
    def game(self) -> str:
        return self.header("X-Hearts-Game")

    def first_line(self) -> str:
        """The first non-blank line of the text part ("" if there is none)."""
        for line in (self.part("plain") or "").splitlines():
            if line.strip():
                return line.strip()
        return ""

    def headers(self) -> list[tuple[str, str]]:
        return [(name, self.header(name)) for name in SHOWN_HEADERS if name in self.message]

    def part(self, subtype: str) -> str | None:
        """The text of the ``text/<subtype>`` body part, decoded, or None."""
        body = self.message.get_body(preferencelist=(subtype,))
        if body is None:
            return None
        content = body.get_content()
        return content if isinstance(content, str) else None


def _parse(path: Path, key: int, headers_only: bool) -> DevMail:
    with path.open("rb") as handle:
        message = BytesParser(policy=policy.default).parse(handle, headersonly=headers_only)
    assert isinstance(message, EmailMessage)
    return DevMail(key=key, message=message)


def list_dev_mail(directory: Path, *, before: int | None = None, limit: int = PAGE_SIZE,
                  game: str | None = None, kind: str | None = None) -> list[DevMail]:
    """The newest mails first, those with a key below ``before`` if given, of game ``game`` and
    kind ``kind`` if given (at most ``SCAN_LIMIT`` files read)."""
    if not directory.is_dir():
        return []
    keys = sorted(
        (int(m.group(1)) for m in map(_FILE_NAME.match, (p.name for p in directory.iterdir())) if m),
        reverse=True,
    )
    if before is not None:
        keys = [k for k in keys if k < before]
    found = []
    for key in keys[:SCAN_LIMIT]:
        try:
            mail = _parse(directory / dev_mailbox_name(key), key, headers_only=False)
        except FileNotFoundError:
            continue  # replaced between listing and reading: it reappears on reload
        if (game and mail.game != game) or (kind and mail.kind != kind):
            continue
        found.append(mail)
        if len(found) == limit:
            break
    return found


def read_dev_mail(directory: Path, key: int) -> DevMail | None:
    path = directory / dev_mailbox_name(key)
    if not path.is_file():
        return None
    return _parse(path, key, headers_only=False)


def _directory() -> Path:
    settings = runtime().settings
    if not dev_mailbox_enabled(settings):
        abort(404)
    return dev_mailbox_dir(settings)


@blueprint.get("")
def mailbox() -> str:
    directory = _directory()
    before = request.args.get("before", type=int)
    game = request.args.get("game", "").strip() or None
    kind = request.args.get("kind", "").strip() or None
    mails = list_dev_mail(directory, before=before, game=game, kind=kind)
    use_language(None)
    older = mails[-1].key if len(mails) == PAGE_SIZE else None
    return render_template("devmail_list.html", mails=mails, directory=directory, older=older,
                           game=game or "", kind=kind or "")


@blueprint.get("/<int:key>")
def message(key: int) -> str:
    mail = read_dev_mail(_directory(), key)
    if mail is None:
        abort(404)
    use_language(None)
    return render_template("devmail_message.html", mail=mail)


@blueprint.get("/<int:key>/raw")
def raw(key: int) -> Response:
    path = _directory() / dev_mailbox_name(key)
    if not path.is_file():
        abort(404)
    return Response(path.read_bytes(), mimetype="text/plain", headers={"X-Content-Type-Options": "nosniff"})
