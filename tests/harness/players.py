"""Scripted players: read a mail pbem sent, write the reply a person would send.

A player reads only what a person reads in the mail: the ``X-Hearts-*`` headers that pbem adds
for bots and filters (phase, hand, legal cards, the decision asked) and the ``Reply-To`` address.
The reply quotes the original below the new text, as mail clients do, so the reader's quote
stripping is exercised on every move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from email import message_from_bytes
from email.message import Message
from email.policy import default
from email.utils import make_msgid, parseaddr


@dataclass(frozen=True)
class Received:
    kind: str
    game: str | None
    seat: int | None
    decision: str | None
    hand: tuple[str, ...]
    legal: tuple[str, ...]
    reply_to: str
    message_id: str
    subject: str
    text: str

    @classmethod
    def parse(cls, raw: bytes) -> "Received":
        msg: Message = message_from_bytes(raw, policy=default)
        text_part = msg.get_body(preferencelist=("plain",))
        return cls(
            kind=str(msg.get("X-Hearts-Kind", "")),
            game=msg.get("X-Hearts-Game"),
            seat=int(msg["X-Hearts-Seat"]) if msg.get("X-Hearts-Seat") else None,
            decision=msg.get("X-Hearts-Decision"),
            hand=tuple(str(msg.get("X-Hearts-Hand", "")).split()),
            legal=tuple(str(msg.get("X-Hearts-Legal", "")).split()),
            reply_to=parseaddr(str(msg.get("Reply-To", "")))[1],
            message_id=str(msg.get("Message-ID", "")),
            subject=str(msg.get("Subject", "")),
            text=text_part.get_content() if text_part is not None else "",
        )


def choose(received: Received, rng: random.Random, pass_count: int = 3) -> str:
    """The words of a reply to a ``your_turn`` mail."""
    if received.decision == "pass":
        return " ".join(rng.sample(received.hand, pass_count))
    if received.decision == "moon":
        return rng.choice(["old", "new"])
    return rng.choice(received.legal)


def reply_bytes(received: Received, *, sender: str, body: str, message_id: str | None = None) -> bytes:
    """A reply as a mail client writes it: new text on top, the original quoted below."""
    quoted = "\r\n".join("> " + line for line in received.text.splitlines()[:40])
    message_id = message_id or make_msgid(domain=sender.split("@")[1])
    lines = [
        f"From: {sender}",
        f"To: {received.reply_to}",
        f"Subject: Re: {received.subject}",
        f"Message-ID: {message_id}",
        f"In-Reply-To: {received.message_id}",
        f"References: {received.message_id}",
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="utf-8"',
        "Content-Transfer-Encoding: 8bit",
        "",
        body,
        "",
        "On Mon, 30 Nov 2026 at 10:00, Hearts <hearts@example> wrote:",
        quoted,
        "",
    ]
    return "\r\n".join(lines).encode("utf-8")
