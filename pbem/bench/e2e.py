"""``pbem bench e2e``: the whole mail path under load, measured.

It starts the real pipeline on 127.0.0.1, each piece in its own process as in production: a
PostgreSQL cluster (or an SQLite file), Redis, the SMTP front (``pbem smtp``), a Celery
worker (``celery -A workers.worker``, prefork pool) and, as the relay, an SMTP sink in this
process, where load players read their mail and answer it over SMTP (``loadgen``).  Then:

1. **Idle**: moves one at a time (the next sent once the last one's mails are in and the sink
   has been quiet for a moment): the latency of a single move on an idle server.
2. **Flat cost**: the same small load on 10 played tables while the database holds 10, 1,000
   and 10,000 active games (ballast written in bulk, ``tables.add_ballast``, then analysed as
   autovacuum would soon after such an insert): CPU per move, database size, worker memory.
3. **Steps**: for each notification mode (``every_card``: 4 mails a move, the heavy case; and the
   default), offered rates step up until the pipeline saturates (its tables filled, then
   analysed as for the flat cost).

Definitions (printed with the figures):

- a move is *complete* when every mail it caused (the outbox rows of its inbound row) has reached
  the sink; a move that causes no mail (a pass before the last) when its inbound row is processed;
- *latency*: from the front's acceptance of the reply (its 250 after DATA, the mail stored) to
  completion;
- *sustained*: moves completed inside the step's window, per second of the window;
- *CPU ms per move*: CPU time (``/proc``, user + system) of each kind of process in the window
  divided by the moves completed in it; "rest of the machine" is everything else the machine
  ran meanwhile (on a shared machine, other people's work).

Every loop has a count and every wait a deadline.  Nothing here is a test: figures are printed,
never asserted.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import smtplib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select, text

from pbem.bench import procstat, spy
from pbem.bench.loadgen import Pacer, PaceResult, Players, SentReply, Senders
from pbem.bench.tables import LOAD_DOMAIN, add_ballast, create_tables
from pbem.config import Settings
from pbem.db import migrate
from pbem.db.models import Game, GameStatus, InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.devservers import free_port, wait_for
from pbem.devservers.celery_worker import CeleryWorker, pbem_environment
from pbem.devservers.lean_sink import LeanSmtpSink
from pbem.devservers.postgres import PostgresServer
from pbem.devservers.redis_server import RedisServer
from pbem.services.app import Services
from pbem.services.gamestore import snapshot_agrees
from workers.app import make_celery
from workers.queueing import queue_outbound

__all__ = ["Options", "run"]

Echo = Callable[[str], None]
MAIL_DOMAIN = "hearts.test"
HEAVY, DEFAULT = "every_card", None


@dataclass
class Options:
    database: str = "postgresql"  # or "sqlite"
    rates: Sequence[float] = (10, 25, 50, 100, 150, 200, 250)
    step_seconds: float = 15.0
    games: int = 200
    modes: Sequence[str] = ("heavy", "default")
    idle_moves: int = 50
    flat_sizes: Sequence[int] = (10, 1000, 10000)
    flat_rate: float = 20.0
    flat_seconds: float = 15.0
    flat_tables: int = 10
    concurrency: int = 2
    pool: str = "prefork"  # or "solo": then ``concurrency`` worker processes of one slot each
    worker_cpus: str | None = None  # pin the worker (and its pool) to these CPUs (``taskset -c``)
    durable: bool = True  # PostgreSQL with fsync and synchronous commits (as in production)
    senders: int = 8
    drain_seconds: float = 90.0
    seed: str = "bench"
    keep_dir: bool = False
    profile_rate: float = 0.0  # > 0: a last step at this rate under py-spy (heavy tables)
    profile_seconds: float = 15.0
    extra_env: dict[str, str] = field(default_factory=dict)


# -- the pipeline -------------------------------------------------------------------------------


class Stack:
    """Every server of the pipeline, started in order and stopped in reverse."""

    def __init__(self, options: Options, echo: Echo) -> None:
        self.options = options
        self.echo = echo
        self.base = Path(tempfile.mkdtemp(prefix="pbem-bench-"))
        self.postgres = None
        self.redis = None
        self.sink: LeanSmtpSink | None = None
        self.smtp: subprocess.Popen[bytes] | None = None
        self.workers: list[CeleryWorker] = []
        self.svc = None
        self.players = Players(domain=LOAD_DOMAIN)
        self.database_url = ""

    def start(self) -> Stack:

        if self.options.database == "postgresql":

            # The dev server turns durability off (throwaway test data); a benchmark of a
            # server should pay for its commits as production does.
            durable = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
            self.postgres = PostgresServer(settings=durable if self.options.durable else None).start()
            self.database_url = self.postgres.create_database("pbem_bench")
        elif self.options.database == "sqlite":
            self.database_url = f"sqlite:///{self.base / 'pbem.db'}"
        else:
            raise ValueError(f"unknown database {self.options.database!r}")
        migrate.upgrade(self.database_url)
        self.redis = RedisServer().start()
        self.sink = LeanSmtpSink(on_message=self.players.on_message, keep=False).start()
        self.smtp_port = free_port()
        self.env = {
            "PBEM_DATABASE_URL": self.database_url,
            "PBEM_BROKER_URL": self.redis.url,
            "PBEM_DATA_DIR": str(self.base / "data"),
            "PBEM_MAIL_DOMAIN": MAIL_DOMAIN,
            "PBEM_SECRET_KEY": "bench-secret-" + self.options.seed,
            "PBEM_SMTP_LISTEN": f"127.0.0.1:{self.smtp_port}",
            "PBEM_RELAY_HOST": self.sink.host,
            "PBEM_RELAY_PORT": str(self.sink.port),
            "PBEM_ERROR_REPLIES_PER_DAY": "1000000",
            **self.options.extra_env,
        }
        (self.base / "data").mkdir(exist_ok=True)
        self.settings = Settings.from_env(self.env)
        with open(self.base / "smtp.log", "wb") as log:
            self.smtp = subprocess.Popen(
                [sys.executable, "-c", "from pbem.cli import main; main()", "smtp"],
                env=pbem_environment(self.env), cwd=self.base, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(self._smtp_up, timeout=60, message="the SMTP front to listen")
        if self.options.pool == "solo":
            self.workers = [CeleryWorker(self.env, concurrency=1, pool="solo", log_dir=self.base).start()
                            for _ in range(self.options.concurrency)]
        else:
            self.workers = [CeleryWorker(self.env, concurrency=self.options.concurrency, log_dir=self.base,
                                         cpus=self.options.worker_cpus).start()]

        self.svc = Services.from_settings(self.settings)
        self.celery = make_celery(self.settings)
        self.senders = Senders("127.0.0.1", self.smtp_port, threads=self.options.senders).start()
        counter = itertools.count()
        self.pacer = Pacer(self.players, self.senders, rng=random.Random(self.options.seed),
                           message_id=lambda: f"<bench.{next(counter)}.{os.getpid()}@{LOAD_DOMAIN}>")
        return self

    def stop(self) -> None:
        steps: list[Callable[[], object]] = []
        if getattr(self, "senders", None) is not None:
            steps.append(self.senders.stop)
        steps.extend(worker.stop for worker in self.workers)
        if self.smtp is not None:
            steps.append(self._stop_smtp)
        if self.svc is not None:
            steps.append(self.svc.close)
        if self.sink is not None:
            steps.append(self.sink.stop)
        if self.redis is not None:
            steps.append(self.redis.stop)
        if self.postgres is not None:
            steps.append(self.postgres.stop)
        for step in steps:
            try:
                step()
            except Exception as error:  # keep stopping the rest; say what failed
                self.echo(f"  (while stopping: {error!r})")
        if not self.options.keep_dir:
            shutil.rmtree(self.base, ignore_errors=True)

    def _stop_smtp(self) -> None:
        assert self.smtp is not None
        self.smtp.terminate()
        try:
            self.smtp.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.smtp.kill()
            self.smtp.wait(timeout=10)

    def __enter__(self) -> Stack:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _smtp_up(self) -> bool:
        if self.smtp is not None and self.smtp.poll() is not None:
            raise RuntimeError(f"pbem smtp exited:\n{(self.base / 'smtp.log').read_text()[-3000:]}")
        try:
            with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=2) as client:
                return client.noop()[0] == 250
        except OSError:
            return False

    # -- what to measure ---------------------------------------------------------------------

    def process_kinds(self) -> dict[str, Callable[[], Iterable[int]]]:
        assert self.smtp is not None and self.workers and self.redis is not None
        smtp_pid, redis_pid = self.smtp.pid, self.redis.process.pid
        worker_pids = [worker.pid for worker in self.workers]
        kinds: dict[str, Callable[[], Iterable[int]]] = {
            "smtp front": lambda: [smtp_pid],
            "worker": lambda: worker_pids,
            "worker pool": lambda: [p for pid in worker_pids for p in procstat.descendants(pid)],
        }
        if self.postgres is not None:
            postmaster = int((self.postgres.data_dir / "postmaster.pid").read_text().split()[0])
            kinds["postgresql"] = lambda: [postmaster, *procstat.descendants(postmaster)]
        kinds["redis"] = lambda: [redis_pid]
        kinds["bench (sink, players)"] = lambda: [os.getpid()]
        return kinds

    def worker_rss(self) -> int:
        pids = [p for worker in self.workers for p in (worker.pid, *procstat.descendants(worker.pid))]
        return sum(procstat.rss_bytes(pid) for pid in pids)

    def database_size(self) -> int:
        assert self.svc is not None
        if self.postgres is not None:
            with self.svc.engine.connect() as conn:
                return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
        path = Path(self.database_url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))

    def analyze(self) -> float:
        """``VACUUM ANALYZE`` (PostgreSQL) or ``ANALYZE`` (SQLite) after a bulk insert, as autovacuum
        would do soon after one: the measuring window that follows sees the steady state, not the
        autovacuum of thousands of new rows. Returns the seconds it took."""
        assert self.svc is not None
        t0 = time.monotonic()
        with self.svc.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE" if self.postgres is not None else "ANALYZE"))
        return time.monotonic() - t0

    def check_snapshots(self, groups: Sequence[str], *, ballast_sample: int = 0) -> tuple[int, int]:
        """How many of these games' cached snapshots equal the replay of their move log."""

        assert self.svc is not None
        prefixes = tuple(f"Bench {group} " for group in groups)
        with self.svc.session_factory() as session:
            ids = [row.id for row in session.execute(select(Game.id, Game.title).where(Game.title.like("Bench %")))
                   if row.title.startswith(prefixes)]
            ids += list(session.scalars(select(Game.id).where(Game.title.like("Ballast %"))
                                        .order_by(Game.id).limit(ballast_sample)))
            agree = sum(1 for game_id in ids if snapshot_agrees(session, session.get(Game, game_id)))
        return len(ids), agree

    def active_games(self) -> int:
        assert self.svc is not None
        with self.svc.session_factory() as session:
            return int(session.scalar(select(func.count()).select_from(Game)
                                      .where(Game.status == GameStatus.ACTIVE)) or 0)

    # -- tables -----------------------------------------------------------------------------------

    def open_tables(self, group: str, count: int, notify: str | None) -> None:
        """Start ``count`` games for ``group`` and wait until every seat's first decision arrived."""

        assert self.svc is not None
        before = self.players.waiting(group)
        created = create_tables(self.svc, group, count, notify=notify, seed=self.options.seed)
        queue_outbound(self.celery, created.outbound_ids)
        wait_for(lambda: self.players.waiting(group) >= before + 4 * count, timeout=60 + count,
                 interval=0.1, message=f"the first decisions of {count} {group} tables")

    def warm_up(self, group: str, moves: int, *, rate: float = 50.0, one_at_a_time: bool = False) -> None:
        """Offer ``moves`` moves that are not measured (the tables' passes), then drain."""
        if one_at_a_time:
            self._one_at_a_time(group, moves)
        else:
            self.pacer.run(group, rate, moves / rate)
        self.drain(self.options.drain_seconds)

    # -- one measured window ----------------------------------------------------------------------

    def measure(self, group: str, rate: float, seconds: float, *, idle_moves: int = 0) -> Step:
        kinds = self.process_kinds()
        sent_before = len(self.senders.taken())
        size_before = self.database_size()
        before = procstat.sample(kinds)
        start = time.monotonic()
        if idle_moves:
            pace = self._one_at_a_time(group, idle_moves)
        else:
            pace = self.pacer.run(group, rate, seconds)
        end = time.monotonic()
        after = procstat.sample(kinds)
        self.drain(self.options.drain_seconds)
        replies = [r for r in self.senders.taken()[sent_before:] if r.group == group]
        moves = self.outcomes(replies)
        return Step(group=group, rate=rate, start=start, end=end, pace=pace, moves=moves,
                    cpu=after.minus(before), size_growth=self.database_size() - size_before)

    def _one_at_a_time(self, group: str, count: int) -> PaceResult:
        result = PaceResult()
        for _ in range(count):
            wait_for(lambda: self.players.waiting(group) > 0, timeout=30, interval=0.002,
                     message=f"a decision for {group}")
            wait_for(lambda: time.monotonic() - self.players.quiet_since() > 0.1, timeout=30, interval=0.01,
                     message="the sink to be quiet")
            sent = len(self.senders.taken())
            self.pacer.offer_one(group, result)
            wait_for(lambda: len(self.senders.taken()) > sent, timeout=30, interval=0.001,
                     message="the front to accept a reply")
        return result

    def drain(self, timeout: float) -> None:
        """Wait until every reply was handed over and every inbound and outbound row is done."""
        assert self.svc is not None

        def settled() -> bool:
            if self.senders.jobs.unfinished_tasks and not self.senders.jobs.empty():
                return False
            with self.svc.session_factory() as session:
                pending_in = session.scalar(select(func.count()).select_from(InboundMessage).where(
                    InboundMessage.status == InboundStatus.PENDING))
                pending_out = session.scalar(select(func.count()).select_from(OutboundMessage).where(
                    OutboundMessage.status == OutboundStatus.PENDING))
            return not pending_in and not pending_out

        try:
            wait_for(settled, timeout=timeout, interval=0.2, message="the pipeline to drain")
        except AssertionError as error:
            self.echo(f"  ! {error}")
        # The last mails of the last move may still be on their way into the sink.
        wait_for(lambda: time.monotonic() - self.players.quiet_since() > 0.3, timeout=30, interval=0.05,
                 message="the sink to be quiet")

    def outcomes(self, replies: list[SentReply]) -> list[Outcome]:
        """What became of each reply: its inbound row, its mails, when the last one arrived."""
        assert self.svc is not None
        wall_minus_mono = time.time() - time.monotonic()
        by_key = {r.message_id: r for r in replies}
        rows: dict[str, tuple[int, str, datetime | None]] = {}
        mails: dict[int, list[str]] = {}
        keys = list(by_key)
        with self.svc.session_factory() as session:
            for chunk in _chunks(keys, 1000):
                for row in session.execute(select(InboundMessage.message_key, InboundMessage.id,
                                                  InboundMessage.status, InboundMessage.processed_at)
                                           .where(InboundMessage.message_key.in_(chunk))):
                    rows[row.message_key] = (row.id, str(row.status), row.processed_at)
            ids = [v[0] for v in rows.values()]
            for chunk in _chunks(ids, 1000):
                for row in session.execute(select(OutboundMessage.inbound_id, OutboundMessage.message_id)
                                           .where(OutboundMessage.inbound_id.in_(chunk))):
                    mails.setdefault(row.inbound_id, []).append(row.message_id)
        out = []
        for key, reply in by_key.items():
            found = rows.get(key)
            if reply.accepted is None or found is None:
                out.append(Outcome(reply, "refused" if reply.accepted is None else "lost", 0, None))
                continue
            inbound_id, status, processed_at = found
            ids_out = mails.get(inbound_id, [])
            arrivals = [self.players.arrival(m) for m in ids_out]
            done: float | None
            if ids_out:
                done = None if any(a is None for a in arrivals) else max(a for a in arrivals if a is not None)
            else:
                done = None if processed_at is None else processed_at.timestamp() - wall_minus_mono
            out.append(Outcome(reply, status, len(ids_out), done))
        return out


def _chunks(items: list, size: int) -> Iterable[list]:
    for k in range(0, len(items), size):
        yield items[k:k + size]


@dataclass(frozen=True)
class Outcome:
    reply: SentReply
    status: str  # the inbound row's: done, rejected...; or refused / lost
    mails: int
    completed: float | None  # monotonic time of the last mail (None: not all arrived)

    @property
    def latency(self) -> float | None:
        if self.completed is None or self.reply.accepted is None:
            return None
        return max(self.completed - self.reply.accepted, 0.0)


@dataclass
class Step:
    group: str
    rate: float
    start: float
    end: float
    pace: PaceResult
    moves: list[Outcome]
    cpu: dict[str, float]
    size_growth: int

    @property
    def window(self) -> float:
        return self.end - self.start

    @property
    def completed_in_window(self) -> int:
        return sum(1 for m in self.moves if m.completed is not None and self.start <= m.completed <= self.end)

    @property
    def sustained(self) -> float:
        return self.completed_in_window / self.window

    def latencies_ms(self) -> list[float]:
        return sorted(m.latency * 1000 for m in self.moves if m.latency is not None)

    @property
    def incomplete(self) -> int:
        return sum(1 for m in self.moves if m.completed is None)

    @property
    def statuses(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for move in self.moves:
            counts[move.status] = counts.get(move.status, 0) + 1
        return counts

    def cpu_ms_per_move(self, moves: int | None = None) -> dict[str, float]:
        count = moves if moves is not None else self.completed_in_window
        if not count:
            return {kind: float("nan") for kind in self.cpu}
        return {kind: seconds * 1000 / count for kind, seconds in self.cpu.items()}

    @property
    def mails_per_move(self) -> float:
        done = [m.mails for m in self.moves if m.status == "done"]
        return statistics.fmean(done) if done else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# -- printing ----------------------------------------------------------------------------------


def _cpu_header(kinds: Iterable[str]) -> str:
    short = {"smtp front": "smtp", "worker": "wrk", "worker pool": "pool", "postgresql": "pg", "redis": "redis",
             "bench (sink, players)": "bench", "rest of the machine": "rest"}
    return " ".join(f"{short.get(k, k)[:6]:>6}" for k in kinds)


def _cpu_row(step: Step, moves: int | None = None) -> str:
    per = step.cpu_ms_per_move(moves)
    return " ".join(f"{v:6.2f}" for v in per.values())


def _pbem_cpu(step: Step, moves: int | None = None) -> float:
    per = step.cpu_ms_per_move(moves)
    return sum(v for k, v in per.items() if k not in ("bench (sink, players)", "rest of the machine"))


def print_step_table_header(echo: Echo, step: Step) -> None:
    echo(f"  {'offered/s':>9} {'sent/s':>7} {'sust./s':>7} {'p50 ms':>7} {'p99 ms':>8} {'max ms':>8} "
         f"{'mails':>5} {'incomp':>6} {'pbemCPU':>7} | CPU ms/move: {_cpu_header(step.cpu)}")


def print_step(echo: Echo, step: Step) -> None:
    lat = step.latencies_ms()
    sent = step.pace.offered / step.window
    echo(f"  {step.rate:9.0f} {sent:7.1f} {step.sustained:7.1f} {percentile(lat, 50):7.1f} "
         f"{percentile(lat, 99):8.1f} {max(lat) if lat else float('nan'):8.1f} {step.mails_per_move:5.2f} "
         f"{step.incomplete:6d} {_pbem_cpu(step):7.2f} | {'':12} {_cpu_row(step)}")
    odd = {k: v for k, v in step.statuses.items() if k != "done"}
    notes = []
    if odd:
        notes.append(f"not done: {odd}")
    if step.pace.starved:
        notes.append(f"{step.pace.starved} slots found no decision ready")
    if step.pace.backlogged:
        notes.append(f"{step.pace.backlogged} slots skipped (senders backlogged)")
    if notes:
        echo("            " + "; ".join(notes))


# -- the run -------------------------------------------------------------------------------------


def run(options: Options, echo: Echo = print) -> None:
    import platform

    echo("pbem bench e2e: the whole mail path (SMTP in -> stored -> queued -> worker -> outbox -> relay)")
    echo(f"  machine: {os.cpu_count()} cores, Python {platform.python_version()}, load average "
         f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} before starting")
    with Stack(options, echo) as stack:
        durability = ("" if options.database != "postgresql"
                      else ", fsync + synchronous commit" if options.durable else ", fsync off")
        echo(f"  database: {options.database} ({stack.database_url.split('@')[-1]}{durability}); broker: Redis; "
             f"worker: {options.pool} x{options.concurrency}; sink and {options.senders} SMTP senders in this process")
        echo("  latency: front's 250 after DATA -> last mail of the move at the sink; CPU from /proc "
             "(user+system) per completed move")
        if options.idle_moves:
            idle(stack, options, echo)
        if options.flat_sizes:
            flat(stack, options, echo)
        for mode in options.modes:
            steps(stack, options, echo, mode)
        if options.profile_rate:
            profile(stack, options, echo)
        if options.modes:
            checked, agree = stack.check_snapshots(list(options.modes))
            echo(f"  snapshot = replay of the move log (pbem game check) for the stepped tables: "
                 f"{agree}/{checked} games agree")
        echo(f"  worker RSS at the end: {stack.worker_rss() / 2**20:.0f} MiB (main + pool); "
             f"database {stack.database_size() / 2**20:.0f} MiB, {stack.active_games()} active games; "
             f"mails seen at the sink: {dict(stack.players.kinds)}")


def idle(stack: Stack, options: Options, echo: Echo) -> None:
    echo("")
    echo(f"[idle] {options.idle_moves} moves one at a time on one table, each mode")
    for mode, notify in (("heavy", HEAVY), ("default", DEFAULT)):
        group = f"idle{mode}"
        stack.open_tables(group, 1, notify)
        stack.warm_up(group, 4, one_at_a_time=True)  # the four passes: then every move is a play
        step = stack.measure(group, 0, 0, idle_moves=options.idle_moves)
        lat = step.latencies_ms()
        counted = sum(1 for m in step.moves if m.completed is not None)
        echo(f"  {mode:8} ({'4 mails a move' if notify else 'default notifications'}): p50 "
             f"{percentile(lat, 50):.1f} ms, p90 {percentile(lat, 90):.1f} ms, max {max(lat):.1f} ms over "
             f"{len(lat)} moves; {step.mails_per_move:.2f} mails/move; pbem CPU {_pbem_cpu(step, counted):.2f} "
             f"ms/move ({_cpu_header(step.cpu)}: {_cpu_row(step, counted)})")


def flat(stack: Stack, options: Options, echo: Echo) -> None:
    echo("")
    echo(f"[flat cost] {options.flat_rate:.0f} moves/s for {options.flat_seconds:.0f} s on {options.flat_tables} "
         f"played tables (every card), while the database holds more and more active games")
    stack.open_tables("flat", options.flat_tables, HEAVY)
    stack.warm_up("flat", 4 * options.flat_tables)
    have = stack.active_games()
    ballast = 0
    header = False
    first: tuple[int, int] | None = None  # (games, worker RSS) at the first size
    for size in options.flat_sizes:
        if size > have:
            t0 = time.monotonic()
            size_before = stack.database_size()
            made = add_ballast(stack.svc, size - have, seed=options.seed, start=ballast)
            ballast += made
            grown = stack.database_size() - size_before
            echo(f"  + {made} ballast games in {time.monotonic() - t0:.1f} s: database +{grown / 2**20:.1f} MiB "
                 f"({grown / made * 1000 / 2**20:.1f} MiB per 1,000 games in progress); analysed in "
                 f"{stack.analyze():.1f} s")
            have = stack.active_games()
        step = stack.measure("flat", options.flat_rate, options.flat_seconds)
        if not header:
            echo(f"  {'games':>6} {'sust./s':>7} {'p50 ms':>7} {'p99 ms':>7} {'pbemCPU':>7} {'DB MiB':>7} "
                 f"{'wrkRSS':>7} | CPU ms/move: {_cpu_header(step.cpu)}")
            header = True
        lat = step.latencies_ms()
        rss = stack.worker_rss()
        echo(f"  {have:6d} {step.sustained:7.1f} {percentile(lat, 50):7.1f} {percentile(lat, 99):7.1f} "
             f"{_pbem_cpu(step):7.2f} {stack.database_size() / 2**20:7.1f} {rss / 2**20:7.0f} | "
             f"{'':12} {_cpu_row(step)}")
        if first is None:
            first = (have, rss)
        elif have > first[0]:
            echo(f"         worker RSS {(rss - first[1]) / (have - first[0]) * 1000 / 2**20:+.1f} MiB per 1,000 "
                 f"more games (the worker keeps nothing per game between moves)")
    checked, agree = stack.check_snapshots(["flat"], ballast_sample=50)
    echo(f"  snapshot = replay of the move log (pbem game check): {agree}/{checked} games agree "
         f"(every played table, 50 ballast games)")


def steps(stack: Stack, options: Options, echo: Echo, mode: str) -> None:
    notify = HEAVY if mode == "heavy" else DEFAULT
    echo("")
    echo(f"[steps: {mode}] {'every card (4 mails a move)' if notify else 'default notifications'}; "
         f"{options.games} tables; {options.step_seconds:.0f} s per step")
    stack.open_tables(mode, options.games, notify)
    stack.warm_up(mode, 4 * options.games)  # every table past its passing: the steps measure plays
    # The planner's statistics as autovacuum leaves them soon after: the tables were just filled,
    # and a plan made for the near-empty tables (a sequential scan where an index fits) would be
    # measured instead of pbem's work.
    echo(f"  tables filled and analysed ({stack.analyze():.1f} s)")
    header = False
    for rate in options.rates:
        step = stack.measure(mode, rate, options.step_seconds)
        if not header:
            print_step_table_header(echo, step)
            header = True
        print_step(echo, step)
        moves = max(step.completed_in_window, 1)
        lat = step.latencies_ms()
        if step.size_growth > 0:
            echo(f"            database +{step.size_growth / moves / 1024:.1f} KiB per move")
        # Saturated: completions fall behind the offered rate, or the queue (hence latency) grows.
        if step.sustained < 0.85 * rate or (lat and percentile(lat, 99) > 1000):
            echo(f"  saturated at an offered {rate:.0f}/s: sustained {step.sustained:.1f} moves/s")
            break


def profile(stack: Stack, options: Options, echo: Echo) -> None:
    """One more step (every card) with py-spy sampling each pbem process: where the time goes."""

    echo("")
    echo(f"[profile] {options.profile_rate:.0f} moves/s for {options.profile_seconds:.0f} s, every card, "
         f"py-spy sampling every pbem process (figures of this step are inflated by the sampling)")
    if not spy.available():
        echo("  py-spy is not installed (pip install 'pbem[bench]'): skipped")
        return
    group = "heavy" if "heavy" in options.modes else "profile"
    if group == "profile":
        stack.open_tables(group, options.games, HEAVY)
    assert stack.smtp is not None
    targets = [("smtp front", stack.smtp.pid)] + [("worker", worker.pid) for worker in stack.workers]
    targets += [("worker pool", pid) for worker in stack.workers for pid in procstat.descendants(worker.pid)]
    targets.append(("bench (sink, players)", os.getpid()))
    directory = stack.base / "profiles"
    directory.mkdir(exist_ok=True)
    recordings = [spy.record(label, pid, options.profile_seconds, directory) for label, pid in targets]
    step = stack.measure(group, options.profile_rate, options.profile_seconds)
    print_step_table_header(echo, step)
    print_step(echo, step)
    by_kind: dict[str, list[Path]] = {}
    for recording in recordings:
        if recording.wait(timeout=options.profile_seconds + 30):
            by_kind.setdefault(recording.label, []).append(recording.output)
    for kind, paths in by_kind.items():
        summary = spy.summarise(paths)
        if not summary.samples:
            continue
        echo(f"  {kind}: {summary.samples} samples; own time by area: "
             + ", ".join(f"{area} {share:.0%}" for area, share in summary.own[:9]))
        wanted = ("sqlalchemy", "psycopg", "jinja2", "jinja2 (templates)", "celery", "kombu", "aiosmtpd",
                  "pbem.mail (compose)", "pbem.mail.reading", "smtplib", "logging")
        inclusive = [(a, summary.inclusive[a]) for a in wanted if summary.inclusive.get(a, 0) >= 0.03]
        if inclusive:
            echo("      on the stack: " + ", ".join(f"{area} {share:.0%}" for area, share in inclusive))
        for name, share in summary.functions[:6]:
            echo(f"      {share:5.1%}  {name[:110]}")
