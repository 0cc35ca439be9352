"""The production pipeline started for end-to-end tests: real processes on 127.0.0.1.

``pbem smtp`` (the SMTP front, a subprocess), a real Celery worker on Redis, a database
(PostgreSQL or SQLite), and an SMTP sink as the relay, where the players read their mail.
Players send their replies over SMTP to the front, from their own address, to the signed reply
address of the mail they answer.
"""

from __future__ import annotations

import random
import smtplib
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from pbem.db.models import InboundMessage
from pbem.db.session import make_engine, make_session_factory
from tests.harness.celery_worker import CeleryWorker, pbem_environment
from tests.harness.players import Received, choose, reply_bytes
from tests.harness.ports import free_port
from tests.harness.smtp_sink import SmtpSink
from tests.harness.waiting import wait_for

DOMAIN = "hearts.test"


def redis_db(url: str, number: int) -> str:
    """The same Redis server, another database number (so tests do not share queues)."""
    base = url.rstrip("/")
    if base.rsplit("/", 1)[-1].isdigit():
        base = base.rsplit("/", 1)[0]
    return f"{base}/{number}"


def pbem_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from pbem.cli import main; main()", *args]


@dataclass
class Pipeline:
    database_url: str
    broker_url: str
    sink: SmtpSink
    tmp_path: Path
    concurrency: int = 2
    extra_env: dict[str, str] = field(default_factory=dict)
    #: Run Celery beat inside the worker (``--beat``), as ``pbem serve`` does.
    beat: bool = False

    def __post_init__(self) -> None:
        self.smtp_port = free_port()
        self.env = {
            "PBEM_DATABASE_URL": self.database_url,
            "PBEM_BROKER_URL": self.broker_url,
            "PBEM_DATA_DIR": str(self.tmp_path / "data"),
            "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SECRET_KEY": "e2e-secret",
            "PBEM_SMTP_LISTEN": f"127.0.0.1:{self.smtp_port}",
            "PBEM_RELAY_HOST": self.sink.host,
            "PBEM_RELAY_PORT": str(self.sink.port),
            **self.extra_env,
        }
        self.worker = CeleryWorker(self.env, concurrency=self.concurrency, beat=self.beat, log_dir=self.tmp_path)
        self.smtp: subprocess.Popen[bytes] | None = None
        engine = make_engine(self.database_url)
        self.session_factory = make_session_factory(engine)
        self._engine = engine

    def start(self) -> "Pipeline":
        log = open(self.tmp_path / "smtp.log", "wb")
        self.smtp = subprocess.Popen(pbem_command("smtp"), env=pbem_environment(self.env), cwd=self.tmp_path,
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        wait_for(self._smtp_up, timeout=30, message="the SMTP front to listen")
        self.worker.start()
        return self

    def _smtp_up(self) -> bool:
        try:
            with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=2) as client:
                return client.noop()[0] == 250
        except OSError:
            return False

    def stop(self) -> None:
        self.worker.stop()
        if self.smtp is not None:
            self.smtp.terminate()
            self.smtp.wait(timeout=20)
        self._engine.dispose()

    def __enter__(self) -> "Pipeline":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def cli(self, *args: str) -> str:
        out = subprocess.run(pbem_command(*args), env=pbem_environment(self.env), check=True,
                             capture_output=True, text=True, timeout=120)
        return out.stdout

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=30) as client:
            client.sendmail(sender, [recipient], raw)

    def inbound_statuses(self) -> list[str]:
        with self.session_factory() as session:
            return [str(s) for s in session.scalars(select(InboundMessage.status))]


@dataclass
class Table:
    """Scripted players at one table: each answers every your_turn mail addressed to them, once."""

    pipeline: Pipeline
    players: list[str]
    rng: random.Random = field(default_factory=lambda: random.Random(11))
    seen: int = 0
    answered: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def step(self) -> bool:
        """Answer every new your_turn mail at the sink; True if there was anything new."""
        messages = self.pipeline.sink.messages
        new = messages[self.seen:]
        self.seen = len(messages)
        for message in new:
            recipient = message.rcpt_tos[0].lower()
            if recipient not in self.players:
                continue
            received = Received.parse(message.raw)
            self.kinds[received.kind] = self.kinds.get(received.kind, 0) + 1
            if received.kind != "your_turn":
                continue
            body = choose(received, self.rng)
            self.log.append(f"{recipient} {received.decision} -> {body}")
            self.pipeline.send(recipient, received.reply_to, reply_bytes(received, sender=recipient, body=body))
            self.answered += 1
        return bool(new)

    def play_until(self, done: Callable[["Table"], bool], timeout: float) -> None:
        def progress() -> bool:
            self.step()
            return done(self)

        wait_for(progress, timeout=timeout, interval=0.02, message="the game to reach its end")
