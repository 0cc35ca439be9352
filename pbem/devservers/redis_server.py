"""A throwaway Redis server (tests, benchmarks): no persistence, 127.0.0.1 only."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import redis

from pbem.devservers.lifecycle import DevServer
from pbem.devservers.ports import free_port
from pbem.devservers.waiting import WaitTimeout, wait_for


class RedisServerError(RuntimeError):
    """redis-server is missing or would not start."""


class RedisServer(DevServer):
    """``redis-server --port N --save "" --appendonly no --bind 127.0.0.1``."""

    def __init__(self) -> None:
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.base_dir: Path | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise RedisServerError("server not started")
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, attempts: int = 3) -> RedisServer:
        binary = shutil.which("redis-server")
        if binary is None:
            # Never skip: a missing server must fail the run (./dev test installs it).
            raise RedisServerError("redis-server not found on PATH (apt-get install redis-server)")
        self.base_dir = Path(tempfile.mkdtemp(prefix="pbem-redis-"))
        for _ in range(attempts):
            port = free_port()
            if self._launch(binary, port):
                self.port = port
                return self
        text = self._log_text()
        self.stop()
        raise RedisServerError(f"redis-server did not start:\n{text[-2000:]}")

    def _launch(self, binary: str, port: int) -> bool:
        """Start redis-server on ``port``; whether it answers PING (False: it exited)."""
        assert self.base_dir is not None
        self.process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.base_dir), "--logfile", str(self.base_dir / "redis.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
        try:
            wait_for(
                lambda: self.process.poll() is not None or _pings(client),
                timeout=20,
                message="redis-server to answer PING",
            )
        except WaitTimeout:
            self.stop()
            raise
        finally:
            client.close()
        return self.process.poll() is None

    def _log_text(self) -> str:
        log = self.base_dir / "redis.log" if self.base_dir is not None else None
        return log.read_text(errors="replace") if log is not None and log.exists() else ""

    # -- outages (fault injection) ---------------------------------------------

    def halt(self, *, kill: bool = False) -> None:
        """Stop the server (SIGTERM, or SIGKILL with ``kill``) but keep its port for ``resume()``.
        Nothing is persisted: what it held (queued and unacknowledged tasks) is gone, as after
        any restart of a Redis without persistence."""
        if self.process is None or self.port is None:
            raise RedisServerError("server not started")
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        self.process.wait(timeout=30)

    def resume(self) -> RedisServer:
        """Start a server stopped by ``halt()`` again, empty, on the same port."""
        binary = shutil.which("redis-server")
        if binary is None or self.port is None:
            raise RedisServerError("server not started, or redis-server not found")
        for _ in range(10):  # the port may linger for a moment after the old process ended
            if self._launch(binary, self.port):
                return self
        raise RedisServerError(f"redis-server did not start again:\n{self._log_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        self.port = None
        if self.base_dir is not None:
            shutil.rmtree(self.base_dir, ignore_errors=True)
            self.base_dir = None



def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False
