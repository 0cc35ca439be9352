"""How long ``pbem serve`` takes to stop: ``python -m pbem.bench.serve_stops``.

It starts ``pbem serve`` as a user does (one data directory for every start, free 127.0.0.1 ports,
the dev mailbox), waits for every worker to say it is ready, mails a "new game" (so a task is in
flight), and right after the 250 sends SIGTERM: to serve's process group (``kill -- -PGID``), to
every process group of serve at once (systemd's ``KillMode=control-group``), or to serve's PID
(``docker stop``), in turn.  For each kind it prints the seconds from the signal until serve exited
(min, median, max) and how many stops needed the kill (serve's log says "killing it").  The tests
only check that each stop ends within the deadline (``tests/e2e/test_serve_lifecycle.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import smtplib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pbem.bench.procstat import descendants
from pbem.devservers import free_port, wait_for
from pbem.devservers.celery_worker import pbem_environment

__all__ = ["KINDS", "run"]

DOMAIN = "hearts.test"
#: How each stop signals serve: which process groups, or its PID alone.
KINDS = ("group", "every group", "pid")


def _stop(process: subprocess.Popen[bytes], kind: str) -> None:
    if kind == "pid":
        process.send_signal(signal.SIGTERM)
        return
    groups = {process.pid}
    if kind == "every group":
        groups |= {os.getpgid(pid) for pid in descendants(process.pid)}
    for group in groups:
        os.killpg(group, signal.SIGTERM)


def one_stop(base: Path, run: int, kind: str, workers: int) -> tuple[float, bool]:
    """Start serve, mail it, signal it; (seconds until it exited, whether a process was killed)."""
    smtp_port, web_port = free_port(), free_port()
    env = pbem_environment({"PBEM_DATA_DIR": str(base / "data"), "PBEM_MAIL_DOMAIN": DOMAIN,
                            "PBEM_SMTP_LISTEN": f"127.0.0.1:{smtp_port}",
                            "PBEM_WEB_LISTEN": f"127.0.0.1:{web_port}"})
    log_file = base / f"serve-{run}.log"
    with open(log_file, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", "from pbem.cli import main; main()", "serve", f"--concurrency={workers}"],
            env=env, cwd=base, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)  # fmt: skip
    try:
        wait_for(lambda: log_file.read_text(errors="replace").count(" ready.") >= workers, timeout=300,
                 interval=0.1, message="pbem serve's workers ready")
        raw = (f"From: p{run}@a.test\r\nTo: new@{DOMAIN}\r\nSubject: Hearts?\r\nMessage-ID: <stop-{run}@a.test>"
               "\r\n\r\nnew game\r\nbots: 3\r\n").encode()
        with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as client:
            client.sendmail(f"p{run}@a.test", [f"new@{DOMAIN}"], raw)
        signalled = time.monotonic()
        _stop(process, kind)
        process.wait(timeout=120)
        return time.monotonic() - signalled, "killing it" in log_file.read_text(errors="replace")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def run(*, stops: int = 5, workers: int = 2, echo: Callable[[str], None] = print) -> None:
    base = Path(tempfile.mkdtemp(prefix="pbem-bench-stops-"))
    seconds: dict[str, list[float]] = {kind: [] for kind in KINDS}
    killed = dict.fromkeys(KINDS, 0)
    try:
        for number in range(stops * len(KINDS)):
            kind = KINDS[number % len(KINDS)]
            took, was_killed = one_stop(base, number, kind, workers)
            seconds[kind].append(took)
            killed[kind] += was_killed
    finally:
        shutil.rmtree(base, ignore_errors=True)
    echo(f"pbem serve --concurrency={workers}: SIGTERM right after a mail was accepted, to")
    echo(f"  {'':<14}{'stops':>6}{'min s':>8}{'median':>8}{'max s':>8}{'killed':>8}")
    for kind in KINDS:
        values = seconds[kind]
        echo(f"  {kind:<14}{len(values):6d}{min(values):8.2f}{statistics.median(values):8.2f}"
             f"{max(values):8.2f}{killed[kind]:8d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stops", type=int, default=5, help="stops of each kind")
    parser.add_argument("--concurrency", type=int, default=2, help="pbem serve --concurrency")
    options = parser.parse_args()
    run(stops=options.stops, workers=options.concurrency)


if __name__ == "__main__":
    main()
