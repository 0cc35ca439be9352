"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from sqlalchemy import JSON, DateTime, Enum, LargeBinary
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC ``datetime`` in, an aware UTC ``datetime`` out, on every database.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so the value is
    stored as naive UTC text (which also sorts correctly) and marked UTC on the way
    back.  Naive datetimes are refused: a time without a zone is a bug waiting.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


JSONDocument = JSON(none_as_null=True).with_variant(
    postgresql.JSONB(none_as_null=True), "postgresql"
)
"""JSON everywhere; JSONB on PostgreSQL (compact, indexable).  Python ``None`` is
stored as SQL NULL, not the JSON literal ``null``, so ``IS NULL`` finds it."""

RawBytes = LargeBinary()
"""Raw mail bytes (BLOB on SQLite, bytea on PostgreSQL)."""


def str_enum(enum_class: type[enum.StrEnum], length: int = 16) -> Enum:
    """A VARCHAR column holding a ``StrEnum``'s values (not names).

    No native enum and no CHECK constraint: adding a status later is a code change,
    not a table rebuild on SQLite.  Unknown strings are refused when writing.
    """
    return Enum(
        enum_class,
        native_enum=False,
        create_constraint=False,
        validate_strings=True,
        length=length,
        values_callable=lambda members: [member.value for member in members],
    )

