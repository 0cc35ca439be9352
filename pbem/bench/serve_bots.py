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

from sqlalchemy import select

from pbem.bench import procstat, serve_timers
from pbem.bench.e2e import percentile
from pbem.bench.loadgen import Decision
from pbem.bench.serve_latency import Options, Served, idle_cpu_rate
from pbem.bench.tables import LOAD_DOMAIN, player_address
from pbem.db.models import Game, GameStatus
from pbem.devservers import wait_for
from pbem.engine import Rules
from pbem.services.games import SeatSpec
from pbem.services.deadlines import Timing
from pbem.services.operator import start_new_game
from workers.queueing import queue_outbound

__all__ = ["BotGame", "run"]

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
    rng = random.Random(f"{options.seed}:{bot}")
    counter = itertools.count()
    group = f"bots{bot}"  # a load player's group: its address up to the first "-"
    human = player_address(group, 0)
    game = BotGame(bot=bot)
    with Served(options, echo) as served:
        with served.celery.connection_for_write() as connection:
            polling = connection.transport.polling_interval
        echo(f"pbem bench serve --bots {bot}: {options.moves} replies of one person against three `{bot}` "
             f"bots on `pbem serve` (SQLite, {_broker(served.settings.broker_url)} polled every "
             f"{polling * 1000:.0f} ms, worker --concurrency={options.concurrency}); load average {_load()}")
        if options.idle_seconds > 0:
            game.idle_rate = idle_cpu_rate(served, options.idle_seconds)
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
        with smtplib.SMTP("127.0.0.1", served.smtp_port, timeout=30) as client:
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
                refused = client.sendmail(decision.player, [decision.reply_to], raw)
                accepted = time.monotonic()
                if refused:
                    raise RuntimeError(f"the front refused a reply: {refused}")
                game.replies += 1
                decision = _next(served, group, started.game_id)
                if decision is not None:
                    game.latencies.append(decision.arrived - accepted)
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
    return game


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
        with served.svc.session_factory() as session:  # type: ignore[union-attr]
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
