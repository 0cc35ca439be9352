"""Where the SMTP front's CPU per received mail goes: ``python -m pbem.bench.front_profile``.

Starts a throwaway PostgreSQL (durable, as ``pbem bench e2e`` runs it; or an SQLite file with
``--sqlite``) and Redis, then the real front, and sends ``--mails`` replies of the size
``pbem bench e2e``'s players write (a card on top, 40 quoted lines) from a client process of its
own, on ``--connections`` persistent SMTP connections, paced at ``--rate`` mails a second (0: as
fast as they go).  No worker runs: the tasks stay in Redis.

- By default the front is ``pbem smtp`` itself, a child process, and its CPU is read from
  ``/proc`` before and after each round: what ``pbem bench e2e`` charges to "smtp".
- ``--in-process`` builds the front here as ``pbem smtp`` does and reads ``time.process_time``;
  with ``--profile`` every thread of it runs under ``cProfile`` (wall times per thread, so the
  threads' waits show, e.g. ``SimpleQueue.get``; its overhead inflates small functions: read
  the shares of pbem's and the libraries' functions, not milliseconds).
- ``--spy`` samples the front with py-spy during the first round and prints the share of
  samples per area and function (``pbem.bench.spy``).

Prints CPU milliseconds per mail for each of ``--rounds`` rounds.  Paced mail costs two to three
times what a tight loop does (each mail finds the caches cold): compare runs at the same rate,
repeat them, and prefer CPU to wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import logging
import os
import pstats
import signal
import smtplib
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from pbem.bench import spy
from pbem.bench.front_client import DOMAIN, reply
from pbem.bench.procstat import cpu_seconds
from pbem.cli.run import LOG_FORMAT
from pbem.config import Settings
from pbem.db import migrate
from pbem.devservers.celery_worker import pbem_environment
from pbem.devservers.ports import free_port
from pbem.devservers.postgres import PostgresServer
from pbem.devservers.redis_server import RedisServer
from pbem.devservers.waiting import wait_for
from pbem.services.app import Services
from pbem.smtp.server import SmtpFront
from workers import make_celery
from workers.queueing import InboundQueue

__all__ = ["main", "reply"]

def _send(port: int, mails: int, args: argparse.Namespace, run: str) -> float:
    """Run the client process (:mod:`pbem.bench.front_client`, light to start); its wall time."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "pbem.bench.front_client", str(port),
                    "--mails", str(mails), "--connections", str(args.connections),
                    "--rate", str(args.rate), "--run", run], check=True)
    return time.monotonic() - started


class _ThreadProfiles:
    """One ``cProfile.Profile`` per thread started after ``install``."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _start_here(self, *_args: object) -> None:
        profile = cProfile.Profile()
        with self._lock:
            self.profiles.append(profile)
        profile.enable()  # replaces this hook in the new thread

    def install(self) -> None:
        threading.setprofile(self._start_here)

    def stats(self) -> pstats.Stats:
        threading.setprofile(None)
        with self._lock:
            profiles = list(self.profiles)
        stats = pstats.Stats(profiles[0], stream=io.StringIO())
        for profile in profiles[1:]:
            stats.add(profile)
        return stats


def _spy_start(pid: int, output: Path) -> subprocess.Popen[bytes] | None:
    binary = Path(sys.executable).parent / "py-spy"
    if not binary.exists():
        print("  (py-spy is not installed: no sampling profile)")
        return None
    process = subprocess.Popen(
        [str(binary), "record", "--pid", str(pid), "--rate", "500", "--format", "raw", "--nonblocking",
         "--gil", "--full-filenames", "--output", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # attached
    return process


def _spy_report(process: subprocess.Popen[bytes], output: Path, top: int) -> None:
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    if not output.exists():
        print("  (py-spy recorded nothing)")
        return
    summary = spy.summarise([output], top=top)
    print(f"py-spy: {summary.samples} samples holding the GIL ({output})")
    print("  own:       " + ", ".join(f"{area} {share:.0%}" for area, share in summary.own))
    inclusive = sorted(summary.inclusive.items(), key=lambda item: -item[1])[:top]
    print("  on stack:  " + ", ".join(f"{area} {share:.0%}" for area, share in inclusive))
    for function, share in summary.functions:
        print(f"  {share:6.1%}  {function}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mails", type=int, default=2000, help="mails a round")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--rate", type=float, default=100.0, help="mails a second (0: as fast as it goes)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sqlite", action="store_true", help="an SQLite file instead of PostgreSQL")
    parser.add_argument("--in-process", action="store_true", help="run the front in this process")
    parser.add_argument("--profile", action="store_true", help="cProfile every thread (implies --in-process)")
    parser.add_argument("--spy", action="store_true", help="py-spy the front during the first round")
    parser.add_argument("--idle", type=float, default=0.0, help="also measure this many seconds of idle CPU")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="pbem-front-profile-"))
    postgres = None
    if args.sqlite:
        url = f"sqlite:///{base / 'pbem.db'}"
    else:
        postgres = PostgresServer(settings={"fsync": "on", "synchronous_commit": "on",
                                            "full_page_writes": "on"}).start()
        url = postgres.create_database("pbem_front")
    migrate.upgrade(url)
    redis = RedisServer().start()
    port = free_port()
    env = {
        "PBEM_DATABASE_URL": url, "PBEM_BROKER_URL": redis.url, "PBEM_DATA_DIR": str(base / "data"),
        "PBEM_MAIL_DOMAIN": DOMAIN, "PBEM_SECRET_KEY": "front-profile", "PBEM_SMTP_LISTEN": f"127.0.0.1:{port}",
    }
    (base / "data").mkdir()
    in_process = args.in_process or args.profile
    front = child = svc = queue = None
    profiles = _ThreadProfiles() if args.profile else None

    def listening() -> bool:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=2) as probe:
                return probe.noop()[0] == 250
        except OSError:
            return False

    try:
        if in_process:
            # As pbem smtp logs (pbem.cli.run), into a file.
            logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, filename=str(base / "smtp.log"))
            logging.getLogger("mail.log").setLevel(logging.WARNING)
            if profiles is not None:
                profiles.install()
            settings = Settings.from_env(env)
            svc = Services.from_settings(settings)  # as pbem smtp builds the front (pbem.cli.run.smtp)
            queue = InboundQueue(make_celery(settings))
            front = SmtpFront(settings, session_factory=svc.session_factory, queue=queue,
                              clock=svc.clock.now).start()
            front_pid = os.getpid()
        else:
            with open(base / "smtp.log", "wb") as log:
                child = subprocess.Popen(
                    [sys.executable, "-c", "from pbem.cli import main; main()", "smtp"],
                    env=pbem_environment(env), cwd=base, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True)
            front_pid = child.pid
        wait_for(listening, timeout=60, message="the SMTP front to listen")

        def cpu() -> float:
            if in_process:
                return time.process_time()
            seconds = cpu_seconds(front_pid)
            assert seconds is not None, "pbem smtp exited"
            return seconds

        print(f"front: {'in this process' if in_process else 'pbem smtp, pid ' + str(front_pid)}; "
              f"{'SQLite' if args.sqlite else 'PostgreSQL (durable)'}, Redis; {args.connections} connections, "
              f"{f'{args.rate:g} mails/s' if args.rate else 'unpaced'}")
        _send(port, 50, args, "warmup")
        if args.idle:
            before = cpu()
            time.sleep(args.idle)
            print(f"idle: {(cpu() - before) / args.idle * 1000:.2f} ms CPU a second")
        for number in range(args.rounds):
            recording = None
            if args.spy and number == 0:
                recording = _spy_start(front_pid, base / "py-spy.txt")
            before = cpu()
            wall = _send(port, args.mails, args, f"round{number}")
            used = cpu() - before
            print(f"round {number}: {used / args.mails * 1000:.3f} ms CPU per mail "
                  f"({args.mails} mails in {wall:.1f} s)", flush=True)
            if recording is not None:
                _spy_report(recording, base / "py-spy.txt", args.top)
        if profiles is not None:
            stats = profiles.stats()
            for order in ("cumulative", "tottime"):
                out = io.StringIO()
                stats.stream = out  # type: ignore[attr-defined]
                stats.sort_stats(order).print_stats(args.top)
                print(out.getvalue())
    finally:
        if front is not None:
            front.stop()
        if queue is not None:
            queue.close()
        if svc is not None:
            svc.close()
        if child is not None:
            child.terminate()
            child.wait(timeout=20)
        redis.stop()
        if postgres is not None:
            postgres.stop()


if __name__ == "__main__":
    main()
