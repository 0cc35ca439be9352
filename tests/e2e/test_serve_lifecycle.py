"""``pbem serve`` surviving its own processes, starting and stopping: a Celery process killed
(``kill -9``, the out-of-memory killer) is started again and the next move by mail is applied;
SIGTERM to serve's process group, to every group of its processes at once or to its PID alone stops
every process of it within ``STOP_TIMEOUT_S``, each time, with nothing left pending or applied twice
after the next start; the embedded broker keeps no delivered message; a second serve whose ports
are taken fails cleanly before it starts a worker or beat.

Real processes on 127.0.0.1 (``Served`` from the smoke test), one data directory reused by every
start of a test; a move is Alice's reply to her last "your turn" mail in the dev mailbox, in a game
against three bots.  Every wait has a deadline and nothing is timed: a stop that has not completed
within ``STOP_TIMEOUT_S`` of its signal fails.
"""

from __future__ import annotations

import os
import random
import signal
import smtplib
import socket
import sqlite3
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import func, select

from pbem.bench.loadgen import Decision
from pbem.bench.procstat import descendants
from pbem.db.models import Game, InboundMessage, InboundStatus, Move, OutboundMessage, OutboundStatus, Player, Seat
from pbem.db.session import make_engine, make_session_factory
from pbem.services.gamestore import snapshot_agrees
from tests.e2e.test_serve_smoke import DOMAIN, Served
from tests.harness.waiting import wait_for
from workers.embedded_broker import MESSAGE_TABLE
from workers.supervisor import STOP_TIMEOUT_S

pytestmark = pytest.mark.slow

ALICE = "alice@a.test"
#: Stops of each kind in a row: by serve's group (or every group of serve at once), by its PID.
STOPS = 10
WAITING = (InboundStatus.PENDING, InboundStatus.PROCESSING)


class AliceByMail:
    """Alice's game against three bots on a served data directory, played by mail: each decision read
    from her newest "your turn" mail in the dev mailbox (its ``X-Hearts-*`` headers), each reply
    sent to serve's SMTP front."""

    def __init__(self, data_dir: Path) -> None:
        self.devmail = data_dir / "devmail"
        self.engine = make_engine(f"sqlite:///{data_dir / 'pbem.db'}", sqlite_begin="DEFERRED")
        self.sessions = make_session_factory(self.engine)
        self.answered = ""  # the file of the last "your turn" mail answered
        self.sent: list[str] = []  # the Message-IDs of her replies
        self.rng = random.Random(38)

    def close(self) -> None:
        self.engine.dispose()

    def open(self, smtp_port: int) -> None:
        """Ask for the game by mail and accept its invitation (her address is new to the server)."""
        self._send(smtp_port, f"new@{DOMAIN}", "<alice-new@a.test>", "Hearts?", "new game\r\nbots: 3\r\n")
        invitation = wait_for(lambda: self._newest("invitation"), timeout=120, interval=0.2,
                              message="Alice's invitation")
        self._send(smtp_port, str(invitation["Reply-To"]).strip("<>"), "<alice-accept@a.test>",
                   f"Re: {invitation['Subject']}", "accept\r\n")

    def _send(self, smtp_port: int, to: str, message_id: str, subject: str, body: str) -> None:
        raw = (f"From: Alice <{ALICE}>\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: {message_id}\r\n"
               f"Content-Type: text/plain; charset=utf-8\r\n\r\n{body}").encode()
        with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as client:
            assert client.sendmail(ALICE, [to], raw) == {}

    def _newest(self, kind: str) -> EmailMessage | None:
        for path in sorted(self.devmail.glob("*.eml"), reverse=True):
            mail = cast(EmailMessage, message_from_bytes(path.read_bytes(), policy=policy.default))
            if mail["X-Hearts-Kind"] == kind and mail["Delivered-To"] == ALICE:
                return mail
        return None

    def _new_decision(self) -> tuple[str, Decision] | None:
        for path in sorted(self.devmail.glob("*.eml"), reverse=True):
            if path.name <= self.answered:
                return None
            mail = cast(EmailMessage, message_from_bytes(path.read_bytes(), policy=policy.default))
            if mail["X-Hearts-Kind"] == "your_turn" and mail["Delivered-To"] == ALICE:
                body = mail.get_body(("plain",))
                return path.name, Decision(
                    player=ALICE, reply_to=str(mail["Reply-To"]).strip("<>"),
                    decision=str(mail["X-Hearts-Decision"]), hand=tuple(str(mail["X-Hearts-Hand"]).split()),
                    legal=tuple(str(mail["X-Hearts-Legal"] or "").split()), message_id=str(mail["Message-ID"]),
                    subject=str(mail["Subject"]), quote=body.get_content() if body else "", arrived=0.0)
        return None

    def wait_decision(self) -> None:
        """Until her next "your turn" mail is in the mailbox: her last move applied, the bots' moves
        after it played, their mails sent."""
        wait_for(self._new_decision, timeout=120, interval=0.2, message="Alice's next 'your turn' mail")

    def play(self, smtp_port: int) -> str:
        """Answer her next "your turn" mail (waiting for it); the reply's Message-ID."""
        name, decision = wait_for(self._new_decision, timeout=120, interval=0.2,
                                  message="Alice's next 'your turn' mail")
        message_id = f"<alice-{len(self.sent)}@a.test>"
        raw = decision.reply(decision.choose(self.rng), message_id)
        with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as client:
            assert client.sendmail(ALICE, [decision.reply_to], raw) == {}
        self.answered = name
        self.sent.append(message_id)
        return message_id

    def applied_once(self, message_id: str) -> bool:
        """Whether her reply was processed, once (one attempt: no task ran it again), and made a move
        of her seat (and perhaps her forced cards after it)."""
        with self.sessions() as session:
            row = session.scalars(select(InboundMessage).where(InboundMessage.message_key == message_id)).one()
            if row.status in WAITING:
                return False
            seat = select(Seat.seat).join(Player, Player.id == Seat.player_id).where(Player.address == ALICE)
            moves = session.scalar(select(func.count()).select_from(Move)
                                   .where(Move.inbound_id == row.id, Move.seat.in_(seat.scalar_subquery())))
        assert (row.status, row.attempts) == (InboundStatus.DONE, 1), f"{message_id}: {row.status}, {row.attempts}"
        assert moves, f"{message_id}: no move of Alice's seat"
        return True

    def settled(self) -> bool:
        """Whether no received mail and no outgoing mail is waiting."""
        with self.sessions() as session:
            inbound = session.scalar(select(func.count()).select_from(InboundMessage)
                                     .where(InboundMessage.status.in_(WAITING)))
            outbound = session.scalar(select(func.count()).select_from(OutboundMessage)
                                      .where(OutboundMessage.status == OutboundStatus.PENDING))
        return inbound == 0 and outbound == 0

    def check(self) -> None:
        """Every reply applied once, nothing waiting, the game's snapshot equal to its log's replay."""
        for message_id in self.sent:
            wait_for(lambda: self.applied_once(message_id), timeout=120, interval=0.2,
                     message=f"{message_id} applied")
        wait_for(self.settled, timeout=120, interval=0.5, message="no mail waiting")
        with self.sessions() as session:
            games = list(session.scalars(select(Game)))
            assert len(games) == 1
            assert snapshot_agrees(session, games[0])


def celery_processes(served: Served) -> list[int]:
    """serve's workers and beat (its children; nothing runs below them)."""
    return [pid for pid in descendants(served.process.pid) if "celery" in Path(f"/proc/{pid}/cmdline").read_text()]


def stopped_cleanly(served: Served, what: str) -> None:
    """serve exits 0 within ``STOP_TIMEOUT_S`` of the signal, nothing killed, every group empty."""
    assert served.process.wait(STOP_TIMEOUT_S) == 0, served.log()[-3000:]
    wait_for(lambda: not served.group_processes(), timeout=30, message=f"{what}: no process left")
    text = served.log()
    assert "pbem serve: stopped" in text
    for sign in ("killing it", "killed (it holds no work)", "Traceback", "Exception ignored"):
        assert sign not in text, f"{what}: {sign!r} in\n{text[-3000:]}"


def delivered_messages_kept(data_dir: Path) -> int:
    with sqlite3.connect(data_dir / "broker.db") as db:
        return int(db.execute(f"SELECT count(*) FROM {MESSAGE_TABLE} WHERE NOT visible").fetchone()[0])


def test_a_killed_worker_or_beat_is_started_again_and_the_next_move_is_applied(tmp_path: Path) -> None:
    """Each of serve's Celery processes in turn, idle (as a blocked pool process held the pool's lock),
    is killed with SIGKILL; each time Alice's next move by mail is applied, and the process is
    started again."""
    served = Served(tmp_path)
    game = AliceByMail(served.data_dir)
    try:
        served.wait_ready()
        game.open(served.smtp_port)
        game.wait_decision()
        victims = celery_processes(served)
        assert len(victims) == 3, "two workers and beat"
        for number, pid in enumerate(victims, 1):
            served.groups()  # seen while it runs
            os.kill(pid, signal.SIGKILL)
            message_id = game.play(served.smtp_port)
            wait_for(lambda: game.applied_once(message_id), timeout=120, interval=0.2,
                     message=f"the move after killing process {number} ({pid}) applied")
            wait_for(lambda: served.log().count("started again") == number, timeout=60,
                     message=f"process {number} ({pid}) started again")
            # Up again before the next death (a worker says it is ready; beat has no such line).
            wait_for(lambda: served.log().count(" ready.") == 2 + min(number, 2), timeout=120,
                     message=f"process {number} ({pid}) up again")
            game.wait_decision()  # the bots' moves after it played: the server idle again
        assert served.process.poll() is None
        game.check()
        served.groups()
        served.process.send_signal(signal.SIGTERM)
        stopped_cleanly(served, "after the kills")
        assert delivered_messages_kept(served.data_dir) == 0
    finally:
        game.close()
        served.stop()


def test_sigterm_to_its_groups_or_its_pid_stops_everything_each_time(tmp_path: Path) -> None:
    """``STOPS`` starts each stopped by SIGTERM to serve's process group (every other time to every
    process group of serve at once, as systemd's KillMode=control-group does), then ``STOPS`` by
    SIGTERM to serve's PID (as ``docker stop``), each right after Alice's reply was accepted: each
    time serve stops within ``STOP_TIMEOUT_S``, nothing killed, no process left; after each next
    start her last move is applied once; at the end nothing waits and the broker kept nothing
    delivered."""
    data_dir = tmp_path / "data"
    game = AliceByMail(data_dir)
    try:
        for run in range(2 * STOPS + 1):
            # One worker: the stops are the same with two, and each start costs less.
            served = Served(tmp_path, data_dir=data_dir, name=f"run{run}", args=("--concurrency=1",))
            try:
                served.wait_ready()
                if run == 0:
                    game.open(served.smtp_port)
                elif run == 2 * STOPS:  # the start after the last stop
                    game.check()
                    served.process.send_signal(signal.SIGTERM)
                    stopped_cleanly(served, "the last start")
                    break
                game.play(served.smtp_port)
                groups = served.groups()
                if run >= STOPS:
                    served.process.send_signal(signal.SIGTERM)
                else:
                    for group in groups if run % 2 else [served.process.pid]:  # serve's own group
                        os.killpg(group, signal.SIGTERM)
                stopped_cleanly(served, f"run {run}")
            finally:
                served.stop()
        assert delivered_messages_kept(data_dir) == 0
    finally:
        game.close()


def test_a_second_serve_on_taken_ports_fails_cleanly_before_starting_anything(tmp_path: Path) -> None:
    """A second serve on the same data directory and ports exits with a message naming
    PBEM_SMTP_LISTEN, no traceback, no worker or beat of its own; the first one carries on. The same
    with only the web port taken names PBEM_WEB_LISTEN."""
    (tmp_path / "first").mkdir()
    first = Served(tmp_path / "first")
    try:
        first.wait_ready()

        second = Served(tmp_path, data_dir=first.data_dir, smtp_port=first.smtp_port,
                        web_port=first.web_port, name="second")
        assert second.process.wait(120) != 0
        text = second.log()
        assert "PBEM_SMTP_LISTEN" in text and f"127.0.0.1:{first.smtp_port}" in text, text
        assert "Traceback" not in text, text
        assert "Celery worker pid" not in text and "celery" not in text.lower(), text
        wait_for(lambda: not second.group_processes(), timeout=60, message="nothing left of the second serve")

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free_smtp = probe.getsockname()[1]
        third = Served(tmp_path, data_dir=first.data_dir, smtp_port=free_smtp, web_port=first.web_port,
                       name="third")
        assert third.process.wait(120) != 0
        text = third.log()
        assert "PBEM_WEB_LISTEN" in text and f"127.0.0.1:{first.web_port}" in text, text
        assert "Traceback" not in text and "celery" not in text.lower(), text

        # The first serve still runs and answers on its ports.
        assert first.process.poll() is None
        with socket.create_connection(("127.0.0.1", first.smtp_port), timeout=20) as conn:
            assert conn.recv(3) == b"220"
        first.process.send_signal(signal.SIGTERM)
        assert first.process.wait(120) == 0, first.log()[-3000:]
    finally:
        first.stop()
