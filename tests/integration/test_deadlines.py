"""Deadlines (README, "Time"): arithmetic, options, reminders exactly once, and each absence policy.

Service-level, on SQLite and PostgreSQL, on a ``ManualClock``: replies are stored as a front stores
them and processed as the worker does; ``tick`` is what the ``pbem.tick`` task calls. The helpers
here are shared by ``test_absence.py`` and ``test_creator.py``.
"""

from __future__ import annotations

import re

import random
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest
from sqlalchemy import func, select

from pbem.config import Settings
from pbem.db.models import Game, GameStatus, InboundMessage, Move, OutboundMessage, Seat
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.deadlines import (
    BadTiming,
    Timing,
    add_hours,
    pop_timing,
    timing_from_options,
)
from pbem.services.games import SeatSpec, create_game, get_or_create_player, start_game
from pbem.services.gamestore import load_game, snapshot_agrees
from pbem.services.inbound import process_inbound
from pbem.services.intake import store_inbound
from pbem.services.tick import tick
from tests.harness.players import Received, choose, reply_bytes
from tests.integration.mailplay import outbox

DOMAIN = "hearts.test"
#: A Thursday, noon (UTC).
START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def address(seat: int) -> str:
    return f"p{seat}@players.test"


# -- helpers shared by the time tests ------------------------------------------------------------------


@pytest.fixture
def svc(db_url: str, tmp_path: Path) -> Iterator[Services]:
    settings = Settings.from_env({
        "PBEM_DATABASE_URL": db_url,
        "PBEM_DATA_DIR": str(tmp_path),
        "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "test-secret-key",
        "PBEM_BROKER_URL": "memory://",
        "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random",
    })
    services = Services.from_settings(settings, clock=ManualClock(START))
    yield services
    services.close()


def clock(svc: Services) -> ManualClock:
    assert isinstance(svc.clock, ManualClock)
    return svc.clock


class Table:
    """One game and every mail it caused, in order."""

    def __init__(self, svc: Services, game_id: int, mails: list[OutboundMessage]) -> None:
        self.svc = svc
        self.game_id = game_id
        self.mails: list[OutboundMessage] = []
        self.add(mails)

    def add(self, mails: list[OutboundMessage]) -> list[OutboundMessage]:
        self.mails += mails
        return mails

    def to(self, who: int | str, kind: str | None = None) -> list[OutboundMessage]:
        target = address(who) if isinstance(who, int) else who
        return [m for m in self.mails if m.recipient == target and (kind is None or m.kind == kind)]

    def latest(self, who: int | str, kind: str | None = None) -> OutboundMessage:
        found = self.to(who, kind)
        assert found, f"no {kind or 'mail'} to {who}"
        return found[-1]

    def tick(self) -> list[OutboundMessage]:
        return self.add(outbox(self.svc, tick(self.svc)))

    def reply(self, mail: OutboundMessage, body: str, sender: str | None = None) -> list[OutboundMessage]:
        return self.add(answer(self.svc, mail, body, sender))

    def move(self, seat: int, rng: random.Random | None = None) -> list[OutboundMessage]:
        """The person in ``seat`` answers their latest ``your_turn`` (or reminder) with a legal move."""
        mail = self.latest(seat, "your_turn")
        return self.reply(mail, choose(Received.parse(mail.raw), rng or random.Random(seat)))

    def game(self) -> Game:
        with transaction(self.svc.session_factory) as session:
            game = load_game(session, self.game_id, lock=False)
            for seat in game.seats:
                _ = seat.player
            session.expunge_all()
            return game

    def seat(self, number: int) -> Seat:
        return sorted(self.game().seats, key=lambda s: s.seat)[number]

    def kinds(self, mails: list[OutboundMessage] | None = None) -> Counter:
        return Counter((m.kind, m.recipient) for m in (self.mails if mails is None else mails))


def deliver(svc: Services, raw: bytes, sender: str, recipient: str) -> list[OutboundMessage]:
    """Store a mail as a front would and process it as the worker would; the mails it caused."""
    with transaction(svc.session_factory) as session:
        ids = store_inbound(session, raw=raw, mail_from=sender, recipients=[recipient], source="inject",
                            received_at=svc.clock.now())
    out: list[int] = []
    for inbound_id in ids:
        out += process_inbound(svc, inbound_id)
    return outbox(svc, out)


def answer(svc: Services, mail: OutboundMessage, body: str, sender: str | None = None) -> list[OutboundMessage]:
    received = Received.parse(mail.raw)
    sender = sender or mail.recipient
    return deliver(svc, reply_bytes(received, sender=sender, body=body), sender, received.reply_to)


def last_outcome(svc: Services) -> dict:
    with transaction(svc.session_factory) as session:
        row = session.scalars(select(InboundMessage).order_by(InboundMessage.id.desc())).first()
        return {"status": row.status, **(row.outcome or {})}


def text_of(mail: OutboundMessage) -> str:
    """The text part with its lines joined (it is wrapped at 72 columns: a sentence may go on)."""
    text = message_from_bytes(mail.raw, policy=default).get_body(("plain",)).get_content()  # type: ignore[union-attr]
    return re.sub(r"[ \t]*\r?\n[ \t]*", " ", text)


def start(svc: Services, timing: Timing = Timing(), *, people: int = 4, creator: int | None = 0,
          seed: str = "time-table", **options: object) -> Table:
    """A game of ``people`` people (then random bots), created by the player of seat ``creator``."""
    rules = Rules.make("standard", **options)
    seats = [SeatSpec(address=address(k), name=f"Player {k}") if k < people else SeatSpec(bot="random")
             for k in range(rules.players)]
    with transaction(svc.session_factory) as session:
        owner = get_or_create_player(session, address(creator), f"Player {creator}") if creator is not None else None
        game = create_game(session, svc, rules=rules, seats=seats, creator=owner, seed=seed, title="Slow table")
        timing.apply(game)
        mails = start_game(session, svc, game)
        return Table(svc, game.id, mails)


def pass_all(table: Table, seats: list[int]) -> None:
    for seat in seats:
        table.move(seat)


# -- arithmetic ---------------------------------------------------------------------------------------


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(("start_at", "hours", "expected"), [
    (utc(2026, 1, 1, 12), 72, utc(2026, 1, 4, 12)),  # weekends counted
    (utc(2026, 1, 2, 23, 30), 0.5, utc(2026, 1, 3, 0, 0)),
])
def test_add_hours_counts_every_hour_by_default(start_at, hours, expected) -> None:
    assert add_hours(start_at, hours, skip_weekends=False) == expected


@pytest.mark.parametrize(("start_at", "hours", "expected"), [
    (utc(2026, 1, 1, 12), 24, utc(2026, 1, 2, 12)),  # Thursday -> Friday: no weekend in between
    (utc(2026, 1, 2, 12), 24, utc(2026, 1, 5, 12)),  # Friday noon + 24 h -> Monday noon
    (utc(2026, 1, 1, 12), 72, utc(2026, 1, 6, 12)),  # Thursday + 3 days -> Tuesday
    (utc(2026, 1, 3, 10), 1, utc(2026, 1, 5, 1)),  # asked on a Saturday: counting starts on Monday
    (utc(2026, 1, 4, 23, 59), 1, utc(2026, 1, 5, 1)),  # ... or late on Sunday
    (utc(2026, 1, 2, 20), 4, utc(2026, 1, 3, 0)),  # due exactly when the weekend starts
    (utc(2026, 1, 5, 0), 240, utc(2026, 1, 17, 0)),  # ten working days: two weeks, due Saturday 00:00
    (datetime(2026, 1, 2, 22, tzinfo=UTC).astimezone(), 3, utc(2026, 1, 5, 1)),  # any zone in
])
def test_add_hours_skips_saturdays_and_sundays_in_utc(start_at, hours, expected) -> None:
    got = add_hours(start_at, hours, skip_weekends=True)
    assert got == expected
    assert got.tzinfo is not None


def test_timing_options_in_three_languages() -> None:
    assert timing_from_options({}) == Timing(72, False, 12, 24, "bot")
    assert timing_from_options({"grace": "0"}).grace_hours == 0  # no grace: the policy at the deadline
    assert timing_from_options({"deadline": "48", "weekends": "skip", "policy": "pause", "grace": "12h",
                                "reminder": "1d"}) == Timing(48, True, 12, 24, "pause")
    assert timing_from_options({"prazo": "2 dias", "fins_de_semana": "não contam", "política": "substituto",
                                "tolerância": "6 horas"}) == Timing(48, True, 6, 24, "substitute")
    assert timing_from_options({"termen": "3 zile", "weekenduri": "da", "politica": "pauză",
                                "memento": "12 ore"}) == Timing(72, False, 12, 12, "pause")
    assert timing_from_options({"deadline": "1 week"}).deadline_hours == 168


@pytest.mark.parametrize(("options", "code"), [
    ({"deadline": "soon"}, "BAD_DEADLINE"),
    ({"deadline": "0"}, "BAD_DEADLINE"),
    ({"deadline": "100 days"}, "BAD_DEADLINE"),
    ({"weekends": "maybe"}, "BAD_WEEKENDS"),
    ({"policy": "forfeit"}, "BAD_POLICY"),
    ({"grace": "-2"}, "BAD_GRACE"),
    ({"reminder": "30 days"}, "BAD_REMINDER"),
])
def test_bad_timing_options_are_refused_with_a_code(options, code) -> None:
    with pytest.raises(BadTiming) as refused:
        timing_from_options(options)
    assert refused.value.code == code


def test_pop_timing_leaves_the_rules_options() -> None:
    options = {"target": "50", "Deadline": "36", "fins de semana": "skip", "moon": "new"}
    assert pop_timing(options) == Timing(deadline_hours=36, skip_weekends=True)
    assert options == {"target": "50", "moon": "new"}


# -- deadlines through the services ---------------------------------------------------------------------


def test_each_new_decision_gets_a_deadline_and_a_decided_seat_none(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=48))
    for k in range(4):
        seat = table.seat(k)
        assert seat.waiting_since == START and seat.deadline_at == START + timedelta(hours=48)
        assert "Please move by" in text_of(table.latest(k, "your_turn"))
    clock(svc).advance(hours=5)
    table.move(0)
    assert table.seat(0).deadline_at is None and table.seat(0).waiting_since is None
    assert table.seat(1).deadline_at == START + timedelta(hours=48)  # still the same decision
    pass_all(table, [1, 2, 3])
    leader = next(k for k in range(4) if table.seat(k).deadline_at is not None)
    assert table.seat(leader).waiting_since == START + timedelta(hours=5)
    assert [k for k in range(4) if table.seat(k).deadline_at is not None] == [leader]
    # The status mail tells anyone since when the game waits, in their own zone.
    other = (leader + 1) % 4
    status = table.reply(table.latest(other), "status")
    assert [m.kind for m in status] == ["status"]
    assert "The game has been waiting since Thu, Jan 1, 2026, 5:00" in text_of(status[0])


def test_weekends_skipped_in_a_game_that_asks_for_it(svc: Services) -> None:
    clock(svc).current = utc(2026, 1, 2, 12)  # a Friday
    table = start(svc, Timing(deadline_hours=24, skip_weekends=True))
    assert table.seat(0).deadline_at == utc(2026, 1, 5, 12)


def test_reminders_go_out_once_each_then_a_bot_stands_in(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=48, reminder_hours=24, grace_hours=12, absence_policy="bot"))
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=23, minutes=59)
    assert table.tick() == []
    clock(svc).advance(minutes=1)
    first = table.tick()
    assert [(m.kind, m.recipient) for m in first] == [("reminder", address(3))]
    assert "the game has been waiting for your decision since" in text_of(first[0])
    assert table.tick() == []  # exactly once
    clock(svc).advance(hours=24)
    second = table.tick()
    assert [(m.kind, m.recipient) for m in second] == [("reminder", address(3))]
    assert "The time for your decision ran out" in text_of(second[0])
    assert "a computer player will play for you" in text_of(second[0])
    assert table.tick() == []
    clock(svc).advance(hours=11, minutes=59)
    assert table.tick() == []
    clock(svc).advance(minutes=1)
    acted = table.tick()
    assert acted[0].kind == "stand_in" and acted[0].recipient == address(3)
    seat = table.seat(3)
    assert seat.stand_in == "deadline" and seat.deadline_at is None
    # The computer player passed for seat 3: the play began, and someone was asked to play.
    assert table.game().snapshot["phase"] == "play"
    assert any(m.kind == "your_turn" for m in acted)
    assert table.tick() == []
    sent = Counter(m.kind for m in table.to(3))
    assert (sent["reminder"], sent["stand_in"], sent["your_turn"]) == (2, 1, 1)


def test_a_late_tick_sends_only_the_step_that_is_due(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=48, reminder_hours=24, grace_hours=12))
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=50)  # the scheduler was down past the deadline
    late = table.tick()
    assert [m.kind for m in late] == ["reminder"]
    assert "The time for your decision ran out" in text_of(late[0])
    clock(svc).advance(days=3)  # and again past the grace period
    acted = table.tick()
    assert [m.kind for m in acted if m.recipient == address(3)][:1] == ["stand_in"]
    assert Counter(m.kind for m in table.to(3))["reminder"] == 1


def test_by_default_the_deadline_brings_a_reminder_and_the_policy_comes_after_the_grace(svc: Services) -> None:
    """The defaults (72 hours, a reminder 24 hours before, 12 hours of grace, policy bot): the player
    the game waits for hears before the deadline and at it, and the bot stands in 12 hours later."""
    assert pop_timing({"target": 50}) == Timing() and Timing().grace_hours == 12
    table = start(svc)
    assert table.game().grace_hours == 12
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=48)
    early = table.tick()
    assert [(m.kind, m.recipient) for m in early] == [("reminder", address(3))]
    assert "Please reply by" in text_of(early[0])
    clock(svc).advance(hours=24)
    at = table.tick()
    assert [(m.kind, m.recipient) for m in at] == [("reminder", address(3))]
    text = text_of(at[0])
    assert "The time for your decision ran out at Sun, Jan 4, 2026" in text
    assert "a computer player will play for you" in text and "Jan 5, 2026" in text
    assert table.seat(3).stand_in is None and table.seat(3).reminders_sent == 2
    clock(svc).advance(hours=11, minutes=59)
    assert table.tick() == []
    clock(svc).advance(minutes=1)
    acted = table.tick()
    assert acted[0].kind == "stand_in" and acted[0].recipient == address(3)
    assert table.seat(3).stand_in == "deadline"
    assert Counter(m.kind for m in table.to(3))["reminder"] == 2


def test_no_grace_means_the_policy_applies_at_the_deadline(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=10, reminder_hours=24, grace_hours=0))  # reminder longer than the deadline
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=9)
    assert table.tick() == []  # no early reminder: it would have come at once
    clock(svc).advance(hours=1)
    assert table.tick()[0].kind == "stand_in"
    assert table.seat(3).stand_in == "deadline"


def test_writing_to_the_seat_takes_it_back_from_the_bot(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0))
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=24)
    stand_in = table.tick()[0]
    assert stand_in.kind == "stand_in"
    back = table.reply(stand_in, "I am back, sorry!")
    assert last_outcome(svc)["code"] == "SEAT_TAKEN_BACK"
    assert [(m.kind, m.recipient) for m in back] == [("seat_back", address(3))]
    assert "your seat is yours again" in text_of(back[0])
    assert table.seat(3).stand_in is None
    # From now on the game waits for seat 3 again when it is their turn.
    rng = random.Random(3)
    for _ in range(40):
        waiting = [k for k in range(4) if table.seat(k).deadline_at is not None]
        if 3 in waiting:
            break
        table.move(waiting[0], rng)
    assert table.seat(3).deadline_at is not None
    assert table.latest(3).kind == "your_turn"


def test_a_stale_card_from_the_absent_player_only_takes_the_seat_back(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0))
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=25)
    table.tick()
    moves = len(table.game().snapshot["history"]), table.game().next_seq
    old = table.latest(3, "your_turn")  # the pass the computer player has made meanwhile
    back = table.reply(old, " ".join(Received.parse(old.raw).hand[:3]))
    assert [m.kind for m in back] == ["seat_back"]
    assert (len(table.game().snapshot["history"]), table.game().next_seq) == moves


def test_pause_policy_pauses_and_the_absent_player_resumes_by_moving(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0, absence_policy="pause"))
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=24)
    paused = table.tick()
    assert sorted((m.kind, m.recipient) for m in paused) == [("game_paused", address(k)) for k in range(4)]
    assert "You did not reply in time, so the game is paused" in text_of(next(m for m in paused
                                                                            if m.recipient == address(3)))
    assert "Player 3 did not reply in time" in text_of(next(m for m in paused if m.recipient == address(0)))
    game = table.game()
    assert game.status == GameStatus.PAUSED and game.paused_at == clock(svc).now()
    assert all(s.deadline_at is None for s in game.seats)
    assert table.tick() == []
    # The others cannot move meanwhile (nobody is asked to, but a status works).
    clock(svc).advance(days=3)
    answered = table.reply(table.latest(3, "your_turn"), " ".join(Received.parse(table.latest(3, "your_turn").raw).hand[:3]))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED"
    assert last_outcome(svc)["seat_taken_back"] == "paused"
    assert table.game().status == GameStatus.ACTIVE
    resumed = [m for m in answered if m.kind == "game_resumed"]
    assert sorted(m.recipient for m in resumed) == [address(k) for k in range(4)]
    assert "Player 3 is back, and the game goes on." in text_of(next(m for m in resumed
                                                                      if m.recipient == address(0)))
    assert any(m.kind == "your_turn" for m in answered)  # the play begins
    waiting = [s for s in table.game().seats if s.deadline_at is not None]
    assert waiting and all(s.waiting_since == clock(svc).now() for s in waiting)


@pytest.mark.parametrize("creator", [None, 3])
def test_substitute_wanted_with_no_playing_creator_to_ask_is_logged_for_the_operator(
        svc: Services, creator: int | None, caplog: pytest.LogCaptureFixture) -> None:
    # A game made on the command line has no creator; here seat 3 is also the creator who is absent.
    table = start(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0, absence_policy="substitute"),
                  creator=creator)
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=24)
    with caplog.at_level("WARNING", logger="pbem.worker"):
        acted = table.tick()
    assert [(m.kind, m.recipient) for m in acted][:1] == [("stand_in", address(3))]
    assert not [m for m in acted if m.kind == "substitute_wanted"]
    assert table.seat(3).stand_in == "substitute_wanted"  # a computer player holds the seat meanwhile
    assert f"`pbem game replace {table.game_id} 3 ADDRESS`" in caplog.text


def test_substitute_policy_asks_the_creator_and_the_substitute_inherits_the_seat(svc: Services) -> None:
    table = start(svc, Timing(deadline_hours=24, reminder_hours=0, grace_hours=0, absence_policy="substitute"))
    pass_all(table, [0, 1, 2])
    clock(svc).advance(hours=24)
    acted = table.tick()
    assert [(m.kind, m.recipient) for m in acted][:2] == [("stand_in", address(3)),
                                                         ("substitute_wanted", address(0))]
    assert table.seat(3).stand_in == "substitute_wanted"
    ask = table.latest(0, "substitute_wanted")
    assert "replace Player 3" in text_of(ask)
    # A player who is not the creator cannot replace anyone.
    table.reply(table.latest(1), "replace Player 3 sub@players.test")
    assert last_outcome(svc)["code"] == "NOT_THE_CREATOR"
    invited = table.reply(ask, "replace Player 3 with Sub@Players.test")
    assert last_outcome(svc)["code"] == "SUBSTITUTE_INVITED"
    assert sorted((m.kind, m.recipient) for m in invited) == [("substitute_invitation", "sub@players.test"),
                                                             ("substitute_wanted", address(0))]
    before = table.game().snapshot
    clock(svc).advance(hours=2)
    joined = table.reply(table.latest("sub@players.test", "substitute_invitation"), "accept")
    assert last_outcome(svc)["code"] == "SUBSTITUTE_JOINED"
    kinds = Counter((m.kind, m.recipient) for m in joined)
    assert kinds[("seat_replaced", address(3))] == 1
    assert all(kinds[("seat_replaced", address(k))] == 1 for k in range(3))
    assert kinds[("seat_replaced", "sub@players.test")] == 1
    to_old = next(m for m in joined if m.recipient == address(3))
    assert "has taken over your seat" in text_of(to_old) and "X-Hearts-Hand" not in to_old.raw.decode()
    seat = table.seat(3)
    assert seat.player.address == "sub@players.test" and seat.stand_in is None
    assert table.game().snapshot == before  # the same cards and points
    # The old player's mails no longer count for the seat; the substitute's do.
    table.reply(table.latest(3, "your_turn"), "status")
    assert last_outcome(svc)["code"] == "FORGED_SENDER"
    # Play on until the substitute is asked to play, and let them.
    rng = random.Random(7)
    for _ in range(60):
        waiting = [k for k in range(4) if table.seat(k).deadline_at is not None]
        if waiting == [3]:
            break
        table.move(waiting[0], rng)
    turn = table.latest("sub@players.test", "your_turn")
    table.reply(turn, choose(Received.parse(turn.raw), rng))
    assert last_outcome(svc)["code"] == "MOVE_APPLIED"
    with transaction(svc.session_factory) as session:
        assert snapshot_agrees(session, load_game(session, table.game_id, lock=False))


def test_a_game_created_by_mail_takes_its_timing_options(svc: Services) -> None:
    start(svc, creator=0)  # p0 has a seat: a verified player, whose new games start at once
    body = ("new game\nplayers: p1@players.test, p2@players.test, p3@players.test\ndeadline: 36\n"
            "weekends: skip\npolicy: pause\ngrace: 6\nreminder: 12\ntarget: 50")
    raw = (f"From: {address(0)}\r\nTo: new@{DOMAIN}\r\nSubject: Slow game\r\nMessage-ID: <new-1@players.test>\r\n"
           f"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()
    deliver(svc, raw, address(0), f"new@{DOMAIN}")
    assert last_outcome(svc)["code"] == "GAME_CREATED"
    with transaction(svc.session_factory) as session:
        game = session.get(Game, last_outcome(svc)["game"])
        assert (game.deadline_hours, game.skip_weekends, game.absence_policy, game.grace_hours,
                game.reminder_hours, game.rules["target"]) == (36, True, "pause", 6, 12, 50)
    raw = raw.replace(b"deadline: 36", b"deadline: whenever").replace(b"new-1@", b"new-2@")
    answers = deliver(svc, raw, address(0), f"new@{DOMAIN}")
    assert last_outcome(svc)["code"] == "BAD_RULES" and last_outcome(svc)["problem"] == "BAD_DEADLINE"
    assert [m.kind for m in answers] == ["request_rejected"]


def test_tick_with_nothing_due_does_nothing(svc: Services) -> None:
    assert tick(svc) == []
    table = start(svc, Timing(deadline_hours=48, reminder_hours=24))
    table.move(0)

    def everything() -> tuple:
        """What a tick could change: the outbox, the move log, the game and its seats."""
        with transaction(svc.session_factory) as session:
            mails = session.scalars(select(func.count()).select_from(OutboundMessage)).one()
            moves = session.scalars(select(func.count()).select_from(Move)).one()
            game = session.get(Game, table.game_id)
            seats = [{c.key: getattr(seat, c.key) for c in Seat.__table__.columns}
                     for seat in session.scalars(select(Seat).order_by(Seat.game_id, Seat.seat))]
            return mails, moves, game.version, game.status, game.next_seq, game.snapshot, seats

    before = everything()
    assert before[0] > 0 and before[1] > 0  # the deal, a pass and their mails are there
    for hours in (0, 12, 23):  # the first reminder is due only 24 hours before the deadline
        clock(svc).current = START + timedelta(hours=hours, minutes=59)
        assert table.tick() == []
        assert everything() == before


def test_two_ticks_at_once_send_each_reminder_once(svc: Services) -> None:
    """Two workers running ``pbem.tick`` at the same moment (beat fired twice, a retry…)."""
    import threading

    table = start(svc, Timing(deadline_hours=48, reminder_hours=24))
    clock(svc).advance(hours=25)  # all four seats are due their first reminder
    barrier = threading.Barrier(2)
    results: list[list[int]] = []

    def run() -> None:
        barrier.wait()
        results.append(tick(svc))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 2  # both ticks ran to the end
    sent = outbox(svc, [i for ids in results for i in ids])
    assert sorted(m.recipient for m in sent) == [address(k) for k in range(4)]
    assert all(m.kind == "reminder" for m in sent)
    assert all(table.seat(k).reminders_sent == 1 for k in range(4))
