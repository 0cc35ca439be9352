"""The Celery processes of ``pbem serve``: its workers and beat, started, started again, stopped.

**Several solo workers, not one prefork worker.**  The embedded broker (``workers.embedded_broker``)
is not asynchronous, so a prefork worker on it runs billiard's blocking pool, whose pool processes
take their tasks from one queue guarded by one lock shared between them.  An idle pool process waits
for a task *holding* that lock: killed then (the out-of-memory killer, a ``kill -9``, a crash in C
code), it never releases it, every other pool process blocks on it for ever, the worker takes no
more tasks and cannot even stop (billiard's ``_help_stuff_finish`` waits on the same lock).  So
serve runs ``--concurrency`` workers of the ``solo`` pool instead, one process each, that share no
lock: each is a consumer of the broker of its own, running its tasks in its own main thread, and the
SQLite files' locks die with a process that held them.  Production (Redis) runs a prefork worker
on Celery's asynchronous pool, which gives each pool process queues of its own and is not affected.
The solo pool does not enforce the time limits the prefork pool does; ``workers.time_limits`` does
it in these processes.  Both sides of a move (pickup from the broker, the hand-over) are measured by
``pbem bench serve`` (README, "Benchmarks").

**A process that dies is started again.**  A worker or beat that exits while serve runs is started
again at once (logged with how it ended); one that ended ``RESTART_LIMIT`` times within
``RESTART_WINDOW_S`` is given up, and serve stops (status 1) rather than keep accepting mail nobody
processes.  A worker killed in the middle of a task lost it with its process; the sweep queues its
mail again (README, "Reliability").

**Stopping.**  Each process leads a process group of its own (``process_group=0``), so a signal to
serve's group (a terminal's Ctrl-C, ``kill -TERM -PGID``) reaches serve alone, and serve sends one
SIGTERM to each main process: a worker finishes its running task (Celery's warm shutdown) and
exits.  Whatever of a group still runs at its deadline, counted from that SIGTERM, is killed
(``killpg``): beat after ``BEAT_STOP_TIMEOUT_S`` (it holds no work: its schedule is timestamps), a
worker at ``STOP_TIMEOUT_S``, after SIGUSR1, on which Celery logs where each of its threads was.  A
signal sent to every process at once (systemd's default ``KillMode=control-group``) reaches each
process twice; the second is harmless (``pbem.metrics`` ends its bookkeeping with signals blocked).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

__all__ = [
    "BEAT_STOP_TIMEOUT_S",
    "RESTART_LIMIT",
    "RESTART_WINDOW_S",
    "ROOT_WARNING",
    "STOP_TIMEOUT_S",
    "CeleryProcess",
    "CeleryProcesses",
    "beat_argv",
    "worker_argv",
]

log = logging.getLogger("pbem.serve")

#: Seconds from the stop signal until a worker still running is killed (beat: sooner).
STOP_TIMEOUT_S = 15.0
BEAT_STOP_TIMEOUT_S = 5.0
#: Seconds a worker about to be killed gets to log its threads' stacks (SIGUSR1) first.
STACKS_WAIT_S = 1.0
#: A process that ended this many times within the window is given up (serve stops).
RESTART_LIMIT = 3
RESTART_WINDOW_S = 60.0
#: The start of Celery's warning for a worker run as root (``celery.platforms.ROOT_DISCOURAGED``).
ROOT_WARNING = "You're running the worker with superuser privileges"


def worker_argv(name: str, *, quiet_root: bool = False) -> list[str]:
    """The command line of a Celery worker of the solo pool named ``name`` running pbem's app from
    the environment.  ``quiet_root``: without Celery's SecurityWarning for a worker run as root
    (serve's workers accept only JSON; production runs workers as an unprivileged user)."""
    warnings = ["-W", f"ignore:{ROOT_WARNING}:UserWarning"] if quiet_root else []
    return [
        sys.executable, *warnings, "-m", "celery", "-A", "workers.worker", "worker",
        "--pool=solo", "--concurrency=1", f"--hostname={name}@%h", "--loglevel=INFO",
        # No remote-control chatter between workers: the embedded broker has no fanout for it.
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip


def beat_argv() -> list[str]:
    """The command line of Celery beat for pbem's app (its schedule file in the data dir)."""
    return [sys.executable, "-m", "celery", "-A", "workers.worker", "beat", "--loglevel=INFO"]


@dataclass
class CeleryProcess:
    """One process serve runs (a worker or beat), the leader of its own process group."""

    name: str
    argv: list[str]
    stop_timeout_s: float
    is_worker: bool
    process: subprocess.Popen[bytes] | None = None
    starts: deque[float] = field(default_factory=deque)

    def start(self, env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen(self.argv, env=env, stdin=subprocess.DEVNULL, process_group=0)
        self.starts.append(time.monotonic())

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ended_too_often(self) -> bool:
        """Whether it started ``RESTART_LIMIT`` + 1 times within the window (so ended that often)."""
        while self.starts and self.starts[0] < time.monotonic() - RESTART_WINDOW_S:
            self.starts.popleft()
        return len(self.starts) > RESTART_LIMIT


def _how_it_ended(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited (status {returncode})"


class CeleryProcesses:
    """Serve's workers and beat: started, watched (``revive``), stopped (``terminate``, ``wait``)."""

    def __init__(self, env: Mapping[str, str], members: list[CeleryProcess]) -> None:
        self.env = dict(env)
        self.members = members
        self._terminated_at: float | None = None

    @classmethod
    def for_serve(cls, env: Mapping[str, str], *, workers: int, quiet_root: bool = False) -> CeleryProcesses:
        """``workers`` workers of the solo pool and beat, run with ``env``."""
        return cls(env, [
            *(CeleryProcess(f"worker{i}", worker_argv(f"worker{i}", quiet_root=quiet_root), STOP_TIMEOUT_S, True)
              for i in range(1, workers + 1)),
            CeleryProcess("beat", beat_argv(), BEAT_STOP_TIMEOUT_S, False),
        ])  # fmt: skip

    def start(self) -> None:
        for member in self.members:
            member.start(self.env)

    def pids(self, *, workers: bool) -> list[int]:
        return [m.process.pid for m in self._started() if m.is_worker is workers]

    def _started(self) -> Iterator[CeleryProcess]:
        return (m for m in self.members if m.process is not None)

    def revive(self) -> list[str]:
        """Start again each process that ended; the names of those that ended too often, which are
        left ended (serve then stops)."""
        given_up = []
        for member in self._started():
            assert member.process is not None
            if member.process.poll() is None:
                continue
            ended = _how_it_ended(member.process.returncode)
            if member.ended_too_often():
                log.error("the Celery %s (pid %s) %s, its %s end within %.0f s: giving up", member.name,
                          member.process.pid, ended, RESTART_LIMIT + 1, RESTART_WINDOW_S)
                given_up.append(member.name)
                continue
            old_pid = member.process.pid
            member.start(self.env)
            log.warning("the Celery %s (pid %s) %s: started again (pid %s)", member.name, old_pid, ended,
                        member.process.pid)
        return given_up

    def terminate(self) -> None:
        """SIGTERM to each main process still running (a worker's warm shutdown)."""
        self._terminated_at = time.monotonic()
        for member in self._started():
            if member.running():
                assert member.process is not None
                member.process.send_signal(signal.SIGTERM)

    def wait(self) -> int:
        """Wait for every process to end after ``terminate``; kill each group still running at its
        deadline.  1 if a worker had to be killed, else 0."""
        start = self._terminated_at if self._terminated_at is not None else time.monotonic()
        status = 0
        for member in sorted(self._started(), key=lambda m: m.stop_timeout_s):  # the shortest deadline first
            process = member.process
            assert process is not None
            try:
                process.wait(timeout=max(start + member.stop_timeout_s - time.monotonic(), 0.1))
                continue
            except subprocess.TimeoutExpired:
                pass
            if member.is_worker:
                log.warning("the Celery %s did not stop in %ss: killing it", member.name, member.stop_timeout_s)
                status = 1
                process.send_signal(signal.SIGUSR1)  # Celery logs every thread's stack: why it hung
                try:
                    process.wait(timeout=STACKS_WAIT_S)
                except subprocess.TimeoutExpired:
                    pass
            else:
                log.warning("Celery %s did not stop in %ss: killed (it holds no work)", member.name,
                            member.stop_timeout_s)
            _kill_group(process)
        return status


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the process group ``process`` leads (it is not reaped yet, so the group is its)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
