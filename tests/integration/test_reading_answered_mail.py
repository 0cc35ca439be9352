"""A reply is read without the lines of the mail it answers (``pbem.services.reading``): pbem keeps
the mails it sent, finds the one a reply answers (its In-Reply-To or References, else the reply
address written to) and drops what of it is left in the reply, so a quote in a format no pattern
knows is never read as the player's words. Through the services, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from email.utils import make_msgid

import pytest
from sqlalchemy import select, update

from pbem.db.models import OutboundMessage
from pbem.db.session import transaction
from pbem.services.app import Services
from tests.harness.players import Received
from tests.integration.mailplay import deliver, last_outcome, new_game


def unlabelled_reply(turn: Received, sender: str, card: str, *, threaded: bool = True) -> bytes:
    """A Finnish webmail's reply: the card, an attribution no pattern knows, and the mail answered
    quoted as it is, without ">" (its hand and legal cards would read as many cards)."""
    lines = [
        f"From: Aino <{sender}>",
        f"To: {turn.reply_to}",
        f"Subject: Re: {turn.subject}",
        f"Message-ID: {make_msgid(domain='players.test')}",
        *([f"In-Reply-To: {turn.message_id}", f"References: {turn.message_id}"] if threaded else []),
        "MIME-Version: 1.0",
        'Content-Type: text/plain; charset="utf-8"',
        "Content-Transfer-Encoding: 8bit",
        "",
        f"{card} kiitos",
        "",
        f"ma 30.11.2026 klo 10.00 Hearts <{turn.reply_to}> kirjoitti:",
        "",
        turn.text,
        "",
    ]
    return "\r\n".join(lines).encode("utf-8")


def first_turn(svc: Services) -> tuple[OutboundMessage, Received]:
    _game_id, mails = new_game(svc, pass_cycle=["hold"])
    mail = next(m for m in mails if m.kind == "your_turn")
    received = Received.parse(mail.raw)
    assert len(received.hand) == 13 and received.legal
    return mail, received


@pytest.mark.parametrize("threaded", [True, False], ids=["in-reply-to", "reply-address"])
def test_the_lines_of_the_mail_answered_are_not_read(svc: Services, threaded: bool) -> None:
    mail, turn = first_turn(svc)
    card = turn.legal[0]
    deliver(svc, unlabelled_reply(turn, mail.recipient, card, threaded=threaded), mail.recipient, turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["code"] == "MOVE_APPLIED", outcome
    assert outcome["move"]["card"] == card


def test_without_the_mail_answered_the_quote_is_read(svc: Services) -> None:
    """Once the retention has emptied the mail answered, the same reply names every quoted card:
    what the lines of the mail answered are for."""
    mail, turn = first_turn(svc)
    with transaction(svc.session_factory) as session:
        session.execute(update(OutboundMessage).values(raw=b""))
    deliver(svc, unlabelled_reply(turn, mail.recipient, turn.legal[0]), mail.recipient, turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["code"] == "TWO_CARDS", outcome


def test_a_reply_is_read_against_the_lines_kept_with_the_mail_not_its_bytes(svc: Services) -> None:
    """The outbox keeps the answered mail's lines (``pbem.mail.quoted``) when it is composed; a reply
    is read against those, so its reading parses no mail but its own."""
    mail, turn = first_turn(svc)
    with transaction(svc.session_factory) as session:
        quoted = session.scalar(select(OutboundMessage.quoted).where(OutboundMessage.id == mail.id))
    assert quoted and quoted.split("\n")[0] == turn.subject
    with transaction(svc.session_factory) as session:  # bytes no reader could take a line from
        session.execute(update(OutboundMessage).values(raw=b"kept for the operator only"))
    deliver(svc, unlabelled_reply(turn, mail.recipient, turn.legal[0]), mail.recipient, turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["code"] == "MOVE_APPLIED", outcome


@pytest.mark.parametrize("threaded", [True, False], ids=["in-reply-to", "reply-address"])
def test_a_mail_sent_before_its_lines_were_kept_is_read_from_its_bytes(svc: Services, threaded: bool) -> None:
    """A mail written before the outbox kept its lines (``quoted`` NULL: a game in progress at the
    upgrade) still has its quote removed, from its bytes."""
    mail, turn = first_turn(svc)
    with transaction(svc.session_factory) as session:
        session.execute(update(OutboundMessage).values(quoted=None))
    deliver(svc, unlabelled_reply(turn, mail.recipient, turn.legal[0], threaded=threaded), mail.recipient,
            turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["code"] == "MOVE_APPLIED", outcome
    assert outcome["move"]["card"] == turn.legal[0]
