"""A card written in the Subject of a reply with no new text is played, and the outcome says where it
was read; a card name with a typo is answered with what was written, the card it is close to and
how to write one with a card the player holds. Through the services, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from email.utils import make_msgid

import pytest

from pbem.db.models import OutboundMessage
from pbem.services.app import Services
from tests.harness.players import Received
from tests.integration.mailplay import deliver, last_outcome, new_game, text_of


def reply(turn: Received, sender: str, *, subject: str, body: str) -> bytes:
    quoted = "\r\n".join("> " + line for line in turn.text.splitlines()[:40])
    lines = [
        f"From: {sender}", f"To: {turn.reply_to}", f"Subject: {subject}",
        f"Message-ID: {make_msgid(domain='players.test')}", f"In-Reply-To: {turn.message_id}",
        f"References: {turn.message_id}", "MIME-Version: 1.0", 'Content-Type: text/plain; charset="utf-8"',
        "Content-Transfer-Encoding: 8bit", "", body, "",
        "On Mon, 30 Nov 2026 at 10:00, Hearts <hearts@example> wrote:", quoted, "",
    ]
    return "\r\n".join(lines).encode("utf-8")


def first_turn(svc: Services) -> tuple[OutboundMessage, Received]:
    _game_id, mails = new_game(svc, pass_cycle=["hold"])
    mail = next(m for m in mails if m.kind == "your_turn")
    return mail, Received.parse(mail.raw)


@pytest.mark.parametrize("written", ["{card}", "{spaced}"])
def test_a_card_in_the_subject_of_an_empty_reply_is_played(svc: Services, written: str) -> None:
    mail, turn = first_turn(svc)
    card = turn.legal[0]
    spaced = ("10" if card[0] == "T" else card[0]) + " " + card[1].lower()  # "q s", "10 h"
    subject = "AW: Re[2]: " + turn.subject + " " + written.format(card=card, spaced=spaced)
    deliver(svc, reply(turn, mail.recipient, subject=subject, body=""), mail.recipient, turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["code"] == "MOVE_APPLIED", outcome
    assert outcome["move"]["card"] == card
    assert outcome["read_from"] == "subject"


def test_the_subject_is_not_read_when_the_body_has_new_text(svc: Services) -> None:
    mail, turn = first_turn(svc)
    deliver(svc, reply(turn, mail.recipient, subject=f"Re: {turn.subject} {turn.legal[0]}", body="status"),
            mail.recipient, turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["code"] != "MOVE_APPLIED" and "read_from" not in outcome, outcome


def test_the_subject_of_an_empty_reply_without_a_card_is_still_no_new_text(svc: Services) -> None:
    mail, turn = first_turn(svc)
    deliver(svc, reply(turn, mail.recipient, subject=f"Re: {turn.subject}", body=""), mail.recipient, turn.reply_to)
    assert last_outcome(svc)["code"] == "EMPTY"


def test_a_typo_is_echoed_with_a_suggestion_and_an_example_from_the_hand(svc: Services) -> None:
    mail, turn = first_turn(svc)
    assert "3C" in turn.legal  # following the first trick's 2♣ (the deal of the seed)
    answers = deliver(svc, reply(turn, mail.recipient, subject=f"Re: {turn.subject}", body="thre of clubs"),
                      mail.recipient, turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["code"] == "DID_YOU_MEAN", outcome
    rejection = next(m for m in answers if m.recipient == mail.recipient)
    text = " ".join(text_of(rejection).split())
    assert "You wrote “thre of clubs”. Did you mean 3♣?" in text
    example = turn.legal[len(turn.legal) // 2]  # a card the player may play
    letters = ("10" if example[0] == "T" else example[0]) + example[1]
    assert f"To name a card, write its rank and suit, for example “{letters}”" in text


def test_the_answer_to_a_move_read_from_the_subject_says_so(svc: Services) -> None:
    """A card that may not be played, read from the subject: the rejection says where it was read."""
    mail, turn = first_turn(svc)
    card = next(c for c in turn.hand if c not in turn.legal)
    answers = deliver(svc, reply(turn, mail.recipient, subject=f"Re: {turn.subject} {card}", body=""),
                      mail.recipient, turn.reply_to)
    outcome = last_outcome(svc)
    assert outcome["read_from"] == "subject" and outcome["code"] != "MOVE_APPLIED", outcome
    rejection = next(m for m in answers if m.recipient == mail.recipient)
    text = " ".join(text_of(rejection).split())
    assert f"Your last mail had no new text, so I read your move from its subject: “{card}”." in text


def test_a_typo_is_never_read_as_a_card_the_player_may_not_name(svc: Services) -> None:
    """README, "Playing by mail": the hint names only a card of the decision's X-Hearts-Legal."""
    mail, turn = first_turn(svc)
    for card, typo in (("QS", "qeen of spades"), ("JH", "jak of hearts")):
        assert card not in turn.legal
        answers = deliver(svc, reply(turn, mail.recipient, subject=f"Re: {turn.subject}", body=typo),
                          mail.recipient, turn.reply_to)
        assert last_outcome(svc)["code"] != "DID_YOU_MEAN"
        rejection = next(m for m in answers if m.recipient == mail.recipient)
        assert "Did you mean" not in text_of(rejection)


def test_a_reply_with_only_a_signature_is_shown_how_to_write_a_card(svc: Services) -> None:
    """README, "Playing by mail": every reply that names no card shows how to write one, with a card
    from the hand; a signature alone is no new text, and got no example."""
    mail, turn = first_turn(svc)
    answers = deliver(svc, reply(turn, mail.recipient, subject=f"Re: {turn.subject}",
                                 body="-- \r\nAna Sousa\r\nSent from my iPhone"), mail.recipient, turn.reply_to)
    assert last_outcome(svc)["code"] == "EMPTY"
    rejection = next(m for m in answers if m.recipient == mail.recipient)
    text = " ".join(text_of(rejection).split())
    example = turn.legal[len(turn.legal) // 2]
    letters = ("10" if example[0] == "T" else example[0]) + example[1]
    assert "Your reply had no new text" in text
    assert f"To name a card, write its rank and suit, for example “{letters}”" in text
