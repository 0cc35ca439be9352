"""Computer players are named as a table would name them: a first name of their own, marked as a
computer with its strength ("Marta (computer, strong)"), in the reader's language, the same in every
mail and page of the game, distinct at the table and never a human player's name there."""

from __future__ import annotations

import re
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest
from sqlalchemy import select

from pbem.config import Settings
from pbem.db.models import OutboundMessage
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.mail.context import MailContext, Recipient, RequestRejected
from pbem.mail.links import game_link
from pbem.services import bot_names
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.games import SeatSpec, create_game, get_or_create_player, start_game
from pbem.services.mailing import seat_names
from pbem.web import create_app
from pbem.web.runtime import runtime

BOTS = ("random", "heuristic", "strong")


@pytest.fixture
def svc(db_url: str, tmp_path: Path) -> Services:
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": db_url,
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_MAIL_DOMAIN": "hearts.test",
        "PBEM_SECRET_KEY": "test-secret-key",
        "PBEM_BASE_URL": "https://hearts.test/",
    })
    services = Services.from_settings(settings, clock=ManualClock())
    yield services
    services.close()


def test_names_are_fixed_per_game_and_seat_and_distinct_at_any_table() -> None:
    for game_id in range(1, 200):
        names = [bot_names.first_name(game_id, seat) for seat in range(7)]
        assert len(set(names)) == 7, (game_id, names)
        assert names == [bot_names.first_name(game_id, seat) for seat in range(7)]
        assert set(names) <= set(bot_names.FIRST_NAMES)
    # The games do not all seat the same computer players.
    assert len({bot_names.first_name(game_id, 1) for game_id in range(1, 50)}) > 10


def test_a_computer_player_never_takes_a_human_players_name() -> None:
    drawn = bot_names.first_name(7, 2)
    for human in (drawn, drawn.upper(), f"{drawn} Popescu", f" {drawn.lower()} "):
        other = bot_names.first_name(7, 2, humans=[human, "Ana"])
        assert other != drawn and other in bot_names.FIRST_NAMES
    # Accents do not tell two names apart at a table ("Tomas" and "Tomás").
    game = next(g for g in range(1, 500) if bot_names.first_name(g, 0) == "Tomás")
    assert bot_names.first_name(game, 0, humans=["Tomas"]) != "Tomás"


def test_the_label_says_computer_and_strength_in_english_and_translated() -> None:
    labels = [bot_names.label(3, seat, bot) for seat, bot in enumerate(BOTS)]
    assert [str(x).partition(" ")[2] for x in labels] == [
        "(computer, easy)", "(computer, medium)", "(computer, strong)"]
    assert str(bot_names.label(3, 3, "some-new-bot")).endswith(" (computer)")
    pt = bot_names.localized(tuple(labels), "pt")
    ro = bot_names.localized(tuple(labels), "ro")
    assert [x.partition(" ")[2] for x in pt] == ["(computador, fácil)", "(computador, médio)", "(computador, forte)"]
    assert [x.partition(" ")[2] for x in ro] == ["(calculator, ușor)", "(calculator, mediu)", "(calculator, puternic)"]
    assert bot_names.localized(tuple(labels), "en") == tuple(labels)
    # Anywhere in a mail's context: a refusal's details too (frozen in a mapping proxy).
    refusal = MailContext(Recipient("Ana", "ana@x.org", "ro"), RequestRejected("NOT_WAITING", {"name": labels[2]}))
    seen = bot_names.localized(refusal, "ro")
    assert seen.detail.details["name"] == ro[2] and type(seen.detail.details["name"]) is str
    assert seen.recipient is refusal.recipient


def text_of(row: OutboundMessage) -> str:
    message = message_from_bytes(row.raw, policy=default)
    assert isinstance(message, EmailMessage)
    text = message.get_body(preferencelist=("plain",)).get_content()
    return re.sub(r" *\r?\n *", " ", text)  # a label may be wrapped with its sentence


@pytest.mark.parametrize(
    ("language", "words"),
    [("en", ("computer", "easy", "medium", "strong")), ("pt", ("computador", "fácil", "médio", "forte")),
     ("ro", ("calculator", "ușor", "mediu", "puternic"))],
)
def test_mails_and_the_game_page_name_the_computer_players_in_the_readers_words(
    svc: Services, language: str, words: tuple[str, ...]
) -> None:
    with transaction(svc.session_factory) as session:
        # The human takes the name the first computer player would have drawn: it must draw another.
        would_be = bot_names.first_name(1, 1)
        get_or_create_player(session, "ana@players.test", would_be, language=language)
        game = create_game(session, svc, rules=Rules.make("standard"),
                           seats=[SeatSpec(address="ana@players.test", name=would_be)]
                           + [SeatSpec(bot=b) for b in BOTS],
                           seed="fixed-seed")
        mails = start_game(session, svc, game)
        session.flush()
        game_id = game.id
        names = seat_names(list(game.seats))
        first_names = [names[s].partition(" ")[0] for s in (1, 2, 3)]
        rows = list(session.scalars(select(OutboundMessage).where(OutboundMessage.id.in_([m.id for m in mails]))))
    assert names[0] == would_be
    assert would_be not in first_names and len(set(first_names)) == 3
    computer, *strengths = words
    expected = [f"{first} ({computer}, {strength})" for first, strength in zip(first_names, strengths, strict=True)]
    assert rows and {r.recipient for r in rows} == {"ana@players.test"}
    text = "\n".join(text_of(r) for r in rows)  # the start of the game, whichever mails say it
    for label in expected:
        assert label in text
    assert "(bot " not in text

    app = create_app(svc.settings)
    try:
        link = game_link(svc.settings, game_id, 0).removeprefix(svc.settings.base_url)
        html = app.test_client().get(link).get_data(as_text=True)
    finally:
        runtime(app).dispose()
    for label in expected:
        assert label in html
