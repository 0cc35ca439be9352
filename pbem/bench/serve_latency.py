"""``pbem bench serve``: the latency of a move by mail on an otherwise idle ``pbem serve``.

It starts ``pbem serve`` exactly as a user does (SQLite, the embedded broker, its own Celery
worker with beat) on free 127.0.0.1 ports, with an SMTP sink in this process as the relay, opens
one table of four scripted players (``loadgen.Players``, who answer from the headers of their
``your_turn`` mails), plays the passes unmeasured, then plays ``moves`` cards one at a time
through serve's SMTP front: each reply is sent once the last one's mails are in and the sink has
been quiet for a moment, so every move meets an idle server.

For each move, from the front's 250 after DATA (the mail stored and queued) to the last of the
move's mails (its outbox rows) reaching the sink:

- *pickup*: until the worker's task started applying it (the broker's queue and its polling, the
  pool's hand-over);
- *processing*: applying the move and writing its mails, in one transaction (reading the reply,
  the engine, the database; ``apply_inbound``), without the rendering;
- *rendering*: the templates rendered for its mails (``MailRenderer.render``, inside the above);
- *sending*: from the commit to the last mail at the sink (SMTP to the relay).

The four add up to the total.  The worker's readings come from ``pbem.bench.serve_timers``,
installed in the worker by a ``sitecustomize`` on ``PYTHONPATH`` (nothing else of serve is
changed).  Before the moves, serve's CPU while idle is read from ``/proc`` over a few seconds (what
the broker's polling costs).  Figures are printed, never asserted.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import signal
import smtplib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from pbem.bench import procstat, serve_timers
from pbem.bench.e2e import percentile
from pbem.bench.loadgen import Players
from pbem.bench.tables import LOAD_DOMAIN, create_tables
from pbem.config import Settings
from pbem.db.models import InboundMessage, InboundStatus, OutboundMessage
from pbem.db.session import engine_of, make_engine, make_session_factory
from pbem.devservers import free_port, wait_for
from pbem.devservers.celery_worker import pbem_environment
from pbem.devservers.lean_sink import LeanSmtpSink
from pbem.services.app import Services
from workers.app import make_celery
from workers.queueing import queue_outbound

__all__ = ["Move", "Options", "run"]

Echo = Callable[[str], None]
MAIL_DOMAIN = "hearts.test"
GROUP = "serve"
_SITECUSTOMIZE = f"""\
import os
if os.environ.get({serve_timers.ENV!r}):
    from pbem.bench import serve_timers
    serve_timers.install(os.environ[{serve_timers.ENV!r}])
"""


@dataclass
class Options:
    moves: int = 30
    notify: str | None = None  # None: the default notifications; "every_card": 4 mails a move
    concurrency: int = 2
    idle_seconds: float = 10.0  # serve's CPU measured while idle this long (0: skip)
    keep_dir: bool = False
    seed: str = "serve"
    extra_env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Move:
    """One measured move; seconds, ``None`` where a reading is missing."""

    inbound_id: int
    status: str
    mails: int
    total: float | None
    pickup: float | None = None
    processing: float | None = None
    rendering: float | None = None
    sending: float | None = None


class Served:
    """``pbem serve`` in its own process group, its relay a sink in this process."""

    def __init__(self, options: Options, echo: Echo) -> None:
        self.options = options
        self.echo = echo
        self.base = Path(tempfile.mkdtemp(prefix="pbem-bench-serve-"))
        self.players = Players(domain=LOAD_DOMAIN)
        self.sink = LeanSmtpSink(on_message=self.players.on_message, keep=False)
        self.process: subprocess.Popen[bytes] | None = None
        self.svc: Services | None = None
        self.reader: sessionmaker[Session] | None = None
        self.timers = self.base / "timers.jsonl"
        self.log_file = self.base / "serve.log"

    def start(self) -> Served:
        self.sink.start()
        (self.base / "site").mkdir()
        (self.base / "site" / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        self.smtp_port, self.web_port = free_port(), free_port()
        self.env = {
            "PBEM_DATA_DIR": str(self.base / "data"),
            "PBEM_MAIL_DOMAIN": MAIL_DOMAIN,
            "PBEM_SECRET_KEY": "bench-secret-" + self.options.seed,
            "PBEM_SMTP_LISTEN": f"127.0.0.1:{self.smtp_port}",
            "PBEM_WEB_LISTEN": f"127.0.0.1:{self.web_port}",
            "PBEM_RELAY_HOST": self.sink.host,
            "PBEM_RELAY_PORT": str(self.sink.port),
            **self.options.extra_env,
        }
        self.settings = Settings.from_env(self.env)
        path = os.pathsep.join(p for p in (str(self.base / "site"), os.environ.get("PYTHONPATH", "")) if p)
        env = pbem_environment(self.env) | {"PYTHONPATH": path, serve_timers.ENV: str(self.timers)}
        with open(self.log_file, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from pbem.cli import main; main()", "serve",
                 f"--concurrency={self.options.concurrency}"],
                env=env, cwd=self.base, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)  # fmt: skip
        wait_for(self._ready, timeout=120, interval=0.1, message="pbem serve and its worker ready")
        self.svc = Services.from_settings(self.settings)
        # The benchmark's own reads: DEFERRED on SQLite, never queued behind serve's writers.
        self.reader = make_session_factory(make_engine(self.settings.database_url, sqlite_begin="DEFERRED"))
        self.celery = make_celery(self.settings)
        return self

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"pbem serve exited early:\n{self.log()[-3000:]}")
        text = self.log()
        return "Ctrl-C stops everything" in text and " ready." in text

    def pids(self) -> list[int]:
        assert self.process is not None
        return [self.process.pid, *procstat.descendants(self.process.pid)]

    def stop(self) -> None:
        if self.svc is not None:
            self.svc.close()
        if self.reader is not None:
            engine_of(self.reader).dispose()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.echo("  ! pbem serve did not stop within 60 s of SIGTERM: killed")
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.sink.stop()
        if self.options.keep_dir:
            self.echo(f"  (kept {self.base})")
        else:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> Served:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- playing ---------------------------------------------------------------------------------

    def open_table(self) -> None:
        assert self.svc is not None
        created = create_tables(self.svc, GROUP, 1, notify=self.options.notify, seed=self.options.seed)
        queue_outbound(self.celery, created.outbound_ids)
        wait_for(lambda: self.players.waiting(GROUP) >= 4, timeout=60, interval=0.01,
                 message="the table's first four decisions")

    def play(self, count: int, rng: random.Random, message_ids: Callable[[], str]) -> list[tuple[str, float]]:
        """``count`` moves one at a time; (Message-ID, monotonic time of the 250) of each."""
        sent: list[tuple[str, float]] = []
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=30) as client:
            for _ in range(count):
                wait_for(lambda: self.players.waiting(GROUP) > 0, timeout=60, interval=0.002,
                         message="a decision to answer")
                wait_for(lambda: time.monotonic() - self.players.quiet_since() > 0.3, timeout=60,
                         interval=0.01, message="the sink to be quiet")
                decision = self.players.take(GROUP)
                assert decision is not None
                message_id = message_ids()
                raw = decision.reply(decision.choose(rng), message_id)
                refused = client.sendmail(decision.player, [decision.reply_to], raw)
                accepted = time.monotonic()
                if refused:
                    raise RuntimeError(f"the front refused a reply: {refused}")
                sent.append((message_id, accepted))
        return sent

    def settle(self, sent: list[tuple[str, float]]) -> None:
        """Until every reply's inbound row is processed and its mails are at the sink."""
        assert self.svc is not None
        keys = [key for key, _ in sent]

        def done() -> bool:
            with self.svc.session_factory() as session:  # type: ignore[union-attr]
                rows = session.execute(select(InboundMessage.id, InboundMessage.status)
                                       .where(InboundMessage.message_key.in_(keys))).all()
                if len(rows) < len(keys) or any(r.status is InboundStatus.PENDING for r in rows):
                    return False
                ids = [r.id for r in rows]
                mails = session.scalars(select(OutboundMessage.message_id)
                                        .where(OutboundMessage.inbound_id.in_(ids))).all()
            return all(self.players.arrival(m) is not None for m in mails)

        wait_for(done, timeout=120, interval=0.2, message="every move's mails at the sink")

    def moves(self, sent: list[tuple[str, float]]) -> list[Move]:
        assert self.svc is not None
        marks: dict[int, dict[str, float]] = {}
        if self.timers.exists():
            for line in self.timers.read_text().splitlines():
                record = json.loads(line)
                marks[int(record["inbound_id"])] = record
        out: list[Move] = []
        with self.svc.session_factory() as session:
            for key, accepted in sent:
                row = session.execute(select(InboundMessage.id, InboundMessage.status)
                                      .where(InboundMessage.message_key == key)).one()
                mails = session.scalars(select(OutboundMessage.message_id)
                                        .where(OutboundMessage.inbound_id == row.id)).all()
                arrivals = [self.players.arrival(m) for m in mails]
                last = max((a for a in arrivals if a is not None), default=None)
                if not mails or last is None or None in arrivals:
                    out.append(Move(row.id, str(row.status), len(mails), None))
                    continue
                m = marks.get(row.id, {})
                if "apply_start" in m and "apply_end" in m:
                    rendering = m.get("render", 0.0)
                    out.append(Move(row.id, str(row.status), len(mails), last - accepted,
                                    pickup=m["apply_start"] - accepted,
                                    processing=m["apply_end"] - m["apply_start"] - rendering,
                                    rendering=rendering, sending=last - m["apply_end"]))
                else:
                    out.append(Move(row.id, str(row.status), len(mails), last - accepted))
        return out


def run(options: Options, echo: Echo = print) -> list[Move]:
    rng = random.Random(options.seed)
    counter = itertools.count()

    def message_id() -> str:
        return f"<bench-serve.{next(counter)}.{os.getpid()}@{LOAD_DOMAIN}>"

    with Served(options, echo) as served:
        with served.celery.connection_for_write() as connection:
            polling = connection.transport.polling_interval  # what the worker's consumer sleeps between polls
        echo(f"pbem bench serve: {options.moves} moves one at a time on an idle `pbem serve` (SQLite, "
             f"{_shown_broker(served.settings.broker_url)} polled every {polling * 1000:.0f} ms, worker "
             f"--concurrency={options.concurrency}), notifications {options.notify or 'default'}")
        if options.idle_seconds > 0:
            idle_cpu(served, options.idle_seconds, echo)
        served.open_table()
        warm = served.play(4, rng, message_id)  # the passes: only the last one causes mail
        served.settle(warm)
        sent = served.play(options.moves, rng, message_id)
        served.settle(sent)
        moves = served.moves(sent)
    report(moves, echo)
    return moves


def _shown_broker(url: str) -> str:
    return "the embedded broker" if url.startswith(("sqla+", "sqlalchemy+")) else url.split("://", 1)[0]


def idle_cpu_rate(served: Served, seconds: float) -> float:
    """CPU seconds a second spent by every ``pbem serve`` process while idle for ``seconds``."""
    kinds = {"serve": served.pids}
    before = procstat.sample(kinds)
    time.sleep(seconds)  # a measuring window, not a wait for an event
    return procstat.sample(kinds).minus(before)["serve"] / seconds


def idle_cpu(served: Served, seconds: float, echo: Echo) -> None:
    rate = idle_cpu_rate(served, seconds)
    echo(f"  idle CPU over {seconds:.0f} s: pbem serve (all processes) {rate * 100:.1f}% of one core")


def report(moves: list[Move], echo: Echo) -> None:
    complete = [m for m in moves if m.total is not None]
    echo(f"  moves: {len(moves)}, complete: {len(complete)}, mails: {sum(m.mails for m in moves)}")
    if not complete:
        echo("  ! no move completed")
        return
    echo("  ms from the 250 to the last mail at the sink:   p50     p99     max")
    columns: list[tuple[str, Callable[[Move], float | None]]] = [
        ("total", lambda m: m.total),
        ("  pickup (broker queue, pool)", lambda m: m.pickup),
        ("  processing (reply, engine, db)", lambda m: m.processing),
        ("  rendering (templates)", lambda m: m.rendering),
        ("  sending (SMTP to the relay)", lambda m: m.sending),
    ]
    for name, value in columns:
        values = [v * 1000 for v in (value(m) for m in complete) if v is not None]
        if values:
            echo(f"  {name:<46}{percentile(values, 50):7.1f} {percentile(values, 99):7.1f} {max(values):7.1f}")
    echo("  (each part's p50 over the moves; the parts of one move add up to its total)")
