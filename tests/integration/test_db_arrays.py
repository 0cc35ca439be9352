"""``pbem.db.arrays`` against a real PostgreSQL: an array pbem packs itself reads back exactly as
the same values sent through psycopg's own list dumper, for every kind of column a move writes,
and anything a packer does not expect goes through psycopg's path instead."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, Integer, String, text
from sqlalchemy.dialects import postgresql

from pbem.db.arrays import BinaryArray, PackedArray, array_packer
from pbem.db.models import Game, OutboundMessage
from pbem.db.session import make_engine

pytestmark = pytest.mark.postgres

_OUTBOX, _GAMES = OutboundMessage.__table__, Game.__table__


@pytest.fixture(scope="module")
def engine(postgres_server: Any) -> Iterator[Engine]:
    url = postgres_server.create_database()
    engine = make_engine(url)
    yield engine
    engine.dispose()
    postgres_server.drop_database(url.rsplit("/", 1)[1])


def _column_type(column: Any, engine: Engine) -> Any:
    return column.type.dialect_impl(engine.dialect)


def read_back(engine: Engine, column: Any, values: list[Any], *, packed: bool,
              bind: bool = True) -> tuple[Any, list[Any]]:
    """The array parameter for ``values`` (bound as the column binds them, unless not ``bind``) and
    what PostgreSQL makes of it as an array of the column's type."""
    type_ = _column_type(column, engine)
    processor = type_.bind_processor(engine.dialect) if bind else None
    bound = [value if processor is None or value is None else processor(value) for value in values]
    parameter = array_packer(type_)(bound) if packed else BinaryArray(bound)
    sql = f"SELECT v FROM unnest(CAST(:p AS {type_.compile(engine.dialect)}[])) WITH ORDINALITY AS u(v, o) ORDER BY o"
    with engine.connect() as conn:
        return parameter, [row.v for row in conn.execute(text(sql), {"p": parameter})]


def same_as_psycopg(engine: Engine, column: Any, values: list[Any], *, bind: bool = True) -> None:
    parameter, packed = read_back(engine, column, values, packed=True, bind=bind)
    assert isinstance(parameter, PackedArray)
    _, general = read_back(engine, column, values, packed=False, bind=bind) if any(v is not None for v in values) \
        else (None, [None] * len(values))
    assert packed == general == [None if v is None else general[i] for i, v in enumerate(values)]


_TEXTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
_TIMES = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1),
                      timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)),
                                                 timezone(-timedelta(hours=8))]))
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | _TEXTS,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXTS, inner, max_size=4),
                     max_leaves=12)


def _lists(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.none() | values, min_size=1, max_size=6)


@settings(max_examples=40)
@given(_lists(st.integers(-2**31, 2**31 - 1)))
def test_integers(engine: Engine, values: list[int | None]) -> None:
    same_as_psycopg(engine, _OUTBOX.c.attempts, values)


@settings(max_examples=40)
@given(_lists(_TEXTS))
def test_strings(engine: Engine, values: list[str | None]) -> None:
    same_as_psycopg(engine, _OUTBOX.c.recipient, values)


@settings(max_examples=40)
@given(_lists(_TIMES))
def test_aware_times_to_the_microsecond(engine: Engine, values: list[datetime | None]) -> None:
    same_as_psycopg(engine, _OUTBOX.c.next_attempt_at, values)
    same_as_psycopg(engine, _OUTBOX.c.next_attempt_at, values, bind=False)  # in their own zones


@settings(max_examples=40)
@given(_lists(_JSON.filter(lambda value: value is not None)))
def test_json_documents(engine: Engine, values: list[Any]) -> None:
    same_as_psycopg(engine, _GAMES.c.snapshot, values)


@settings(max_examples=40)
@given(_lists(st.binary(max_size=64)))
def test_raw_bytes(engine: Engine, values: list[bytes | None]) -> None:
    same_as_psycopg(engine, _OUTBOX.c.raw, values)


def test_an_empty_array_and_enum_values(engine: Engine) -> None:
    assert read_back(engine, _OUTBOX.c.attempts, [], packed=True)[1] == []
    from pbem.db.models import OutboundStatus

    parameter, back = read_back(engine, _OUTBOX.c.status, [OutboundStatus.SENT, None, OutboundStatus.PENDING],
                                packed=True)
    assert isinstance(parameter, PackedArray) and back == ["sent", None, "pending"]


def test_what_a_packer_does_not_expect_goes_to_psycopg(engine: Engine) -> None:
    dialect = engine.dialect
    assert type(array_packer(Integer().dialect_impl(dialect))([1, "2"])) is BinaryArray
    assert type(array_packer(Integer().dialect_impl(dialect))([2**31])) is BinaryArray
    assert type(array_packer(String().dialect_impl(dialect))([b"bytes"])) is BinaryArray
    assert type(array_packer(postgresql.INTERVAL().dialect_impl(dialect))([timedelta(1)])) is BinaryArray
    with pytest.raises(Exception, match="out of range"):  # as before: PostgreSQL refuses it
        read_back(engine, _OUTBOX.c.attempts, [2**31], packed=True)
