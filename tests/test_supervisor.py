"""``workers.supervisor`` with real processes standing in for Celery's (a worker's argv is only a
command line): one that keeps ending is started again until it ended ``RESTART_LIMIT`` + 1 times
within the window, then given up; stopping sends one SIGTERM to each, and a process group still
running at its deadline is killed whole.  Every wait is a loop with a deadline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.harness.waiting import wait_for
from workers.supervisor import RESTART_LIMIT, CeleryProcess, CeleryProcesses


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_process_that_keeps_ending_is_started_again_then_given_up() -> None:
    ending = CeleryProcess("worker1", python("raise SystemExit(3)"), stop_timeout_s=5, is_worker=True)
    lasting = CeleryProcess("beat", python("import time; time.sleep(600)"), stop_timeout_s=5, is_worker=False)
    processes = CeleryProcesses(os.environ, [ending, lasting])
    processes.start()
    assert lasting.process is not None
    first_beat = lasting.process.pid
    given_up: list[list[str]] = []
    wait_for(lambda: given_up.append(processes.revive()) or given_up[-1], timeout=60, interval=0.05,
             message="worker1 given up")
    assert given_up[-1] == ["worker1"]
    assert len(ending.starts) == RESTART_LIMIT + 1
    assert lasting.process.pid == first_beat and lasting.running()
    processes.terminate()
    assert processes.wait() == 0
    assert lasting.process.returncode == -15


def test_a_group_still_running_at_its_deadline_is_killed_whole(tmp_path: Path) -> None:
    """A worker that ignores SIGTERM and has started a child of its own (in its group): at its
    deadline both are killed, and the stop says a worker had to be killed (status 1)."""
    child_pid = tmp_path / "child"
    stubborn = python(
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(child_pid)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    worker = CeleryProcess("worker1", stubborn, stop_timeout_s=0.5, is_worker=True)
    processes = CeleryProcesses(os.environ, [worker])
    processes.start()
    wait_for(lambda: child_pid.exists() and child_pid.read_text(), timeout=60, message="the worker's child")
    assert worker.process is not None
    group = worker.process.pid
    assert len(running_in_group(group)) == 2, "the worker and its child, in the worker's own group"
    processes.terminate()
    assert processes.wait() == 1
    assert worker.process.returncode == -9
    wait_for(lambda: not running_in_group(group), timeout=30, message=f"nothing left of group {group}")


def running_in_group(group: int) -> list[str]:
    found = subprocess.run(["pgrep", "-g", str(group), "-a"], capture_output=True, text=True, check=False).stdout
    return [line for line in found.splitlines() if "<defunct>" not in line]  # zombies are not running
