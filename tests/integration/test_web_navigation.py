"""The web pages as a visitor moves between them: ``/`` and ``/help`` say what the server is and
how to start a game (and nothing about its games), every page links home, a seat's game page and
its replay link each other, the unsubscribe page links the seat's game page, and the game page
names each moon by the hand it happened in."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select

from pbem.config import Settings
from pbem.db.models import Seat
from pbem.db.session import make_engine, make_session_factory
from pbem.engine import PlayCard, Rules, new_game
from pbem.mail.links import game_token, unsubscribe_token
from pbem.web import create_app
from pbem.web.runtime import runtime

from .test_web_game import NAMES, PlayedGame, page_path, play_a_game, store_game

HREF = re.compile(r'href="([^"]+)"')


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    return Settings.from_env({
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_DATABASE_URL": db_url,
        "PBEM_SECRET_KEY": "secret-key-for-navigation",
        "PBEM_BASE_URL": "https://hearts.example.org/",
        "PBEM_MAIL_DOMAIN": "hearts.example.org",
    })


@pytest.fixture
def client(settings: Settings):
    app = create_app(settings)
    yield app.test_client()
    runtime(app).dispose()


def links(html: str) -> set[str]:
    return set(HREF.findall(html))


def moon_in_hand_two() -> PlayedGame:
    """Two hands played out, the first without a moon and the second with seat 0 shooting it
    (seed 19: seat 0 plays its highest legal card, the others their lowest), the third dealt."""
    rng = random.Random(19)
    game = PlayedGame(new_game(Rules.make("standard")))
    for _ in range(2):
        game.deal(rng)
        game.pass_all()
        for _ in range(52):
            legal = game.state.legal_cards()
            card = legal[-1] if game.state.to_move == 0 else legal[0]
            game.played.add(card)
            game.do(PlayCard(game.state.to_move, card))
    game.deal(rng)
    history = game.state.history
    assert history[0][2] is None and history[1][2] is not None and history[1][2].seat == 0
    return game


def test_the_game_page_names_a_moon_by_its_own_hand(client: FlaskClient, settings: Settings) -> None:
    game_id = store_game(settings.database_url, moon_in_hand_two())
    html = client.get(page_path(settings, game_id, 1)).get_data(as_text=True)
    moons = re.findall(r'<p class="muted">(Hand \d+:) ([^<]*shot the moon\.)</p>', html)
    assert moons == [("Hand 2:", f"{NAMES[0]} shot the moon.")]


def test_the_home_page_says_how_to_start_a_game_and_nothing_of_the_games(
    client: FlaskClient, settings: Settings, early: PlayedGame
) -> None:
    store_game(settings.database_url, early)
    response = client.get("/")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "Hearts by email" in html
    assert '<a href="mailto:new@hearts.example.org">new@hearts.example.org</a>' in html
    assert "new game" in html and "bots: 3" in html
    assert {"/", "/help"} <= links(html)
    for name in NAMES:  # no player, no address, no game of the database
        assert name not in html and f"{name.lower()}@example.com" not in html
    assert "/game/" not in html and "Hearts #" not in html
    assert "/dev/mail" in html  # no relay configured: the dev mailbox exists, and is linked


def test_the_home_page_links_no_dev_mailbox_where_mail_really_goes_out(tmp_path: Path, db_url: str) -> None:
    settings = Settings.from_env({
        "PBEM_DATA_DIR": str(tmp_path / "data"), "PBEM_DATABASE_URL": db_url,
        "PBEM_SECRET_KEY": "x" * 20, "PBEM_RELAY_HOST": "smtp.example.org",
    })
    app = create_app(settings)
    try:
        html = app.test_client().get("/").get_data(as_text=True)
    finally:
        runtime(app).dispose()
    assert "/dev/mail" not in html


@pytest.mark.parametrize(
    ("language", "phrase"),
    [("pt", "Começar um jogo"), ("ro", "Începeți un joc")],
)
def test_the_home_and_help_pages_speak_the_browsers_language(
    client: FlaskClient, language: str, phrase: str
) -> None:
    home = client.get("/", headers={"Accept-Language": f"{language},en;q=0.5"})
    assert home.headers["Vary"] == "Accept-Language"
    html = home.get_data(as_text=True)
    assert f'<html lang="{language}">' in html
    assert phrase in html and "Start a game" not in html
    assert "new@hearts.example.org" in html
    help_html = client.get("/help", headers={"Accept-Language": language}).get_data(as_text=True)
    assert phrase in help_html and "How to play" not in help_html


def test_the_help_page_says_how_to_write_moves(client: FlaskClient) -> None:
    response = client.get("/help")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "<code>QS</code>" in html and "queen of spades" in html
    assert "new@hearts.example.org" in html
    assert "/" in links(html)


def test_a_seats_game_page_and_its_replay_link_each_other_and_home(
    client: FlaskClient, settings: Settings, early: PlayedGame
) -> None:
    game_id = store_game(settings.database_url, early)
    game_path = page_path(settings, game_id, 2)
    replay_path = f"{game_path}/replay"
    game_links = links(client.get(game_path).get_data(as_text=True))
    assert replay_path in game_links and "/" in game_links and "/help" in game_links
    replay_links = links(client.get(replay_path).get_data(as_text=True))
    assert game_path in replay_links and "/" in replay_links
    other_seats = {f"/game/{game_token(settings.secret_key, game_id, s)}" for s in (0, 1, 3)}
    assert not (game_links | replay_links) & {p + suffix for p in other_seats for suffix in ("", "/replay")}


def test_the_unsubscribe_page_links_the_seats_game_page(
    client: FlaskClient, settings: Settings, early: PlayedGame
) -> None:
    game_id = store_game(settings.database_url, early)
    engine = make_engine(settings.database_url)
    try:
        with make_session_factory(engine)() as session:
            player_id = session.scalar(select(Seat.player_id).where(Seat.game_id == game_id, Seat.seat == 1))
    finally:
        engine.dispose()
    token = unsubscribe_token(settings.secret_key, player_id=player_id, game_id=game_id, seat=1)
    page = links(client.get(f"/unsubscribe/{token}").get_data(as_text=True))
    assert page_path(settings, game_id, 1) in page and "/" in page
    # A link naming a seat the player does not hold links no game page.
    wrong = unsubscribe_token(settings.secret_key, player_id=player_id, game_id=game_id, seat=2)
    html = client.get(f"/unsubscribe/{wrong}").get_data(as_text=True)
    assert "/game/" not in html
    # The digest's link (all the player's games) has no game page to link.
    everywhere = unsubscribe_token(settings.secret_key, player_id=player_id)
    html = client.get(f"/unsubscribe/{everywhere}").get_data(as_text=True)
    assert "/game/" not in html and "/" in links(html)


def test_the_dev_mailbox_and_the_not_found_page_link_home(client: FlaskClient) -> None:
    assert "/" in links(client.get("/dev/mail").get_data(as_text=True))
    missing = client.get("/no/such/page")
    assert missing.status_code == 404
    assert "/" in links(missing.get_data(as_text=True))


@pytest.fixture(scope="module")
def early() -> PlayedGame:
    return play_a_game(whole_hands=0)
