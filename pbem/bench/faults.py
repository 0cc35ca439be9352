"""``pbem bench faults``: the real pipeline under a steady load of moves while each of its parts
is killed and brought back in turn, and what became of every mail.

The pipeline is ``pbem bench e2e``'s (``e2e.Stack``: PostgreSQL with fsync and synchronous
commits, Redis, the SMTP front as a subprocess, a Celery worker with a prefork pool, the lean
relay sink where the load players read their mail and answer it over SMTP), plus Celery beat in
its own process, as production runs it, so the periodic sweep re-queues what a fault left behind.
Load players answer every decision mail at ``--rate`` moves a second throughout; a reply the front
refuses for now (``451``, or no connection) is sent again two seconds later with the same bytes,
as a sending mail server keeps and retries it.

The faults, one after the other, each after ``lead_seconds`` of load:

- ``pool``: the CPUs are made busy (one busy-loop process per core, from a second before the kill
  until the fault's mail is in, at most ``--busy-seconds``), then every pool process is SIGKILLed;
  Celery forks new ones.  The part is back at once.  ``--cpus 0 --concurrency 4`` pins the worker
  to one core with four pool processes (the hard case for a pool that must start again).
- ``worker``: the same busy CPUs, then SIGKILL of the worker's main process, then of its pool
  processes (what a service manager does to the rest of the unit, systemd's
  ``KillMode=control-group``, before it restarts it), and a new worker is started at once.
- ``redis``: Redis stopped for ``--down-seconds`` and started again, empty (no persistence: every
  queued and unacknowledged task is gone).
- ``postgres-stop``: ``pg_ctl stop -m fast``, ``--down-seconds``, start on the same port.
- ``postgres-crash``: ``pg_ctl stop -m immediate`` (no checkpoint: the start replays the WAL, and
  asynchronously committed "sent" records may be lost), ``--down-seconds``, start.
- ``relay``: the relay sink stopped (its open sessions cut) for ``--relay-down-seconds`` and
  started on the same port.

Measured, per fault, over its window (from the start of its lead to the end of its settling; the
counts from the database and the sink once the whole run has drained):

- *moves/s*: replies applied as moves (their move-log rows) per second of the window;
- *250*: replies the front accepted (a reply refused for now and accepted on a later try counts
  once); *refused*: the temporary refusals (each try);
- *applied*: replies of the window with moves in the log; *twice*: replies whose moves appear in
  the log in more than one run of sequence numbers (one transaction appends one contiguous run, so
  a mail applied twice shows as two);
- *lost*: a reply accepted with no stored row, a stored reply never processed (or set aside as
  failed), and a mail written for it that never reached the relay;
- *dup*: mails of the window delivered more than once (the same Message-ID twice at the relay),
  plus those delivered whose row is still pending (their "sent" record was lost: they will go
  again once their lease runs out) — the at-least-once gap of the asynchronous "sent" record;
- *respawns*: pool processes forked during the window to replace others (the worker's own first
  pool after a restart not counted), beside what the fault itself forces (processes killed);
  *UP t/o*: Celery's "Timed out waiting for UP message" lines;
- *back after*: seconds from the part coming back (the kill, the worker's restart, the server's
  start) until every reply accepted before that moment was processed: its inbound row in a final
  state and every mail it wrote delivered to the relay (*in*: the inbound rows alone);
- *replay*: games whose cached snapshot equals the replay of their move log (``pbem game check``),
  checked when the fault's window ends.

Goals (the command exits non-zero when one is missed): 0 lost, 0 applied twice, no respawn loop
(respawns beyond what the fault forces fewer than the pool's processes), everything processed within
``--settle-seconds`` of the part coming back, every game replays.  Every loop has a count or a
deadline, every process started here is stopped here by its pid, and all traffic stays on 127.0.0.1.
Figures are printed; the test of this command (``tests/e2e/test_faults.py``) asserts the goals only.
"""

from __future__ import annotations

import heapq
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from pbem.bench.e2e import Options as StackOptions
from pbem.bench.e2e import Stack
from pbem.bench.loadgen import PaceResult, Players, SentReply, Senders
from pbem.bench.tables import LOAD_DOMAIN
from pbem.db.models import Game, InboundMessage, InboundStatus, Move, OutboundMessage, OutboundStatus
from pbem.devservers import wait_for
from pbem.devservers.celery_worker import CeleryWorker, pbem_environment
from pbem.devservers.lean_sink import CapturedMessage
from pbem.services.gamestore import snapshot_agrees

__all__ = ["FAULTS", "FaultOptions", "FaultRecord", "Figures", "run"]

Echo = Callable[[str], None]

FAULTS = ("pool", "worker", "redis", "postgres-stop", "postgres-crash", "relay")
GROUP = "faults"
RETRY_AFTER = 2.0
"""Seconds before a reply the front refused for now is sent again."""
RETRY_FOR = 900.0
"""A reply refused for this long since it was first sent is given up (counted, never lost: it was
never accepted)."""
POLL = 0.25
TERMINAL = frozenset({InboundStatus.DONE, InboundStatus.IGNORED, InboundStatus.REJECTED, InboundStatus.FAILED})
_UP_TIMEOUT = "Timed out waiting for UP message"
_POOL_TROUBLE = re.compile(r"Timed out waiting for UP message|exited with|Hard time limit|WorkerLostError|"
                           r"SoftTimeLimitExceeded|consumer: Connection to broker lost|Traceback")


@dataclass
class FaultOptions:
    database: str = "postgresql"
    rate: float = 20.0
    faults: Sequence[str] = FAULTS
    down_seconds: float = 30.0  # Redis and PostgreSQL
    relay_down_seconds: float = 60.0
    settle_seconds: float = 60.0  # the goal: everything processed this long after the part is back
    busy_seconds: float = 20.0  # busy CPUs during the pool and worker faults, from just before the kill
    lead_seconds: float = 5.0  # load before each fault (part of its window)
    games: int = 60
    concurrency: int = 2
    cpus: str | None = None  # pin the worker to these CPUs (``taskset -c``), e.g. "0": its pool shares one core
    sweep_seconds: float | None = None  # PBEM_SWEEP_SECONDS for the run (None: the server's default)
    drain_seconds: float = 300.0  # at the end, for mails still on their way (a lease to run out)
    senders: int = 8
    seed: str = "faults"
    keep_dir: bool = False

    def stack_options(self) -> StackOptions:
        env = {} if self.sweep_seconds is None else {"PBEM_SWEEP_SECONDS": f"{self.sweep_seconds:g}"}
        return StackOptions(database=self.database, concurrency=self.concurrency, senders=self.senders,
                            seed=self.seed, keep_dir=self.keep_dir, extra_env=env, worker_cpus=self.cpus)


# -- the load players' side ---------------------------------------------------------------------

_MESSAGE_ID = re.compile(rb"\r\nmessage-id:[ \t]*([^\r\n]*)", re.IGNORECASE)


class CountingPlayers(Players):
    """``Players`` that count each Message-ID the relay delivers and read a mail delivered again
    only once (a second copy of a decision mail must not make a second reply)."""

    def __init__(self, domain: str) -> None:
        super().__init__(domain=domain)
        self.deliveries: Counter[str] = Counter()
        self._count_lock = threading.Lock()

    def on_message(self, message: CapturedMessage) -> None:
        end = message.raw.find(b"\r\n\r\n")
        found = _MESSAGE_ID.search(b"\r\n" + message.raw[: end if end >= 0 else len(message.raw)])
        message_id = found.group(1).decode("ascii", "replace").strip() if found else ""
        with self._count_lock:
            self.deliveries[message_id] += 1
            first = self.deliveries[message_id] == 1
        if first:
            super().on_message(message)

    def delivered(self, message_id: str) -> int:
        with self._count_lock:
            return self.deliveries[message_id]


@dataclass
class Reply:
    """One reply as the load players know it, over all its tries."""

    first_sent: float
    accepted: float | None = None
    refusals: int = 0
    permanent: str = ""  # a 5xx: not retried


_CODE = re.compile(r": (\d{3}) ")


class RetryingSenders(Senders):
    """``Senders`` that, like a sending mail server, keep a reply the front refused for now (a
    4xx, a refused or broken connection, a time-out) and send it again ``RETRY_AFTER`` seconds later
    with the same bytes (so the same Message-ID: the front stores a mail once), until it is
    accepted or ``RETRY_FOR`` has passed."""

    def __init__(self, host: str, port: int, *, threads: int) -> None:
        super().__init__(host, port, threads=threads)
        self.replies: dict[str, Reply] = {}
        self._jobs_by_id: dict[str, tuple[str, str, str, bytes, str]] = {}
        self._due: list[tuple[float, str]] = []
        self._seen = 0
        self._offered = 0  # jobs put in the queue, first tries and retries (each gives one result)
        self._stop = threading.Event()
        self._retrier = threading.Thread(target=self._retry_loop, name="sender-retries", daemon=True)

    def start(self) -> RetryingSenders:
        super().start()
        self._retrier.start()
        return self

    def offer(self, sender: str, recipient: str, message_id: str, raw: bytes, group: str) -> bool:
        with self._lock:
            if message_id not in self._jobs_by_id:
                self._jobs_by_id[message_id] = (sender, recipient, message_id, raw, group)
        return self._put(sender, recipient, message_id, raw, group)

    def _put(self, *job: str | bytes) -> bool:
        with self._lock:
            self._offered += 1
        if super().offer(*job):  # type: ignore[arg-type]
            return True
        with self._lock:
            self._offered -= 1
        return False

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._retrier.join(timeout=timeout)
        super().stop(timeout)

    def idle(self) -> bool:
        """Nothing queued, being sent or waiting for a retry."""
        self._account()
        with self._lock:
            return not self._due and len(self.results) == self._offered

    def snapshot(self) -> dict[str, Reply]:
        self._account()
        with self._lock:
            return {key: Reply(r.first_sent, r.accepted, r.refusals, r.permanent) for key, r in self.replies.items()}

    def _account(self) -> None:
        """Fold the senders' new results into ``replies``; schedule a retry for each refused for now."""
        now = time.monotonic()
        with self._lock:
            new, self._seen = self.results[self._seen:], len(self.results)
            for result in new:
                self._fold(result, now)

    def _fold(self, result: SentReply, now: float) -> None:
        reply = self.replies.setdefault(result.message_id, Reply(first_sent=result.sent))
        if result.accepted is not None:
            if reply.accepted is None:
                reply.accepted = result.accepted
            return
        if reply.accepted is not None:
            return
        code = _CODE.search(result.error)
        if code is not None and code.group(1).startswith("5"):
            reply.permanent = result.error
            return
        reply.refusals += 1
        if now - reply.first_sent < RETRY_FOR:  # past it, the reply stays unaccepted
            heapq.heappush(self._due, (now + RETRY_AFTER, result.message_id))

    def _retry_loop(self) -> None:
        while not self._stop.wait(0.1):
            self._account()
            now = time.monotonic()
            ready: list[tuple[str, str, str, bytes, str]] = []
            with self._lock:
                while self._due and self._due[0][0] <= now:
                    _, message_id = heapq.heappop(self._due)
                    ready.append(self._jobs_by_id[message_id])
            for k, job in enumerate(ready):
                if not self._put(*job):  # the queue is full: try these again shortly
                    with self._lock:
                        for later in ready[k:]:
                            heapq.heappush(self._due, (now + RETRY_AFTER, later[2]))
                    break


class Load:
    """The pacer in a thread: ``rate`` moves a second until ``stop()``."""

    def __init__(self, stack: FaultStack, rate: float) -> None:
        self.stack, self.rate = stack, rate
        self.result = PaceResult()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load", daemon=True)

    def start(self) -> Load:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        chunk = max(1.0, 2.0 / self.rate)  # whole slots in each call
        while not self._stop.is_set():
            part = self.stack.pacer.run(GROUP, self.rate, chunk)
            self.result.offered += part.offered
            self.result.starved += part.starved
            self.result.backlogged += part.backlogged


# -- the pipeline ---------------------------------------------------------------------------------


class FaultStack(Stack):
    """``e2e.Stack`` with Celery beat in its own process, players that count deliveries and senders
    that retry; and the means to bring each part down and up again."""

    def __init__(self, options: FaultOptions, echo: Echo) -> None:
        super().__init__(options.stack_options(), echo)
        self.fault_options = options
        self.players: CountingPlayers = CountingPlayers(LOAD_DOMAIN)
        self.beat: subprocess.Popen[bytes] | None = None
        self.all_workers: list[CeleryWorker] = []
        self.worker_ready_after = 0.0  # seconds the last restarted worker took to say it was ready

    def start(self) -> FaultStack:
        super().start()
        self.all_workers = list(self.workers)
        # The plain senders made by Stack.start have sent nothing yet: replaced by retrying ones.
        self.senders.stop()
        self.senders = RetryingSenders("127.0.0.1", self.smtp_port, threads=self.options.senders).start()
        self.pacer.senders = self.senders
        with open(self.base / "beat.log", "wb") as log:
            self.beat = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "workers.worker", "beat", "--loglevel=INFO",
                 f"--schedule={self.base / 'celerybeat-schedule'}"],
                env=pbem_environment(self.env), cwd=self.base, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def stop(self) -> None:
        if self.beat is not None:
            self.beat.terminate()
            try:
                self.beat.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.beat.kill()
                self.beat.wait(timeout=10)
            self.beat = None
        super().stop()

    @property
    def worker(self) -> CeleryWorker:
        return self.workers[0]

    def restart_worker(self) -> CeleryWorker:
        """A new worker in place of the dead one (same settings, same concurrency)."""
        worker = CeleryWorker(self.env, concurrency=self.options.concurrency, log_dir=self.base,
                              cpus=self.options.worker_cpus)
        self.workers[0] = worker
        self.all_workers.append(worker)
        return worker.start(timeout=180)

    def worker_log_count(self, text: str) -> int:
        return sum(worker.log_text().count(text) for worker in self.all_workers)

    def worker_log_sizes(self) -> dict[str, int]:
        return {worker.name: len(worker.log_text()) for worker in self.all_workers}

    def worker_log_since(self, sizes: dict[str, int], pattern: re.Pattern[str]) -> list[str]:
        """The lines of the workers' logs written since ``sizes`` that match ``pattern``."""
        return [line for worker in self.all_workers
                for line in worker.log_text()[sizes.get(worker.name, 0):].splitlines() if pattern.search(line)]

    def log_tail(self, chars: int = 3000) -> str:
        return self.worker.log_text()[-chars:]


class PoolWatch:
    """Samples the current worker's pool pids every 0.1 s: every pool process that ever ran."""

    def __init__(self, stack: FaultStack) -> None:
        self.stack = stack
        self.seen: dict[str, set[int]] = {}  # worker name -> pool pids seen
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pool-watch", daemon=True)

    def start(self) -> PoolWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def sample(self) -> None:
        worker = self.stack.worker
        try:
            pids = worker.pool_pids() if worker.alive() else []
        except (OSError, RuntimeError):  # the worker ended between the two calls
            pids = []
        with self._lock:
            self.seen.setdefault(worker.name, set()).update(pids)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {name: len(pids) for name, pids in self.seen.items()}

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.sample()


class BusyCpus:
    """One busy-loop process per core, each ending by itself after ``seconds``; ``stop()`` ends
    them sooner (by their pids)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> BusyCpus:
        code = f"import time\nend = time.monotonic() + {self.seconds:.1f}\nwhile time.monotonic() < end:\n    pass\n"
        self.processes = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)
                          for _ in range(os.cpu_count() or 1)]
        return self

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


# -- what became of the mail ----------------------------------------------------------------------


class Ledger:
    """What the database says of each reply, read incrementally: a reply whose inbound row reached
    a final state is read once more for the mails it wrote, and never again."""

    def __init__(self, stack: FaultStack) -> None:
        self.stack = stack
        self.inbound: dict[str, tuple[int, str]] = {}  # message key -> (inbound id, final status)
        self.mails: dict[int, list[str]] = {}  # inbound id -> Message-IDs of the mails it wrote
        self.waited: set[str] = set()  # replies a fault has waited for

    def refresh(self, keys: Iterable[str]) -> bool:
        """Read the rows of those of ``keys`` not yet final; False while the database is away."""
        svc = self.stack.svc
        assert svc is not None
        todo = [key for key in keys if key not in self.inbound]
        try:
            with svc.session_factory() as session:
                final: list[tuple[str, int, str]] = []
                for chunk in _chunks(todo, 1000):
                    for row in session.execute(select(InboundMessage.message_key, InboundMessage.id,
                                                      InboundMessage.status)
                                               .where(InboundMessage.message_key.in_(chunk))):
                        if row.status in TERMINAL:
                            final.append((row.message_key, row.id, str(row.status)))
                ids = [inbound_id for _, inbound_id, _ in final]
                mails: dict[int, list[str]] = {inbound_id: [] for inbound_id in ids}
                for chunk in _chunks(ids, 1000):
                    for row in session.execute(select(OutboundMessage.inbound_id, OutboundMessage.message_id)
                                               .where(OutboundMessage.inbound_id.in_(chunk))):
                        mails[row.inbound_id].append(row.message_id)
        except DBAPIError:
            svc.engine.dispose()  # connections of a server that went away: open new ones next time
            return False
        self.mails.update(mails)
        for key, inbound_id, status in final:
            self.inbound[key] = (inbound_id, status)
        return True

    def processed(self, key: str) -> bool:
        found = self.inbound.get(key)
        if found is None:
            return False
        players = self.stack.players
        return all(players.delivered(m) for m in self.mails.get(found[0], ()))

    def unprocessed(self, keys: Sequence[str]) -> list[str]:
        self.refresh(keys)
        return [key for key in keys if not self.processed(key)]

    def not_final(self, keys: Sequence[str]) -> list[str]:
        """Those of ``keys`` whose inbound row is not final yet (as of the last ``refresh``)."""
        return [key for key in keys if key not in self.inbound]

    def describe(self, keys: Sequence[str], now_wall: float) -> list[str]:
        """Where each of these replies is (its row, the rows of its mails), for the notes."""
        svc = self.stack.svc
        assert svc is not None
        out = []
        try:
            with svc.session_factory() as session:
                for key in keys:
                    row = session.execute(select(InboundMessage.id, InboundMessage.status, InboundMessage.attempts)
                                          .where(InboundMessage.message_key == key)).one_or_none()
                    if row is None:
                        out.append(f"{key}: accepted, no row")
                        continue
                    mails = session.execute(select(OutboundMessage.message_id, OutboundMessage.status,
                                                   OutboundMessage.attempts, OutboundMessage.next_attempt_at)
                                            .where(OutboundMessage.inbound_id == row.id)).all()
                    undelivered = [f"{m.status} after {m.attempts} attempts, due in "
                                   f"{m.next_attempt_at.timestamp() - now_wall:.0f} s"
                                   for m in mails if not self.stack.players.delivered(m.message_id)]
                    out.append(f"inbound {row.id} {row.status} after {row.attempts} attempts; "
                               f"{len(undelivered)} of its {len(mails)} mails undelivered"
                               + (f" ({'; '.join(sorted(set(undelivered)))})" if undelivered else ""))
        except DBAPIError as error:
            out.append(f"(database unavailable: {type(error).__name__})")
        return out


def _chunks(items: list, size: int) -> Iterable[list]:
    for k in range(0, len(items), size):
        yield items[k:k + size]


# -- one fault ------------------------------------------------------------------------------------


@dataclass
class FaultRecord:
    name: str
    start: float
    down: float = 0.0  # seconds the part was away (for the worker: until the new one was ready)
    fault_at: float = 0.0
    back_at: float = 0.0
    end: float = 0.0
    recovered_after: float | None = None  # None: not within the settle deadline
    inbound_after: float | None = None  # the same for the received mails alone (their mails aside)
    waiting: int = 0  # replies accepted before the part came back
    expected_respawns: int = 0
    respawns: int = 0
    up_timeouts: int = 0
    games: int = 0
    replay_ok: int = 0
    notes: list[str] = field(default_factory=list)


def inject(stack: FaultStack, name: str, options: FaultOptions, echo: Echo,
           busy: BusyCpus) -> tuple[float, float, int, bool]:
    """Bring ``name`` down and up again; returns (fault time, back time, processes the fault itself
    forces Celery to fork, whether a new worker was started).  For the SIGKILLs, ``busy`` is
    started first; its loops go on after the kill, up to ``--busy-seconds``, while the caller waits
    for the mail (they end by themselves, or when the caller stops them once the mail is in)."""
    if name in ("pool", "worker"):
        busy.start()
        time.sleep(1.0)  # the schedule: the busy loops run before the kill
        _wait_for_a_move_in_flight(stack)
        worker = stack.worker
        pool = worker.pool_pids()
        fault_at = time.monotonic()
        if name == "pool":
            for pid in pool:
                os.kill(pid, signal.SIGKILL)
            return fault_at, time.monotonic(), len(pool), False
        os.kill(worker.pid, signal.SIGKILL)
        worker.stop(timeout=10)  # reaps the killed process
        for pid in pool:  # what is left of the unit, as the service manager ends it
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        back_at = time.monotonic()
        stack.restart_worker()
        stack.worker_ready_after = time.monotonic() - back_at
        return fault_at, back_at, 0, True
    down = options.relay_down_seconds if name == "relay" else options.down_seconds
    fault_at = time.monotonic()
    if name == "redis":
        assert stack.redis is not None
        stack.redis.halt()
        time.sleep(down)
        stack.redis.resume()
    elif name in ("postgres-stop", "postgres-crash"):
        if stack.postgres is None:
            raise ValueError(f"{name} needs --database postgresql")
        stack.postgres.halt("fast" if name == "postgres-stop" else "immediate")
        time.sleep(down)
        stack.postgres.resume()
    elif name == "relay":
        assert stack.sink is not None
        port = stack.sink.port
        stack.sink.stop()
        time.sleep(down)
        stack.sink.start(port=port)
    else:
        raise ValueError(f"unknown fault {name!r} (known: {', '.join(FAULTS)})")
    return fault_at, time.monotonic(), 0, False


def _wait_for_a_move_in_flight(stack: FaultStack, timeout: float = 5.0) -> bool:
    """Wait (briefly) for a moment when a received mail is stored and not yet processed, so that the
    kill is likely to hit a move in the middle (its transaction, or the sending of its mails)."""
    svc = stack.svc
    assert svc is not None
    deadline = time.monotonic() + timeout
    query = select(InboundMessage.id).where(InboundMessage.status == InboundStatus.PENDING).limit(1)
    while time.monotonic() < deadline:
        with svc.session_factory() as session:
            if session.execute(query).first() is not None:
                return True
        time.sleep(0.005)
    return False


def run_fault(stack: FaultStack, name: str, options: FaultOptions, ledger: Ledger, watch: PoolWatch,
              echo: Echo) -> FaultRecord:
    record = FaultRecord(name=name, start=time.monotonic())
    up_before = stack.worker_log_count(_UP_TIMEOUT)
    log_sizes = stack.worker_log_sizes()
    watch.sample()
    pools_before = watch.counts()
    time.sleep(options.lead_seconds)  # the schedule: load before the fault
    busy = BusyCpus(options.busy_seconds + 1)  # started by inject, for the SIGKILLs only
    try:
        record.fault_at, record.back_at, record.expected_respawns, restarted = inject(
            stack, name, options, echo, busy)
        record.down = record.back_at - record.fault_at
        if restarted:  # away until the new worker said it was ready (its start is counted as back)
            record.down += stack.worker_ready_after
            record.notes.append(f"the new worker was ready {stack.worker_ready_after:.1f} s after its start")
        _settle(stack, record, options, ledger)
        if busy.processes:
            # The pool is watched as long as the CPUs are busy, even when the mail was in sooner:
            # a respawn loop shows only over time.
            rest = record.fault_at + options.busy_seconds - time.monotonic()
            if rest > 0:
                time.sleep(rest)  # the schedule of the fault, not a wait for a result
    finally:
        busy.stop()
    record.end = time.monotonic()
    watch.sample()
    pools_after = watch.counts()
    forks = sum(pools_after.get(k, 0) - pools_before.get(k, 0) for k in pools_after)
    record.respawns = forks - (options.concurrency if restarted else 0)
    record.up_timeouts = stack.worker_log_count(_UP_TIMEOUT) - up_before
    trouble = stack.worker_log_since(log_sizes, _POOL_TROUBLE)
    if trouble:
        kinds = Counter(_POOL_TROUBLE.search(line).group(0) for line in trouble)  # type: ignore[union-attr]
        record.notes.append(f"worker log: {dict(kinds)}; first: {trouble[0][:160]}")
    record.games, record.replay_ok = replay_check(stack)
    after = f"{record.recovered_after:.1f} s" if record.recovered_after is not None else "NOT within the deadline"
    inbound = f"{record.inbound_after:.1f} s" if record.inbound_after is not None else "not within the deadline"
    echo(f"  {name}: down {record.down:.1f} s; {record.waiting} replies waited; received mail processed "
         f"{inbound}, with every mail it wrote delivered {after}; "
         f"respawns {record.respawns} (the fault forced {record.expected_respawns}), UP time-outs "
         f"{record.up_timeouts}; replay {record.replay_ok}/{record.games}")
    return record


def _settle(stack: FaultStack, record: FaultRecord, options: FaultOptions, ledger: Ledger) -> None:
    """Wait (polling, until the settle deadline) for every reply accepted before the part came back."""
    # Every reply accepted up to now must be processed within the settle deadline.
    # (Those an earlier fault already waited for are its own figures.)
    replies = stack.senders.snapshot()
    waiting = [key for key, reply in replies.items() if reply.accepted is not None
               and reply.accepted <= record.back_at and key not in ledger.waited]
    ledger.waited.update(waiting)
    record.waiting = len(waiting)
    deadline = record.back_at + options.settle_seconds
    left = ledger.unprocessed(waiting)
    while left and time.monotonic() < deadline:
        if record.inbound_after is None and not ledger.not_final(left):
            record.inbound_after = max(time.monotonic() - record.back_at, 0.0)
        time.sleep(POLL)
        left = ledger.unprocessed(left)
    done = time.monotonic()
    if not ledger.not_final(left) and record.inbound_after is None and done <= deadline:
        record.inbound_after = max(done - record.back_at, 0.0)
    if not left and done <= deadline:
        record.recovered_after = max(done - record.back_at, 0.0)
    else:
        record.notes.append(f"{len(left) or 'the last'} of {len(waiting)} replies accepted before it came back "
                            f"still unprocessed {options.settle_seconds:.0f} s after:")
        record.notes.extend("  " + line for line in ledger.describe(left[:3], time.time()))


def replay_check(stack: FaultStack) -> tuple[int, int]:
    """(games, games whose snapshot equals the replay of their log), as ``pbem game check``; the
    database may still be recovering, so it is tried for a while.

    The load goes on meanwhile, so every game is read in one snapshot of the database (PostgreSQL's
    REPEATABLE READ): the game's row and its log as of one moment, not a move committed between the
    two reads."""
    svc = stack.svc
    assert svc is not None

    def attempt() -> tuple[int, int] | None:
        try:
            isolation = "REPEATABLE READ" if stack.postgres is not None else "SERIALIZABLE"
            with svc.engine.connect().execution_options(isolation_level=isolation) as conn, \
                    Session(bind=conn) as session:
                games = session.scalars(select(Game).where(Game.title.like(f"Bench {GROUP} %"))).all()
                return len(games), sum(1 for game in games if snapshot_agrees(session, game))
        except DBAPIError:
            assert stack.svc is not None
            stack.svc.engine.dispose()
            return None

    return wait_for(attempt, timeout=60, interval=1, message="the database, to replay the games")


# -- the figures ----------------------------------------------------------------------------------


@dataclass
class Figures:
    record: FaultRecord
    offered: int = 0
    accepted: int = 0
    refusals: int = 0
    applied: int = 0
    twice: int = 0
    lost: int = 0
    lost_why: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    duplicate_why: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        window = self.record.end - self.record.start
        return self.applied / window if window > 0 else 0.0

    concurrency: int = 2  # the pool's processes

    @property
    def respawn_loop(self) -> bool:
        """More processes forked than the fault forced, by at least the pool's size: on average
        every pool process replaced once more, by Celery alone."""
        return self.record.respawns - self.record.expected_respawns >= self.concurrency

    def goals(self, settle: float) -> list[str]:
        missed = []
        if self.lost:
            missed.append(f"{self.lost} lost ({dict(self.lost_why)})")
        if self.twice:
            missed.append(f"{self.twice} applied twice")
        if self.respawn_loop:
            missed.append(f"respawn loop ({self.record.respawns} respawns for {self.record.expected_respawns} "
                          f"processes killed)")
        if self.record.recovered_after is None:
            missed.append(f"not everything processed within {settle:.0f} s")
        if self.record.replay_ok != self.record.games:
            missed.append(f"{self.record.games - self.record.replay_ok} games do not replay")
        return missed


def measure(stack: FaultStack, records: Sequence[FaultRecord], concurrency: int) -> list[Figures]:
    """Each fault's figures over its window, from the database and the sink (after the drain)."""
    svc = stack.svc
    assert svc is not None
    replies = stack.senders.snapshot()
    keys = list(replies)
    rows: dict[str, tuple[int, str]] = {}
    mails: dict[int, list[tuple[str, str]]] = {}
    moves: dict[int, list[int]] = {}
    with svc.session_factory() as session:
        for chunk in _chunks(keys, 1000):
            for row in session.execute(select(InboundMessage.message_key, InboundMessage.id, InboundMessage.status)
                                       .where(InboundMessage.message_key.in_(chunk))):
                rows[row.message_key] = (row.id, str(row.status))
        ids = [inbound_id for inbound_id, _ in rows.values()]
        for chunk in _chunks(ids, 1000):
            for row in session.execute(select(OutboundMessage.inbound_id, OutboundMessage.message_id,
                                              OutboundMessage.status)
                                       .where(OutboundMessage.inbound_id.in_(chunk))):
                mails.setdefault(row.inbound_id, []).append((row.message_id, str(row.status)))
            for row in session.execute(select(Move.inbound_id, Move.game_id, Move.seq)
                                       .where(Move.inbound_id.in_(chunk)).order_by(Move.inbound_id, Move.seq)):
                moves.setdefault(row.inbound_id, []).append(row.seq)
    players = stack.players
    out = []
    ends = [r.end for r in records]
    for k, record in enumerate(records):
        figures = Figures(record=record, concurrency=concurrency)
        start = ends[k - 1] if k else float("-inf")  # the first window takes the opening too
        end = ends[k] if k + 1 < len(records) else float("inf")
        for key, reply in replies.items():
            if not start <= reply.first_sent < end:
                continue
            figures.offered += 1
            figures.refusals += reply.refusals
            if reply.accepted is None:
                continue
            figures.accepted += 1
            found = rows.get(key)
            if found is None:
                figures.lost += 1
                figures.lost_why["accepted, no row"] += 1
                continue
            inbound_id, status = found
            figures.statuses[status] += 1
            if status not in TERMINAL:
                figures.lost += 1
                figures.lost_why[f"never processed ({status})"] += 1
            elif status == InboundStatus.FAILED:
                figures.lost += 1
                figures.lost_why["set aside as failed"] += 1
            seqs = moves.get(inbound_id, [])
            if seqs:
                figures.applied += 1
                runs = 1 + sum(1 for a, b in zip(seqs, seqs[1:]) if b != a + 1)
                figures.twice += runs > 1
            for message_id, mail_status in mails.get(inbound_id, []):
                copies = players.delivered(message_id)
                if copies == 0:
                    figures.lost += 1
                    figures.lost_why[f"mail never delivered ({mail_status})"] += 1
                elif copies > 1 or mail_status == OutboundStatus.PENDING:
                    figures.duplicates += 1  # delivered again, or will be once its lease runs out
                    arrived = players.arrival(message_id)
                    when = ("" if arrived is None else ", first before the part came back"
                            if arrived < record.back_at else ", first after it came back")
                    figures.duplicate_why[f"delivered {copies}x{when}, row {mail_status}"] += 1
        out.append(figures)
    return out


def mail_totals(stack: FaultStack) -> tuple[int, int, int, int]:
    """Every outbox row of the run: (rows, delivered, delivered more than once or still pending after
    delivery, never delivered)."""
    svc = stack.svc
    assert svc is not None
    with svc.session_factory() as session:
        rows = session.execute(select(OutboundMessage.message_id, OutboundMessage.status)).all()
    delivered = again = missing = 0
    for message_id, status in rows:
        copies = stack.players.delivered(message_id)
        delivered += copies > 0
        again += copies > 1 or (copies > 0 and status == OutboundStatus.PENDING)
        missing += copies == 0
    return len(rows), delivered, again, missing


def drain(stack: FaultStack, ledger: Ledger, timeout: float) -> bool:
    """Wait until every reply was handed over and processed and every mail of the outbox delivered."""
    svc = stack.svc
    assert svc is not None

    def settled() -> bool:
        if not stack.senders.idle():
            return False
        keys = [key for key, reply in stack.senders.snapshot().items() if reply.accepted is not None]
        if ledger.unprocessed(keys):
            return False
        try:
            with svc.session_factory() as session:
                outbox = session.execute(select(OutboundMessage.message_id)
                                         .where(OutboundMessage.status != OutboundStatus.FAILED)).scalars().all()
        except DBAPIError:
            svc.engine.dispose()
            return False
        return all(stack.players.delivered(m) for m in outbox)

    try:
        wait_for(settled, timeout=timeout, interval=1.0, message="every mail to be processed and delivered")
        return True
    except AssertionError:
        return False


# -- the run --------------------------------------------------------------------------------------


@dataclass
class Result:
    figures: list[Figures]
    missed: dict[str, list[str]]
    drained: bool

    @property
    def ok(self) -> bool:
        return self.drained and not any(self.missed.values())


def run(options: FaultOptions, echo: Echo = print) -> Result:
    for name in options.faults:
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r} (known: {', '.join(FAULTS)})")
    faults = [f for f in options.faults if options.database == "postgresql" or not f.startswith("postgres")]
    echo("pbem bench faults: the real pipeline under load while each part is killed and brought back")
    echo(f"  machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
         f"before starting; {options.rate:g} moves/s offered on {options.games} tables; worker prefork "
         f"x{options.concurrency}{f' pinned to CPUs {options.cpus}' if options.cpus else ''}; sweep every "
         f"{options.sweep_seconds or 'default'} s")
    with FaultStack(options, echo) as stack:
        echo(f"  database: {options.database}; Redis; SMTP front; Celery worker and beat; relay sink "
             f"(servers' logs in {stack.base})")
        stack.open_tables(GROUP, options.games, None)
        ledger = Ledger(stack)
        watch = PoolWatch(stack).start()
        load = Load(stack, options.rate).start()
        records: list[FaultRecord] = []
        try:
            for name in faults:
                records.append(run_fault(stack, name, options, ledger, watch, echo))
        finally:
            load.stop()
            watch.stop()
        echo(f"  load stopped ({load.result.offered} replies offered, {load.result.starved} slots found no "
             f"decision ready); waiting up to {options.drain_seconds:.0f} s for the last mails")
        t0 = time.monotonic()
        drained = drain(stack, ledger, options.drain_seconds)
        echo(f"  {'drained' if drained else 'NOT drained'} after {time.monotonic() - t0:.1f} s")
        figures = measure(stack, records, options.concurrency)
        total_rows, delivered, again, missing = mail_totals(stack)
        games, agree = replay_check(stack)
        print_table(echo, figures, options)
        echo(f"  the whole run: {total_rows} mails written, {delivered} delivered, {again} delivered more than "
             f"once or due again, {missing} never delivered; {agree}/{games} games replay from their log")
        missed = {f.record.name: f.goals(options.settle_seconds) for f in figures}
        if missing:
            missed.setdefault("run", []).append(f"{missing} mails never delivered")
        if agree != games:
            missed.setdefault("run", []).append(f"{games - agree} games do not replay")
        result = Result(figures, missed, drained)
        if result.ok:
            echo("  goals: all met (0 lost, 0 applied twice, no respawn loop, everything processed within "
                 f"{options.settle_seconds:.0f} s of the part coming back, every game replays)")
        else:
            for name, problems in missed.items():
                for problem in problems:
                    echo(f"  GOAL MISSED [{name}]: {problem}")
            if not drained:
                echo("  GOAL MISSED: the pipeline did not drain")
        return result


def print_table(echo: Echo, figures: Sequence[Figures], options: FaultOptions) -> None:
    echo("")
    echo(f"  {'fault':15} {'down s':>6} {'moves/s':>7} {'250':>6} {'refused':>7} {'applied':>7} {'twice':>5} "
         f"{'lost':>4} {'dup':>4} {'respawns':>8} {'UP t/o':>6} {'back after':>10} {'(in)':>6} {'replay':>7}")
    for f in figures:
        r = f.record
        back = f"{r.recovered_after:9.1f}s" if r.recovered_after is not None else f">{options.settle_seconds:8.0f}s"
        inbound = f"{r.inbound_after:5.1f}s" if r.inbound_after is not None else f">{options.settle_seconds:4.0f}s"
        echo(f"  {r.name:15} {r.down:6.1f} {f.rate:7.1f} {f.accepted:6d} {f.refusals:7d} {f.applied:7d} "
             f"{f.twice:5d} {f.lost:4d} {f.duplicates:4d} {r.respawns:4d}/{r.expected_respawns:<3d} "
             f"{r.up_timeouts:6d} {back:>10} {inbound:>6} {r.replay_ok:>3d}/{r.games:<3d}")
        odd = {k: v for k, v in f.statuses.items() if k != InboundStatus.DONE}
        notes = list(r.notes)
        if odd:
            notes.append(f"replies not done: {odd}")
        if f.lost_why:
            notes.append(f"lost: {dict(f.lost_why)}")
        if f.duplicate_why:
            notes.append(f"duplicates: {dict(f.duplicate_why)}")
        for note in notes:
            echo(f"  {'':15} {note}")
    echo("  respawns: pool processes forked to replace others / processes the fault itself killed")
