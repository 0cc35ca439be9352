"""The database a command works on must be migrated: a clear error when it is not.

Asked of :mod:`pbem.db.revisions`, which answers without importing Alembic (a tenth of a second of
CPU a listing would otherwise pay: README, "Benchmarks", ``pbem bench cli``)."""

from __future__ import annotations

import os

import click

from pbem.config import Settings
from pbem.db import revisions

__all__ = ["require_migrated"]


def require_migrated(settings: Settings) -> None:
    """A clear error when the configured database is not migrated (a wrong directory or variable
    would otherwise quietly create an empty SQLite file and fail with a SQL error)."""
    if revisions.current(settings.database_url) != revisions.head():
        raise click.ClickException(
            f"the database {settings.database_url} is not migrated: run `pbem db upgrade`, or point "
            f"PBEM_DATABASE_URL / PBEM_DATA_DIR at the server's database (working directory: {os.getcwd()})")
