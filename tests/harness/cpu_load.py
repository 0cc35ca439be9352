"""Busy CPUs for a test: processes that spin (``while :; do :; done``) until the test stops them.

    with BusyLoops(processes=2, cpus="0"):
        ...  # the worker pinned to CPU 0 now gets a third of it

Each loop runs under ``timeout``, so even a test process killed before its ``finally`` leaves
nothing spinning for longer than ``max_seconds``; each is its own process group, stopped by its
own id.
"""

from __future__ import annotations

import os
import signal
import subprocess

from pbem.devservers.lifecycle import DevServer

__all__ = ["BusyLoops"]


class BusyLoops(DevServer):
    """``processes`` shell busy-loops, pinned to ``cpus`` (a ``taskset -c`` list) when given."""

    def __init__(self, processes: int = 1, *, cpus: str | None = None, max_seconds: int = 600) -> None:
        self.processes = processes
        self.cpus = cpus
        self.max_seconds = max_seconds
        self._running: list[subprocess.Popen[bytes]] = []

    @property
    def argv(self) -> list[str]:
        pinned = ["taskset", "-c", self.cpus] if self.cpus is not None else []
        return [*pinned, "timeout", str(self.max_seconds), "sh", "-c", "while :; do :; done"]

    def start(self) -> BusyLoops:
        for _ in range(self.processes):
            self._running.append(subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                                  start_new_session=True))
        return self

    def stop(self) -> None:
        running, self._running = self._running, []
        for process in running:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
