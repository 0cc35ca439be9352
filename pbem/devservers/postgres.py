"""A throwaway PostgreSQL server for tests, started with ``initdb``/``pg_ctl``.

PostgreSQL refuses to run as root, and CI runs as root: then an unprivileged
system user (``pbemtest``, created when absent) owns the data directory and the
server runs under ``runuser``.  The server listens on 127.0.0.1 on a free port,
with its socket in its own temporary directory and trust authentication.
Durability is switched off (fsync, synchronous_commit): the data is throwaway
and tests run faster.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

from pbem.devservers.lifecycle import DevServer
from pbem.devservers.ports import free_port

TEST_USER = "pbemtest"
SUPERUSER = "postgres"


class PostgresError(RuntimeError):
    """The server could not be set up; the message carries its log."""


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise PostgresError(f"{name} not found on PATH: PostgreSQL server binaries are required")
    return path


def ensure_system_user(name: str = TEST_USER) -> pwd.struct_passwd:
    """The unprivileged user to run PostgreSQL as, created when absent (needs root)."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    result = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return pwd.getpwnam(name)  # created now, or by a concurrent run
    except KeyError:
        raise PostgresError(f"could not create user {name}: {result.stderr.strip()}") from None


class PostgresServer(DevServer):
    """One PostgreSQL cluster in a temporary directory.  Use as a context manager
    or call ``start()`` / ``stop()``."""

    def __init__(self, *, settings: dict[str, str] | None = None) -> None:
        self.settings = {
            "listen_addresses": "127.0.0.1",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "200",
        } | (settings or {})
        self.port: int | None = None
        self.base_dir: Path | None = None
        self._run_as: list[str] = []
        self._owner: pwd.struct_passwd | None = None

    # -- lifecycle -------------------------------------------------------------

    def start(self, attempts: int = 3) -> PostgresServer:
        as_root = os.geteuid() == 0
        # As root, the server user must be able to reach the directory: use /tmp
        # itself rather than a TMPDIR that may be private to root.
        self.base_dir = Path(tempfile.mkdtemp(prefix="pbem-pg-", dir="/tmp" if as_root else None))
        if as_root:
            self._owner = ensure_system_user()
            self._run_as = ["runuser", "-u", self._owner.pw_name, "--"]
            os.chown(self.base_dir, self._owner.pw_uid, self._owner.pw_gid)
            self.base_dir.chmod(0o700)
        self._run(
            _binary("initdb"), "-D", str(self.data_dir), "-U", SUPERUSER, "-A", "trust",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )
        last_log = ""
        for _ in range(attempts):
            port = free_port()
            result = self._pg_ctl_start(port)
            if result.returncode == 0:
                self.port = port
                return self
            last_log = self.log_text()
        self.stop()
        raise PostgresError(f"PostgreSQL did not start:\n{last_log}")

    def _pg_ctl_start(self, port: int) -> subprocess.CompletedProcess[str]:
        options = " ".join(
            [f"-p {port}", f"-k {self.base_dir}"]
            + [f"-c {key}={value}" for key, value in self.settings.items()]
        )
        return self._run(
            _binary("pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file),
            "-o", options, "-w", "-t", "60", "start", check=False,
        )

    # -- outages (fault injection) ---------------------------------------------

    def halt(self, mode: str = "fast") -> None:
        """Stop the server but keep its data and its port, for ``resume()``.

        ``mode`` is pg_ctl's: ``fast`` (a clean stop: sessions are ended, a shutdown
        checkpoint is written) or ``immediate`` (a crash as PostgreSQL sees one: every
        process quits at once, without a checkpoint; the next start replays the WAL)."""
        if self.base_dir is None or self.port is None:
            raise PostgresError("server not started")
        if mode not in ("fast", "immediate"):
            raise ValueError(f"unknown stop mode {mode!r}")
        self._run(_binary("pg_ctl"), "-D", str(self.data_dir), "-m", mode, "-w", "-t", "60", "stop")

    def resume(self) -> PostgresServer:
        """Start a server stopped by ``halt()`` again, on the same port and data."""
        if self.base_dir is None or self.port is None:
            raise PostgresError("server not started")
        result = self._pg_ctl_start(self.port)
        if result.returncode != 0:
            raise PostgresError(f"PostgreSQL did not start again:\n{self.log_text()}")
        return self

    def stop(self) -> None:
        if self.base_dir is None:
            return
        if self.port is not None:
            self._run(
                _binary("pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop",
                check=False,
            )
            self.port = None
        shutil.rmtree(self.base_dir, ignore_errors=True)
        self.base_dir = None


    # -- databases -------------------------------------------------------------

    def url(self, dbname: str = "postgres") -> str:
        """SQLAlchemy URL (psycopg 3) of ``dbname`` as the superuser, over TCP."""
        if self.port is None:
            raise PostgresError("server not started")
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def conninfo(self, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname={dbname}"

    def create_database(self, name: str | None = None, template: str = "template0") -> str:
        """Create a database (copied from ``template``) and return its URL."""
        name = name or f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(template)
                )
            )
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name``, disconnecting whoever is still connected."""
        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    # -- helpers ---------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        assert self.base_dir is not None
        return self.base_dir / "data"

    @property
    def log_file(self) -> Path:
        assert self.base_dir is not None
        return self.base_dir / "postgres.log"

    def log_text(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-4000:]
        except OSError as error:
            return f"(no log: {error})"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [*self._run_as, *args],
            cwd=self.base_dir,  # the server user must be able to enter its cwd
            capture_output=True,
            text=True,
            check=False,
        )
        if check and result.returncode != 0:
            raise PostgresError(
                f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
            )
        return result
