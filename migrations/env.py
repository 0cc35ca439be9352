"""Alembic environment for pbem.

The database URL comes from the caller: ``pbem.db.migrate`` passes it in
``config.attributes["url"]`` (or an open connection in
``config.attributes["connection"]``); a plain ``alembic -c migrations/alembic.ini``
falls back to ``sqlalchemy.url`` and then to ``PBEM_DATABASE_URL`` via Settings.
Engines come from ``pbem.db.session.make_engine`` so SQLite gets WAL and
``BEGIN IMMEDIATE`` here too; ``render_as_batch`` lets SQLite ALTER tables.
"""

from __future__ import annotations

import os
from logging.config import fileConfig
from typing import Any

from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection

from pbem.config import Settings
from pbem.db.models import Base
from pbem.db.session import make_engine
from pbem.db.types import UTCDateTime

config = context.config
target_metadata = Base.metadata

if config.config_file_name is not None:  # only when run as `alembic -c migrations/alembic.ini`
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    return url or Settings.from_env(os.environ).database_url


def render_item(type_: str, obj: Any, autogen_context: Any) -> str | bool:
    """Write pbem's own column types as the plain SQLAlchemy types they store,
    so migration files never import application code."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def configure(**kwargs: Any) -> None:
    context.configure(
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        render_item=render_item,
        **kwargs,
    )


def run_migrations_offline() -> None:
    configure(url=database_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def run_on(connection: Connection) -> None:
    if connection.dialect.name != "sqlite":
        configure(connection=connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    # SQLite: make_engine's BEGIN makes DDL transactional, so say so (a failed
    # migration then leaves nothing half done).  Foreign keys are off while tables
    # are rebuilt by batch mode (dropping a referenced table would otherwise cascade),
    # as SQLite's ALTER TABLE guide advises, and are checked before commit.
    # The PRAGMA must run outside a transaction: on the driver connection directly.
    driver = connection.connection.driver_connection
    driver.execute("PRAGMA foreign_keys=OFF")
    try:
        configure(connection=connection, transactional_ddl=True)
        with context.begin_transaction():
            context.run_migrations()
            violations = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if violations:
                raise RuntimeError(f"migration broke foreign keys: {violations[:5]}")
    finally:
        driver.execute("PRAGMA foreign_keys=ON")


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        run_on(connection)
        return
    engine = make_engine(database_url(), poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            run_on(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
