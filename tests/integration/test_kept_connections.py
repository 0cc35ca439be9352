"""``KeptConnections``: one-statement work on a connection each thread keeps (the SMTP front's
store), committed as it runs, and never left broken after the server dropped it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError

from pbem.db.session import KeptConnections, make_engine, make_session_factory


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def kept(engine: Engine) -> Iterator[KeptConnections]:
    connections = KeptConnections(make_session_factory(engine))
    yield connections
    connections.close()


def run(kept: KeptConnections, sql: str, **params: Any) -> Any:
    with kept.single_statement() as conn:
        result = conn.execute(text(sql), params)
        return result.scalar() if result.returns_rows else None


def in_thread(function: Callable[[], Any]) -> Any:
    """``function()`` run on a thread of its own."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join()
    return result[0]


def test_a_statement_is_committed_as_it_runs(engine: Engine, kept: KeptConnections) -> None:
    run(kept, "INSERT INTO players (address) VALUES ('ana@example.com')")
    with engine.connect() as other:  # another connection sees it at once
        assert other.execute(text("SELECT count(*) FROM players")).scalar() == 1


def test_a_failed_statement_leaves_the_next_one_working(kept: KeptConnections) -> None:
    with pytest.raises(DBAPIError):
        run(kept, "SELECT * FROM no_such_table")
    assert run(kept, "SELECT 2") == 2


@pytest.mark.postgres
def test_each_thread_keeps_one_connection(pg_migrated_url: str) -> None:
    engine = make_engine(pg_migrated_url)
    checkouts: list[object] = []
    event.listen(engine, "checkout", lambda *_args: checkouts.append(None))
    kept = KeptConnections(make_session_factory(engine))
    backend = "SELECT pg_backend_pid()"
    try:
        mine = {run(kept, backend) for _ in range(5)}
        theirs = in_thread(lambda: {run(kept, backend) for _ in range(5)})
        assert len(mine) == len(theirs) == 1 and mine != theirs
        assert len(checkouts) == 2  # one from the pool per thread, not one per statement
    finally:
        kept.close()
    admin = make_engine(pg_migrated_url)  # given back to the pool: idle, not in a transaction
    with admin.connect() as conn:
        states = dict(conn.execute(text("SELECT pid, state FROM pg_stat_activity")).all())
    assert {states[pid] for pid in mine | theirs} == {"idle"}
    admin.dispose()
    engine.dispose()


@pytest.mark.postgres
def test_a_lost_connection_fails_once_and_retires_every_thread_s(pg_migrated_url: str) -> None:
    engine = make_engine(pg_migrated_url)
    kept = KeptConnections(make_session_factory(engine))
    backend = "SELECT pg_backend_pid()"
    try:
        mine = run(kept, backend)
        results: list[Any] = []
        go, done = threading.Event(), threading.Event()

        def other_thread() -> None:  # keeps its connection between its two statements
            results.append(run(kept, backend))
            done.set()
            go.wait(timeout=30)
            results.append(run(kept, backend))

        thread = threading.Thread(target=other_thread)
        thread.start()
        assert done.wait(timeout=30)
        theirs = results[0]
        with make_engine(pg_migrated_url).connect() as admin:  # the server drops both
            for pid in (mine, theirs):
                admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(OperationalError):
            run(kept, backend)  # this thread finds its connection gone: that statement fails
        go.set()
        thread.join(timeout=30)
        assert results[1] not in (mine, theirs)  # the other thread did not try its dead one
        assert run(kept, backend) not in (mine, theirs, results[1])
    finally:
        kept.close()
        engine.dispose()


@pytest.mark.postgres
def test_asynchronous_commit_stays_on_its_own_connections(pg_migrated_url: str) -> None:
    """``synchronous_commit=False`` (the outbox's "sent" records): those connections commit without
    waiting for the WAL flush, and the setting never reaches a pooled connection, not even after
    they were retired."""
    # Connections of this engine start durable, whatever the test server's own default.
    engine = make_engine(make_url(pg_migrated_url).update_query_dict({"options": "-c synchronous_commit=on"}))
    relaxed = KeptConnections(make_session_factory(engine), synchronous_commit=False)
    durable = KeptConnections(make_session_factory(engine))
    show = "SHOW synchronous_commit"
    try:
        assert run(relaxed, show) == "off"
        assert in_thread(lambda: run(relaxed, show)) == "off"
        run(relaxed, "INSERT INTO players (address) VALUES ('ana@example.com')")
        with engine.connect() as other:  # committed as it ran
            assert other.execute(text("SELECT count(*) FROM players")).scalar() == 1
        assert run(durable, show) == "on"
        relaxed.close()
        with engine.connect() as a, engine.connect() as b:  # whatever the pool holds now
            assert {a.execute(text(show)).scalar(), b.execute(text(show)).scalar()} == {"on"}
    finally:
        relaxed.close()
        durable.close()
        engine.dispose()
