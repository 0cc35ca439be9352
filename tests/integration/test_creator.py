"""The creator's commands (README, "Time"): pause, resume, extend, replace, abort, by mail and on the
command line, and the refusals; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from pbem.cli import main
from pbem.config import Settings
from pbem.db.models import Game, GameStatus, Invitation, OutboundMessage, Player, Seat
from pbem.db.session import transaction
from pbem.mail.reading.commands import Extend, Replace, parse_command
from pbem.services.app import Services
from pbem.services.creator import CreatorRefused, find_seat, parse_extend, parse_replace
from pbem.services.deadlines import Timing
from tests.integration.test_deadlines import (  # noqa: F401  (svc is a fixture)
    Table,
    address,
    clock,
    last_outcome,
    start,
    svc,
    text_of,
)

# -- reading the commands ---------------------------------------------------------------------------


def seats(*names: str) -> list[Seat]:
    return [Seat(seat=k, player=Player(address=f"{n.split()[0].lower()}@x.org", display_name=n))
            for k, n in enumerate(names)]


TABLE = seats("Ana Lima", "Bob", "Ștefan Țurcanu", "Player 3")


def test_the_reader_knows_extend_and_replace_in_three_languages() -> None:
    assert parse_command("extend 24h") == Extend("24h")
    assert parse_command("prorrogar Bob 2 dias") == Extend("Bob 2 dias")
    assert parse_command("prelungește") == Extend("")
    assert parse_command("replace Bob with ana@example.org") == Replace("Bob with ana@example.org")
    assert parse_command("substituir Bob por ana@example.org") == Replace("Bob por ana@example.org")
    assert parse_command("înlocuiește Bob cu ana@example.org") == Replace("Bob cu ana@example.org")


@pytest.mark.parametrize(("text", "seat", "hours"), [
    ("", None, None),
    ("24h", None, 24),
    ("2 days", None, 48),
    ("30", None, 30),  # no such seat: hours
    ("2", 1, None),  # seat numbers count from 1 in mails
    ("Bob", 1, None),
    ("bob 2d", 1, 48),
    ("for Bob, 12 hours", 1, 12),
    ("stefan", 2, None),  # accents and case do not matter; a first name is enough when unique
    ("Player 3", 3, None),  # a name that looks like "player" and a number
    ("ana@x.org 1 week", 0, 168),
])
def test_extend_reads_a_player_and_a_time(text, seat, hours) -> None:
    found, got_hours = parse_extend(text, TABLE)
    assert (None if found is None else found.seat, got_hours) == (seat, hours)


@pytest.mark.parametrize("text", ["Zed", "a while", "Bob 0h", "Bob 100 days"])
def test_extend_refuses_what_it_cannot_read(text) -> None:
    with pytest.raises(CreatorRefused) as refused:
        parse_extend(text, TABLE)
    assert refused.value.code == "BAD_EXTEND"


@pytest.mark.parametrize(("text", "seat", "address_"), [
    ("Bob dana@example.ro", 1, "dana@example.ro"),
    ("Bob with Dana@Example.RO.", 1, "dana@example.ro"),
    ("Player 3 with dana@example.ro", 3, "dana@example.ro"),
    ("player 2 dana@example.ro", 1, "dana@example.ro"),  # not a name: "player", then seat 2
    ("3 cu dana@example.ro", 2, "dana@example.ro"),
])
def test_replace_reads_a_player_and_an_address(text, seat, address_) -> None:
    found, address = parse_replace(text, TABLE)
    assert (found.seat, address) == (seat, address_)


@pytest.mark.parametrize("text", ["Bob", "dana@example.ro", "Zed dana@example.ro", "Bob a@x.org b@x.org"])
def test_replace_refuses_what_it_cannot_read(text) -> None:
    with pytest.raises(CreatorRefused) as refused:
        parse_replace(text, TABLE)
    assert refused.value.code == "BAD_REPLACE"


def test_find_seat_on_the_command_line_counts_from_zero() -> None:
    assert find_seat(TABLE, "0", first=0).seat == 0
    assert find_seat(TABLE, "4", first=0) is None
    assert find_seat(TABLE, "bob@x.org", first=0).seat == 1


# -- by mail ---------------------------------------------------------------------------------------------


def tell(table: Table, seat: int, text: str) -> list[OutboundMessage]:
    return table.reply(table.latest(seat), text)


def test_pause_resume_and_the_refusals(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=48))
    paused = tell(table, 0, "pause")
    assert last_outcome(svc)["code"] == "GAME_PAUSED"
    assert sorted((m.kind, m.recipient) for m in paused) == [("game_paused", address(k)) for k in range(4)]
    assert "Player 0, who created this game, has paused it." in text_of(paused[1])
    game = table.game()
    assert game.status == GameStatus.PAUSED and all(s.deadline_at is None for s in game.seats)
    # Moves wait; another pause is refused; nobody else may resume.
    table.move(1)
    assert last_outcome(svc)["code"] == "GAME_NOT_ACTIVE"
    tell(table, 0, "pause")
    assert last_outcome(svc)["code"] == "GAME_NOT_ACTIVE"
    refused = tell(table, 2, "resume")
    assert last_outcome(svc)["code"] == "NOT_THE_CREATOR"
    assert [(m.kind, m.recipient) for m in refused] == [("request_rejected", address(2))]
    assert "Only the player who created this game" in text_of(refused[0])
    assert table.game().status == GameStatus.PAUSED
    clock(svc).advance(days=10)
    assert table.tick() == []  # a paused game's deadlines do not run
    resumed = tell(table, 0, "resume")
    assert last_outcome(svc)["code"] == "GAME_RESUMED"
    assert Counter(m.kind for m in resumed) == {"game_resumed": 4}
    assert "Please move by" in text_of(resumed[0])
    now = clock(svc).now()
    assert all(s.deadline_at == now + timedelta(hours=48) and s.waiting_since == now for s in table.game().seats)
    tell(table, 0, "resume")
    assert last_outcome(svc)["code"] == "GAME_NOT_PAUSED"


def test_extend_moves_deadlines_and_restarts_the_reminders(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=48, reminder_hours=24))
    table.move(0)
    table.move(1)
    clock(svc).advance(hours=30)
    assert sorted(m.recipient for m in table.tick()) == [address(2), address(3)]
    extended = tell(table, 0, "extend 2 days")
    assert last_outcome(svc)["code"] == "DEADLINE_EXTENDED"
    assert Counter(m.kind for m in extended) == {"deadline_extended": 4}
    text = text_of(next(m for m in extended if m.recipient == address(2)))
    assert "The deadline of Player 2 and Player 3 was extended by 48 hours." in text
    assert "Please move by" in text
    start_at = clock(svc).now() - timedelta(hours=30)
    assert table.seat(2).deadline_at == start_at + timedelta(hours=96)
    # The early reminder comes again, 24 hours before the new deadline, once.
    clock(svc).advance(hours=41)
    assert table.tick() == []
    clock(svc).advance(hours=1)
    assert sorted(m.recipient for m in table.tick()) == [address(2), address(3)]
    assert table.tick() == []
    # One player only, by name; one who is not waited for is refused.
    tell(table, 0, "extend Player 3 5h")
    assert table.seat(3).deadline_at == start_at + timedelta(hours=101)
    assert table.seat(2).deadline_at == start_at + timedelta(hours=96)
    tell(table, 0, "extend Player 1")
    assert last_outcome(svc)["code"] == "NOT_WAITING"
    assert "The game is not waiting for Player 1 now" in text_of(table.latest(0))
    tell(table, 0, "extend a little")
    assert last_outcome(svc)["code"] == "BAD_EXTEND"
    tell(table, 3, "extend 24h")
    assert last_outcome(svc)["code"] == "NOT_THE_CREATOR"
    assert table.seat(3).deadline_at == start_at + timedelta(hours=101)


def test_replace_offers_the_seat_and_abort_ends_the_game(svc: Services) -> None:
    table = start(svc)
    tell(table, 0, "replace Player 2")
    assert last_outcome(svc)["code"] == "BAD_REPLACE"
    tell(table, 0, "replace Player 2 p3@players.test")
    assert last_outcome(svc)["code"] == "ALREADY_PLAYING"
    invited = tell(table, 0, "replace Player 2 sub@players.test")
    assert last_outcome(svc)["code"] == "SUBSTITUTE_INVITED"
    invitation = next(m for m in invited if m.kind == "substitute_invitation")
    text = text_of(invitation)
    assert "Player 0 (p0@players.test) invites you to take over the seat of Player 2" in text
    assert "The other players: Player 0, Player 1, and Player 3." in text
    # The player keeps the seat meanwhile, and a second invitation replaces the first.
    assert table.seat(2).player.address == address(2)
    tell(table, 0, "replace Player 2 other@players.test")
    with transaction(svc.session_factory) as session:
        statuses = sorted((i.address, str(i.status)) for i in session.scalars(
            select(Invitation).where(Invitation.kind == "substitute")))
    assert statuses == [("other@players.test", "pending"), ("sub@players.test", "expired")]
    late = table.reply(invitation, "accept")
    assert last_outcome(svc)["code"] == "INVITATION_CLOSED"
    assert [m.kind for m in late] == ["request_rejected"]
    assert "This seat no longer needs a substitute" in text_of(late[0])
    aborted = tell(table, 0, "abort")
    assert last_outcome(svc)["code"] == "GAME_ABORTED"
    assert sorted((m.kind, m.recipient) for m in aborted) == [("game_aborted", address(k)) for k in range(4)]
    assert "has called it off" in text_of(aborted[0])
    game = table.game()
    assert game.status == GameStatus.ABORTED and all(s.deadline_at is None for s in game.seats)
    tell(table, 0, "abort")
    assert last_outcome(svc)["code"] == "GAME_NOT_ACTIVE"
    table.move(1)
    assert last_outcome(svc)["code"] == "GAME_NOT_ACTIVE"


def test_a_creator_without_a_seat_is_not_asked_and_the_operator_acts(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0, absence_policy="substitute"),
                  creator=None)
    for k in (0, 1, 2):
        table.move(k)
    clock(svc).advance(hours=24)
    acted = table.tick()
    assert "substitute_wanted" not in {m.kind for m in acted}
    assert table.seat(3).stand_in == "substitute_wanted"  # a computer player keeps the game going


# -- on the command line ----------------------------------------------------------------------------------


def run(env: dict[str, str], *args: str) -> str:
    result = CliRunner().invoke(main, ["game", *args], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_operators_commands(db_url: str, tmp_path: Path) -> None:
    env = {"PBEM_DATABASE_URL": db_url, "PBEM_DATA_DIR": str(tmp_path), "PBEM_MAIL_DOMAIN": "hearts.test",
           "PBEM_SECRET_KEY": "test-secret-key", "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random"}
    players = [f"--player=p{k}@players.test" for k in range(4)]
    run(env, "new", *players, "--deadline", "2d", "--weekends", "skip", "--policy", "pause", "--grace", "6",
        "--reminder", "12")
    bad = CliRunner().invoke(main, ["game", "new", *players, "--deadline", "soon"], env=env)
    assert bad.exit_code != 0 and "deadline: soon" in bad.output and "deadline: 48h" in bad.output
    services = Services.from_settings(Settings.from_env(env))
    try:
        def game() -> Game:
            with transaction(services.session_factory) as session:
                row = session.scalars(select(Game)).one()
                for seat in row.seats:
                    _ = seat.deadline_at
                session.expunge_all()
                return row

        def mails(kind: str) -> int:
            with transaction(services.session_factory) as session:
                return len(session.scalars(select(OutboundMessage).where(OutboundMessage.kind == kind)).all())

        row = game()
        assert (row.deadline_hours, row.skip_weekends, row.absence_policy, row.grace_hours,
                row.reminder_hours) == (48, True, "pause", 6, 12)
        assert "paused; 4 mails queued" in run(env, "pause", str(row.id))
        bad = CliRunner().invoke(main, ["game", "extend", str(row.id)], env=env)
        assert bad.exit_code != 0 and "PAUSED_NO_DEADLINES" in bad.output  # paused: no deadline runs
        run(env, "resume", str(row.id))
        before = {s.seat: s.deadline_at for s in game().seats}
        run(env, "extend", str(row.id), "--seat", "p1@players.test", "--hours", "5")
        after = {s.seat: s.deadline_at for s in game().seats}
        assert after[1] - before[1] >= timedelta(hours=5) and after[0] == before[0]
        run(env, "replace", str(row.id), "2", "sub@players.test")
        assert mails("substitute_invitation") == 1
        bad = CliRunner().invoke(main, ["game", "replace", str(row.id), "9", "x@players.test"], env=env)
        assert bad.exit_code != 0 and "NO_SUCH_SEAT" in bad.output
        assert "tick: 0 mails queued" in run(env, "tick")
        run(env, "abort", str(row.id))
        assert game().status == GameStatus.ABORTED
        assert (mails("game_paused"), mails("game_resumed"), mails("deadline_extended"),
                mails("game_aborted")) == (4, 4, 4, 4)
        bad = CliRunner().invoke(main, ["game", "pause", "999"], env=env)
        assert bad.exit_code != 0 and "no game 999" in bad.output
    finally:
        services.close()


def test_a_game_from_the_command_line_has_the_default_timing(db_url: str, tmp_path: Path) -> None:
    """The same defaults as a game by mail: 72 hours, a reminder 24 hours before, 12 hours of grace
    (so that the deadline itself brings a reminder), policy bot."""
    env = {"PBEM_DATABASE_URL": db_url, "PBEM_DATA_DIR": str(tmp_path), "PBEM_MAIL_DOMAIN": "hearts.test",
           "PBEM_SECRET_KEY": "test-secret-key", "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random"}
    run(env, "new", "--player=p0@players.test", "--bots", "3")
    with Services.from_settings(Settings.from_env(env)) as services, transaction(services.session_factory) as session:
        row = session.scalars(select(Game)).one()
        defaults = Timing()
        assert (row.deadline_hours, row.skip_weekends, row.grace_hours, row.reminder_hours, row.absence_policy) == (
            defaults.deadline_hours, defaults.skip_weekends, 12, defaults.reminder_hours, defaults.absence_policy)


def test_a_creator_back_from_a_stand_in_is_obeyed_at_once(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0))
    for k in (1, 2, 3):
        table.move(k)
    clock(svc).advance(hours=24)
    assert table.tick()[0].recipient == address(0)  # the creator's stand-in mail
    assert table.seat(0).stand_in == "deadline"
    answers = tell(table, 0, "pause")
    assert last_outcome(svc)["code"] == "GAME_PAUSED"
    assert last_outcome(svc)["seat_taken_back"] == "deadline"
    assert [m.kind for m in answers if m.recipient == address(0)] == ["seat_back", "game_paused"]
    assert table.seat(0).stand_in is None and table.game().status == GameStatus.PAUSED
