"""Apply and inspect the Alembic migrations, from code (tests, services) or the CLI.

The schema is only ever made here: there is no ``create_all`` anywhere. ``current`` (the revision a
database is at) is :mod:`pbem.db.revisions`' own, which reads it without importing Alembic.
Alembic is configured in code (no ini file), so this works the same from a
checkout and from an installed wheel.
"""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from pbem.db.revisions import current, sqlite_file
from pbem.resources import migrations_dir

__all__ = ["alembic_config", "current", "head", "upgrade"]


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
    file = sqlite_file(url)
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), revision)


def head() -> str:
    """The newest revision in the migration scripts."""
    head_revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head_revision is None:
        raise RuntimeError(f"no migrations found in {migrations_dir()}")
    return head_revision

