"""A process's metrics bookkeeping at exit survives a second stop signal (``pbem.metrics``): beat
stopped by systemd gets SIGTERM from systemd and from ``pbem serve``; one arriving while its
live-gauge files are being removed must not cut that short with ``SystemExit``.

In a process of its own, with Celery's kind of handler (SIGTERM raises ``SystemExit``): the
signal is sent from inside the removal, where it used to land."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from pbem import metrics

    def stop(_signum, _frame):
        raise SystemExit(0)  # as Celery's handler of SIGTERM does

    signal.signal(signal.SIGTERM, stop)
    metrics.enable(Path(sys.argv[1]))
    metrics.process_started("beat")

    from prometheus_client import multiprocess
    remove = multiprocess.mark_process_dead

    def signalled_in_the_middle(pid, path):
        signal.raise_signal(signal.SIGTERM)  # the second signal: its handler runs before the next line
        remove(pid, path)

    multiprocess.mark_process_dead = signalled_in_the_middle
    sys.exit(0)  # the first stop: exiting runs the metrics' cleanup
""")


def test_a_second_sigterm_during_the_cleanup_at_exit_does_not_cut_it_short(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(directory)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert not list(directory.glob("gauge_live*")), "the process's live-gauge files are removed"
