"""Apply and inspect the Alembic migrations, from code (tests, services) or the CLI.

The schema is only ever made here: there is no ``create_all`` anywhere.
Alembic is configured in code (no ini file), so this works the same from a
checkout and from an installed wheel.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import pool
from sqlalchemy.engine import make_url

from pbem.db.session import make_engine
from pbem.resources import migrations_dir


def alembic_config(url: str | None = None) -> Config:
    """An Alembic ``Config`` pointing at pbem's migrations and, if given, ``url``."""
    config = Config()
    # configparser interpolates "%": escape it in the path.
    config.set_main_option("script_location", str(migrations_dir()).replace("%", "%%"))
    # The URL travels as an attribute, not an option, so "%" in passwords is safe.
    config.attributes["url"] = url
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at ``url`` up to ``revision`` (default: the newest).
    A SQLite file and its directory are created when missing."""
    sqlite_file = _sqlite_file(url)
    if sqlite_file is not None:
        sqlite_file.parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), revision)


def current(url: str) -> str | None:
    """The revision the database at ``url`` is at (None when never migrated).

    Asking never creates a database: a SQLite file that does not exist is simply
    not migrated yet.
    """
    sqlite_file = _sqlite_file(url)
    if sqlite_file is not None and not sqlite_file.exists():
        return None
    engine = make_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def head() -> str:
    """The newest revision in the migration scripts."""
    head_revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head_revision is None:
        raise RuntimeError(f"no migrations found in {migrations_dir()}")
    return head_revision


def _sqlite_file(url: str) -> Path | None:
    """The file of a file-backed SQLite URL, else None."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)
