"""A transaction's writes in few, cached Core statements instead of the ORM's unit of work.

A move used to spend a third of the worker's time in SQLAlchemy's flush (README, "Benchmarks"): per object
bookkeeping, one UPDATE per changed row through the ORM's persistence machinery, and a
multi-row ``INSERT .. VALUES`` of the outbox rows that psycopg parsed afresh every time (over
50 parameters: its query cache skips it).  This module writes what a turn changed with as few
statements as it can; whatever it does not handle is still flushed by the ORM, so correctness
never depends on it:

- **Appended rows** (the move log, the outbox): :func:`add_row` buffers a row and returns a
  :class:`PendingRow`, whose ``id`` is known once the row is written (reading it writes).
- **Rows changed by key** without loading them (a received mail's outcome): :func:`add_update`.
- **Changed loaded objects** (a game and its seats): at each flush and at commit, every changed
  object of the configured classes is written with an ``UPDATE`` of exactly its changed columns
  (seats of a game together, see ``merged_classes``), the version of versioned rows checked
  (``.. AND version = :v``: a miss raises ``StaleDataError`` as the ORM would); the ORM is then
  told the objects are committed, so its own flush has nothing left to walk.  Objects with
  changed relationships or keys, or of mappers with ``onupdate`` columns, stay for the ORM.

Buffered rows are written before the session runs its next ORM statement (so the transaction's
queries see them, as autoflush did), at each flush, at commit, or when an ``id`` is read.

On PostgreSQL everything waiting goes in ONE statement: each part a data-modifying CTE over
``unnest`` of one array per column (``WITH w0 AS (INSERT INTO moves .. SELECT .. FROM unnest(..)),
w1 AS (INSERT INTO outbound_messages .. RETURNING id), w2 AS (UPDATE seats .. FROM unnest(..)), ..
SELECT <the new ids, the versioned rows matched>``).  Its text depends only on which tables and
columns are written, not on how many rows, so psycopg caches and prepares it; a move's writes are
one round trip.  On SQLite, where statements cost no round trip, one statement per part.

The session factory of :mod:`pbem.db.session` installs the hooks (:func:`install`); a session made
any other way gets them the first time a row is buffered.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, bindparam, column, event, insert, inspect, text, update
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.exc import StaleDataError

from pbem.db.arrays import array_packer  # for PostgreSQL (psycopg's binary arrays)

__all__ = [
    "PendingRow",
    "add_row",
    "add_update",
    "insert_rows",
    "install",
    "write_all",
    "write_pending",
]

_PENDING = "pbem.pending_rows"
_HOOKED = "pbem.write_hooks"
_CLASSES = "pbem.write_classes"


class PendingRow:
    """A row waiting for its INSERT; ``id`` (when asked for at ``add_row``) is known once written,
    and reading it writes the session's waiting rows first."""

    __slots__ = ("table", "values", "returning", "_id", "_session")

    def __init__(self, session: Session, table: Table, values: dict[str, Any], returning: bool) -> None:
        self.table = table
        self.values = values
        self.returning = returning
        self._id: int | None = None
        self._session: Session | None = session

    @property
    def id(self) -> int | None:
        if self._id is None and self._session is not None:
            write_pending(self._session)
        return self._id


@dataclass(frozen=True, slots=True)
class _PendingUpdate:
    table: Table
    keys: dict[str, Any]
    values: dict[str, Any]


def install(target: sessionmaker[Session] | Session, dirty_classes: Iterable[type] = (),
            merged_classes: Iterable[type] = ()) -> None:
    """Write what is buffered before each ORM statement, and it with the changed objects of
    ``dirty_classes`` at each flush and at commit (:func:`write_all`); drop it on rollback.

    Changed objects of ``merged_classes`` are written together, one row each with every column
    changed in any of them (their own unchanged ones as loaded): only for rows nobody else
    writes meanwhile (a game's seats, written under the game's lock)."""
    classes = (tuple(dirty_classes), tuple(merged_classes))
    event.listen(target, "do_orm_execute", _before_orm_statement)
    event.listen(target, "before_flush", _before_flush)
    event.listen(target, "before_commit", write_all)  # a commit flushes only an ORM-dirty session
    event.listen(target, "after_rollback", _discard)
    info = target.kw.setdefault("info", {}) if isinstance(target, sessionmaker) else target.info
    info[_HOOKED] = True
    info[_CLASSES] = classes


def add_row(session: Session, table: Table, values: dict[str, Any], *, returning: bool = False) -> PendingRow:
    """Buffer one row of ``table`` for the session's next write; ``returning``: its id is wanted."""
    row = PendingRow(session, table, values, returning)
    _buffer(session).append(row)
    return row


def add_update(session: Session, table: Table, keys: dict[str, Any], values: dict[str, Any]) -> None:
    """Buffer ``UPDATE table SET values WHERE keys`` (column names to values) for the next write."""
    _buffer(session).append(_PendingUpdate(table, keys, values))


def _buffer(session: Session) -> list[Any]:
    if not session.info.get(_HOOKED):
        install(session)
    return session.info.setdefault(_PENDING, [])


def write_pending(session: Session) -> None:
    """Write what is buffered now (not the changed objects: a flush does those)."""
    _write(session, with_objects=False)


def write_all(session: Session) -> None:
    """Write what is buffered and the changed objects of the installed classes, together."""
    _write(session, with_objects=True)


def _before_flush(session: Session, _flush_context: Any, _objects: Any) -> None:
    _write(session, with_objects=True)


def _before_orm_statement(orm_execute_state: Any) -> None:
    session = orm_execute_state.session
    if session.info.get(_PENDING):
        _write(session, with_objects=False)


def _discard(session: Session, _previous_transaction: Any = None) -> None:
    pending = session.info.pop(_PENDING, None)
    for row in pending or ():
        if isinstance(row, PendingRow):
            row._session = None


# -- one write -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Part:
    """One statement's worth of the write: an INSERT of rows, or an UPDATE of rows by key."""

    table: Table
    kind: str  # "insert" | "update"
    columns: tuple[str, ...]  # inserted columns; updated columns
    keys: tuple[str, ...] = ()  # update: the key columns
    version: str | None = None  # update: the version column, checked and replaced
    returning: bool = False  # insert: the new ids are wanted
    rows: list[dict[str, Any]] | None = None  # insert: column values; update: k_/v_ prefixed
    pending: list[PendingRow] | None = None  # insert: whose ids to set
    objects: list[tuple[Any, _Plan]] | None = None  # update of loaded objects: to mark written

    def shape(self) -> tuple[Any, ...]:
        return (self.table, self.kind, self.columns, self.keys, self.version, self.returning)


def _write(session: Session, *, with_objects: bool) -> None:
    pending = session.info.pop(_PENDING, None) or []
    parts = _pending_parts(pending)
    if with_objects:
        classes, merged = session.info.get(_CLASSES, ((), ()))
        if classes:
            parts += _object_parts(session, classes, merged)
    if not parts:
        return
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        _write_together(conn, parts)
    else:
        for part in parts:
            _write_part(conn, part)
    for part in parts:
        for obj, plan in part.objects or ():
            _mark_written(session, obj, plan)


def _pending_parts(pending: list[Any]) -> list[_Part]:
    inserts: dict[Table, _Part] = {}
    updates: dict[tuple[Any, ...], _Part] = {}
    for item in pending:
        if isinstance(item, PendingRow):
            part = inserts.get(item.table)
            if part is None:
                part = inserts[item.table] = _Part(item.table, "insert", (), rows=[], pending=[])
            part.rows.append(item.values)  # type: ignore[union-attr]
            part.pending.append(item)  # type: ignore[union-attr]
            part.returning = part.returning or item.returning
        else:
            key = (item.table, tuple(item.keys), tuple(item.values))
            part = updates.get(key)
            if part is None:
                part = updates[key] = _Part(item.table, "update", tuple(item.values), keys=tuple(item.keys), rows=[])
            part.rows.append({**{f"k_{k}": v for k, v in item.keys.items()},  # type: ignore[union-attr]
                              **{f"v_{k}": v for k, v in item.values.items()}})
    for part in inserts.values():
        part.columns = tuple(sorted({name for row in part.rows or () for name in row}))
    return [*inserts.values(), *updates.values()]


def _write_part(conn: Connection, part: _Part) -> None:
    """One part on its own (SQLite): an INSERT (executemany) or an UPDATE per set of rows."""
    if part.kind == "insert":
        ids = insert_rows(conn, part.table, part.rows or (), returning=part.returning)
        _set_ids(part, ids)
        return
    statement = _update_statement(part.table, part.columns, part.keys, part.version)
    if part.version is None:
        conn.execute(statement, part.rows)  # one executemany
        return
    for row in part.rows or ():  # each versioned row checked on its own
        if conn.execute(statement, row).rowcount != 1:
            raise _stale(part, 0)


def _write_together(conn: Connection, parts: list[_Part]) -> None:
    """Every part in one PostgreSQL statement (data-modifying CTEs over ``unnest``)."""
    statement, processors, outputs = _together_statement(tuple(part.shape() for part in parts), conn.dialect)
    params: dict[str, Any] = {}
    for n, (part, part_processors) in enumerate(zip(parts, processors)):
        params.update(_array_params(n, part_processors, part.rows or ()))
    result = conn.execute(statement, params).one()
    for (n, what), value in zip(outputs, result):
        part = parts[n]
        if what == "ids":
            _set_ids(part, sorted(value or ()))
        elif value != len(part.rows or ()):
            raise _stale(part, value)


def _array_params(n: int, part_processors: tuple[tuple[str, Any, Any], ...],
                  rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Part ``n``'s array parameters ``p<n>_<k>``: each column's values, bound and packed."""
    params: dict[str, Any] = {}
    for k, (name, processor, packer) in enumerate(part_processors):
        values = (row.get(name) for row in rows)
        params[f"p{n}_{k}"] = packer(values if processor is None else map(processor, values))
    return params


def _set_ids(part: _Part, ids: Sequence[int | None]) -> None:
    for row, new_id in zip(part.pending or (), ids if part.returning else [None] * len(part.pending or ())):
        row._id = new_id
        row._session = None


def _stale(part: _Part, matched: int) -> StaleDataError:
    return StaleDataError(f"{part.table.name}: {matched} of {len(part.rows or ())} rows had the version "
                          "loaded; changed meanwhile")


# -- statements ----------------------------------------------------------------------------------------


def insert_rows(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]], *,
                returning: bool = False) -> list[int | None]:
    """INSERT ``rows`` (dicts of column values; a missing column takes its default) in one
    statement; with ``returning``, the new ids in the order of ``rows``."""
    if not rows:
        return []
    columns = tuple(sorted({name for row in rows for name in row}))
    if conn.dialect.name == "postgresql":
        part = _Part(table, "insert", columns, returning=returning, rows=list(rows))
        statement, processors, _outputs = _together_statement((part.shape(),), conn.dialect)
        ids = conn.execute(statement, _array_params(0, processors[0], rows)).scalar()
        return sorted(ids or ()) if returning else [None] * len(rows)
    full = [{name: row.get(name) for name in columns} for row in rows]
    if not returning:
        conn.execute(insert(table), full)
        return [None] * len(rows)
    statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
    return list(conn.execute(statement, full).scalars())


@functools.lru_cache(maxsize=128)
def _together_statement(shapes: tuple[tuple[Any, ...], ...], dialect: Dialect) -> tuple[Any, Any, Any]:
    """The statement for parts of these shapes, each part's (row key, bind processor, array
    packer: ``pbem.db.arrays``) per array parameter ``p<n>_<k>``, and what each output column
    is: ``(n, "ids")`` (the new ids of an insert that returns them) or ``(n, "matched")`` (rows
    a versioned update found).

    Serial ids are drawn in the order the rows are inserted, which ``ORDER BY`` fixes, so the
    sorted ids match the rows (SQLAlchemy's "insertmanyvalues" relies on the same rule)."""
    ctes: list[str] = []
    processors: list[tuple[tuple[str, Any, Any], ...]] = []
    outputs: list[tuple[int, str]] = []
    for n, (table, kind, columns, keys, version, returning) in enumerate(shapes):
        if kind == "insert":
            names = [(name, name) for name in columns]
        else:
            names = [(f"k_{key}", key) for key in keys]
            if version is not None:
                names += [("k_version", version), (_NEW_VERSION, version)]
            names += [(f"v_{name}", name) for name in columns]
        types = [table.c[column].type.dialect_impl(dialect) for _row_key, column in names]
        arrays = ", ".join(f"CAST(:p{n}_{k} AS {type_.compile(dialect)}[])" for k, type_ in enumerate(types))
        aliases = [f"u{k}" for k in range(len(names))]
        if kind == "insert":
            sql = (f"INSERT INTO {table.name} ({', '.join(columns)}) SELECT {', '.join(aliases)} "
                   f"FROM unnest({arrays}) WITH ORDINALITY AS u({', '.join(aliases)}, ord) ORDER BY ord")
            if returning:
                sql += " RETURNING id"
                outputs.append((n, "ids"))
        else:
            sets = [f"{column} = u.u{k}" for k, (row_key, column) in enumerate(names) if row_key.startswith("v_")]
            where = [f"{table.name}.{column} = u.u{k}" for k, (row_key, column) in enumerate(names)
                     if row_key.startswith("k_")]
            sql = (f"UPDATE {table.name} SET {', '.join(sets)} FROM unnest({arrays}) AS u({', '.join(aliases)}) "
                   f"WHERE {' AND '.join(where)}")
            if version is not None:
                sql += " RETURNING 1"
                outputs.append((n, "matched"))
        ctes.append(f"w{n} AS ({sql})")
        processors.append(tuple((row_key, type_.bind_processor(dialect), array_packer(type_))
                                for (row_key, _column), type_ in zip(names, types)))
    selected = [f"(SELECT array_agg(id) FROM w{n})" if what == "ids" else f"(SELECT count(*) FROM w{n})"
                for n, what in outputs] or ["1"]
    sql = f"WITH {', '.join(ctes)} SELECT {', '.join(f'{value} AS o{i}' for i, value in enumerate(selected))}"
    # The result's columns declared: SQLAlchemy then keeps the result's metadata with the compiled
    # statement instead of building it from the cursor's description at every run.
    statement = text(sql).columns(*(column(f"o{i}") for i in range(len(selected))))
    return statement, tuple(processors), tuple(outputs)


@functools.lru_cache(maxsize=256)
def _update_statement(table: Table, changed: tuple[str, ...], keys: tuple[str, ...], version: str | None) -> Any:
    criteria = [table.c[key] == bindparam(f"k_{key}") for key in keys]
    values: dict[str, Any] = {key: bindparam(f"v_{key}") for key in changed}
    if version is not None:
        criteria.append(table.c[version] == bindparam("k_version"))
        values[version] = bindparam(_NEW_VERSION)
    return update(table).where(*criteria).values(values)


_NEW_VERSION = "v__new_version"


# -- changed objects -----------------------------------------------------------------------------------


def _object_parts(session: Session, classes: tuple[type, ...], merged: tuple[type, ...]) -> list[_Part]:
    """The changed objects of ``classes`` this module can write, as update parts."""
    found: dict[_Plan, list[tuple[Any, Any, tuple[str, ...]]]] = {}
    for obj in session.dirty:
        if not isinstance(obj, classes):
            continue
        state = inspect(obj)
        plan = _plan(state.mapper)
        if plan is None:
            continue
        changed = tuple(sorted(state.committed_state))
        if not changed or any(key not in plan.writable or key not in state.dict for key in changed):
            continue
        found.setdefault(plan, []).append((obj, state, changed))
    parts: dict[tuple[_Plan, tuple[str, ...]], _Part] = {}
    for plan, items in found.items():
        union = tuple(sorted({key for _obj, _state, changed in items for key in changed}))
        together = (len(items) > 1 and isinstance(items[0][0], merged)
                    and all(key in state.dict for _obj, state, _changed in items for key in union))
        for obj, state, changed in sorted(items, key=lambda item: [item[1].dict[k] for k in plan.keys]):
            columns = union if together else changed
            row = {f"v_{key}": state.dict[key] for key in columns}
            for key in plan.keys:
                row[f"k_{key}"] = state.dict[key]
            if plan.version is not None:
                row["k_version"] = old = state.dict[plan.version]
                row[_NEW_VERSION] = plan.next_version(old)
            part = parts.get((plan, columns))
            if part is None:
                part = parts[(plan, columns)] = _Part(plan.table, "update", columns, keys=plan.keys,
                                                      version=plan.version, rows=[], objects=[])
            part.rows.append(row)  # type: ignore[union-attr]
            part.objects.append((obj, plan))  # type: ignore[union-attr]
    return list(parts.values())


def _mark_written(session: Session, obj: Any, plan: _Plan) -> None:
    """Tell the ORM the row now holds the object's values, so its flush has nothing to do.

    The whole object is marked committed and taken off the session's list of modified objects
    (what the ORM does after its own flush), sparing the flush that follows a pass over it; an
    object with collection changes waiting (``_pending_mutations``) only gets its columns
    marked, and stays for the ORM."""
    state = inspect(obj)
    if plan.version is not None:
        set_committed_value(obj, plan.version, plan.next_version(state.dict[plan.version]))
    commit_all = getattr(state, "_commit_all", None)
    # An empty ``_pending_mutations`` is only SQLAlchemy's memo being made (``set_committed_value``
    # of a collection makes it): no change waits.
    if commit_all is not None and not state.__dict__.get("_pending_mutations"):
        commit_all(state.dict, session.identity_map)
        return
    for key in list(state.committed_state):
        if key in plan.writable:
            set_committed_value(obj, key, state.dict[key])


class _Plan:
    """How the rows of one mapper are written: the table, key and version attributes, and the
    attributes a plain UPDATE may set."""

    __slots__ = ("table", "keys", "version", "next_version", "writable")

    def __init__(self, table: Table, keys: tuple[str, ...], version: str | None, next_version: Any,
                 writable: frozenset[str]) -> None:
        self.table = table
        self.keys = keys
        self.version = version
        self.next_version = next_version
        self.writable = writable


@functools.lru_cache(maxsize=64)
def _plan(mapper: Any) -> _Plan | None:
    """None for mappers this module leaves to the ORM: several tables or inheritance, a version
    set by the application or the server (``version_id_generator=False``), columns set by
    ``onupdate``, attribute names that differ from their columns'."""
    table = mapper.local_table
    if mapper.inherits is not None or not isinstance(table, Table) or len(mapper.tables) != 1:
        return None
    version = None
    if mapper.version_id_col is not None:
        if mapper.version_id_generator is False:
            return None
        version = mapper.get_property_by_column(mapper.version_id_col).key
    if any(column.onupdate is not None or column.server_onupdate is not None for column in table.columns):
        return None
    keys = tuple(mapper.get_property_by_column(column).key for column in mapper.primary_key)
    writable = frozenset(
        prop.key for prop in mapper.column_attrs
        if len(prop.columns) == 1 and prop.columns[0].table is table and prop.key not in keys and prop.key != version
    )
    if any(prop.key != prop.columns[0].key for prop in mapper.column_attrs):
        return None
    return _Plan(table, keys, version, mapper.version_id_generator, writable)
