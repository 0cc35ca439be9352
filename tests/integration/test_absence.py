"""Vacations (README, "Time"): natural dates, each game's policy, the others told, the yearly allowance,
coming back early; on SQLite and PostgreSQL, on a ``ManualClock``."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbem.bots import bot_view, get_bot
from pbem.config import Settings
from pbem.db.models import Absence, Player
from pbem.db.session import transaction
from pbem.engine import CARD_NAMES
from pbem.services.absence import days_by_year, parse_vacation_end
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.deadlines import Timing
from pbem.services.gamestore import current_state
from tests.integration.test_deadlines import (  # noqa: F401  (svc is a fixture)
    Table,
    address,
    clock,
    last_outcome,
    start,
    svc,
    text_of,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
#: Deadlines long enough that nobody else's falls due during these tests.
LONG = 24 * 30
#: A deal whose first pass strong and heuristic choose differently for seat 0.
STAND_IN_SEED = "stand-in-a"


@pytest.mark.parametrize(("text", "zone", "expected"), [
    ("until 12 December", "UTC", datetime(2026, 12, 13, 0, 0, tzinfo=UTC)),  # away through that day
    ("12 December", "America/New_York", datetime(2026, 12, 13, 5, 0, tzinfo=UTC)),  # their midnight
    ("5 de janeiro", "Europe/Lisbon", datetime(2027, 1, 6, 0, 0, tzinfo=UTC)),
    ("pe 3 martie", "Europe/Bucharest", datetime(2027, 3, 3, 22, 0, tzinfo=UTC)),
    ("for 2 weeks", "UTC", NOW + timedelta(weeks=2)),
    ("por 2 semanas", "Europe/Lisbon", NOW + timedelta(weeks=2)),
    ("pentru 2 săptămâni", "Europe/Bucharest", NOW + timedelta(weeks=2)),
    ("10 dias", "UTC", NOW + timedelta(days=10)),
    ("2026-12-20", "UTC", datetime(2026, 12, 21, 0, 0, tzinfo=UTC)),
    ("someday", "UTC", None),
    ("", "UTC", None),
    ("until", "UTC", None),
    ("12 December", "Not/AZone", datetime(2026, 12, 13, 0, 0, tzinfo=UTC)),  # an unknown zone reads as UTC
])
def test_vacation_dates_in_three_languages(text, zone, expected) -> None:
    assert parse_vacation_end(text, NOW, zone) == expected


def test_days_are_counted_per_calendar_year() -> None:
    start_at = datetime(2026, 12, 25, 12, tzinfo=UTC)
    assert days_by_year(start_at, datetime(2027, 1, 3, tzinfo=UTC)) == {2026: 7, 2027: 2}
    assert days_by_year(NOW, NOW + timedelta(weeks=2)) == {2026: 14}
    assert days_by_year(NOW, NOW + timedelta(hours=1)) == {2026: 1}
    assert days_by_year(NOW, NOW) == {}


def two_tables(svc: Services) -> tuple[Table, Table]:
    """The same four people at a ``bot`` table and at a ``pause`` table, both passing cards."""
    bot = start(svc, Timing(deadline_hours=LONG, absence_policy="bot"), seed="bot-table")
    pause = start(svc, Timing(deadline_hours=LONG, absence_policy="pause"), seed="pause-table")
    return bot, pause


def test_a_vacation_follows_each_games_policy_and_everyone_is_told(svc: Services) -> None:
    bot, pause = two_tables(svc)
    clock(svc).advance(hours=1)
    mails = bot.reply(bot.latest(1, "your_turn"), "vacation for 1 week")
    until = clock(svc).now() + timedelta(weeks=1)
    assert last_outcome(svc)["code"] == "VACATION_SET"
    assert last_outcome(svc)["until"] == until.isoformat()
    pause.add(mails)
    kinds = Counter((m.kind, m.recipient, m.game_id) for m in mails)
    for table in (bot, pause):
        for k in (0, 2, 3):
            assert kinds[("player_away", address(k), table.game_id)] == 1
        assert kinds[("player_away", address(1), table.game_id)] == 0
    notice = text_of(next(m for m in mails if m.kind == "player_away" and m.game_id == bot.game_id))
    assert "Player 1 is away until" in notice and "a computer player plays for them" in notice
    notice = text_of(next(m for m in mails if m.kind == "player_away" and m.game_id == pause.game_id))
    assert "their deadlines count from their return" in notice
    confirm = next(m for m in mails if m.kind == "vacation")
    assert confirm.recipient == address(1)
    assert "You have 23 days of vacation left this year." in text_of(confirm)  # 30 - 7
    # At the bot table a computer player passed for them at once; at the other the deadline waits.
    assert bot.seat(1).stand_in == "vacation" and bot.seat(1).deadline_at is None
    assert [k for k, cards in enumerate(bot.game().snapshot["passes"]) if cards is not None] == [1]
    assert pause.seat(1).stand_in is None
    assert pause.seat(1).deadline_at == until + timedelta(hours=LONG)
    assert pause.seat(0).deadline_at == clock(svc).now() - timedelta(hours=1) + timedelta(hours=LONG)
    # A week later the tick ends it: the player and the tables are told, the bot leaves.
    clock(svc).advance(weeks=1)
    ended = bot.tick()
    pause.add(ended)
    assert [m.kind for m in ended if m.recipient == address(1)] == ["vacation"]
    assert "your vacation is over" in text_of(next(m for m in ended if m.recipient == address(1)))
    backs = Counter((m.recipient, m.game_id) for m in ended if m.kind == "player_away")
    assert backs == {(address(k), t.game_id): 1 for k in (0, 2, 3) for t in (bot, pause)}
    assert bot.seat(1).stand_in is None
    assert pause.seat(1).deadline_at == until + timedelta(hours=LONG)  # it ended on time: unchanged
    assert bot.tick() == []  # once
    with transaction(svc.session_factory) as session:
        player = session.scalars(select(Player).where(Player.address == address(1))).one()
        assert player.vacation_until is None


def test_the_yearly_allowance_and_the_refusals(svc: Services) -> None:
    table = start(svc)
    ask = lambda text: table.reply(table.latest(2), text)  # noqa: E731
    ask("vacation off")
    assert last_outcome(svc)["code"] == "NOT_ON_VACATION"
    ask("vacation until someday")
    assert last_outcome(svc)["code"] == "VACATION_DATE"
    assert "as a date within the coming year" in text_of(table.latest(2))
    ask("vacation for 20 days")
    assert last_outcome(svc)["code"] == "VACATION_SET"
    assert "You have 10 days of vacation left this year." in text_of(table.latest(2, "vacation"))
    clock(svc).advance(days=5)
    ask("vacation off")
    assert last_outcome(svc)["code"] == "VACATION_ENDED"
    assert "You have 25 days of vacation left this year." in text_of(table.latest(2, "vacation"))
    ask("vacation for 26 days")
    assert last_outcome(svc)["code"] == "VACATION_ALLOWANCE"
    assert "you have 30 days a year, and 25 days are left" in text_of(table.latest(2))
    ask("vacation for 25 days")
    assert last_outcome(svc)["code"] == "VACATION_SET"
    # Moving the date of the running vacation counts it once, not twice.
    ask("vacation for 20 days")
    assert last_outcome(svc)["code"] == "VACATION_SET"
    with transaction(svc.session_factory) as session:
        rows = session.scalars(select(Absence).order_by(Absence.id)).all()
        assert [(r.ends_at - r.starts_at).days for r in rows] == [5, 20]


def test_a_vacation_can_span_the_new_year_within_each_years_allowance(svc: Services) -> None:
    clock(svc).current = datetime(2026, 12, 20, 12, tzinfo=UTC)
    table = start(svc)
    table.reply(table.latest(3), "vacation until 15 January")
    assert last_outcome(svc)["code"] == "VACATION_SET"  # 12 days in 2026, 15 in 2027


def test_writing_to_a_seat_the_bot_holds_ends_the_vacation_early(svc: Services) -> None:
    bot, pause = two_tables(svc)
    bot.reply(bot.latest(1, "your_turn"), "vacation for 10 days")
    clock(svc).advance(days=2)
    back = bot.reply(bot.latest(1), "status")
    pause.add(back)
    assert last_outcome(svc)["code"] == "SEAT_TAKEN_BACK"
    mine = [m.kind for m in back if m.recipient == address(1)]
    assert sorted(mine) == ["seat_back", "vacation"]
    assert sum(1 for m in back if m.kind == "player_away") == 6  # three others at two tables
    assert bot.seat(1).stand_in is None
    # At the pause table the deadline counts from now again.
    assert pause.seat(1).deadline_at == clock(svc).now() + timedelta(hours=LONG)
    with transaction(svc.session_factory) as session:
        absence = session.scalars(select(Absence)).one()
        assert absence.ends_at == clock(svc).now()
        assert session.scalars(select(Player).where(Player.address == address(1))).one().vacation_until is None


def test_a_new_vacation_date_while_away_keeps_the_bot_and_tells_the_others_again(svc: Services) -> None:
    table = start(svc, Timing(absence_policy="bot"))
    table.reply(table.latest(0, "your_turn"), "vacation for 3 days")
    again = table.reply(table.latest(0), "vacation for 5 days")
    assert last_outcome(svc)["code"] == "VACATION_SET"
    assert sorted(m.recipient for m in again if m.kind == "player_away") == [address(k) for k in (1, 2, 3)]
    assert table.seat(0).stand_in == "vacation"


def test_a_player_sets_their_time_zone_and_mails_follow_it(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=48))
    table.reply(table.latest(1), "timezone Mars/Olympus")
    assert last_outcome(svc)["code"] == "BAD_TIMEZONE"
    assert "is not a time zone I know" in text_of(table.latest(1))
    answer = table.reply(table.latest(1), "fuso horário america/sao paulo")
    assert last_outcome(svc)["code"] == "TIMEZONE_SET"
    assert "shown in the America/Sao_Paulo time zone: it is Thu, Jan 1, 2026, 9:00" in text_of(answer[0])
    with transaction(svc.session_factory) as session:
        player = session.scalars(select(Player).where(Player.address == address(1))).one()
        assert player.timezone == "America/Sao_Paulo"
    status = table.reply(table.latest(1), "status")
    assert "Please move by Sat, Jan 3, 2026, 9:00" in text_of(status[0])  # 48 h after noon UTC, in São Paulo
    assert "Please move by Sat, Jan 3, 2026, 9:00\u202fAM UTC-3." in text_of(status[0])
    # Vacation dates are read in that zone too: back at their midnight.
    table.reply(table.latest(1), "vacation until 3 January")
    with transaction(svc.session_factory) as session:
        player = session.scalars(select(Player).where(Player.address == address(1))).one()
        assert player.vacation_until == datetime(2026, 1, 4, 3, 0, tzinfo=UTC)


def test_a_vacation_planned_ahead_begins_on_its_first_day_and_ends_on_its_last(svc: Services) -> None:
    clock(svc).current = NOW  # 30 November, noon
    bot, pause = two_tables(svc)
    mails = bot.reply(bot.latest(1, "your_turn"), "vacation from 10 December until 20 December")
    assert last_outcome(svc)["code"] == "VACATION_PLANNED"
    assert last_outcome(svc)["starts"] == datetime(2026, 12, 10, tzinfo=UTC).isoformat()
    assert last_outcome(svc)["until"] == datetime(2026, 12, 21, tzinfo=UTC).isoformat()
    # Only the player hears of it now; the tables are told when it begins.
    assert [(m.kind, m.recipient) for m in mails] == [("vacation", address(1))]
    confirm = text_of(mails[0])
    assert "You will be away from" in confirm and "You have 19 days of vacation left this year." in confirm
    assert bot.seat(1).stand_in is None and pause.seat(1).deadline_at == NOW + timedelta(hours=LONG)
    clock(svc).current = datetime(2026, 12, 9, 23, 59, tzinfo=UTC)
    assert bot.tick() == []  # not yet
    clock(svc).current = datetime(2026, 12, 10, 0, 1, tzinfo=UTC)
    began = bot.tick()
    pause.add(began)
    kinds = Counter((m.kind, m.recipient, m.game_id) for m in began)
    assert kinds == {("player_away", address(k), t.game_id): 1 for k in (0, 2, 3) for t in (bot, pause)}
    assert "Player 1 is away until" in text_of(next(m for m in began if m.game_id == bot.game_id))
    assert bot.seat(1).stand_in == "vacation"
    assert [k for k, cards in enumerate(bot.game().snapshot["passes"]) if cards is not None] == [1]
    assert pause.seat(1).deadline_at == datetime(2026, 12, 21, tzinfo=UTC) + timedelta(hours=LONG)
    assert bot.tick() == []  # once
    clock(svc).current = datetime(2026, 12, 21, 0, 1, tzinfo=UTC)
    ended = bot.tick()
    assert [m.kind for m in ended if m.recipient == address(1)] == ["vacation"]
    assert bot.seat(1).stand_in is None


def test_a_planned_vacation_can_be_cancelled_replaced_and_must_fit(svc: Services) -> None:
    clock(svc).current = NOW
    table = start(svc, Timing(deadline_hours=LONG))
    ask = lambda text: table.reply(table.latest(2), text)  # noqa: E731
    ask("férias de 10 de dezembro até 20 de dezembro")
    assert last_outcome(svc)["code"] == "VACATION_PLANNED"
    ask("concediu de la 12 decembrie până la 14 decembrie")  # a new plan replaces the old one
    assert last_outcome(svc)["code"] == "VACATION_PLANNED"
    assert "You have 27 days of vacation left this year." in text_of(table.latest(2, "vacation"))
    with transaction(svc.session_factory) as session:
        assert [(a.starts_at.day, a.ends_at.day) for a in session.scalars(select(Absence))] == [(12, 15)]
    ask("vacation off")  # before it began: cancelled
    assert last_outcome(svc)["code"] == "VACATION_CANCELLED"
    cancelled = text_of(table.latest(2, "vacation"))
    assert "is cancelled" in cancelled and "You have 30 days of vacation left this year." in cancelled
    with transaction(svc.session_factory) as session:
        assert session.scalars(select(Absence)).all() == []
    clock(svc).current = datetime(2026, 12, 12, 1, tzinfo=UTC)
    assert [m for m in table.tick() if m.kind == "player_away"] == []
    # Planned ahead, it must fit: the allowance counts it, and it may not overlap the vacation the
    # player is on. A start already come is a vacation from now.
    ask("vacation from 20 December until 31 January")
    assert last_outcome(svc)["code"] == "VACATION_ALLOWANCE"
    ask("vacation from someday until 20 December")
    assert last_outcome(svc)["code"] == "VACATION_DATE"
    ask("vacation from today until 14 December")
    assert last_outcome(svc)["code"] == "VACATION_SET"
    ask("vacation from 13 December until 16 December")
    assert last_outcome(svc)["code"] == "VACATION_DATE"
    ask("vacation from 16 December until 18 December")
    assert last_outcome(svc)["code"] == "VACATION_PLANNED"


def test_a_game_that_starts_during_a_vacation_plays_for_the_player_until_they_are_back(svc: Services) -> None:
    clock(svc).current = NOW
    first = start(svc, Timing(deadline_hours=LONG), seed="first-table")
    first.reply(first.latest(1, "your_turn"), "vacation for 1 week")
    assert last_outcome(svc)["code"] == "VACATION_SET"
    clock(svc).advance(days=1)
    bot_table = start(svc, Timing(deadline_hours=LONG, absence_policy="bot"), seed="second-table")
    pause_table = start(svc, Timing(deadline_hours=LONG, absence_policy="pause"), seed="third-table")
    # Policy bot: a computer player holds the seat (it passed at once), no deadline runs for it.
    assert bot_table.seat(1).stand_in == "vacation" and bot_table.seat(1).deadline_at is None
    assert [k for k, cards in enumerate(bot_table.game().snapshot["passes"]) if cards is not None] == [1]
    # Policy pause: the seat is the player's, and its deadline counts from the vacation's end.
    assert pause_table.seat(1).stand_in is None
    assert pause_table.seat(1).deadline_at == NOW + timedelta(weeks=1, hours=LONG)
    clock(svc).current = NOW + timedelta(weeks=1, minutes=1)
    bot_table.add(bot_table.tick())
    assert bot_table.seat(1).stand_in is None
    assert any(m.kind == "player_away" and m.game_id == bot_table.game_id for m in bot_table.mails)


def test_by_default_the_strong_bot_stands_in_for_an_absent_player(db_url: str, tmp_path) -> None:
    # PBEM_STAND_IN_BOT is not set: the default, strong, passes for the player who went away (and
    # PBEM_DEFAULT_BOT, which fills bot seats, has no say in it).
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": db_url, "PBEM_DATA_DIR": str(tmp_path), "PBEM_MAIL_DOMAIN": "hearts.test",
        "PBEM_SECRET_KEY": "test-secret-key", "PBEM_BROKER_URL": "memory://", "PBEM_DEFAULT_BOT": "random",
    })
    assert settings.stand_in_bot == "strong"
    services = Services.from_settings(settings, clock=ManualClock(NOW))
    try:
        table = start(services, Timing(absence_policy="bot", deadline_hours=LONG), seed=STAND_IN_SEED)
        game = table.game()
        before = current_state(game)
        assert before.phase == "pass"
        view = bot_view(before, 0, ())
        seed = f"{game.seed or game.id}:{game.next_seq}"
        expected = {name: sorted(get_bot(name, seed=seed).choose_pass(view)) for name in ("strong", "heuristic")}
        assert expected["strong"] != expected["heuristic"]  # the deal tells the two apart
        table.reply(table.latest(0, "your_turn"), "vacation for 3 days")
        assert table.seat(0).stand_in == "vacation"
        passed = current_state(table.game()).passes[0]
        assert sorted(CARD_NAMES[c] for c in passed) == expected["strong"]
    finally:
        services.close()
