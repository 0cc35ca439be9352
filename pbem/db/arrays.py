"""Array parameters for PostgreSQL, sent in its binary array format (``pbem.db.writes``).

A move's writes go in one statement over ``unnest`` of one array per column (about 35 arrays).
psycopg's general list dumper finds each array's element type by looking at its elements, picks
a dumper for them and then dumps them one by one: 4 µs an array, 5% of a worker's CPU.  The
column types are known when the statement is built, so :func:`array_packer` gives, per column
type, a function that packs the values straight into PostgreSQL's binary array format
(``array_send``: the header, the one dimension, then each element's length and bytes), each
element written as psycopg's binary dumper of that type writes it.  A value the packer does not
expect (of another Python type, an integer out of range) makes it hand the whole array to
psycopg's general path instead (:class:`BinaryArray`), so nothing a packer cannot write changes.

``pbem.db.session`` registers both dumpers on every PostgreSQL connection (:func:`register_dumpers`).
psycopg itself is imported only then, or when a packer is first made (:func:`psycopg_parts`), so a
process on SQLite never loads it (README, "Benchmarks": ``pbem bench cli``).
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, NamedTuple

from sqlalchemy import Boolean, DateTime, Integer, LargeBinary, SmallInteger, String
from sqlalchemy.dialects import postgresql
from sqlalchemy.types import BigInteger, TypeDecorator, TypeEngine

__all__ = ["BinaryArray", "PackedArray", "PsycopgParts", "array_packer", "psycopg_parts", "register_dumpers"]


class BinaryArray(list):  # type: ignore[type-arg]
    """An array parameter psycopg dumps itself, in binary (its ``ListBinaryDumper``): a text array
    of ``bytea`` would be escaped byte by byte in Python.  Without the dumper it is a plain list."""


class PackedArray(bytes):
    """An array parameter already in PostgreSQL's binary format; ``oid`` is its array type's."""

    __slots__ = ()
    oid: ClassVar[int] = 0


class PsycopgParts(NamedTuple):
    """What of psycopg the arrays use: the wrappers SQLAlchemy binds ``bytea`` and ``jsonb`` values
    in, and the dumpers :func:`register_dumpers` registers."""

    binary: type
    jsonb: type
    list_dumper: type
    packed_dumper: type


@functools.cache
def psycopg_parts() -> PsycopgParts:
    """psycopg's parts, imported on first use. The one late import of ``pbem.db``, of a third-party
    package: importing psycopg costs a process about a tenth of a second of CPU, and only a process
    that works on PostgreSQL (whose SQLAlchemy dialect imports psycopg anyway) needs it; the command
    line's listings on SQLite do not (README, "Benchmarks": ``pbem bench cli``)."""
    from psycopg import Binary, pq
    from psycopg.adapt import Dumper
    from psycopg.types.array import ListBinaryDumper
    from psycopg.types.json import Jsonb

    class PackedArrayDumper(Dumper):
        """Sends a :class:`PackedArray` as it is, typed by its class."""

        format = pq.Format.BINARY

        def __init__(self, cls: type, context: Any = None) -> None:
            super().__init__(cls, context)
            self.oid = cls.oid  # type: ignore[attr-defined]

        def dump(self, obj: Any) -> bytes:
            return obj  # type: ignore[no-any-return]

    return PsycopgParts(Binary, Jsonb, ListBinaryDumper, PackedArrayDumper)


def register_dumpers(dbapi_connection: Any) -> None:
    """On a psycopg connection: a :class:`BinaryArray` goes through psycopg's list dumper in binary,
    a :class:`PackedArray` as it is."""
    parts = psycopg_parts()
    dbapi_connection.adapters.register_dumper(BinaryArray, parts.list_dumper)
    dbapi_connection.adapters.register_dumper(PackedArray, parts.packed_dumper)


_LENGTH = struct.Struct("!i")
_NULL = _LENGTH.pack(-1)
_ONE_DIMENSION = struct.Struct("!iiIii")  # dimensions, has nulls, element oid; length, lower bound
_EMPTY = struct.Struct("!iiI")
_INT2, _INT4, _INT8 = struct.Struct("!h"), struct.Struct("!i"), struct.Struct("!q")
_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _timestamptz(value: datetime) -> bytes:
    if value.tzinfo is None:  # psycopg would send a naive one as "timestamp": not ours to guess
        raise TypeError("naive datetime")
    return _INT8.pack((value - _PG_EPOCH) // _MICROSECOND)


def _text(value: str) -> bytes:
    if type(value) is not str:
        raise TypeError(type(value))
    return value.encode("utf-8")


def _jsonb(jsonb: type) -> Callable[[Any], bytes]:
    def encode(value: Any) -> bytes:
        if type(value) is not jsonb:
            raise TypeError(type(value))
        data = (value.dumps or json.dumps)(value.obj)
        return b"\x01" + (data.encode("utf-8") if isinstance(data, str) else data)

    return encode


def _bytea(binary: type) -> Callable[[Any], bytes]:
    def encode(value: Any) -> bytes:
        if type(value) is binary:
            value = value.obj
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(type(value))
        return bytes(value)

    return encode


def _bool(value: bool) -> bytes:
    if type(value) is not bool:
        raise TypeError(type(value))
    return b"\x01" if value else b"\x00"


def _integer(packer: struct.Struct) -> Callable[[int], bytes]:
    pack = packer.pack

    def encode(value: int) -> bytes:
        if type(value) is not int:
            raise TypeError(type(value))
        return pack(value)

    return encode


# (array oid, element oid, element encoder) per kind of column.
_INT2_ARRAY = (1005, 21, _integer(_INT2))
_INT4_ARRAY = (1007, 23, _integer(_INT4))
_INT8_ARRAY = (1016, 20, _integer(_INT8))
_TEXT_ARRAY = (1009, 25, _text)
_TIMESTAMPTZ_ARRAY = (1185, 1184, _timestamptz)
_JSONB_ARRAY_OIDS = (3807, 3802)  # their encoders check psycopg's wrappers: made when first needed
_BYTEA_ARRAY_OIDS = (1001, 17)
_BOOL_ARRAY = (1000, 16, _bool)


def _kind(type_: TypeEngine[Any]) -> tuple[int, int, Callable[[Any], bytes]] | None:
    base = type_.impl_instance if isinstance(type_, TypeDecorator) else type_
    if isinstance(base, Boolean):
        return _BOOL_ARRAY
    if isinstance(base, BigInteger):
        return _INT8_ARRAY
    if isinstance(base, SmallInteger):
        return _INT2_ARRAY
    if isinstance(base, Integer):
        return _INT4_ARRAY
    if isinstance(base, String):  # Enum too: its values are bound as strings
        return _TEXT_ARRAY
    if isinstance(base, DateTime) and base.timezone:
        return _TIMESTAMPTZ_ARRAY
    if isinstance(base, postgresql.JSONB):
        return (*_JSONB_ARRAY_OIDS, _jsonb(psycopg_parts().jsonb))
    if isinstance(base, LargeBinary):
        return (*_BYTEA_ARRAY_OIDS, _bytea(psycopg_parts().binary))
    return None


_CLASSES: dict[int, type[PackedArray]] = {}


def _packed_class(array_oid: int) -> type[PackedArray]:
    cls = _CLASSES.get(array_oid)
    if cls is None:
        cls = _CLASSES[array_oid] = type(f"PackedArray{array_oid}", (PackedArray,), {"oid": array_oid})
    return cls


def array_packer(type_: TypeEngine[Any]) -> Callable[[Iterable[Any]], Any]:
    """For a column of ``type_`` (as the dialect sees it), a function from the column's bound
    values (after SQLAlchemy's bind processor) to the array parameter to send: packed, or a
    :class:`BinaryArray` for psycopg when the type or a value is not one the packers know."""
    kind = _kind(type_)
    if kind is None:
        return BinaryArray
    array_oid, element_oid, encode = kind
    cls = _packed_class(array_oid)
    head = _ONE_DIMENSION.pack
    empty = cls(_EMPTY.pack(0, 0, element_oid))

    def pack(values: Iterable[Any]) -> Any:
        values = list(values)
        if not values:
            return empty
        parts: list[bytes] = []
        has_null = 0
        try:
            for value in values:
                if value is None:
                    parts.append(_NULL)
                    has_null = 1
                else:
                    data = encode(value)
                    parts.append(_LENGTH.pack(len(data)))
                    parts.append(data)
        except (TypeError, struct.error, OverflowError):
            return BinaryArray(values)
        return cls(head(1, has_null, element_oid, len(values), 1) + b"".join(parts))

    return pack
