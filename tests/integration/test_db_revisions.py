"""``pbem.db.revisions`` answers as Alembic does, without importing it: the newest revision of the
scripts, the revision a database is at (never migrated, part way, at the head, migrated back down to
nothing), and the command line's refusal of a database that is not at the head."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from click.testing import CliRunner
from sqlalchemy import pool

from pbem.cli import main
from pbem.db import migrate, revisions
from pbem.db.session import make_engine


def alembic_current(url: str) -> str | None:
    engine = make_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_db_url(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue("sqlite_db_url" if request.param == "sqlite" else "pg_db_url")


def test_head_is_alembics() -> None:
    scripts = ScriptDirectory.from_config(migrate.alembic_config())
    assert revisions.head() == scripts.get_current_head() == migrate.head()
    assert len(list(scripts.walk_revisions())) > 1  # read through the whole history


def test_current_is_alembics_at_every_step(empty_db_url: str) -> None:
    assert revisions.current(empty_db_url) is None
    scripts = ScriptDirectory.from_config(migrate.alembic_config())
    for script in reversed(list(scripts.walk_revisions())):
        migrate.upgrade(empty_db_url, script.revision)
        assert revisions.current(empty_db_url) == alembic_current(empty_db_url) == script.revision
    command.downgrade(migrate.alembic_config(empty_db_url), "base")
    assert alembic_current(empty_db_url) is None
    assert revisions.current(empty_db_url) is None  # the table is there, with no row


def test_asking_creates_no_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nowhere' / 'pbem.db'}"
    assert revisions.current(url) is None
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("revision", [None, "previous"])
def test_a_command_refuses_a_database_not_at_the_head(tmp_path: Path, revision: str | None) -> None:
    url = f"sqlite:///{tmp_path / 'pbem.db'}"
    if revision is not None:
        previous = ScriptDirectory.from_config(migrate.alembic_config()).get_revision(revisions.head()).down_revision
        assert isinstance(previous, str)
        migrate.upgrade(url, previous)
    env = {"PBEM_DATA_DIR": str(tmp_path), "PBEM_DATABASE_URL": url, "PBEM_SECRET_KEY": "x"}
    for args in (["game", "list"], ["mail", "list"]):
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 1, result.output
        assert f"the database {url} is not migrated: run `pbem db upgrade`" in result.output
    migrate.upgrade(url)
    assert CliRunner().invoke(main, ["game", "list"], env=env).output == "no game\n"
    assert CliRunner().invoke(main, ["mail", "list"], env=env).output == "no mail\n"
