"""``pbem db``: apply and inspect the schema migrations."""

from __future__ import annotations

import click
from sqlalchemy.engine import make_url

from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.db import migrate


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


@click.group()
def db() -> None:
    """The database schema (Alembic migrations)."""


@db.command()
@click.option("--revision", default="head", show_default=True, help="Target revision.")
@pass_settings
def upgrade(settings: Settings, revision: str) -> None:
    """Migrate PBEM_DATABASE_URL up to REVISION (creating the database file if needed)."""
    url = settings.database_url
    migrate.upgrade(url, revision)
    click.echo(f"{_shown(url)}: at revision {migrate.current(url)}")


@db.command()
@pass_settings
def current(settings: Settings) -> None:
    """Print the revision PBEM_DATABASE_URL is at, and whether that is the newest."""
    revision = migrate.current(settings.database_url)
    head = migrate.head()
    state = "up to date" if revision == head else f"behind head {head}: run `pbem db upgrade`"
    click.echo(f"{_shown(settings.database_url)}: {revision or 'not migrated'} ({state})")
