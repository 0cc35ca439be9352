"""A REAL Celery worker in a subprocess, for integration and end-to-end tests and benchmarks.

``celery -A workers.worker worker`` started with the test's settings in its
environment (``PBEM_*``; the worker builds its app from them exactly as in
production), logging to a file the test can read.  ``start()`` returns once the
worker logged "ready"; ``stop()`` asks for a warm shutdown (SIGTERM) and kills
only what it started if that does not end it.  ``pool_pids()`` gives the prefork
pool's processes, so a test can SIGKILL one in the middle of a task.  ``cpus`` pins the
worker and its pool to those CPUs (``taskset -c``, from util-linux), so a test can make them
share one busy core.

    with CeleryWorker({"PBEM_DATABASE_URL": url, "PBEM_BROKER_URL": redis_url, ...}) as worker:
        ...
        worker.wait_for_log("Task pbem.send_mail[")
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from pbem.devservers.lifecycle import DevServer
from pbem.devservers.waiting import WaitTimeout, wait_for

__all__ = ["CeleryWorker", "CeleryWorkerError", "pbem_environment"]


class CeleryWorkerError(RuntimeError):
    """The worker exited or never became ready; the message carries its log."""


def pbem_environment(settings_env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without any ``PBEM_*`` (so the developer's own
    settings never leak into a test), plus ``settings_env``."""
    base = {key: value for key, value in os.environ.items() if not key.startswith("PBEM_")}
    return base | dict(settings_env)


class CeleryWorker(DevServer):
    """One worker process (a prefork pool of ``concurrency`` children by default)."""

    def __init__(
        self,
        settings_env: Mapping[str, str],
        *,
        concurrency: int = 1,
        pool: str = "prefork",
        beat: bool = False,
        extra_args: Sequence[str] = (),
        log_dir: Path | None = None,
        cpus: str | None = None,
    ) -> None:
        self.env = pbem_environment(settings_env)
        self.concurrency = concurrency
        #: A ``taskset`` CPU list (``"0"``, ``"0,1"``); the pool's processes inherit it.
        self.cpus = cpus
        self.pool = pool
        self.beat = beat
        self.extra_args = list(extra_args)
        self.name = f"test-{uuid.uuid4().hex[:8]}"
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="pbem-celery-"))
        self.log_file = self.log_dir / f"{self.name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def argv(self) -> list[str]:
        # taskset execs the worker: its pid is the worker's own.
        pinned = ["taskset", "-c", self.cpus] if self.cpus is not None else []
        return [
            *pinned, sys.executable, "-m", "celery", "-A", "workers.worker", "worker",
            f"--pool={self.pool}", f"--concurrency={self.concurrency}",
            "--loglevel=INFO", f"--hostname={self.name}@%h",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
            *(["--beat"] if self.beat else []),
            *self.extra_args,
        ]  # fmt: skip

    # -- lifecycle -------------------------------------------------------------

    def start(self, timeout: float = 60.0) -> CeleryWorker:
        with open(self.log_file, "wb") as log:
            self.process = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.log_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group: the test's Ctrl-C does not hit it first,
                # and a last-resort kill reaches exactly the processes it started.
                start_new_session=True,
            )
        try:
            wait_for(
                lambda: self.process.poll() is not None or " ready." in self.log_text(),
                timeout=timeout,
                interval=0.1,
                message=f"celery worker {self.name} to be ready",
            )
        except WaitTimeout:
            self.stop()
            raise CeleryWorkerError(f"worker not ready in {timeout}s:\n{self.log_text()[-4000:]}")
        if self.process.poll() is not None:
            text = self.log_text()
            self.process = None
            raise CeleryWorkerError(f"worker exited at start:\n{text[-4000:]}")
        return self

    def stop(self, timeout: float = 30.0) -> int | None:
        """Warm shutdown (SIGTERM: finish running tasks), then SIGKILL of its process
        group if it lingers.  Returns the exit code."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        return process.returncode


    # -- looking inside ----------------------------------------------------------

    @property
    def pid(self) -> int:
        if self.process is None:
            raise CeleryWorkerError("worker not running")
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pool_pids(self) -> list[int]:
        """The worker's child processes (the prefork pool; with ``beat``, beat too)."""
        children: list[int] = []
        task_dir = Path(f"/proc/{self.pid}/task")
        for task in task_dir.iterdir():
            try:
                text = (task / "children").read_text()
            except FileNotFoundError:  # the thread ended meanwhile
                continue
            children.extend(int(pid) for pid in text.split())
        return sorted(set(children))

    def log_text(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def wait_for_log(self, text: str, timeout: float = 30.0, count: int = 1) -> str:
        """Wait until ``text`` appeared ``count`` times in the worker's log."""
        return wait_for(
            lambda: self.log_text() if self.log_text().count(text) >= count else "",
            timeout=timeout,
            interval=0.05,
            message=f"{text!r} x{count} in the log of {self.name}",
        )
