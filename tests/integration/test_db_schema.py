"""The schema: made by the migrations, identical to the models, on both databases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, pool, select
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import Session

from pbem.db import migrate
from pbem.db.models import Base, Game, GameStatus, InboundMessage, InboundSource, Player, Seat, SeatStatus
from pbem.db.session import make_engine, make_session_factory, transaction

EXPECTED_TABLES = {
    "players",
    "games",
    "seats",
    "moves",
    "inbound_messages",
    "outbound_messages",
    "invitations",
    "webhook_nonces",
}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def empty_db_url(request: pytest.FixtureRequest) -> str:
    """A database that has never been migrated, on each backend."""
    name = "sqlite_db_url" if request.param == "sqlite" else "pg_db_url"
    return request.getfixturevalue(name)


def test_upgrade_from_empty_reaches_head_and_makes_every_table(empty_db_url: str) -> None:
    assert migrate.current(empty_db_url) is None

    migrate.upgrade(empty_db_url)

    assert migrate.current(empty_db_url) == migrate.head()
    engine = make_engine(empty_db_url, poolclass=pool.NullPool)
    try:
        tables = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert EXPECTED_TABLES <= tables
    # Upgrading again is a no-op, not an error.
    migrate.upgrade(empty_db_url)
    assert migrate.current(empty_db_url) == migrate.head()


def test_downgrade_to_base_and_back(empty_db_url: str) -> None:
    from alembic import command

    migrate.upgrade(empty_db_url)
    command.downgrade(migrate.alembic_config(empty_db_url), "base")
    assert migrate.current(empty_db_url) is None
    migrate.upgrade(empty_db_url)
    assert migrate.current(empty_db_url) == migrate.head()


@pytest.mark.postgres
def test_large_values_are_compressed_with_lz4_on_postgresql(pg_db_url: str) -> None:
    """Migration 0005: the mails' bytes and the snapshots use LZ4 (the server here is built with
    it), and a stored mail is compressed with it; downgrading returns the columns to pglz."""
    from alembic import command
    from sqlalchemy import text

    migrate.upgrade(pg_db_url)
    engine = make_engine(pg_db_url, poolclass=pool.NullPool)
    columns = "(('outbound_messages', 'raw'), ('inbound_messages', 'raw'), ('games', 'snapshot'))"
    query = text(f"SELECT attrelid::regclass::text, attname, attcompression FROM pg_attribute "
                 f"WHERE (attrelid::regclass::text, attname) IN {columns} ORDER BY 1, 2")
    try:
        with engine.begin() as conn:
            assert [tuple(row) for row in conn.execute(query)] == [
                ("games", "snapshot", "l"), ("inbound_messages", "raw", "l"), ("outbound_messages", "raw", "l"),
            ]
            raw = b"".join(b"Line %d of a mail that repeats itself.\r\n" % n for n in range(400))
            conn.execute(InboundMessage.__table__.insert().values(
                message_key="<lz4@test>", recipient="a@hearts.test", mail_from="b@example.com", raw=raw,
                source=InboundSource.SMTP, received_at=datetime.now(UTC)))
            method = conn.execute(text("SELECT pg_column_compression(raw) FROM inbound_messages")).scalar()
            assert method == "lz4"
            conn.execute(text("DELETE FROM inbound_messages"))
        command.downgrade(migrate.alembic_config(pg_db_url), "0004")
        with engine.connect() as conn:
            assert {row[2] for row in conn.execute(query)} == {"p"}
        migrate.upgrade(pg_db_url)
    finally:
        engine.dispose()


def test_migrated_schema_matches_the_models(db_url: str) -> None:
    """Alembic's autogenerate finds nothing to change: no forgotten migration."""
    engine = make_engine(db_url, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_times_come_back_aware_utc_and_naive_times_are_refused(db_url: str) -> None:
    engine = make_engine(db_url)
    factory = make_session_factory(engine)
    lisbon_summer = timezone(timedelta(hours=1))
    bounced = datetime(2026, 7, 1, 13, 30, tzinfo=lisbon_summer)
    try:
        with transaction(factory) as session:
            session.add(Player(address="Ana@Example.COM", bounced_at=bounced))
        with factory() as session:
            player = session.scalars(select(Player)).one()
            assert player.address == "ana@example.com"
            assert player.bounced_at == bounced
            assert player.bounced_at.tzinfo is not None
            assert player.bounced_at.utcoffset() == timedelta(0)
            # server_default backstop for created_at, also aware UTC.
            assert player.created_at.utcoffset() == timedelta(0)
            assert abs(player.created_at - datetime.now(UTC)) < timedelta(hours=1)

        with pytest.raises(StatementError, match="naive datetime"), transaction(factory) as session:
            session.add(Player(address="bo@example.com", bounced_at=datetime(2026, 7, 1)))
    finally:
        engine.dispose()


def test_game_version_guards_against_concurrent_updates(db_url: str) -> None:
    """Two sessions that loaded the same version cannot both commit a change."""
    from sqlalchemy.orm.exc import StaleDataError

    engine = make_engine(db_url)
    factory = make_session_factory(engine)
    try:
        with transaction(factory) as session:
            game = Game(rules={"preset": "standard"})
            game.seats = [Seat(seat=i, bot="random", status=SeatStatus.BOT) for i in range(4)]
            session.add(game)
        assert game.version == 1

        first, second = factory(), factory()
        try:
            theirs = second.get(Game, game.id)
            second.commit()  # ends the read (SQLite would queue first behind it); keeps the object
            mine = first.get(Game, game.id)
            assert mine is not None and theirs is not None
            assert mine.version == theirs.version == 1
            mine.status = GameStatus.ACTIVE
            first.commit()
            theirs.status = GameStatus.ABORTED
            with pytest.raises(StaleDataError):
                second.commit()
        finally:
            first.close()
            second.close()

        with Session(engine) as session:
            stored = session.get(Game, game.id)
            assert stored is not None
            assert (stored.status, stored.version) == (GameStatus.ACTIVE, 2)
            assert [seat.seat for seat in stored.seats] == [0, 1, 2, 3]
    finally:
        engine.dispose()


def test_json_none_is_sql_null(db_url: str) -> None:
    engine = make_engine(db_url)
    factory = make_session_factory(engine)
    try:
        with transaction(factory) as session:
            session.add(Game(rules={"preset": "standard", "target": 100}, snapshot=None))
        with factory() as session:
            found = session.scalars(select(Game).where(Game.snapshot.is_(None))).one()
            assert found.rules == {"preset": "standard", "target": 100}
    finally:
        engine.dispose()
