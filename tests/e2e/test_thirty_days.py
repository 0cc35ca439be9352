"""Long games (README, "Time"): a game across 30 simulated days, on the production pipeline and a controllable clock.

Real processes: the SMTP front (``pbem smtp``), a real Celery worker on Redis, PostgreSQL, and an
SMTP sink as the relay where the players read their mail; players write back over SMTP. Time is
the services' ``OffsetClock``: the test moves it by writing ``PBEM_CLOCK_OFFSET_FILE`` (every
process reads the same file) and then queues ``pbem.tick`` as Celery beat would, so nothing sleeps
and no process is patched. Days pass twelve hours at a time; on each step the players who are
asked something answer a few moves.

The story: a game created by mail with a 48-hour deadline, a reminder 24 hours before and a
12-hour grace period, policy ``bot``. Player 3 never answers at first: reminded twice, then a
computer player stands in until they write back. Player 1 takes five days of vacation (a computer
player plays for them; the others are told when they leave and when they are back). Player 2
vanishes mid-game: reminded once, then the creator replaces them by mail and the substitute
inherits the seat. The game ends, and the clock runs on to day 30 with nothing more sent.

Checked: the game finished correctly (snapshot = replay of the log, every mail processed), every
outbox row was delivered exactly once (one copy per Message-ID at the relay), and the mails of
the story went to exactly the people they should, exactly as many times.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from datetime import timedelta
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import default
from email.utils import make_msgid

import pytest
from sqlalchemy import select

from pbem.config import Settings
from pbem.db.models import (
    Game,
    GameStatus,
    InboundMessage,
    InboundStatus,
    OutboundMessage,
    OutboundStatus,
    Seat,
)
from pbem.services.clock import OffsetClock
from pbem.services.gamestore import snapshot_agrees
from tests.e2e.pipeline import DOMAIN, Pipeline, redis_db
from tests.harness.players import Received, reply_bytes
from tests.harness.smtp_sink import CapturedMessage
from tests.harness.waiting import wait_for
from workers import make_celery
from workers.app import TICK

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.postgres]

P = [f"p{k}@players.test" for k in range(4)]
SUB = "sub@players.test"
STEP = timedelta(hours=12)
MOVES_PER_STEP = 4  # at least the four passes of a new hand: nobody else waits 24 hours
HEADERS = BytesHeaderParser(policy=default)


def crlf(raw: bytes) -> bytes:
    """Every line ended by CRLF, as SMTP wants (the quoted part of a reply has bare LFs)."""
    return raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


class World:
    """The pipeline, the shared clock, and scripted players reading the relay."""

    def __init__(self, pipeline: Pipeline, clock: OffsetClock) -> None:
        self.pipe = pipeline
        self.clock = clock
        self.celery = make_celery(Settings.from_env(pipeline.env))  # a client of the worker's broker
        self.rng = random.Random(30)
        self.ticks = 0
        self.elapsed = timedelta(0)
        self._headers: dict[CapturedMessage, Message] = {}

    # -- looking -----------------------------------------------------------------------------

    def headers(self, message: CapturedMessage) -> Message:
        """The headers of a mail at the relay, parsed once: the test looks through every mail
        many times, and a mail's bytes never change."""
        if message not in self._headers:
            self._headers[message] = HEADERS.parsebytes(message.raw)
        return self._headers[message]

    def mails(self, to: str | None = None, kind: str | None = None) -> list[CapturedMessage]:
        return [m for m in self.pipe.sink.messages
                if (to is None or to in m.rcpt_tos) and (kind is None or self.headers(m)["X-Hearts-Kind"] == kind)]

    def latest(self, to: str, kind: str | None = None) -> CapturedMessage:
        """The latest mail to ``to`` (of ``kind``; else the latest about the game, which a reply to
        the game must answer)."""
        found = [m for m in self.mails(to, kind) if kind is not None or self.headers(m)["X-Hearts-Seat"] is not None]
        assert found, f"no {kind or 'mail'} for {to}"
        return found[-1]

    def game(self) -> Game:
        with self.pipe.session_factory() as session:
            game = session.scalars(select(Game)).one()
            _ = [(s.deadline_at, s.player) for s in game.seats]
            session.expunge_all()
            return game

    def waiting(self) -> list[str]:
        """Addresses of the people the game waits for now, in seat order."""
        with self.pipe.session_factory() as session:
            rows = session.scalars(select(Seat).join(Game).where(
                Game.status == GameStatus.ACTIVE, Seat.deadline_at.is_not(None)).order_by(Seat.seat)).all()
            return [s.player.address for s in rows]

    def idle(self) -> bool:
        """Every received mail processed and every outgoing one at the relay."""
        with self.pipe.session_factory() as session:
            busy = session.scalars(select(InboundMessage.id).where(
                InboundMessage.status.in_((InboundStatus.PENDING, InboundStatus.PROCESSING)))).first()
            statuses = list(session.scalars(select(OutboundMessage.status)))
        return (busy is None and all(s == OutboundStatus.SENT for s in statuses)
                and len(self.pipe.sink.messages) >= len(statuses))

    def settle(self) -> None:
        wait_for(self.idle, timeout=60, interval=0.02, message="the pipeline to be idle")

    # -- acting --------------------------------------------------------------------------------

    def send(self, sender: str, to: str, body: str, subject: str = "Hearts") -> None:
        raw = (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: {make_msgid(domain='players.test')}"
               f"\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()
        self.pipe.send(sender, to, crlf(raw))
        self.settle()

    def reply(self, message: CapturedMessage, body: str) -> None:
        """Answer one of our mails as a mail client does (new text on top, the original quoted)."""
        sender = message.rcpt_tos[0]
        received = Received.parse(message.raw)
        raw = reply_bytes(received, sender=sender, body=body)
        self.pipe.send(sender, received.reply_to, crlf(raw))
        self.settle()

    def move(self, address: str) -> None:
        """``address`` answers the decision the game waits for, from the mail that asked for it (the
        only one carrying ``X-Hearts-Decision``: reminders and news mails do not)."""
        message = [m for m in self.mails(address) if self.headers(m)["X-Hearts-Decision"] is not None][-1]
        headers = self.headers(message)
        hand = str(headers["X-Hearts-Hand"] or "").split()
        phase = str(headers["X-Hearts-Phase"])
        if phase == "pass":
            body = " ".join(self.rng.sample(hand, 3))
        elif phase == "moon":
            body = "old"
        else:
            body = self.rng.choice(str(headers["X-Hearts-Legal"]).split())
        self.reply(message, body)

    def play(self, moves: int = MOVES_PER_STEP, absent: frozenset[str] = frozenset()) -> int:
        """Up to ``moves`` answers by the people asked (but the absent ones)."""
        done = 0
        while done < moves:
            ready = [a for a in self.waiting() if a not in absent]
            if not ready:
                break
            self.move(ready[0])
            done += 1
        return done

    def tick(self) -> None:
        """Queue ``pbem.tick`` as beat does, wait for the worker to finish it and send its mails."""
        self.celery.send_task(TICK)
        self.ticks += 1
        wait_for(lambda: len(re.findall(r"Task pbem\.tick\[[^\]]+\] succeeded", self.pipe.worker.log_text()))
                 >= self.ticks, timeout=60, message=f"tick {self.ticks} to finish")
        self.settle()

    def step(self) -> None:
        """Twelve hours later: the clock moves for every process, then the tick runs."""
        self.clock.advance(seconds=STEP.total_seconds())
        self.elapsed += STEP
        self.tick()

    def kinds(self) -> Counter:
        return Counter((self.headers(m)["X-Hearts-Kind"], m.rcpt_tos[0]) for m in self.pipe.sink.messages)


@pytest.fixture
def world(pg_migrated_url, redis_url, smtp_sink, tmp_path):
    smtp_sink.clear()
    offset = tmp_path / "clock-offset"
    pipeline = Pipeline(pg_migrated_url, redis_db(redis_url, 5), smtp_sink, tmp_path, concurrency=2,
                        extra_env={"PBEM_CLOCK_OFFSET_FILE": str(offset), "PBEM_DEFAULT_BOT": "random", "PBEM_STAND_IN_BOT": "random"})
    # A tick that did nothing logs its "succeeded" line at DEBUG (README, "Metrics and logs").
    pipeline.worker.extra_args.append("--loglevel=DEBUG")
    with pipeline:
        yield World(pipeline, OffsetClock(offset))


def test_a_game_across_thirty_days_with_deadlines_a_vacation_a_stand_in_and_a_substitute(world: World, capsys):
    started = time.monotonic()
    # Day 0: p0 creates the game by mail, confirms their own seat, the others accept.
    world.send(f"Player 0 <{P[0]}>", f"new@{DOMAIN}", "new game\nplayers: " + ", ".join(P[1:]) +
               "\ndeadline: 48\nreminder: 24\ngrace: 12\npolicy: bot\nend after hands: 5", subject="A slow table")
    world.reply(world.latest(P[0], "invitation"), "accept")
    for address in P[1:]:
        world.reply(world.latest(address, "invitation"), "accept")
    game = world.game()
    assert game.status == GameStatus.ACTIVE
    assert (game.deadline_hours, game.reminder_hours, game.grace_hours, game.absence_policy) == (48, 24, 12, "bot")
    assert sorted(world.waiting()) == P

    # Days 0-3: p3 does not answer. Reminded at 24 h and at 48 h, then a computer player stands in.
    world.play(absent=frozenset({P[3]}))
    assert world.waiting() == [P[3]]
    while not world.mails(P[3], "stand_in"):
        world.step()
        world.play(absent=frozenset({P[3]}))
        assert world.elapsed <= timedelta(hours=60), "no stand-in after deadline and grace"
    assert len(world.mails(P[3], "reminder")) == 2
    assert world.game().seats[3].stand_in == "deadline"
    world.step()
    world.play()
    world.reply(world.latest(P[3], "stand_in"), "Sorry, I am back!")  # any mail takes the seat back
    assert world.headers(world.latest(P[3]))["X-Hearts-Kind"] == "seat_back"
    assert world.game().seats[3].stand_in is None

    # Day 4: p1 goes on vacation for five days; a computer player plays for them meanwhile.
    world.step()
    world.play()
    world.reply(world.latest(P[1]), "vacation for 5 days")
    assert world.game().seats[1].stand_in == "vacation"
    while not world.mails(P[1], "vacation")[1:]:
        world.step()
        world.play()
        assert world.elapsed <= timedelta(days=10), "the vacation did not end"
    assert world.game().seats[1].stand_in is None

    # Day ~10: p2 vanishes. Reminded once, then the creator replaces them by mail.
    while world.game().status == GameStatus.ACTIVE and not world.mails(P[2], "reminder"):
        world.step()
        world.play(absent=frozenset({P[2]}))
        assert world.elapsed <= timedelta(days=16), "p2 was never reminded"
    assert world.game().status == GameStatus.ACTIVE, "the game ended before the substitute came"
    world.reply(world.latest(P[0]), "replace p2 with sub@players.test")
    world.reply(world.latest(SUB, "substitute_invitation"), "accept")
    seat = world.game().seats[2]
    assert seat.player.address == SUB and seat.deadline_at is not None
    substitute_came = (world.elapsed, world.game().snapshot["hand_no"])

    # Then everyone (the substitute too) plays on until the game ends, and the clock runs to day 30.
    while world.game().status == GameStatus.ACTIVE:
        world.step()
        world.play()
        assert world.elapsed <= timedelta(days=45), "the game did not end"
    end_of_game, game_ended = len(world.pipe.sink.messages), world.elapsed
    while world.elapsed < timedelta(days=30):
        world.step()
    assert len(world.pipe.sink.messages) == end_of_game  # nothing more was sent after the end

    # The game finished correctly.
    with world.pipe.session_factory() as session:
        game = session.scalars(select(Game)).one()
        assert game.status == GameStatus.FINISHED and game.snapshot["phase"] == "over"
        # Five hands ("end after hands: 5"), and one more for each tie for the lowest total after it
        # (tie=play_on, RULES.md §2 rule 9).
        history = game.snapshot["history"]
        assert len(history) == game.snapshot["hand_no"] >= 5
        for after in history[4:-1]:
            assert sorted(after["totals"]).count(min(after["totals"])) > 1, "played on without a tie"
        final = history[-1]["totals"]
        assert game.snapshot["winners"] == [s for s, x in enumerate(final) if x == min(final)]
        assert len(game.snapshot["winners"]) == 1
        assert snapshot_agrees(session, game)
        assert set(session.scalars(select(InboundMessage.status))) == {InboundStatus.DONE}
        rows = list(session.scalars(select(OutboundMessage)))
    # Every outbox row was delivered, exactly once.
    delivered = Counter(world.headers(m)["Message-ID"] for m in world.pipe.sink.messages)
    assert all(row.status == OutboundStatus.SENT for row in rows)
    assert delivered == Counter(row.message_id for row in rows)
    # The mails of the story went to exactly the right people, exactly as often.
    kinds = world.kinds()
    story = {kind for kind, _ in kinds} & {"reminder", "stand_in", "seat_back", "vacation", "player_away",
                                           "substitute_invitation", "substitute_wanted", "seat_replaced",
                                           "game_summary", "request_rejected", "move_rejected", "invitation",
                                           "game_started", "game_paused", "game_resumed"}
    got = {(kind, to): n for (kind, to), n in kinds.items() if kind in story}
    assert got == {
        **{("invitation", a): 1 for a in P},
        ("reminder", P[3]): 2, ("stand_in", P[3]): 1, ("seat_back", P[3]): 1,
        ("vacation", P[1]): 2, **{("player_away", a): 2 for a in (P[0], P[2], P[3])},
        ("reminder", P[2]): 1,
        ("substitute_invitation", SUB): 1, ("substitute_wanted", P[0]): 1,
        **{("seat_replaced", a): 1 for a in (P[0], P[1], P[2], P[3], SUB)},
        **{("game_summary", a): 1 for a in (P[0], P[1], P[3], SUB)},
    }
    with capsys.disabled():
        print(f"\n[e2e] 30 simulated days: {world.ticks} ticks, {len(rows)} mails, "
              f"{len(delivered)} delivered once each; the substitute came after {substitute_came[0]} "
              f"in hand {substitute_came[1]}, the game ended after {game_ended}; "
              f"{time.monotonic() - started:.1f} s")
