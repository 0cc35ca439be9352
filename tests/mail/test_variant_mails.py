"""Hand-built positions of the §6 variants (RULES.md §6.1 partnership, §6.2 kitty), driven through
the engine, turned into mail contexts by ``pbem.services.mailing.game_context`` (what one seat may
see) and composed by the real composer: what each seat reads, and the decision headers.

The game and seat rows are stand-ins with the attributes ``game_context`` reads; no database.
"""

from __future__ import annotations

import random
from email import message_from_bytes, policy
from pathlib import Path
from types import SimpleNamespace

import pytest

from pbem.config import Settings
from pbem.engine import ChooseMoon, GameState, Rules, apply, new_game, shuffled_deck
from pbem.mail.compose import MailComposer
from pbem.mail.context import HandSummary, MailContext, Recipient, TrickDone, YourTurn
from pbem.mail.reading.commands import Discard, Play, parse_command
from pbem.services.mailing import game_context, hand_results
from tests.integration.test_auto_finish import DECK as CLUBS_DECK
from tests.integration.test_variant_mails_kitty import DECK as KITTY_DECK
from tests.integration.test_variant_mails_kitty import KITTY, SHOWN

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "email"
NAMES = ("Ana", "Bruno", "Carla", "Dinu")
RANKS = "23456789TJQKA"


@pytest.fixture(scope="module")
def composer() -> MailComposer:
    return MailComposer(TEMPLATES, domain="hearts.test")


SVC = SimpleNamespace(settings=Settings.from_env({
    "PBEM_DATABASE_URL": "sqlite://", "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "test-secret-key",
    "PBEM_BASE_URL": "https://hearts.test", "PBEM_BROKER_URL": "memory://",
}))


def rows(state: GameState) -> tuple[SimpleNamespace, list[SimpleNamespace]]:
    game = SimpleNamespace(id=7, title="Variant table", seats=[])
    for k in range(state.players):
        player = SimpleNamespace(display_name=NAMES[k], address=f"p{k}@players.test")
        game.seats.append(SimpleNamespace(seat=k, player=player, player_id=k + 1, bot=None, game=game, game_id=7,
                                          deadline_at=None, waiting_since=None, decisions=0))
    return game, game.seats


def mail(composer: MailComposer, state: GameState, seat: int, detail: object):
    game, seats = rows(state)
    ctx = MailContext(recipient=Recipient(NAMES[seat], f"p{seat}@players.test"), detail=detail,  # type: ignore[arg-type]
                      game=game_context(SVC, game, seats, state, seat))  # type: ignore[arg-type]
    composed = composer.compose(ctx.kind, ctx)
    message = message_from_bytes(composed.raw, policy=policy.default)
    text = " ".join(message.get_body(("plain",)).get_content().split())  # type: ignore[union-attr]
    return ctx, message, text


def lowest_club_play(state: GameState) -> GameState:
    """Seat 0 plays its lowest club; the others their first legal card."""
    legal = state.legal_cards()
    if state.to_move == 0:
        return state.play(min(legal, key=lambda c: RANKS.index(c[0])))
    return state.play(sorted(legal)[0])


# -- partnership (RULES.md §6.1) -------------------------------------------------------------------


def test_the_pass_to_the_partner_names_them_and_the_scores_show_the_teams(composer) -> None:
    rules = Rules.make("partnership", pass_to_partner=True)
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(3)))
    assert state.pass_direction == "across"
    ctx, message, text = mail(composer, state, 0, YourTurn("pass", started=True, rules=rules.to_dict()))
    assert ctx.game.partner == 2 and ctx.game.teams == ((0, 2), (1, 3))
    assert "Pass 3 cards to your partner, Carla." in text
    assert "Your partner is Carla, across the table: you play as a team" in text
    assert "Ana & Carla (your team)" in text and "Bruno & Dinu" in text
    assert message["X-Hearts-Decision"] == "pass"


def team_slam() -> GameState:
    state = new_game(Rules.make("partnership", moon="choice", pass_cycle=["hold"])).deal(CLUBS_DECK)
    while state.phase == "play":
        state = lowest_club_play(state)
    return state


def test_a_team_slam_is_asked_of_the_latest_trick_winner_in_team_words(composer) -> None:
    state = team_slam()
    assert state.phase == "moon" and state.shooter == (0, "moon")
    _, message, text = mail(composer, state, 0, YourTurn("moon", moon_total=26))
    assert "You and Carla took every penalty card: your team slammed! You won your team's latest trick" in text
    assert (message["X-Hearts-Decision"], message["X-Hearts-Legal"]) == ("moon", "old new")
    scored, events = apply(state, ChooseMoon(0, "new"))
    result = hand_results(scored)[-1]
    assert result.moon is not None and result.moon.team
    assert result.team_points == (-26, 0)
    summary = HandSummary(result)
    _, _, mine = mail(composer, scored, 2, summary)
    assert "You and Ana took every penalty card: your team subtracts 26 points." in mine
    _, _, theirs = mail(composer, scored, 1, summary)
    assert "Ana and Carla took every penalty card: their team subtracts 26 points." in theirs
    assert "Ana & Carla" in theirs and "Bruno & Dinu (your team)" in theirs


# -- kitty (RULES.md §6.2) -------------------------------------------------------------------------


def to_the_kitty(**options: object) -> GameState:
    state = new_game(Rules.make("kitty", pass_cycle=["hold"], **options)).deal(KITTY_DECK)
    while state.kitty_taker is None:
        state = lowest_club_play(state)
    return state


def test_the_kitty_is_shown_to_its_taker_only_and_its_points_hidden_from_the_others(composer) -> None:
    state = to_the_kitty()
    assert state.kitty_taker == 0 and sorted(state.kitty) == sorted(KITTY)
    other, message, text = mail(composer, state, 1, TrickDone())
    assert other.game.kitty == () and other.game.kitty_taker == 0
    assert f"Ana took the kitty at trick {state.kitty_trick}." in text
    assert not [c for c in SHOWN if c in text]
    headers = "\n".join(f"{k}: {v}" for k, v in message.items() if k.startswith("X-Hearts"))
    assert not [c for c in KITTY if c in headers.split()]
    # The taker's points as the others see them: without the kitty's three hearts.
    assert other.game.hand_points[0] == state.points[0] - 3
    mine, _, text = mail(composer, state, 0, TrickDone())
    assert mine.game.kitty == state.kitty and mine.game.hand_points[0] == state.points[0]
    assert f"You took the kitty at trick {state.kitty_trick}: 2♥, 3♥, 4♥, and A♣." in text


def test_the_discard_decision_mail_and_its_headers(composer) -> None:
    state = to_the_kitty(kitty_exchange=True)
    assert state.phase == "discard" and state.seats_to_act() == (0,)
    ctx, message, text = mail(composer, state, 0, YourTurn("discard"))
    assert message["X-Hearts-Decision"] == "discard"
    assert sorted(message["X-Hearts-Legal"].split()) == sorted(state.hand(0))
    assert set(KITTY) <= set(message["X-Hearts-Legal"].split())
    assert message["X-Hearts-Phase"] == "discard"
    assert "Reply with the 4 cards you discard, for example: discard 2♥ 3♥ 4♥ A♣" in text
    _, other, text = mail(composer, state, 1, TrickDone())
    assert other["X-Hearts-Decision"] is None and not [c for c in SHOWN if c in text]
    assert "Ana took the kitty at trick 2." in text


@pytest.mark.parametrize(("text", "expected", "command"), [
    ("discard 7C 8D", "discard", Discard(("7C", "8D"))),
    ("7♣ 8♦", "discard", Discard(("7C", "8D"))),
    ("descarto 7C e 8D", None, Discard(("7C", "8D"))),
    ("arunc 7C, 8D", "play", Discard(("7C", "8D"))),
    ("Discard: seven of clubs, eight of diamonds", "discard", Discard(("7C", "8D"))),
    ("7C", "play", Play("7C")),
])
def test_discard_replies_in_three_languages(text: str, expected: str | None, command: object) -> None:
    assert parse_command(text, expected=expected, pass_count=3) == command


def test_individual_mode_adds_the_partners_totals_in_the_summary(composer) -> None:
    rules = Rules.make("partnership-individual", pass_cycle=["hold"], partner_moon="charged")
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(11)))
    rng = random.Random(2)
    while state.phase == "play":
        state = state.play(rng.choice(state.legal_cards()))
    result = hand_results(state)[-1]
    points = result.points
    assert result.team_points == (points[0] + points[2], points[1] + points[3])
    _, _, text = mail(composer, state, 1, HandSummary(result))
    assert "Bruno & Dinu (your team)" in text and "Ana & Carla" in text
    _, _, first = mail(composer, new_game(rules).deal(shuffled_deck(rules, random.Random(1))), 1,
                       YourTurn("play", started=True, rules=rules.to_dict()))
    assert "Your partner is Dinu, across the table: you each score alone, and your totals are added at the end." in first
    assert "When a player shoots the moon, their partner scores the points too, like the opponents." in first
