"""Signed game links and the page's reading of the move log (pure code, no server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from itsdangerous import URLSafeSerializer

from pbem.config import Settings
from pbem.engine import Rules
from pbem.services.game_views import LoggedMove, visible_history
from pbem.mail.links import GAME_LINK_SALT, SeatLink, game_link, game_token, read_game_token

SECRET = "links-secret"


def test_game_link_is_an_absolute_url_whose_token_names_the_seat(tmp_path: Path) -> None:
    settings = Settings.from_env({
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_SECRET_KEY": SECRET,
        "PBEM_BASE_URL": "https://hearts.example.org/play/",
    })
    link = game_link(settings, 42, 3)
    prefix = "https://hearts.example.org/play/game/"
    assert link.startswith(prefix)
    token = link.removeprefix(prefix)
    assert "/" not in token and "?" not in token
    assert read_game_token(SECRET, token) == SeatLink(game_id=42, seat=3)
    assert game_link(settings, 42, 2) != link


def test_tokens_from_another_key_or_purpose_do_not_verify() -> None:
    assert read_game_token("another-secret", game_token(SECRET, 1, 0)) is None
    # The same key signing for another purpose (another salt) is not a game link.
    other_purpose = URLSafeSerializer(SECRET, salt="pbem.something-else").dumps([1, 0])
    assert read_game_token(SECRET, other_purpose) is None


@pytest.mark.parametrize("payload", [{"g": 1, "s": 0}, [1], [1, 2, 3], [1, -1], [True, 0], ["1", 0], [1.0, 0]])
def test_well_signed_tokens_of_the_wrong_shape_are_refused(payload: object) -> None:
    token = URLSafeSerializer(SECRET, salt=GAME_LINK_SALT).dumps(payload)
    assert read_game_token(SECRET, token) is None


def move(kind: str, seat: int | None = None, **payload: object) -> LoggedMove:
    return LoggedMove(kind=kind, seat=seat, payload={"type": kind, **({"seat": seat} if seat is not None else {}), **payload})


def test_visible_history_hides_the_deck_and_other_seats_passes() -> None:
    rules = Rules.make("standard")
    deck = ["2C", "3C", "4C", "5C"] * 13  # never read: a deal shows nothing
    moves = [
        move("deal", deck=deck),
        move("pass", 0, cards=["QS", "AS", "KS"]),
        move("pass", 1, cards=["AH", "KH", "QH"]),
        move("play", 2, card="2C"),
        move("play", 3, card="AC"),
        move("play", 0, card="3C"),
        move("play", 1, card="KC"),
        move("play", 3, card="TH"),
        move("play", 0, card="QS"),
    ]
    (hand,) = visible_history(moves, seat=1, rules=rules)
    assert hand.number == 1 and hand.pass_direction == "left"
    assert hand.passed == ("AH", "KH", "QH")
    assert hand.seats_passed == 2
    first, second = hand.tricks
    assert first.plays == ((2, "2C"), (3, "AC"), (0, "3C"), (1, "KC"))
    assert (first.leader, first.winner, first.points) == (2, 3, 0)
    assert second.plays == ((3, "TH"), (0, "QS"))
    assert (second.winner, second.points) == (None, None)  # still on the table

    (seen_by_seat_2,) = visible_history(moves, seat=2, rules=rules)
    assert seen_by_seat_2.passed is None  # seat 2 has not passed; others' cards unseen
    assert seen_by_seat_2.seats_passed == 2


def test_visible_history_starts_a_hand_at_each_deal_with_its_pass_direction() -> None:
    rules = Rules.make("standard")
    moves = [move("deal", deck=[]), *[move("play", s % 4, card=c) for s, c in enumerate(["2C", "3C", "4C", "QS"])],
             move("deal", deck=[]), move("deal", deck=[], pass_direction="across")]
    hands = visible_history(moves, seat=0, rules=rules, results=[{"points": [13, 0, 0, 0]}])
    assert [h.pass_direction for h in hands] == ["left", "right", "across"]
    assert hands[0].tricks[0].points == 13 and hands[0].tricks[0].winner == 2  # 4C is highest
    assert hands[0].result == {"points": [13, 0, 0, 0]}
    assert hands[1].result is None
