"""Engines, sessions and transactions for SQLite (embedded) and PostgreSQL.

SQLite needs care to carry several writers (the SMTP front, workers):
- WAL, so readers never block the writer and the writer never blocks readers;
- a busy timeout, so a writer waits for the lock instead of failing at once;
- ``BEGIN IMMEDIATE``: Python's sqlite3 driver delays BEGIN until the first write,
  so a transaction that reads and then writes holds a stale snapshot and fails with
  "database is locked" when another writer committed in between (the busy timeout
  cannot help there).  Taking the write lock at BEGIN makes writers queue instead.
  This is the event recipe of SQLAlchemy's SQLite documentation ("Enabling
  Non-Legacy SQLite Transactional Modes"), with IMMEDIATE as the BEGIN mode.
- ``foreign_keys=ON`` (off by default in SQLite) and ``synchronous=NORMAL``
  (durable at checkpoints; the usual companion of WAL).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from pbem.db import writes
from pbem.db.arrays import register_dumpers
from pbem.db.models import Game, Seat

DEFAULT_BUSY_TIMEOUT_S = 30.0
POOL_RECYCLE_S = 3600
SQLITE_BEGIN_MODES = ("DEFERRED", "IMMEDIATE", "EXCLUSIVE")


def make_engine(
    url: str | URL,
    *,
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
    sqlite_begin: str = "IMMEDIATE",
    **engine_kwargs: Any,
) -> Engine:
    """An engine for ``url``, tuned for the database it names.

    ``sqlite_begin`` chooses how SQLite transactions start: IMMEDIATE (default,
    for anything that may write), DEFERRED for read-only work that should not
    queue behind writers.  Other keyword arguments go to ``create_engine``.
    """
    url = normalise_url(url)
    if url.get_backend_name() == "sqlite":
        if sqlite_begin not in SQLITE_BEGIN_MODES:
            raise ValueError(f"sqlite_begin must be one of {SQLITE_BEGIN_MODES}")
        engine_kwargs.setdefault("connect_args", {}).setdefault("timeout", busy_timeout_s)
        engine = create_engine(url, **engine_kwargs)
        _tune_sqlite(engine, busy_timeout_s=busy_timeout_s, begin=f"BEGIN {sqlite_begin}")
        return engine
    # No pre-ping: it costs a round trip on every checkout (four per move).  A connection
    # that died (server restarted) fails the one transaction that used it, which the
    # callers already treat as a temporary failure (the SMTP front answers 451 and the
    # sender retries; tasks retry OperationalError with backoff); SQLAlchemy then
    # discards the whole pool.  Connections are recycled hourly against idle timeouts
    # of proxies and firewalls.
    engine_kwargs.setdefault("pool_pre_ping", False)
    engine_kwargs.setdefault("pool_recycle", POOL_RECYCLE_S)
    engine = create_engine(url, **engine_kwargs)
    if url.get_driver_name() == "psycopg":
        event.listen(engine, "connect", _tune_psycopg)
    return engine


def _tune_psycopg(dbapi_connection: Any, _record: Any) -> None:
    """Array parameters of ``pbem.db.writes`` go in binary (``pbem.db.arrays``): packed by pbem,
    or by psycopg's list dumper (no per-byte escaping of ``bytea``)."""
    register_dumpers(dbapi_connection)


def normalise_url(url: str | URL) -> URL:
    """``postgres://`` and ``postgresql://`` mean psycopg 3 here (the installed
    driver; SQLAlchemy would otherwise look for psycopg2)."""
    url = make_url(url)
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def _tune_sqlite(engine: Engine, *, busy_timeout_s: float, begin: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Stop the driver from emitting BEGIN itself; "begin" below does it.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        options = connection.get_execution_options()
        if options.get("isolation_level") == "AUTOCOMMIT":
            return
        mode = options.get("sqlite_begin")  # a read-only connection's DEFERRED (``reads``)
        connection.exec_driver_sql(f"BEGIN {mode}" if mode in SQLITE_BEGIN_MODES else begin)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions bound to ``engine``.  Objects stay readable after commit
    (``expire_on_commit=False``) so services can hand them to templates.  Rows buffered by
    :mod:`pbem.db.writes` are written before each ORM statement and at commit; at each flush, the
    changed games and seats are written by Core UPDATEs (``writes.write_dirty``; a game's rows
    are written under its lock, so their order cannot deadlock, and its changed seats can go in
    one statement), the rest by the ORM."""
    factory = sessionmaker(bind=engine, expire_on_commit=False)
    writes.install(factory, dirty_classes=(Game, Seat), merged_classes=(Seat,))
    return factory


@contextmanager
def transaction(session_factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit when the block ends, roll back if it raises."""
    with session_factory() as session, session.begin():
        yield session


def engine_of(session_factory: sessionmaker[Session]) -> Engine:
    """The engine a session factory made by ``make_session_factory`` is bound to."""
    return session_factory.kw["bind"]


@contextmanager
def single_statement(session_factory: sessionmaker[Session]) -> Iterator[Connection]:
    """A connection for work that is ONE statement (atomic by itself), committed as it runs.

    On PostgreSQL the connection is in autocommit: one round trip instead of three (BEGIN, the
    statement, COMMIT), which matters for the hottest statements (storing a received mail,
    claiming and recording outgoing ones).  On SQLite, where a transaction costs no round trip,
    it is an ordinary ``BEGIN IMMEDIATE`` transaction: SQLAlchemy's AUTOCOMMIT would reset the
    driver's transaction handling that ``make_engine`` sets up.  Run one statement only: with
    two, a failure between them would leave the first done.
    """
    engine = engine_of(session_factory)
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            yield conn
    else:
        with engine.begin() as conn:
            yield conn


@contextmanager
def reads(session_factory: sessionmaker[Session]) -> Iterator[Connection]:
    """A connection for reads that need no common snapshot (each statement may see a later
    commit than the one before).  On PostgreSQL it is in autocommit: each read is one round trip,
    with no BEGIN before and no ROLLBACK after.  On SQLite its transaction is ``BEGIN DEFERRED``,
    so it never queues behind a writer for the write lock that an ordinary transaction's
    ``BEGIN IMMEDIATE`` takes (WAL: readers see the last commit), and it is rolled back."""
    engine = engine_of(session_factory)
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            yield conn
    else:
        with engine.connect().execution_options(sqlite_begin="DEFERRED") as conn:
            yield conn


class KeptConnections:
    """``single_statement`` for a process that runs one-statement work all day from a few threads
    (the SMTP front stores each received mail so): ``with kept.single_statement() as conn``.

    On PostgreSQL each thread keeps its autocommit connection between statements instead of
    taking one from the pool, switching it to autocommit and back, and rolling it back on the
    way in: that was as much CPU as the statement itself.  A statement that fails gives its
    connection back to the pool (which drops a broken one); a failure that lost the connection
    retires every thread's, as the pool does with its own when the server went away, and
    connections are replaced after ``POOL_RECYCLE_S`` as the pool's are.  The caller sees the
    same failure as with ``single_statement``.  On SQLite this is ``single_statement``.
    ``close`` gives every kept connection back; call it once the threads are done.

    ``synchronous_commit=False`` is for records whose loss in a crash of the database server is
    harmless (a mail recorded as sent is sent again after its lease): PostgreSQL's asynchronous
    commit, set on these connections only, answers a commit without waiting for its WAL to reach
    the disk (it does within ``3 * wal_writer_delay``, 0.6 s by default, and a crash never leaves
    the database inconsistent).  Such a connection is detached from the pool, so the setting never
    reaches a connection anything else uses.
    """

    def __init__(self, session_factory: sessionmaker[Session], *, synchronous_commit: bool = True) -> None:
        self.session_factory = session_factory
        self._synchronous_commit = synchronous_commit
        self._engine = engine_of(session_factory)
        self._keeps = self._engine.dialect.name == "postgresql"
        self._local = threading.local()
        self._lock = threading.Lock()
        self._kept: set[Connection] = set()
        self._generation = 0  # bumped when a statement lost its connection

    @contextmanager
    def single_statement(self) -> Iterator[Connection]:
        if not self._keeps:
            with single_statement(self.session_factory) as conn:
                yield conn
            return
        conn = self._connection()
        try:
            yield conn
            conn.commit()  # ends SQLAlchemy's own transaction: nothing to send in autocommit
        except BaseException as error:
            self._retire(conn, lost=isinstance(error, DBAPIError) and error.connection_invalidated)
            raise

    @contextmanager
    def reads(self) -> Iterator[Connection]:
        """:func:`reads` on this thread's kept connection (PostgreSQL: no checkout, no switch to
        autocommit and back); on SQLite :func:`reads` itself."""
        if not self._keeps:
            with reads(self.session_factory) as conn:
                yield conn
            return
        with self.single_statement() as conn:
            yield conn

    def _connection(self) -> Connection:
        kept: tuple[Connection, int, float] | None = getattr(self._local, "kept", None)
        if kept is not None:
            conn, generation, opened = kept
            if generation == self._generation and time.monotonic() - opened < POOL_RECYCLE_S:
                return conn
            self._retire(conn, lost=False)
        conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        if not self._synchronous_commit:
            try:
                conn.detach()  # closed for good when retired, never back in the pool with the setting
                conn.exec_driver_sql("SET synchronous_commit = off")
                conn.commit()
            except BaseException:
                conn.close()
                raise
        self._local.kept = (conn, self._generation, time.monotonic())
        with self._lock:
            self._kept.add(conn)
        return conn

    def _retire(self, conn: Connection, *, lost: bool) -> None:
        self._local.kept = None
        with self._lock:
            self._kept.discard(conn)
            if lost:
                self._generation += 1
        conn.close()

    def close(self) -> None:
        with self._lock:
            kept, self._kept = self._kept, set()
            self._generation += 1  # a thread that kept one opens a new one if used again
        for conn in kept:
            conn.close()
