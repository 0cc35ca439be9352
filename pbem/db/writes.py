"""A transaction's writes in few, cached Core statements instead of the ORM's unit of work.

A move used to spend a third of the worker's time in SQLAlchemy's flush (issue 5): per object
bookkeeping, one UPDATE per changed row through the ORM's persistence machinery, and a
multi-row ``INSERT .. VALUES`` of the outbox rows that psycopg parsed afresh every time (over
50 parameters: its query cache skips it).  Two tools replace that on the hot path; whatever
they do not handle is still flushed by the ORM, so correctness never depends on them:

- **Appended rows** (the move log, the outbox): :func:`add_row` buffers a row and returns a
  :class:`PendingRow`; the buffer is written with ONE ``INSERT`` per table before the session
  runs its next ORM statement (so queries in the transaction see the rows, as autoflush did),
  before it commits, or when a row's ``id`` is first read.  On PostgreSQL the statement is
  ``INSERT .. SELECT * FROM unnest(<one array per column>)``: the same text whatever the number
  of rows, so psycopg caches and prepares it.  On SQLite, an executemany.
- **Changed rows** of loaded objects: :func:`write_dirty`, run at the start of every flush,
  writes each changed object with one ``UPDATE`` of exactly its changed columns (one
  executemany per table and set of columns), checks the version of versioned rows
  (``UPDATE .. WHERE id = :id AND version = :v``; a miss raises ``StaleDataError`` as the ORM
  would), then tells the ORM those values are committed, so the flush that follows has nothing
  left to do for them.  Objects with changed relationships or keys, or of mappers with
  ``onupdate`` columns, are left to the ORM.

The session factory of :mod:`pbem.db.session` installs the hooks (:func:`install`); a session made
any other way gets them the first time a row is buffered.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, bindparam, event, insert, inspect, text, update
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.exc import StaleDataError

__all__ = ["PendingRow", "add_row", "install", "insert_rows", "write_dirty", "write_pending"]

_PENDING = "pbem.pending_rows"
_HOOKED = "pbem.write_hooks"


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


def install(target: sessionmaker[Session] | Session, dirty_classes: Iterable[type] = (),
            merged_classes: Iterable[type] = ()) -> None:
    """Write the buffered rows before each ORM statement, each flush and the commit, and drop
    them on rollback; at each flush (autoflush and commit included), write the changed objects
    of ``dirty_classes`` first (:func:`write_dirty`, with ``merged_classes`` merged), leaving
    the ORM the rest."""
    classes = tuple(dirty_classes)
    merged = tuple(merged_classes)

    def before_flush(session: Session, _flush_context: Any, _objects: Any) -> None:
        write_pending(session)
        if classes:
            write_dirty(session, classes, merged=merged)

    event.listen(target, "do_orm_execute", _before_orm_statement)
    event.listen(target, "before_flush", before_flush)
    event.listen(target, "before_commit", write_pending)  # a commit flushes only an ORM-dirty session
    event.listen(target, "after_rollback", _discard)
    if isinstance(target, sessionmaker):
        target.kw.setdefault("info", {})[_HOOKED] = True
    else:
        target.info[_HOOKED] = True


def add_row(session: Session, table: Table, values: dict[str, Any], *, returning: bool = False) -> PendingRow:
    """Buffer one row of ``table`` for the session's next write; ``returning``: its id is wanted."""
    if not session.info.get(_HOOKED):
        install(session)
    row = PendingRow(session, table, values, returning)
    session.info.setdefault(_PENDING, []).append(row)
    return row


def write_pending(session: Session) -> None:
    """Write every buffered row now: one INSERT per table (in the order the tables were first used)."""
    rows: list[PendingRow] | None = session.info.pop(_PENDING, None)
    if not rows:
        return
    by_table: dict[Table, list[PendingRow]] = {}
    for row in rows:
        by_table.setdefault(row.table, []).append(row)
    conn = session.connection()
    for table, group in by_table.items():
        wanted = any(row.returning for row in group)
        ids = insert_rows(conn, table, [row.values for row in group], returning=wanted)
        for row, new_id in zip(group, ids):
            row._id = new_id
            row._session = None


def _before_orm_statement(orm_execute_state: Any) -> None:
    session = orm_execute_state.session
    if session.info.get(_PENDING):
        write_pending(session)


def _discard(session: Session, _previous_transaction: Any = None) -> None:
    rows: list[PendingRow] | None = session.info.pop(_PENDING, None)
    for row in rows or ():
        row._session = None


# -- inserting many rows in one statement ------------------------------------------------------------


def insert_rows(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]], *,
                returning: bool = False) -> list[int | None]:
    """INSERT ``rows`` (dicts of column values; a missing column takes its default) in one
    statement; with ``returning``, the new ids in the order of ``rows``."""
    if not rows:
        return []
    columns = tuple(sorted({name for row in rows for name in row}))
    dialect = conn.dialect
    if dialect.name == "postgresql":
        statement, processors = _unnest_insert(table, columns, returning, dialect)
        params = {
            f"c{k}": BinaryArray(row.get(name) for row in rows) if processor is None
            else BinaryArray(processor(row.get(name)) for row in rows)
            for k, (name, processor) in enumerate(zip(columns, processors))
        }
        result = conn.execute(statement, params)
        if not returning:
            return [None] * len(rows)
        # Serial ids are drawn in the order the rows are inserted, which ORDER BY fixes; the
        # RETURNING rows themselves come in no promised order: sorted, they match ``rows``
        # (SQLAlchemy's own "insertmanyvalues" relies on the same rule).
        return sorted(result.scalars())
    full = [{name: row.get(name) for name in columns} for row in rows]
    if not returning:
        conn.execute(insert(table), full)
        return [None] * len(rows)
    statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
    return list(conn.execute(statement, full).scalars())


class BinaryArray(list):  # type: ignore[type-arg]
    """An array parameter psycopg sends in binary (``pbem.db.session`` registers its dumper on
    PostgreSQL connections): a text array of ``bytea`` is escaped byte by byte in Python, about
    0.1 ms per move for the outbox's raw mails.  Without the dumper it is sent as a plain list."""


@functools.lru_cache(maxsize=64)
def _unnest_insert(table: Table, columns: tuple[str, ...], returning: bool,
                   dialect: Dialect) -> tuple[Any, tuple[Any, ...]]:
    """``INSERT INTO t (cols) SELECT cols FROM unnest(CAST(:c0 AS type0[]), ..) WITH ORDINALITY
    .. ORDER BY ord``, and each column's bind processor (applied to each element, since the
    array parameter itself is untyped to SQLAlchemy)."""
    types = [table.c[name].type.dialect_impl(dialect) for name in columns]
    names = ", ".join(columns)
    arrays = ", ".join(f"CAST(:c{k} AS {type_.compile(dialect)}[])" for k, type_ in enumerate(types))
    aliases = ", ".join(f"u{k}" for k in range(len(columns)))
    sql = (f"INSERT INTO {table.name} ({names}) SELECT {aliases} FROM unnest({arrays}) "
           f"WITH ORDINALITY AS u({aliases}, ord) ORDER BY ord")
    if returning:
        sql += " RETURNING id"
    return text(sql), tuple(type_.bind_processor(dialect) for type_ in types)


# -- updating changed objects ---------------------------------------------------------------------------


def write_dirty(session: Session, classes: Iterable[type] | None = None, *, merged: Iterable[type] = ()) -> None:
    """Write the changed column values of the session's loaded objects (of ``classes``, or all)
    with Core UPDATEs, and mark them committed; objects this cannot write stay for the ORM.

    Objects of ``merged`` classes are written with one executemany for the table: each row
    gets every column changed in any of them, its own unchanged ones with the values loaded.
    Only for rows nobody else writes meanwhile (a game's seats: written under its lock).
    """
    wanted = tuple(classes) if classes is not None else None
    merge = tuple(merged)
    found: dict[_Plan, list[tuple[Any, Any, tuple[str, ...]]]] = {}
    for obj in session.dirty:
        if wanted is not None and not isinstance(obj, wanted):
            continue
        state = inspect(obj)
        plan = _plan(state.mapper)
        if plan is None:
            continue
        changed = tuple(sorted(state.committed_state))
        if not changed or any(key not in plan.writable or key not in state.dict for key in changed):
            continue
        found.setdefault(plan, []).append((obj, state, changed))
    if not found:
        return
    groups: dict[tuple[_Plan, tuple[str, ...]], list[tuple[Any, dict[str, Any]]]] = {}
    for plan, items in found.items():
        union = tuple(sorted({key for _obj, _state, changed in items for key in changed}))
        together = (len(items) > 1 and isinstance(items[0][0], merge)
                    and all(key in state.dict for _obj, state, _changed in items for key in union))
        for obj, state, changed in items:
            columns = union if together else changed
            row = {f"v_{key}": state.dict[key] for key in columns}
            for key in plan.keys:
                row[f"k_{key}"] = state.dict[key]
            if plan.version is not None:
                row["k_version"] = old = state.dict[plan.version]
                row[_NEW_VERSION] = plan.next_version(old)
            groups.setdefault((plan, columns), []).append((obj, row))
    conn = session.connection()
    for (plan, columns), members in groups.items():
        statement = _update_statement(plan.table, columns, plan.keys, plan.version)
        if plan.version is None:
            conn.execute(statement, [row for _obj, row in members])  # one executemany
        else:
            for _obj, row in members:  # each row's version checked on its own
                if conn.execute(statement, row).rowcount != 1:
                    keys = [row[f"k_{key}"] for key in plan.keys]
                    raise StaleDataError(f"{plan.table.name} {keys}: version {row['k_version']} changed meanwhile")
        for obj, row in members:
            _mark_written(session, obj, plan, columns, row)


_NEW_VERSION = "v__new_version"


def _mark_written(session: Session, obj: Any, plan: _Plan, columns: tuple[str, ...], row: dict[str, Any]) -> None:
    """Tell the ORM the row now holds the object's values, so its flush has nothing to do.

    The whole object is marked committed and taken off the session's list of modified objects
    (what the ORM does after its own flush), sparing the flush that follows a pass over it; an
    object with collection changes waiting (``_pending_mutations``) only gets the written
    columns marked, and stays for the ORM."""
    state = inspect(obj)
    if plan.version is not None:
        set_committed_value(obj, plan.version, row[_NEW_VERSION])
    commit_all = getattr(state, "_commit_all", None)
    if commit_all is not None and "_pending_mutations" not in state.__dict__:
        commit_all(state.dict, session.identity_map)
        return
    for key in columns:
        set_committed_value(obj, key, row[f"v_{key}"])


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


@functools.lru_cache(maxsize=256)
def _update_statement(table: Table, changed: tuple[str, ...], keys: tuple[str, ...], version: str | None) -> Any:
    criteria = [table.c[key] == bindparam(f"k_{key}") for key in keys]
    values: dict[str, Any] = {key: bindparam(f"v_{key}") for key in changed}
    if version is not None:
        criteria.append(table.c[version] == bindparam("k_version"))
        values[version] = bindparam(_NEW_VERSION)
    return update(table).where(*criteria).values(values)
