"""Shared pytest fixtures: real servers on 127.0.0.1 and fresh databases.

Servers are session-scoped and started only when a test asks for them; each
stops at the end of the run.  Databases are per test: each test's migrated
database is a copy of one migrated once per run (PostgreSQL's ``CREATE DATABASE
... TEMPLATE``, copied up to four ahead of the tests that ask for one by a thread,
and dropped after its test by another; a SQLite file copied from a migrated one).
Nothing is mocked.

Hypothesis profiles: ``dev`` (default) and ``ci`` (modest example counts, no
deadline: CI machines are slow and noisy).  Choose with HYPOTHESIS_PROFILE;
``./dev test`` sets ``ci``.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

# Server harnesses and Alembic are imported by the fixtures that need them, so a
# run of pure unit tests does not pay for them.
if TYPE_CHECKING:
    from tests.harness.postgres import PostgresServer
    from tests.harness.redis_server import RedisServer
    from tests.harness.smtp_sink import SmtpSink

settings.register_profile("dev")
settings.register_profile(
    "ci",
    max_examples=50,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


# --- PostgreSQL ----------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL cluster for the whole run."""
    from tests.harness.postgres import PostgresServer

    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """URL of the server's maintenance database (``postgres``)."""
    return postgres_server.url()


@pytest.fixture
def pg_db_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test (not migrated)."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url.rsplit("/", 1)[1])


@pytest.fixture(scope="session")
def pg_template(postgres_server: PostgresServer) -> str:
    """Name of a database migrated to head once, copied for each test that needs
    a migrated database (copying is much cheaper than migrating)."""
    from pbem.db import migrate

    name = "pbem_migrated_template"
    migrate.upgrade(postgres_server.create_database(name))
    return name


class DatabasesAhead:
    """Copies of the migrated template made by a thread, at most ``depth`` ahead of the tests
    that take them: a copy takes a tenth of a second or more of the server's time, which then
    overlaps the test before.  Every copy is a fresh database that nobody has connected to (the
    template never changes after it is migrated); those not taken are dropped by ``close``.
    If the thread fails, ``take`` raises its error once and copies in the caller after that.

    A database given back (``give_back``, once its test is over) is dropped by a second thread,
    with whoever is still connected to it; ``close`` waits for every drop and raises the first
    that failed."""

    def __init__(self, server: PostgresServer, template: str, depth: int = 4) -> None:
        self.server, self.template = server, template
        self._ready: queue.Queue[str | BaseException] = queue.Queue()
        self._slots = threading.Semaphore(depth)
        self._closing = False
        self._failed = False
        self._thread = threading.Thread(target=self._run, name="pg-databases-ahead", daemon=True)
        self._thread.start()
        self._drops: queue.Queue[str | None] = queue.Queue()
        self._drop_errors: list[BaseException] = []
        self._dropper = threading.Thread(target=self._drop_each, name="pg-databases-dropped", daemon=True)
        self._dropper.start()

    def _run(self) -> None:
        while True:
            self._slots.acquire()
            if self._closing:
                return
            try:
                self._ready.put(self.server.create_database(template=self.template))
            except BaseException as error:  # noqa: BLE001 (handed to the next test, which fails with it)
                self._ready.put(error)
                return

    def _drop_each(self) -> None:
        while (url := self._drops.get()) is not None:
            try:
                self.server.drop_database(url.rsplit("/", 1)[1])
            except BaseException as error:  # noqa: BLE001 (raised by close)
                self._drop_errors.append(error)

    def give_back(self, url: str) -> None:
        self._drops.put(url)

    def take(self) -> str:
        if self._failed:
            return self.server.create_database(template=self.template)
        item = self._ready.get(timeout=300)
        if isinstance(item, BaseException):
            self._failed = True
            raise item
        self._slots.release()
        return item

    def close(self) -> None:
        self._closing = True
        self._slots.release()
        self._thread.join(timeout=120)
        while not self._ready.empty():
            item = self._ready.get_nowait()
            if isinstance(item, str):
                self._drops.put(item)
        self._drops.put(None)
        self._dropper.join(timeout=300)
        if self._drop_errors:
            raise self._drop_errors[0]


@pytest.fixture(scope="session")
def pg_databases_ahead(postgres_server: PostgresServer, pg_template: str) -> Iterator[DatabasesAhead]:
    ahead = DatabasesAhead(postgres_server, pg_template)
    yield ahead
    ahead.close()


@pytest.fixture
def pg_migrated_url(pg_databases_ahead: DatabasesAhead) -> Iterator[str]:
    """A fresh PostgreSQL database at the head migration, for one test."""
    url = pg_databases_ahead.take()
    yield url
    pg_databases_ahead.give_back(url)


# --- SQLite --------------------------------------------------------------------


@pytest.fixture
def sqlite_db_url(tmp_path: Path) -> str:
    """URL of a new (empty, not migrated) SQLite file in the test's temp dir."""
    return f"sqlite:///{tmp_path / 'pbem.db'}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per run, copied for each test that needs one."""
    from pbem.db import migrate

    path = tmp_path_factory.mktemp("sqlite-template") / "pbem.db"
    migrate.upgrade(f"sqlite:///{path}")
    # Alembic's connections are closed: the write-ahead log is folded into the file and gone, so
    # the file alone is the whole database.
    assert not path.with_name(path.name + "-wal").exists()
    return path


@pytest.fixture
def sqlite_migrated_url(sqlite_db_url: str, sqlite_template: Path) -> str:
    """A new SQLite file migrated to head (a copy of ``sqlite_template``)."""
    shutil.copyfile(sqlite_template, sqlite_db_url.removeprefix("sqlite:///"))
    return sqlite_db_url


# --- both ----------------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> str:
    """A fresh database migrated to head; tests using it run on SQLite and PostgreSQL."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_migrated_url")
    return request.getfixturevalue("pg_migrated_url")


# --- Redis and SMTP --------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    from tests.harness.redis_server import RedisServer

    with RedisServer() as server:
        yield server


@pytest.fixture(scope="session")
def redis_url(redis_server: RedisServer) -> str:
    """URL of a Redis server started for this run (fails loudly if redis-server is missing)."""
    return redis_server.url


@pytest.fixture(scope="session")
def smtp_sink() -> Iterator[SmtpSink]:
    """An SMTP server on 127.0.0.1 capturing every message (``.messages``,
    ``.wait_for_messages(n)``, ``.wait_for_message(predicate)``, ``.clear()``).
    Shared by the run: clear it, or match on recipients, in each test."""
    from tests.harness.smtp_sink import SmtpSink

    with SmtpSink() as sink:
        yield sink

