"""``pbem bench``: benchmarks that print figures (the benchmarks themselves are in ``pbem.bench``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from tqdm import tqdm

from pbem.bench.cli_start import run as run_cli_start
from pbem.bench.compare import command_line as compare_command_line
from pbem.bench.compare import run as run_compare
from pbem.bench.e2e import Options as E2eOptions
from pbem.bench.e2e import run as run_e2e
from pbem.bench.engine_speed import run as run_engine_speed
from pbem.bench.faults import FaultOptions
from pbem.bench.faults import run as run_faults
from pbem.bench.fuzz import DEFAULT_CORPUS, parse_size
from pbem.bench.fuzz import Options as FuzzOptions
from pbem.bench.fuzz import main_report as run_fuzz
from pbem.bench.playout_speed import run as run_playout_speed
from pbem.bench.retention import run as run_retention
from pbem.bench.serve_bots import run as run_serve_bots
from pbem.bench.serve_bots import run_beside as run_serve_beside
from pbem.bench.serve_latency import Options as ServeOptions
from pbem.bench.serve_latency import run as run_serve_latency
from pbem.bench.variants import CONFIGURATIONS as VARIANT_CONFIGURATIONS
from pbem.bench.variants import run as run_variants


@click.group()
def bench() -> None:
    """Measure speed (figures are printed, never asserted)."""


@bench.command("engine")
@click.option("--rounds", default=9, show_default=True, help="interleaved rounds of every loop")
@click.option("--seconds", default=1.0, show_default=True, help="CPU seconds of one loop in one round")
def engine(rounds: int, seconds: float) -> None:
    """Complete random hands per CPU second: pbem's public API beside OpenSpiel driven well, driven
    naively, and in C++ (evaluate_bots); each ratio the median of the per-round ratios. Then
    strong's rollouts: whole hands by the heuristic policy on the fast Playout and through GameState."""
    run_engine_speed(rounds=rounds, seconds=seconds, echo=click.echo)
    run_playout_speed(rounds=max(3, rounds // 2), seconds=seconds / 2, echo=click.echo)


@bench.command("retention")
@click.option("--days", default=45, show_default=True, help="simulated days")
@click.option("--mails-per-day", default=400, show_default=True)
@click.option("--retention-days", default=30.0, show_default=True, help="PBEM_MAIL_RETENTION_DAYS (0: keep)")
def retention(days: int, mails_per_day: int, retention_days: float) -> None:
    """The outbox's size on disk over simulated days, with mail retention (PostgreSQL)."""
    run_retention(days=days, mails_per_day=mails_per_day, retention_days=retention_days, echo=click.echo)


@bench.command("e2e")
@click.option("--database", type=click.Choice(["postgresql", "sqlite"]), default="postgresql", show_default=True)
@click.option("--rates", default="10,25,50,100,150,200,250", show_default=True, help="offered moves/s, in steps")
@click.option("--step-seconds", default=15.0, show_default=True)
@click.option("--games", default=200, show_default=True, help="played tables per notification mode")
@click.option("--modes", default="heavy,default", show_default=True, help="heavy (every card), default")
@click.option("--idle-moves", default=50, show_default=True, help="moves one at a time (0: skip)")
@click.option("--flat", "flat_sizes", default="10,1000,10000", show_default=True,
              help="active games in the database for the flat-cost runs (empty: skip)")
@click.option("--flat-rate", default=20.0, show_default=True)
@click.option("--flat-seconds", default=15.0, show_default=True)
@click.option("--concurrency", default=2, show_default=True, help="worker pool processes")
@click.option("--pool", type=click.Choice(["prefork", "solo"]), default="prefork", show_default=True,
              help="solo: --concurrency workers of one process each")
@click.option("--durable/--no-durable", default=True, show_default=True,
              help="PostgreSQL with fsync and synchronous commit (off: as the test suite runs it)")
@click.option("--keep-dir", is_flag=True, help="keep the servers' directory and logs")
@click.option("--profile", "profile_rate", default=0.0, help="then a step at this rate under py-spy (0: none)")
@click.option("--compare", "compare_rev", default=None, metavar="REV",
              help="instead: REV's own bench e2e beside this checkout's, each a subprocess given the other options, "
              "alternating, then the HEAD/REV ratios of the medians and the goals met. REV runs in a venv of this "
              "checkout's requirements/test.txt plus REV (--no-deps), kept for reruns in ~/.cache/pbem/bench-compare "
              "(keyed by REV, the lock file and Python; delete to reclaim the space)")
@click.option("--repeat", default=2, show_default=True, help="with --compare: runs of each side")
def e2e(database: str, rates: str, step_seconds: float, games: int, modes: str, idle_moves: int,
        flat_sizes: str, flat_rate: float, flat_seconds: float, concurrency: int, pool: str,
        durable: bool, keep_dir: bool, profile_rate: float, compare_rev: str | None, repeat: int) -> None:
    """The whole mail path under load: SMTP front, Celery worker on Redis, a database, relay sink."""
    if compare_rev:
        args = compare_command_line(click.get_current_context(), leave_out=("compare_rev", "repeat"))
        raise SystemExit(run_compare(compare_rev, repeat, args, echo=click.echo, keep=keep_dir))
    run_e2e(E2eOptions(database=database, rates=[float(r) for r in rates.split(",") if r],
                       step_seconds=step_seconds, games=games, modes=[m for m in modes.split(",") if m],
                       idle_moves=idle_moves, flat_sizes=[int(s) for s in flat_sizes.split(",") if s],
                       flat_rate=flat_rate, flat_seconds=flat_seconds, concurrency=concurrency, pool=pool,
                       durable=durable, keep_dir=keep_dir, profile_rate=profile_rate),
            echo=click.echo)


@bench.command("faults")
@click.option("--database", type=click.Choice(["postgresql", "sqlite"]), default="postgresql", show_default=True)
@click.option("--rate", default=20.0, show_default=True, help="moves/s offered throughout")
@click.option("--faults", default="pool,worker,redis,postgres-stop,postgres-crash,relay", show_default=True,
              help="the faults, in this order")
@click.option("--down-seconds", default=30.0, show_default=True, help="Redis and PostgreSQL down this long")
@click.option("--relay-down-seconds", default=60.0, show_default=True)
@click.option("--settle-seconds", default=60.0, show_default=True,
              help="the goal: everything accepted processed this long after the part came back")
@click.option("--busy-seconds", default=20.0, show_default=True, help="CPUs kept busy around the SIGKILLs")
@click.option("--games", default=60, show_default=True, help="tables played")
@click.option("--concurrency", default=2, show_default=True, help="worker pool processes")
@click.option("--cpus", default=None, help="pin the worker to these CPUs (taskset -c), e.g. 0")
@click.option("--sweep-seconds", type=float, default=None, help="PBEM_SWEEP_SECONDS (default: the server's)")
@click.option("--keep-dir", is_flag=True, help="keep the servers' directory and logs")
def faults(database: str, rate: float, faults: str, down_seconds: float, relay_down_seconds: float,
           settle_seconds: float, busy_seconds: float, games: int, concurrency: int, cpus: str | None,
           sweep_seconds: float | None, keep_dir: bool) -> None:
    """Kill and restart each part of the pipeline under load: lost, doubled, respawns, recovery.
    Exits 1 when a goal is missed."""
    result = run_faults(FaultOptions(database=database, rate=rate, faults=[f for f in faults.split(",") if f],
                                     down_seconds=down_seconds, relay_down_seconds=relay_down_seconds,
                                     settle_seconds=settle_seconds, busy_seconds=busy_seconds, games=games,
                                     concurrency=concurrency, cpus=cpus, sweep_seconds=sweep_seconds,
                                     keep_dir=keep_dir),
                        echo=click.echo)
    if not result.ok:
        raise SystemExit(1)


@bench.command("fuzz")
@click.option("--messages", default=1000, show_default=True, help="mutated mails sent to live targets")
@click.option("--seed", default="1", show_default=True, help="the same seed sends the same mails")
@click.option("--sizes", default="10k,100k,1M,10M", show_default=True,
              help="sizes of each generator's case in the CPU table (empty: skip the table)")
@click.option("--corpus", type=click.Path(file_okay=False), default=None,
              help="real mails to mutate (default: tests/mail/corpus)")
@click.option("--save-crashes", type=click.Path(file_okay=False), default=None,
              help="write the mails that raised or stalled here (the first 3 of each kind, minimised), with a "
              "manifest.toml, for the regression corpus")
@click.option("--limit", default=5.0, show_default=True, help="CPU seconds a mail may use before it is interrupted")
@click.option("--size-limit", default=20.0, show_default=True, help="the same for a case of the CPU table")
@click.option("--send/--no-send", default=True, show_default=True,
              help="send the answers to an SMTP sink on 127.0.0.1 as the worker does (off: left in the outbox)")
def fuzz(messages: int, seed: str, sizes: str, corpus: str | None, save_crashes: str | None, limit: float,
         size_limit: float, send: bool) -> None:
    """Hostile mail through the worker's whole path (SQLite, one process, the real services)."""
    status = run_fuzz(FuzzOptions(messages=messages, seed=seed, sizes=[parse_size(s) for s in sizes.split(",") if s],
                                  corpus=Path(corpus) if corpus else DEFAULT_CORPUS,
                                  save_crashes=Path(save_crashes) if save_crashes else None, limit=limit,
                                  size_limit=size_limit, send=send), echo=click.echo)
    raise SystemExit(status)


@bench.command("variants")
@click.option("--games", default=1000, show_default=True, help="whole games of each configuration")
@click.option("--bots", "bots_text", default=None, metavar="A,B",
              help="bots cycled over the seats (default: random or heuristic drawn for each seat)")
@click.option("--seed", default="1", show_default=True)
@click.option("--only", multiple=True, metavar="TEXT",
              help="only the configurations whose name contains TEXT (repeatable: any of them)")
@click.option("--progress/--no-progress", default=True, show_default=True, help="a progress bar (stderr)")
def variants(games: int, bots_text: str | None, seed: str, only: tuple[str, ...], progress: bool) -> None:
    """Whole bot games of every partnership, kitty, passing-variant, Turbo, Booster Nines, Dirty Nasty
    Filthy and Cancellation configuration (and standard): games, errors, moves, seconds, games/s. Exits
    1 if any game had an error."""
    bots = tuple(b.strip() for b in bots_text.split(",") if b.strip()) if bots_text else None
    chosen = [c for c in VARIANT_CONFIGURATIONS if not only or any(text in c.name for text in only)]

    def bar(items):
        return tqdm(items, unit="configuration", file=sys.stderr, disable=not progress)

    results = run_variants(games=games, seed=seed, bots=bots, configurations=chosen, echo=click.echo, progress=bar)
    if any(r.errors for r in results):
        raise SystemExit(1)


@bench.command("serve")
@click.option("--moves", type=int, default=None, help="moves played one at a time  [default: 30; 56 with --beside]")
@click.option("--notify", type=click.Choice(["default", "every_card"]), default="default", show_default=True,
              help="the players' notifications (every_card: 4 mails a move)")
@click.option("--concurrency", default=2, show_default=True, help="pbem serve --concurrency")
@click.option("--idle-seconds", default=10.0, show_default=True, help="serve's idle CPU read this long first (0: skip)")
@click.option("--keep-dir", is_flag=True, help="keep serve's data directory and log")
@click.option("--bots", "bots_text", default=None, metavar="A,B",
              help="instead: for each bot, a game of one person against three of it (`bots: 3 strong`), "
              "--moves replies by mail")
@click.option("--beside", default=0, show_default=True, metavar="N",
              help="instead: a person's `bots: 3 heuristic` game by mail while N games of four `strong` play on")
@click.option("--seed", default="serve", show_default=True, help="the games' seed (their deals, the replies)")
def serve(moves: int | None, notify: str, concurrency: int, idle_seconds: float, keep_dir: bool,
          bots_text: str | None, beside: int, seed: str) -> None:
    """The latency of a move by mail on an idle `pbem serve` (SQLite, embedded broker): p50 and p99
    from the SMTP 250 to the last mail at the relay, broken down into pickup, processing, rendering
    and sending. With --bots strong,heuristic: a person against three bots, each reply to the
    person's next mail (p50, p90, max) and serve's CPU per reply, the bots' decisions among it.
    With --beside 3: the person's reply to next mail (p50, p90, p99, max) while three games of
    computers play on, the longest task and write transaction by task, the steps that found nothing."""
    if beside:
        run_serve_beside(ServeOptions(moves=moves or 56, concurrency=concurrency, idle_seconds=0,
                                      keep_dir=keep_dir, seed=seed), beside=beside, echo=click.echo)
        return
    moves = moves or 30
    if bots_text:
        run_serve_bots(ServeOptions(moves=moves, concurrency=concurrency, idle_seconds=idle_seconds,
                                    keep_dir=keep_dir, seed=seed),
                       bots=[b.strip() for b in bots_text.split(",") if b.strip()], echo=click.echo)
        return
    run_serve_latency(ServeOptions(moves=moves, notify=None if notify == "default" else notify,
                                   concurrency=concurrency, idle_seconds=idle_seconds, keep_dir=keep_dir,
                                   seed=seed),
                      echo=click.echo)


@bench.command("cli")
@click.option("--runs", default=5, show_default=True, help="fresh processes of each command")
def cli(runs: int) -> None:
    """The CPU the command line costs to start: pbem --help, pbem game list and pbem mail list, each in
    fresh processes (user + sys, median), against a migrated SQLite database in a temporary directory."""
    run_cli_start(runs=runs, echo=click.echo)
