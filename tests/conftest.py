"""Shared pytest fixtures: real servers on 127.0.0.1 and fresh databases.

Servers are session-scoped and started only when a test asks for them; each
stops at the end of the run.  Databases are per test.  Nothing is mocked.

Hypothesis profiles: ``dev`` (default) and ``ci`` (modest example counts, no
deadline: CI machines are slow and noisy).  Choose with HYPOTHESIS_PROFILE;
``./dev test`` sets ``ci``.
"""

from __future__ import annotations

import os
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


@pytest.fixture
def pg_migrated_url(postgres_server: PostgresServer, pg_template: str) -> Iterator[str]:
    """A fresh PostgreSQL database at the head migration, for one test."""
    url = postgres_server.create_database(template=pg_template)
    yield url
    postgres_server.drop_database(url.rsplit("/", 1)[1])


# --- SQLite --------------------------------------------------------------------


@pytest.fixture
def sqlite_db_url(tmp_path: Path) -> str:
    """URL of a new (empty, not migrated) SQLite file in the test's temp dir."""
    return f"sqlite:///{tmp_path / 'pbem.db'}"


@pytest.fixture
def sqlite_migrated_url(sqlite_db_url: str) -> str:
    """A new SQLite file migrated to head."""
    from pbem.db import migrate

    migrate.upgrade(sqlite_db_url)
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

