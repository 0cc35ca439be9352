"""The per-seat game page: the seat's own hand and what the whole table saw, nothing more.

A game is made directly with the engine (seeded deals, legal moves) and stored as the
services store one: player, game and seat rows, the move log and the snapshot.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from pbem.config import Settings
from pbem.db.models import Game, GameStatus, Move, Player, Seat, SeatStatus
from pbem.db.session import make_engine, make_session_factory, transaction
from pbem.engine import (
    Deal,
    GameState,
    PassCards,
    PlayCard,
    Rules,
    apply,
    move_to_dict,
    new_game,
    shuffled_deck,
)
from pbem.mail.cards_display import card_text
from pbem.web import create_app
from pbem.mail.links import game_link, game_token
from pbem.web.runtime import runtime

NAMES = ("Alice", "Bob", "Carol", "Dave")
CARD_SPAN = re.compile(r'<span class="card (red|black)">([^<]+)</span>')


@dataclass
class PlayedGame:
    """A game played with the engine, with what each seat was shown along the way."""

    state: GameState
    log: list[dict] = field(default_factory=list)
    passed: dict[int, set[str]] = field(default_factory=lambda: {s: set() for s in range(4)})
    played: set[str] = field(default_factory=set)

    def do(self, move) -> None:
        self.state, _events = apply(self.state, move)
        self.log.append(move_to_dict(move))

    def deal(self, rng: random.Random) -> None:
        self.do(Deal(shuffled_deck(self.state.rules, rng)))

    def pass_all(self) -> None:
        for seat in range(4):
            cards = tuple(sorted(self.state.hand(seat))[:3])
            self.passed[seat].update(cards)
            self.do(PassCards(seat, cards))

    def play(self, count: int) -> None:
        for _ in range(count):
            card = self.state.legal_cards()[0]
            self.played.add(card)
            self.do(PlayCard(self.state.to_move, card))


def play_a_game(*, whole_hands: int, seed: int = 7) -> PlayedGame:
    """``whole_hands`` hands played out, then the next dealt, passed and six cards played."""
    rng = random.Random(seed)
    game = PlayedGame(new_game(Rules.make("standard")))
    for _ in range(whole_hands):
        game.deal(rng)
        game.pass_all()
        game.play(52)
    game.deal(rng)
    game.pass_all()
    game.play(6)
    assert game.state.hand_no == whole_hands + 1 and game.state.phase == "play"
    return game


def store_game(url: str, played: PlayedGame | None, language: str = "en") -> int:
    engine = make_engine(url)
    try:
        with transaction(make_session_factory(engine)) as session:
            players = [
                Player(address=f"{name.lower()}@example.com", display_name=name, language=language)
                for name in NAMES
            ]
            session.add_all(players)
            state = played.state if played else None
            game = Game(
                rules=Rules.make("standard").to_dict(),
                status=GameStatus.ACTIVE if played else GameStatus.INVITING,
                snapshot=state.to_dict() if state else None,
                next_seq=len(played.log) + 1 if played else 1,
            )
            session.add(game)
            session.flush()
            for seat, player in enumerate(players):
                session.add(Seat(game_id=game.id, seat=seat, player=player, status=SeatStatus.JOINED))
            for seq, payload in enumerate(played.log if played else [], start=1):
                session.add(Move(game_id=game.id, seq=seq, kind=payload["type"],
                                 seat=payload.get("seat"), payload=payload))
            return game.id
    finally:
        engine.dispose()


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    return Settings.from_env({
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_DATABASE_URL": db_url,
        "PBEM_SECRET_KEY": "secret-key-for-game-pages",
        "PBEM_BASE_URL": "https://hearts.example.org/",
    })


@pytest.fixture
def app(settings: Settings) -> Iterator[Flask]:
    app = create_app(settings)
    yield app
    runtime(app).dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="module")
def early() -> PlayedGame:
    """The first hand under way: most cards are still in the hands."""
    return play_a_game(whole_hands=0)


@pytest.fixture(scope="module")
def played() -> PlayedGame:
    """The second hand under way, the first one scored."""
    return play_a_game(whole_hands=1)


def page_path(settings: Settings, game_id: int, seat: int) -> str:
    link = game_link(settings, game_id, seat)
    prefix = settings.base_url
    assert link.startswith(prefix + "/game/")
    return link.removeprefix(prefix)


def shown_cards(html: str) -> dict[str, str]:
    """Every card the page shows, by its text (``Q♠``), with its colour class."""
    return {text: colour for colour, text in CARD_SPAN.findall(html)}


@pytest.mark.parametrize("seat", [0, 2])
def test_game_page_shows_own_hand_and_never_another_seats(
    client: FlaskClient, settings: Settings, early: PlayedGame, seat: int
) -> None:
    played = early
    game_id = store_game(settings.database_url, played)
    response = client.get(page_path(settings, game_id, seat))
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    shown = shown_cards(html)

    state = played.state
    own = {card_text(c) for c in state.hand(seat)}
    assert own and own <= set(shown), "the seat's own hand is on its page"

    received = {card_text(c) for c in state.to_dict()["received"][seat]}
    assert received
    may_see = own | received | {card_text(c) for c in played.passed[seat] | played.played}
    assert set(shown) <= may_see, f"cards the seat may not see: {set(shown) - may_see}"

    hidden = {card_text(c) for other in range(4) if other != seat for c in state.hand(other)} - may_see
    assert hidden, "the other seats hold cards this seat has never seen"
    assert not hidden & set(shown)

    for text, colour in shown.items():
        assert colour == ("red" if text[-1] in "♥♦" else "black"), text
    for name in NAMES:
        assert name in html
    assert f"Hearts #{game_id}" in html
    assert f"You are {NAMES[seat]}, seat {seat + 1}." in html


def test_game_page_shows_table_scores_and_history(
    client: FlaskClient, settings: Settings, played: PlayedGame
) -> None:
    game_id = store_game(settings.database_url, played)
    html = client.get(page_path(settings, game_id, 0)).get_data(as_text=True)
    state = played.state
    totals = state.totals
    assert sum(totals) == 26
    assert "Hand 2, passing to the right." in html
    assert "Hand 1, passing to the left." in html  # in the history of play
    assert "Trick 2" in html  # six cards played in hand 2: the second trick is on the table
    assert "Last trick" in html
    for total in totals:
        assert f"<strong>{total}</strong>" in html
    # The history of play lists every card of hand 1 and of hand 2 so far.
    assert {card_text(c) for c in played.played} <= set(shown_cards(html))


def test_game_page_headers_keep_the_link_private(
    client: FlaskClient, settings: Settings, played: PlayedGame
) -> None:
    game_id = store_game(settings.database_url, played)
    response = client.get(page_path(settings, game_id, 1))
    assert response.status_code == 200
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "no-store" in response.headers["Cache-Control"]
    assert "noindex" in response.headers["X-Robots-Tag"]


def test_tampered_or_foreign_links_are_404(
    client: FlaskClient, settings: Settings, played: PlayedGame
) -> None:
    game_id = store_game(settings.database_url, played)
    good = page_path(settings, game_id, 1)
    assert client.get(good).status_code == 200

    token = good.removeprefix("/game/")
    payload, _, signature = token.partition(".")
    # A character inside the signature (the last one carries padding bits, so changing it
    # may decode to the same bytes).
    middle = len(signature) // 2
    flipped = f"{payload}.{signature[:middle]}{'A' if signature[middle] != 'A' else 'B'}{signature[middle + 1:]}"
    other_seat_payload = game_token(settings.secret_key, game_id, 2).partition(".")[0]
    for bad in (
        flipped,  # altered signature
        f"{other_seat_payload}.{signature}",  # another seat's payload under this signature
        token[:-5],  # truncated
        game_token("some-other-secret", game_id, 1),  # signed with another key
        game_token(settings.secret_key, game_id, 4),  # no such seat
        game_token(settings.secret_key, game_id + 1000, 0),  # no such game
        "not-a-token",
    ):
        response = client.get(f"/game/{bad}")
        assert response.status_code == 404, bad
        assert not shown_cards(response.get_data(as_text=True))


def test_game_page_before_the_deal(client: FlaskClient, settings: Settings) -> None:
    game_id = store_game(settings.database_url, None)
    response = client.get(page_path(settings, game_id, 3))
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "has not started yet" in html
    assert not shown_cards(html)


@pytest.mark.parametrize(
    ("language", "phrase", "own_phrase"),
    [("pt", "para a direita", "A sua mão"), ("ro", "la dreapta", "Mâna dumneavoastră")],
)
def test_game_page_speaks_the_players_language(
    client: FlaskClient, settings: Settings, played: PlayedGame, language: str, phrase: str,
    own_phrase: str,
) -> None:
    game_id = store_game(settings.database_url, played, language=language)
    html = client.get(page_path(settings, game_id, 0)).get_data(as_text=True)
    assert f'<html lang="{language}">' in html
    assert phrase in html  # hand 2 passes to the right, in the mail catalogs' words
    assert own_phrase in html  # from the web pages' own catalog
    assert "to the right" not in html and "Your hand" not in html
