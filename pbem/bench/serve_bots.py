"""``pbem bench serve --bots``: a person against three computer players, by mail, on ``pbem serve``.

What a ``bots: 3 strong`` game costs the server (README, "Playing by mail"): ``pbem serve`` is
started as ``pbem bench serve`` starts it (``serve_latency.Served``: SQLite, the embedded broker,
its worker with beat, the SMTP sink in this process as the relay), and for each bot named one
game is opened as ``pbem game new --player … --bots "3 <bot>"`` opens it (one load player and
three seats of that bot, standard rules; the bots' first pass is made here, while opening).  The
player then answers each ``your_turn`` mail with a legal choice read from its headers (a random
pass, a random legal card), through serve's SMTP front, once the sink has been quiet for a
moment; the worker plays the bots' cards until the player must act again and mails them.

For each reply, from the front's 250 after DATA to the player's next ``your_turn`` mail at the
sink (*reply to next mail*); and over all the replies, the CPU time of every process of
``pbem serve`` (the front, the worker and its pool, beat: ``/proc``, ``procstat``) divided by the
replies, beside what serve uses idle over the same time, and the bots' own decisions (each one's
``time.thread_time`` inside the worker, ``serve_timers``).  The machine's load average is printed
with them: the figures are only as quiet as the machine.  Figures are printed, never asserted.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import smtplib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import func, select

from pbem.bench import procstat, serve_timers
from pbem.bench.e2e import percentile
from pbem.bench.loadgen import Decision
from pbem.bench.serve_latency import Options, Served, idle_cpu_rate
from pbem.bench.tables import LOAD_DOMAIN, player_address
from pbem.db.models import Game, GameStatus, Move
from pbem.devservers import wait_for
from pbem.engine import Rules
from pbem.services.continuation import due_continuations
from pbem.services.games import SeatSpec
from pbem.services.deadlines import Timing
from pbem.services.operator import start_new_game
from workers.queueing import CONTINUE_GAME, queue_continue, queue_outbound

__all__ = ["Beside", "BotGame", "run", "run_beside"]

Echo = Callable[[str], None]


@dataclass
class BotGame:
    """One measured game: its bot, each reply's seconds to the next mail, CPU spent."""

    bot: str
    latencies: list[float] = field(default_factory=list)
    replies: int = 0
    passes: int = 0
    seconds: float = 0.0  # wall time of the measured replies
    serve_cpu: float = 0.0  # every process of pbem serve over that time
    rest_cpu: float = 0.0  # the rest of the machine over that time
    idle_rate: float = 0.0  # serve's CPU seconds per second while idle
    bot_cpu: list[float] = field(default_factory=list)  # each bot decision's CPU seconds
    bot_wall: list[float] = field(default_factory=list)
    load: str = ""
    finished: bool = False
    deferred: int = 0  # replies the front answered with a temporary refusal, sent again
    busy_latencies: list[float] = field(default_factory=list)  # those made while the games beside played


def run(options: Options, bots: list[str], echo: Echo = print) -> list[BotGame]:
    games: list[BotGame] = []
    for bot in bots:
        games.append(_one(options, bot, echo))
    report(games, echo)
    return games


def _broker(url: str) -> str:
    return "the embedded broker" if url.startswith(("sqla+", "sqlalchemy+")) else url.split("://", 1)[0]


def _load() -> str:
    with open("/proc/loadavg") as handle:
        return " ".join(handle.read().split()[:3])


def _one(options: Options, bot: str, echo: Echo) -> BotGame:
    game = BotGame(bot=bot)
    with Served(options, echo) as served:
        echo(f"pbem bench serve --bots {bot}: {options.moves} replies of one person against three `{bot}` "
             f"bots on `pbem serve` ({_described(served, options)}); load average {_load()}")
        if options.idle_seconds > 0:
            game.idle_rate = idle_cpu_rate(served, options.idle_seconds)
        _play(served, options, game, f"bots{bot}")
    return game


def _described(served: Served, options: Options) -> str:
    with served.celery.connection_for_write() as connection:
        polling = connection.transport.polling_interval
    return (f"SQLite, {_broker(served.settings.broker_url)} polled every {polling * 1000:.0f} ms, "
            f"worker --concurrency={options.concurrency}")


def _play(served: Served, options: Options, game: BotGame, group: str,
          busy: Callable[[], bool] | None = None) -> None:
    """Open the person's game against three ``game.bot`` and play ``options.moves`` replies (the
    person's address is a load player's of ``group``: its address up to the first "-").  With
    ``busy``, each reply is also noted as made while it was true (read once its next mail came)."""
    bot = game.bot
    rng = random.Random(f"{options.seed}:{bot}")
    counter = itertools.count()
    human = player_address(group, 0)
    assert served.svc is not None
    started = start_new_game(served.svc, rules=Rules.make("standard"),
                             seats=[SeatSpec(address=human), *(SeatSpec(bot=bot) for _ in range(3))],
                             timing=Timing(), seed=f"{options.seed}:{bot}", title=f"Bench bots {bot}",
                             first_deck=None)
    queue_outbound(served.celery, started.mail_ids)
    bots_file = str(served.timers) + serve_timers.BOTS_SUFFIX
    skip = _lines(bots_file)  # the bots' passes made while opening were in this process: none here
    kinds = {"serve": served.pids}
    before = procstat.sample(kinds)
    t0 = time.monotonic()
    with smtplib.SMTP("127.0.0.1", served.smtp_port, timeout=120) as client:  # the front may wait 30 s on SQLite
        decision = _next(served, group, started.game_id)
        for k in range(options.moves):
            if decision is None:
                game.finished = True
                break
            wait_for(lambda: time.monotonic() - served.players.quiet_since() > 0.3, timeout=60,
                     interval=0.01, message="the sink to be quiet")
            raw = decision.reply(decision.choose(rng), f"<bench-bots.{bot}.{next(counter)}.{os.getpid()}"
                                                       f"@{LOAD_DOMAIN}>")
            game.passes += decision.decision == "pass"
            accepted = _send(client, decision, raw, game)
            game.replies += 1
            decision = _next(served, group, started.game_id)
            if decision is not None:
                game.latencies.append(decision.arrived - accepted)
                if busy is not None and busy():
                    game.busy_latencies.append(decision.arrived - accepted)
    # The last reply's mails: until serve is quiet again (its end of game, or its next your_turn).
    wait_for(lambda: time.monotonic() - served.players.quiet_since() > 1.0, timeout=120, interval=0.05,
             message="the sink to be quiet")
    game.seconds = time.monotonic() - t0
    spent = procstat.sample(kinds).minus(before)
    game.serve_cpu, game.rest_cpu = spent["serve"], spent["rest of the machine"]
    game.load = _load()
    for line in _read(bots_file)[skip:]:
        record = json.loads(line)
        if record["bot"] == bot:
            game.bot_cpu.append(record["cpu"])
            game.bot_wall.append(record["wall"])


@dataclass
class Beside:
    """``pbem bench serve --beside``: the person's game, and what the worker did meanwhile."""

    person: BotGame
    games: list[int] = field(default_factory=list)  # the games of computers only
    moves: int = 0  # their moves while the person played
    finished: int = 0
    #: The worker's tasks and the transactions that wrote or held SQLite's write lock while the
    #: person played (``serve_timers``: one dict each).
    tasks: list[dict] = field(default_factory=list)
    transactions: list[dict] = field(default_factory=list)


def run_beside(options: Options, beside: int, echo: Echo = print, *, bot: str = "heuristic",
               beside_bot: str = "strong") -> Beside:
    """One person plays a ``bots: 3 <bot>`` game by mail while ``beside`` games whose four seats are
    all ``beside_bot`` play on (in ``pbem.continue_game`` steps) on the same ``pbem serve``."""
    result = Beside(person=BotGame(bot=bot))
    with Served(options, echo) as served:
        echo(f"pbem bench serve --beside {beside}: {options.moves} replies of one person against three "
             f"`{bot}` bots while {beside} games of four `{beside_bot}` play on, on `pbem serve` "
             f"({_described(served, options)}); load average {_load()}")
        assert served.svc is not None
        for k in range(beside):  # each game's first step runs here, as `pbem game new` runs it
            result.games.append(start_new_game(
                served.svc, rules=Rules.make("standard"), seats=[SeatSpec(bot=beside_bot)] * 4, timing=Timing(),
                seed=f"{options.seed}:beside:{k}", title=f"Bench beside {k}", first_deck=None).game_id)
        marked = due_continuations(served.svc, served.svc.clock.now(), older_than=timedelta(0))
        queue_continue(served.celery, marked)
        # Measured from the worker's first step of each: whatever waited for the lock that the
        # openings held here is over by then.
        wait_for(lambda: all(_moves_of(served, [g]) >= mark for g, mark in marked), timeout=600, interval=0.1,
                 message="a step of each game beside")
        moves_before = _moves_of(served, result.games)
        t0 = time.monotonic()
        _play(served, options, result.person, "beside", busy=lambda: _playing(served, result.games))
        t1 = time.monotonic()
        result.moves = _moves_of(served, result.games) - moves_before
        with served.reader() as session:  # type: ignore[misc]
            result.finished = len(session.scalars(select(Game.id).where(
                Game.id.in_(result.games), Game.status == GameStatus.FINISHED)).all())
        result.tasks = [r for r in _records(str(served.timers) + serve_timers.TASKS_SUFFIX)
                        if r["end"] >= t0 and r["start"] <= t1]  # any part of it while the person played
        result.transactions = [r for r in _records(str(served.timers) + serve_timers.TX_SUFFIX)
                               if t0 <= r["end"] <= t1]
    report_beside(result, echo)
    return result


def _moves_of(served: Served, games: list[int]) -> int:
    assert served.reader is not None
    with served.reader() as session:
        return session.scalar(select(func.count()).select_from(Move).where(Move.game_id.in_(games))) or 0


def _playing(served: Served, games: list[int]) -> bool:
    """Whether every one of these games is still being played."""
    assert served.reader is not None
    with served.reader() as session:
        return session.scalar(select(func.count()).select_from(Game).where(
            Game.id.in_(games), Game.status == GameStatus.ACTIVE)) == len(games)


def _records(path: str) -> list[dict]:
    return [json.loads(line) for line in _read(path)]


def report_beside(result: Beside, echo: Echo) -> None:
    g = result.person
    for name, values in (("", g.latencies), (f", while all {len(result.games)} games beside played", g.busy_latencies)):
        ms = [v * 1000 for v in values]
        if ms:
            echo(f"  the person's reply to next mail{name}, ms: p50 {percentile(ms, 50):.0f}  "
                 f"p90 {percentile(ms, 90):.0f}  p99 {percentile(ms, 99):.0f}  max {max(ms):.0f}  "
                 f"({len(ms)} of {g.replies} replies)")
        else:
            echo(f"  ! no reply of the person measured{name}")
    echo(f"  ({g.seconds:.0f} s; {g.deferred} replies sent again after a temporary refusal)")
    echo("  by task                 tasks  longest, s   write transactions  longest held, s  "
         "first write to end, s")
    names = sorted({r["task"] or "-" for r in result.tasks} | {r["task"] or "-" for r in result.transactions})
    for name in names:
        runs = [r["end"] - r["start"] for r in result.tasks if (r["task"] or "-") == name]
        txs = [r for r in result.transactions if (r["task"] or "-") == name]
        writes = [r["write"] for r in txs if r["write"] is not None]
        echo(f"  {name if name != '-' else '(no task: front, beat)':<22}{len(runs):6d}  "
             f"{max(runs, default=0):10.2f}   {len(txs):18d}  {max((r['held'] for r in txs), default=0):15.2f}  "
             f"{max(writes, default=0):21.2f}")
    steps = [r for r in result.tasks if r["task"] == CONTINUE_GAME]
    idle = [r for r in steps if r["moves"] == 0]
    echo(f"  {CONTINUE_GAME}: {len(steps)} steps, {len(idle)} found nothing to do; the {len(result.games)} games "
         f"beside played {result.moves} moves ({result.finished} finished); load average after {g.load}")
    echo("  (reply to next mail: the 250 after DATA to the person's next your_turn at the sink; a write "
         "transaction: one that wrote or took SQLite's write lock (BEGIN IMMEDIATE), held from that BEGIN "
         "to its COMMIT or ROLLBACK; tasks and transactions of the worker while the person played)")


def _send(client: smtplib.SMTP, decision: Decision, raw: bytes, game: BotGame) -> float:
    """Send the reply as a mail server does: again after a temporary refusal (4xx: the front could
    not store it in time), counted; the monotonic time of the 250 that accepted it."""
    deadline = time.monotonic() + 300
    while True:
        try:
            refused = client.sendmail(decision.player, [decision.reply_to], raw)
        except smtplib.SMTPResponseException as error:
            if not 400 <= error.smtp_code < 500 or time.monotonic() > deadline:
                raise
            game.deferred += 1
            continue
        if refused:
            raise RuntimeError(f"the front refused a reply: {refused}")
        return time.monotonic()


def _lines(path: str) -> int:
    return len(_read(path))


def _read(path: str) -> list[str]:
    try:
        with open(path) as handle:
            return handle.read().splitlines()
    except FileNotFoundError:
        return []


def _next(served: Served, group: str, game_id: int) -> Decision | None:
    """The person's next ``your_turn`` mail, or None once the game is over."""
    assert served.svc is not None

    def arrived() -> bool:
        if served.players.waiting(group) > 0:
            return True
        with served.reader() as session:  # type: ignore[misc]
            status = session.scalar(select(Game.status).where(Game.id == game_id))
        return status is not GameStatus.ACTIVE and time.monotonic() - served.players.quiet_since() > 1.0

    wait_for(arrived, timeout=300, interval=0.002, message="the person's next mail")
    return served.players.take(group)


def report(games: list[BotGame], echo: Echo) -> None:
    echo("  bot         replies  reply to next mail, ms: p50     p90     max   serve CPU/reply  "
         "(idle part)  bot CPU/decision mean  max   decisions/reply")
    for g in games:
        if not g.replies:
            echo(f"  {g.bot:<11} no reply measured")
            continue
        ms = [v * 1000 for v in g.latencies]
        lat = (f"{percentile(ms, 50):7.0f} {percentile(ms, 90):7.0f} {max(ms):7.0f}" if ms else "      -" * 3)
        per_reply = g.serve_cpu / g.replies * 1000
        idle = g.idle_rate * g.seconds / g.replies * 1000
        bot = (f"{sum(g.bot_cpu) / len(g.bot_cpu) * 1000:7.0f} {max(g.bot_cpu) * 1000:6.0f}"
               if g.bot_cpu else "      -      -")
        echo(f"  {g.bot:<11} {g.replies:7d}                         {lat}   {per_reply:8.0f} ms      "
             f"{idle:6.0f} ms  {bot} ms      {len(g.bot_cpu) / g.replies:5.2f}")
    for g in games:
        bot_total = sum(g.bot_cpu)
        echo(f"  {g.bot}: {g.replies} replies ({g.passes} passes) in {g.seconds:.0f} s; serve used "
             f"{g.serve_cpu:.1f} CPU s ({bot_total:.1f} s of it the bots' decisions, {len(g.bot_cpu)} of them), "
             f"the rest of the machine {g.rest_cpu:.1f} s; load average after {g.load}"
             + ("; the game ended" if g.finished else ""))
    echo("  (reply to next mail: the 250 after DATA to the person's next your_turn at the sink; serve CPU: "
         "the front, the worker and its pool, beat, from /proc; idle part: serve's idle CPU rate over the "
         "same time; bot CPU: time.thread_time of each decision in the worker)")
