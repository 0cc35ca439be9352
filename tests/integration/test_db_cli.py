"""``pbem db upgrade`` / ``pbem db current`` against PBEM_DATABASE_URL."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pbem.cli import main
from pbem.db import migrate


def test_db_upgrade_then_current(tmp_path: Path) -> None:
    env = {"PBEM_DATA_DIR": str(tmp_path / "var"), "PBEM_SECRET_KEY": "x"}
    url = f"sqlite:///{tmp_path / 'var' / 'pbem.db'}"
    runner = CliRunner()

    result = runner.invoke(main, ["db", "current"], env=env)
    assert result.exit_code == 0, result.output
    assert "not migrated" in result.output

    result = runner.invoke(main, ["db", "upgrade"], env=env)
    assert result.exit_code == 0, result.output
    assert migrate.current(url) == migrate.head()

    result = runner.invoke(main, ["db", "current"], env=env)
    assert result.exit_code == 0, result.output
    assert f"{migrate.head()} (up to date)" in result.output


def test_bad_configuration_is_a_clean_error(tmp_path: Path) -> None:
    env = {"PBEM_DATA_DIR": str(tmp_path), "PBEM_RELAY_TLS": "sometimes"}
    result = CliRunner().invoke(main, ["db", "current"], env=env)
    assert result.exit_code == 1
    assert "PBEM_RELAY_TLS" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_plain_postgresql_urls_use_psycopg3() -> None:
    from pbem.db.session import normalise_url

    assert normalise_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert normalise_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    assert normalise_url("sqlite:///x.db").drivername == "sqlite"
