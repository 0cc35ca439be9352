"""What a refused reply says and leaves alone, through the services on SQLite and PostgreSQL: a pass
of cards not held names every one of them, the table talk of a refused reply is not passed on (the
refusal quotes it, to be sent again with the corrected reply), and ``resign`` asks first: only
``resign confirm`` gives the seat away (README, "Playing by mail", "Table talk")."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sqlalchemy import select

from pbem.db.models import Seat, SeatStatus, TableTalk
from pbem.db.session import transaction
from pbem.mail.cards_display import card_text
from pbem.mail.reading.commands import Resign, parse_command
from pbem.mail.render import MailRenderer
from pbem.mail.samples import sample_contexts
from pbem.services.app import Services
from tests.harness.players import Received, choose
from tests.integration.mailplay import Mailbox, address, answer, html_of, last_outcome, new_game
from tests.integration.mailplay import text_of as raw_text

DECK = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


def turn_mail(mails, seat: int | None = None):
    """The decision mail (``your_turn``) of ``seat`` (of whoever is asked, when None)."""
    return next(m for m in mails if m.kind == "your_turn" and (seat is None or m.recipient == address(seat)))


def text_of(mail) -> str:
    """The text part with its lines joined (the text is wrapped to 72 columns)."""
    return " ".join(raw_text(mail).split())


def talk_rows(svc: Services) -> list[tuple[int, str]]:
    with transaction(svc.session_factory) as session:
        return [tuple(r) for r in session.execute(select(TableTalk.seat, TableTalk.text).order_by(TableTalk.id))]


# -- a pass of cards not held -------------------------------------------------------------------------


def test_a_refused_pass_names_every_card_not_held(svc: Services) -> None:
    _, mails = new_game(svc)  # hand 1 passes to the left
    turn = turn_mail(mails, 0)
    hand = Received.parse(turn.raw).hand
    missing = [c for c in DECK if c not in hand][:2]
    (refusal,) = answer(svc, turn, f"pass: {hand[0]} {missing[0]} {missing[1]}")
    outcome = last_outcome(svc)
    assert refusal.kind == "move_rejected" and outcome["code"] == "CARD_NOT_IN_HAND"
    text, html = text_of(refusal), html_of(refusal)
    assert "You do not hold these 2 cards:" in text  # plural, and both named
    sentence = text.split("You do not hold", 1)[1].split(".", 1)[0]
    for card in missing:
        assert card_text(card) in sentence
        assert card[0] in html
    assert card_text(hand[0]) not in sentence
    # One card not held is still one card.
    (single,) = answer(svc, turn, f"pass: {hand[0]} {hand[1]} {missing[0]}")
    assert f"You do not hold {card_text(missing[0])}." in text_of(single)


# -- the talk of a refused reply ------------------------------------------------------------------------


def test_the_talk_of_a_refused_move_is_not_passed_on_and_the_corrected_reply_delivers_it_once(
        svc: Services) -> None:
    _, mails = new_game(svc, people=2, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    turn = turn_mail(mails)
    leader = Received.parse(turn.raw)
    other = 1 - leader.seat
    wrong = next(c for c in leader.hand if c not in leader.legal)  # 2♣ leads, or suit is followed
    refused = box.add(answer(svc, turn, f"say Good luck, all!\n{wrong}"))
    assert [m.kind for m in refused] == ["move_rejected"]
    assert last_outcome(svc)["status"] == "rejected" and last_outcome(svc)["talk_withheld"] is True
    assert talk_rows(svc) == []  # taken back: nobody will be told
    text = text_of(refused[0])
    assert "Your table talk was not passed on" in text and "“Good luck, all!”" in text
    assert "Write it again in your corrected reply" in text
    assert "Good luck, all!" in html_of(refused[0])
    # The corrected reply, with its talk again: the table reads it once.
    box.add(answer(svc, refused[0], f"say Good luck, all!\n{leader.legal[0]}"))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED"
    assert talk_rows(svc) == [(leader.seat, "Good luck, all!")]
    rng = random.Random(4)
    for _ in range(6):
        pending = [m for m in box.mails if m.kind == "your_turn"]
        box.add(answer(svc, pending[-1], choose(Received.parse(pending[-1].raw), rng)))
    heard = [m for m in box.to(other) if "Good luck, all!" in text_of(m)]
    assert len(heard) == 1


def test_the_talk_of_a_reply_the_reader_refuses_is_not_passed_on_either(svc: Services) -> None:
    _, mails = new_game(svc, people=2, pass_cycle=["hold"])
    turn = turn_mail(mails)
    (refusal,) = answer(svc, turn, "say sorry for the wait\nQS AH")  # two cards for one play
    assert refusal.kind == "request_rejected" and last_outcome(svc)["code"] == "TWO_CARDS"
    assert talk_rows(svc) == []
    assert "“sorry for the wait”" in text_of(refusal) and "not passed on" in text_of(refusal)
    # Talk with a reply that is carried out is passed on as before; a reply of only talk too.
    assert answer(svc, turn, "say sorry for the wait") == []
    assert talk_rows(svc) == [(Received.parse(turn.raw).seat, "sorry for the wait")]


# -- resigning asks first ----------------------------------------------------------------------------------


def test_the_reader_knows_the_confirmation_of_resign_in_three_languages() -> None:
    for text in ("resign", "I resign", "desisto", "renunț", "give up"):
        assert parse_command(text, expected="play") == Resign(confirmed=False), text
    for text in ("resign confirm", "Resign confirm", "confirm resignation", "desisto confirmo",
                 "confirmo que desisto", "renunț confirm", "confirm că renunț"):
        assert parse_command(text, expected="play") == Resign(confirmed=True), text
    # Like resign, its confirmation is never chosen beside a card.
    assert type(parse_command("resign confirm\nQS", expected="play")).__name__ == "Ambiguous"


def seat_status(svc: Services, seat: int) -> str:
    with transaction(svc.session_factory) as session:
        return str(session.scalars(select(Seat.status).where(Seat.seat == seat)).one())


def test_resign_says_what_it_means_and_only_the_confirmation_resigns(svc: Services) -> None:
    _, mails = new_game(svc, people=2, pass_cycle=["hold"])
    box = Mailbox(list(mails))
    asked = box.add(answer(svc, box.to(1)[-1], "resign"))
    assert [(m.kind, m.recipient) for m in asked] == [("resign_asked", address(1))]
    assert last_outcome(svc)["code"] == "RESIGN_ASKED"
    assert seat_status(svc, 1) == str(SeatStatus.JOINED)  # nothing changed
    text = text_of(asked[0])
    assert "cannot be undone" in text and "a computer player takes your seat" in text
    assert "    resign confirm" in raw_text(asked[0]).splitlines()  # the reply to write, alone on its line
    # The confirmation, as a reply to that mail, resigns.
    done = box.add(answer(svc, asked[0], "resign confirm"))
    assert last_outcome(svc)["code"] == "RESIGNED"
    assert seat_status(svc, 1) == str(SeatStatus.BOT)
    assert "seat_replaced" in [m.kind for m in done if m.recipient == address(1)]


def test_the_help_mail_says_resign_asks_for_a_confirmation(svc: Services) -> None:
    _, mails = new_game(svc, people=2, pass_cycle=["hold"])
    (help_mail,) = answer(svc, Mailbox(list(mails)).to(1)[-1], "help")
    assert "“resign confirm”" in text_of(help_mail) and "resign confirm" in html_of(help_mail)


@pytest.mark.parametrize("language", ["en", "pt", "ro"])
def test_the_confirmation_each_language_s_mail_asks_for_is_read_as_one(language: str) -> None:
    renderer = MailRenderer(Path(__file__).resolve().parents[2] / "templates")
    text = renderer.render(sample_contexts(language)["resign_asked"][0]).text
    asked = [line.strip() for line in text.splitlines() if line.startswith("    ") and line.strip()]
    assert len(asked) == 1, text
    assert parse_command(asked[0], expected="play") == Resign(confirmed=True), asked[0]
