"""Where a database stands against pbem's migrations, answered without importing Alembic.

Importing any part of Alembic loads its runtime, and with it the DDL implementations of every
database it knows and SQLAlchemy's dialects for them (MSSQL, MySQL, Oracle): about a tenth of a
second of CPU that a command which only reads rows should not pay (README, "Benchmarks": ``pbem
bench cli``). So the command line's check that a database is migrated reads Alembic's version table
itself (:func:`current`) and the revision lines of the migration scripts (:func:`head`), as Alembic
writes and reads them; ``tests/integration/test_db_revisions.py`` checks both against Alembic's own
answers (:mod:`pbem.db.migrate`, which applies the migrations).
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import inspect, pool, text
from sqlalchemy.engine import make_url

from pbem.db.session import make_engine
from pbem.resources import migrations_dir

__all__ = ["VERSION_TABLE", "current", "head", "sqlite_file"]

#: Alembic's table of the revision a database is at (its default name: ``migrations/env.py`` keeps it).
VERSION_TABLE = "alembic_version"

# ``revision: str = "0009"`` and ``down_revision: str | Sequence[str] | None = "0008"`` (or None, or a
# tuple of revisions for a merge), as Alembic's script template writes them.
_ASSIGNMENT = re.compile(r"^(revision|down_revision)\b[^=\n]*=\s*(.*)$", re.MULTILINE)
_QUOTED = re.compile(r"""["']([^"']+)["']""")


def current(url: str) -> str | None:
    """The revision the database at ``url`` is at (None when never migrated, or migrated down to
    nothing), as Alembic's ``MigrationContext.get_current_revision`` answers it.

    Asking never creates a database: a SQLite file that does not exist is simply not migrated yet.
    """
    file = sqlite_file(url)
    if file is not None and not file.exists():
        return None
    engine = make_engine(url, poolclass=pool.NullPool, sqlite_begin="DEFERRED")
    try:
        with engine.connect() as connection:
            if not inspect(connection).has_table(VERSION_TABLE):
                return None
            versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    finally:
        engine.dispose()
    if len(versions) > 1:  # Alembic refuses the same way: pbem's migrations have one line of history
        raise RuntimeError(f"{VERSION_TABLE} names more than one revision: {', '.join(sorted(versions))}")
    return versions[0] if versions else None


def head() -> str:
    """The newest revision of the migration scripts (``migrations/versions/``): the one no other
    script names as its ``down_revision``."""
    revisions: set[str] = set()
    replaced: set[str] = set()
    for script in sorted((migrations_dir() / "versions").glob("*.py")):
        if script.name.startswith(("_", ".#")):  # as Alembic skips them: __init__, editors' lock files
            continue
        for name, value in _ASSIGNMENT.findall(script.read_text(encoding="utf-8")):
            (revisions if name == "revision" else replaced).update(_QUOTED.findall(value))
    heads = sorted(revisions - replaced)
    if len(heads) != 1:
        raise RuntimeError(f"the migrations in {migrations_dir()} have {len(heads)} heads, not one: {heads}")
    return heads[0]


def sqlite_file(url: str) -> Path | None:
    """The file of a file-backed SQLite URL, else None."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)
