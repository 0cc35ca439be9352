"""``pbem game new`` on the command line (README, "Starting a game"): players, ``--bots``, ``--preset``,
``--option`` and ``--deck`` (an explicit first deal: duplicate games), through click's CliRunner
against a migrated SQLite database. What it wrote is read back from the database.
"""

from __future__ import annotations

import random
import re
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from pbem.cli import main
from pbem.config import Settings
from pbem.db.models import Game, GameStatus, Move, OutboundMessage, Seat, SeatStatus
from pbem.db.session import transaction
from pbem.engine import GameState, Rules, deck_in_play
from pbem.services.app import Services
from pbem.services.gamestore import rebuild_state


@pytest.fixture
def env(sqlite_migrated_url: str, tmp_path: Path) -> dict[str, str]:
    return {"PBEM_DATABASE_URL": sqlite_migrated_url, "PBEM_DATA_DIR": str(tmp_path),
            "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "test-secret-key",
            "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random"}


@pytest.fixture
def svc(env: dict[str, str]) -> Services:
    services = Services.from_settings(Settings.from_env(env))
    yield services
    services.close()


def game_new(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, ["game", "new", *args], env=env)


def started(env: dict[str, str], *args: str) -> int:
    result = game_new(env, *args)
    assert result.exit_code == 0, result.output
    match = re.search(r"game (\d+) started \((.+)\); (\d+) mails queued", result.output)
    assert match, result.output
    return int(match.group(1))


def first_deal(svc: Services, game_id: int) -> list[str]:
    with transaction(svc.session_factory) as session:
        move = session.scalars(select(Move).where(Move.game_id == game_id).order_by(Move.seq)).first()
        assert move.kind == "deal" and move.seq == 1
        return list(move.payload["deck"])


def games(svc: Services) -> int:
    with transaction(svc.session_factory) as session:
        return session.scalar(select(func.count()).select_from(Game))


def shuffled(rules: Rules, seed: int) -> list[str]:
    deck = list(deck_in_play(rules))
    random.Random(seed).shuffle(deck)
    return deck


def test_an_explicit_deck_is_the_first_deal_at_every_table(env: dict[str, str], svc: Services) -> None:
    """Two tables given the same --deck (and --seed) are dealt exactly that deck: a duplicate game."""
    rules = Rules.make("standard")
    deck = shuffled(rules, 11)
    assert deck != sorted(deck)
    tables = [started(env, f"--player=p{k}@players.test", f"--player=q{k}@players.test", "--bots", "2",
                      "--deck", " ".join(deck), "--seed", "duplicate-1", "--title", f"table {k}")
              for k in range(2)]
    assert tables[0] != tables[1]
    expected = GameState.new(rules).deal(deck)
    assert [first_deal(svc, game_id) for game_id in tables] == [deck, deck]
    with transaction(svc.session_factory) as session:
        for game_id in tables:
            game = session.get(Game, game_id)
            assert game.status == GameStatus.ACTIVE and game.seed == "duplicate-1"
            state = rebuild_state(session, game)
            assert state.hand_no == 1
            # Each seat holds what that deck deals it: the people all of it (they have not passed
            # yet), the bots all of it but the three cards they have already put aside to pass.
            for seat in (0, 1):
                assert state.hand(seat) == expected.hand(seat)
            for seat in (2, 3):
                assert set(state.hand(seat)) <= set(expected.hand(seat)) and len(state.hand(seat)) == 10
            # The people were mailed the hand of that deal.
            for seat, person in ((0, f"p{tables.index(game_id)}@players.test"),
                                 (1, f"q{tables.index(game_id)}@players.test")):
                mail = session.scalars(select(OutboundMessage).where(
                    OutboundMessage.game_id == game_id, OutboundMessage.recipient == person,
                    OutboundMessage.kind == "your_turn")).one()
                hand = str(message_from_bytes(mail.raw, policy=default)["X-Hearts-Hand"]).split()
                assert sorted(hand) == sorted(expected.hand(seat))
    # Without a deck, the same seed deals the same cards at every table too.
    seeded = [started(env, "--player=a@players.test", "--bots", "3", "--seed", "friday-42") for _ in range(2)]
    assert first_deal(svc, seeded[0]) == first_deal(svc, seeded[1]) != deck


def test_preset_options_and_bots_make_the_table(env: dict[str, str], svc: Services) -> None:
    game_id = started(env, "--player=ana@players.test=Ana", "--player=bob@players.test", "--bots", "1",
                      "--bot", "heuristic", "--preset", "omnibus", "--option", "target=50",
                      "--option", 'pass_cycle=["hold"]', "--option", "sun=true")
    with transaction(svc.session_factory) as session:
        game = session.get(Game, game_id)
        rules = Rules.from_dict(game.rules)
        assert rules == Rules.make("omnibus", target=50, pass_cycle=["hold"], sun=True)
        assert (rules.jd_bonus, rules.moon, rules.target, rules.pass_cycle, rules.sun) == (-10, "choice", 50,
                                                                                          ("hold",), True)
        seats = sorted(game.seats, key=lambda s: s.seat)
        assert [(s.player.address if s.player else None, s.bot, s.status) for s in seats] == [
            ("ana@players.test", None, SeatStatus.JOINED), ("bob@players.test", None, SeatStatus.JOINED),
            (None, "heuristic", SeatStatus.BOT), (None, "random", SeatStatus.BOT)]
        assert seats[0].player.display_name == "Ana"
        # No passing in hand 1 ("hold"): the play began, so every person was told and someone waits.
        state = rebuild_state(session, game)
        assert state.phase == "play" and state.pass_direction == "hold"
        sent = session.execute(select(OutboundMessage.recipient, OutboundMessage.kind)
                               .where(OutboundMessage.game_id == game_id).order_by(OutboundMessage.id)).all()
        first = {recipient: kind for recipient, kind in reversed(sent)}  # each person's first mail
        assert len(first) == 2 and set(first.values()) <= {"game_started", "your_turn"}

    # Three players (--option players=3): a 51-card deck (2D out) is the first deal.
    three = Rules.make("standard", players=3)
    deck = shuffled(three, 5)
    assert len(deck) == 51 and "2D" not in deck
    game_id = started(env, "--player=ana@players.test", "--bots", "2", "--option", "players=3", "--deck", " ".join(deck))
    assert first_deal(svc, game_id) == deck


@pytest.mark.parametrize("args, message", [
    (["--deck", "2C 3C 4C"], "deck refused: BAD_DECK"),  # too few cards
    (["--deck", " ".join(["2C"] * 52)], "deck refused: BAD_DECK"),  # the same card 52 times
    (["--deck", "XX " + " ".join(sorted(deck_in_play(Rules.make("standard")))[1:])], "deck refused: BAD_DECK"),
    (["--preset", "no-such-preset"], "rules refused"),
    (["--option", "target=-5"], "rules refused"),
    (["--option", "target"], "expected key=value"),
    (["--bots", "1"], "4 players needed, 2 given"),
    (["--bots", "2", "--player=ANA@players.test"], "ana@players.test is given twice"),
    (["--bots", "2", "--player=not-an-address"], "not a mail address"),
])
def test_a_refused_game_leaves_nothing_behind(env: dict[str, str], svc: Services, args: list[str],
                                              message: str) -> None:
    bots = [] if "--bots" in args else ["--bots", "3"]
    result = game_new(env, "--player=ana@players.test", *bots, *args)
    assert result.exit_code != 0
    assert message in result.output, result.output
    assert games(svc) == 0
    with transaction(svc.session_factory) as session:
        assert session.scalar(select(func.count()).select_from(OutboundMessage)) == 0
        assert session.scalar(select(func.count()).select_from(Seat)) == 0
