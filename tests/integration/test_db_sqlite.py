"""SQLite as the embedded database: WAL, and writers that queue instead of failing."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Engine, event, select
from sqlalchemy.exc import OperationalError

from pbem.db.models import Game
from pbem.db.session import make_engine, make_session_factory, transaction

EVENT_TIMEOUT = 10.0


def sqlite_path(url: str) -> str:
    return url.removeprefix("sqlite:///")


def new_game(engine: Engine) -> int:
    with transaction(make_session_factory(engine)) as session:
        game = Game(rules={}, next_seq=1)
        session.add(game)
        session.flush()
        return game.id


def next_seq(engine: Engine, game_id: int) -> int:
    with make_session_factory(engine)() as session:
        return session.scalars(select(Game.next_seq).where(Game.id == game_id)).one()


class Worker(threading.Thread):
    """Runs ``body`` in a thread and keeps its result or exception for the test."""

    def __init__(self, body: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.body = body
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.body()
        except BaseException as error:  # handed to the test thread, which re-raises
            self.error = error

    def outcome(self, timeout: float = 60.0) -> Any:
        self.join(timeout)
        assert not self.is_alive(), "worker thread did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def must_wait(flag: threading.Event) -> None:
    assert flag.wait(EVENT_TIMEOUT), "the other thread never got there"


def test_migrated_database_is_in_wal_mode_with_pragmas(sqlite_migrated_url: str) -> None:
    # WAL is a property of the file: a plain connection sees it too.
    plain = sqlite3.connect(sqlite_path(sqlite_migrated_url))
    try:
        assert plain.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        plain.close()

    engine = make_engine(sqlite_migrated_url, busy_timeout_s=12.5)
    try:
        with engine.connect() as connection:
            pragma = lambda name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
            assert pragma("journal_mode") == "wal"
            assert pragma("foreign_keys") == 1
            assert pragma("synchronous") == 1  # NORMAL
            assert pragma("busy_timeout") == 12500
    finally:
        engine.dispose()


def test_two_writers_with_begin_immediate_serialise(sqlite_migrated_url: str) -> None:
    """Writer B starts while writer A holds an open read-then-write transaction:
    B waits at BEGIN and then sees A's write, instead of failing."""
    engine = make_engine(sqlite_migrated_url)
    game_id = new_game(engine)
    factory = make_session_factory(engine)
    a_inside, a_may_write, b_began = threading.Event(), threading.Event(), threading.Event()

    @event.listens_for(engine, "before_cursor_execute")
    def _seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("BEGIN") and threading.current_thread() is writer_b:
            b_began.set()

    def increment(inside: threading.Event | None, may_write: threading.Event | None) -> int:
        with transaction(factory) as session:
            game = session.get(Game, game_id)
            assert game is not None
            seen = game.next_seq
            if inside is not None:
                inside.set()
            if may_write is not None:
                must_wait(may_write)
            game.next_seq = seen + 1
        return seen

    try:
        writer_a = Worker(lambda: increment(a_inside, a_may_write))
        writer_b = Worker(lambda: increment(None, None))
        writer_a.start()
        must_wait(a_inside)  # A has read inside its transaction and holds the write lock
        writer_b.start()
        must_wait(b_began)  # B has issued BEGIN IMMEDIATE, which cannot succeed yet
        assert writer_b.is_alive() and writer_b.result is None
        a_may_write.set()

        assert writer_a.outcome() == 1
        assert writer_b.outcome() == 2  # B read after A committed: serialised
        assert next_seq(engine, game_id) == 3
    finally:
        a_may_write.set()
        engine.dispose()


def test_without_begin_immediate_the_same_writers_fail(sqlite_migrated_url: str) -> None:
    """The control: with a deferred BEGIN both read the same snapshot, and the
    second to write gets "database is locked" at once (the busy timeout cannot
    help a stale snapshot).  This is what BEGIN IMMEDIATE exists to prevent."""
    engine = make_engine(sqlite_migrated_url, sqlite_begin="DEFERRED", busy_timeout_s=2)
    game_id = new_game(engine)
    factory = make_session_factory(engine)
    both_read = threading.Barrier(2, timeout=EVENT_TIMEOUT)
    a_committed = threading.Event()

    def increment(first: bool) -> int:
        with transaction(factory) as session:
            game = session.get(Game, game_id)
            assert game is not None
            seen = game.next_seq
            both_read.wait()
            if not first:
                must_wait(a_committed)
            game.next_seq = seen + 1
        if first:
            a_committed.set()
        return seen

    try:
        writer_a, writer_b = Worker(lambda: increment(True)), Worker(lambda: increment(False))
        writer_a.start()
        writer_b.start()
        assert writer_a.outcome() == 1
        with pytest.raises(OperationalError, match="database is locked"):
            writer_b.outcome()
        assert next_seq(engine, game_id) == 2
    finally:
        a_committed.set()
        engine.dispose()


def test_many_concurrent_read_modify_writes_lose_nothing(sqlite_migrated_url: str) -> None:
    engine = make_engine(sqlite_migrated_url)
    game_id = new_game(engine)
    factory = make_session_factory(engine)
    threads, rounds = 4, 25
    start = threading.Barrier(threads, timeout=EVENT_TIMEOUT)

    def work() -> None:
        start.wait()
        for _ in range(rounds):
            with transaction(factory) as session:
                game = session.get(Game, game_id)
                assert game is not None
                game.next_seq = game.next_seq + 1

    try:
        workers = [Worker(work) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.outcome()
        assert next_seq(engine, game_id) == 1 + threads * rounds
    finally:
        engine.dispose()
