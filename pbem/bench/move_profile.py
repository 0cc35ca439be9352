"""Where a move's time goes in the worker: ``python -m pbem.bench.move_profile``.

Runs the worker's side of many moves in this one process under ``cProfile``, with a real
database (a throwaway PostgreSQL cluster, or an SQLite file with ``--sqlite``) and a real SMTP
sink as the relay: the reply stored as the front stores it (``receive_inbound``), then exactly
what the ``pbem.process_inbound`` task runs (``workers.tasks.run_move``: the move applied and
its mails written in one transaction, then sent).  Celery and the SMTP front are left out:
``pbem bench e2e`` measures them; this shows the inside of the worker.

Prints the wall time per move and the top functions by cumulative and by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import tempfile
import time
from pathlib import Path

from pbem.bench.loadgen import Players
from pbem.bench.tables import LOAD_DOMAIN, create_tables
from pbem.config import Settings
from pbem.db import migrate
from pbem.devservers.lean_sink import LeanSmtpSink
from pbem.devservers.postgres import PostgresServer
from pbem.services.app import Services
from pbem.services.intake import receive_inbound
from pbem.services.outbox import send_outbound
from workers.tasks import run_move

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--sqlite", action="store_true", help="an SQLite file instead of PostgreSQL")
    parser.add_argument("--default", action="store_true", help="default notifications (not every card)")
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--sql", action="store_true", help="print the SQL statements of the last move")
    parser.add_argument("--no-profile", action="store_true", help="only time the moves (CPU and wall)")
    parser.add_argument("--save", metavar="FILE", help="also write the profile to FILE (pstats format)")
    args = parser.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="pbem-profile-"))
    postgres = None
    if args.sqlite:
        url = f"sqlite:///{base / 'pbem.db'}"
    else:
        postgres = PostgresServer().start()
        url = postgres.create_database("pbem_profile")
    players = Players(domain=LOAD_DOMAIN)
    sink = LeanSmtpSink(on_message=players.on_message, keep=False).start()
    try:
        migrate.upgrade(url)
        settings = Settings.from_env({
            "PBEM_DATABASE_URL": url, "PBEM_DATA_DIR": str(base), "PBEM_MAIL_DOMAIN": "hearts.test",
            "PBEM_SECRET_KEY": "profile", "PBEM_RELAY_HOST": sink.host, "PBEM_RELAY_PORT": str(sink.port),
            "PBEM_ERROR_REPLIES_PER_DAY": "1000000",
        })
        svc = Services.from_settings(settings)
        group = "profile"
        created = create_tables(svc, group, args.tables, notify=None if args.default else "every_card",
                                seed="profile")
        for outbound_id in created.outbound_ids:
            send_outbound(svc, outbound_id)
        deadline = time.monotonic() + 30
        while players.waiting(group) < 4 * args.tables and time.monotonic() < deadline:
            time.sleep(0.01)
        statements: list[str] = []
        if args.sql:
            from sqlalchemy import event

            @event.listens_for(svc.engine, "before_cursor_execute")
            def _log(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
                statements.append(" ".join(statement.split())[:160])
        svc.composer.renderer.preload()  # as the worker does once, before it forks its pool
        rng = random.Random(1)
        # CPU time of this thread (the sink runs in another): waiting for PostgreSQL or the sink is not counted (on a
        # shared machine, wall time says more about the neighbours than about pbem).
        profile = cProfile.Profile(time.thread_time)
        done = 0
        cpu = 0.0
        wall = 0.0
        started = time.perf_counter()
        for number in range(args.moves):
            decision = players.take(group)
            if decision is None:
                break
            raw = decision.reply(decision.choose(rng), f"<profile.{number}@{LOAD_DOMAIN}>")
            statements.clear()
            t_cpu, t_wall = time.thread_time(), time.perf_counter()
            if not args.no_profile:
                profile.enable()
            received = receive_inbound(svc.session_factory, raw=raw, mail_from=decision.player,
                                       recipients=[decision.reply_to], source="smtp",
                                       received_at=svc.clock.now(), queue=lambda ids: None)
            for inbound_id in received.ids:
                run_move(svc, inbound_id, queue_retry=lambda ids: None)
            if not args.no_profile:
                profile.disable()
            cpu += time.thread_time() - t_cpu
            wall += time.perf_counter() - t_wall
            done += 1
            wait = time.monotonic() + 5  # the sink's thread hands over the next decisions
            while players.waiting(group) == 0 and time.monotonic() < wait:
                time.sleep(0.0005)
        elapsed = time.perf_counter() - started
        print(f"{done} moves on {args.tables} tables ({'sqlite' if args.sqlite else 'postgresql'}, "
              f"{'default' if args.default else 'every card'}); {dict(players.kinds)}")
        if args.sql:
            print(f"the last move's {len(statements)} SQL statements:")
            for statement in statements:
                print("  " + statement)
        per = 1000 / max(done, 1)
        print(f"per move: {cpu * per:.2f} ms CPU in this thread, {wall * per:.2f} ms wall"
              f"{' (profiled: both inflated)' if not args.no_profile else ''}; "
              f"{elapsed * per:.2f} ms wall with the wait for the next decision")
        if not args.no_profile:
            stats = pstats.Stats(profile)
            if args.save:
                stats.dump_stats(args.save)
            stats.sort_stats("cumulative").print_stats(args.top)
            stats.sort_stats("tottime").print_stats(args.top)
        svc.close()
    finally:
        sink.stop()
        if postgres is not None:
            postgres.stop()


if __name__ == "__main__":
    main()
