"""Moves of one game handled by real Celery workers on PostgreSQL: overlapping transactions never
corrupt a game or apply a move twice, and a worker killed in the middle of a move loses nothing.

The overlap is forced, not hoped for: the test takes the game row's lock itself, so the workers'
transactions start, lock their mails, and wait on the game at the same moment; PostgreSQL's
``pg_stat_activity`` shows them waiting before the test lets go.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

import pytest
from sqlalchemy import create_engine, select, text

from pbem.config import Settings
from pbem.db.models import InboundMessage, Move, OutboundMessage
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from pbem.services.games import SeatSpec, create_game, start_game
from pbem.services.gamestore import load_game, snapshot_agrees
from pbem.services.intake import store_inbound
from tests.e2e.pipeline import redis_db
from tests.harness.celery_worker import CeleryWorker
from tests.harness.players import Received, reply_bytes
from tests.harness.waiting import wait_for
from workers.app import make_celery
from workers.queueing import queue_inbound

pytestmark = pytest.mark.postgres

PLAYERS = [f"w{i}@players.test" for i in range(4)]


@pytest.fixture
def env(pg_migrated_url: str, redis_url: str, smtp_sink, tmp_path) -> dict[str, str]:
    return {
        "PBEM_DATABASE_URL": pg_migrated_url,
        "PBEM_BROKER_URL": redis_db(redis_url, 2),
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_MAIL_DOMAIN": "hearts.test",
        "PBEM_SECRET_KEY": "worker-test-secret",
        "PBEM_RELAY_HOST": smtp_sink.host,
        "PBEM_RELAY_PORT": str(smtp_sink.port),
    }


@pytest.fixture
def svc(env: dict[str, str]) -> Services:
    services = Services.from_settings(Settings.from_env(env))
    yield services
    services.close()


def start(svc: Services) -> tuple[int, dict[int, Received]]:
    """A game in its passing phase; the your_turn mail of each seat."""
    with transaction(svc.session_factory) as session:
        game = create_game(session, svc, rules=Rules(), seats=[SeatSpec(address=a) for a in PLAYERS], seed="w")
        mails = start_game(session, svc, game)
        turns = {PLAYERS.index(m.recipient): Received.parse(m.raw) for m in mails if m.kind == "your_turn"}
        return game.id, turns


def store(svc: Services, sender: str, received: Received, body: str) -> int:
    with transaction(svc.session_factory) as session:
        [inbound_id] = store_inbound(session, raw=reply_bytes(received, sender=sender, body=body), mail_from=sender,
                                     recipients=[received.reply_to], source="smtp", received_at=svc.clock.now())
    return inbound_id


class GameLock:
    """The test's own transaction holding the game row's lock."""

    def __init__(self, url: str, game_id: int) -> None:
        self.engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
        self.connection = self.engine.connect()
        self.transaction = self.connection.begin()
        self.connection.execute(text("SELECT id FROM games WHERE id = :id FOR UPDATE"), {"id": game_id})
        self.pid = self.connection.execute(text("SELECT pg_backend_pid()")).scalar_one()

    def waiting(self) -> int:
        """Backends of this database waiting for a lock (behind this transaction, directly or queued
        behind another waiter for the same row)."""
        with self.engine.connect() as probe:
            return probe.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND cardinality(pg_blocking_pids(pid)) > 0"
            )).scalar_one()

    def release(self) -> None:
        self.transaction.commit()
        self.connection.close()
        self.engine.dispose()


def moves(svc: Services, game_id: int) -> list[Move]:
    with transaction(svc.session_factory) as session:
        return list(session.scalars(select(Move).where(Move.game_id == game_id).order_by(Move.seq)))


def inbound(svc: Services, ids: list[int]) -> dict[int, dict]:
    with transaction(svc.session_factory) as session:
        rows = session.scalars(select(InboundMessage).where(InboundMessage.id.in_(ids))).all()
        return {r.id: {"status": str(r.status), **(r.outcome or {})} for r in rows}


def test_two_workers_overlapping_on_one_game_apply_each_move_once(env, svc, pg_migrated_url) -> None:
    game_id, turns = start(svc)
    pass0 = " ".join(turns[0].hand[:3])
    ids = [
        store(svc, PLAYERS[0], turns[0], pass0),                       # seat 0 passes
        store(svc, PLAYERS[1], turns[1], " ".join(turns[1].hand[:3])),  # seat 1 passes
        store(svc, PLAYERS[0], turns[0], " ".join(turns[0].hand[3:6])),  # seat 0 again: same decision
    ]
    lock = GameLock(pg_migrated_url, game_id)
    try:
        with CeleryWorker(env, concurrency=2) as worker:
            queue_inbound(make_celery(Settings.from_env(env)), ids)
            # Both pool processes are inside their transactions, waiting on the game row.
            wait_for(lambda: lock.waiting() >= 2, timeout=30, message="two workers waiting on the game")
            lock.release()
            wait_for(lambda: all(v["status"] != "pending" for v in inbound(svc, ids).values()) and
                     len(inbound(svc, ids)) == 3, timeout=60, message="the three mails processed")
            outcomes = inbound(svc, ids)
    finally:
        if lock.connection is not None and not lock.connection.closed:
            lock.release()
    log = moves(svc, game_id)
    passes = [(m.seat, tuple(m.payload["cards"])) for m in log if m.kind == "pass"]
    assert sorted(s for s, _ in passes) == [0, 1], passes  # each seat once, never twice
    assert [m.seq for m in log] == list(range(1, len(log) + 1))  # no gap, no duplicate
    codes = Counter(o["code"] for o in outcomes.values())
    assert codes == {"MOVE_APPLIED": 2, "STALE_TURN": 1}, outcomes
    # The seat 0 pass that won is the one whose mail was processed as MOVE_APPLIED.
    applied0 = next(i for i in (ids[0], ids[2]) if outcomes[i]["code"] == "MOVE_APPLIED")
    assert dict(passes)[0] == tuple(outcomes[applied0]["move"]["cards"])
    with transaction(svc.session_factory) as session:
        assert snapshot_agrees(session, load_game(session, game_id, lock=False))
        assert session.get_one(type(load_game(session, game_id, lock=False)), game_id).snapshot["passes"][1]


def test_a_worker_killed_in_the_middle_of_a_move_loses_nothing_and_applies_it_once(env, svc, pg_migrated_url,
                                                                                   smtp_sink) -> None:
    game_id, turns = start(svc)
    inbound_id = store(svc, PLAYERS[2], turns[2], " ".join(turns[2].hand[:3]))
    lock = GameLock(pg_migrated_url, game_id)
    try:
        with CeleryWorker(env, concurrency=1) as worker:
            [child] = worker.pool_pids()
            queue_inbound(make_celery(Settings.from_env(env)), [inbound_id])
            # The move is under way: its transaction holds the mail and waits for the game.
            wait_for(lambda: lock.waiting() >= 1, timeout=30, message="the worker inside the move")
            os.kill(child, signal.SIGKILL)
            wait_for(lambda: child not in worker.pool_pids() and worker.pool_pids(), timeout=30,
                     message="the pool to replace the killed process")
            lock.release()
            # task_reject_on_worker_lost + acks_late: the task is requeued and run by the new process.
            wait_for(lambda: inbound(svc, [inbound_id])[inbound_id]["status"] == "done", timeout=60,
                     message="the move applied after the kill")
            assert worker.alive()
            log_text = worker.log_text()
    finally:
        if not lock.connection.closed:
            lock.release()
    log = moves(svc, game_id)
    assert [(m.kind, m.seat) for m in log if m.kind == "pass"] == [("pass", 2)]
    assert inbound(svc, [inbound_id])[inbound_id]["code"] == "MOVE_APPLIED"
    assert "WorkerLostError" in log_text or "SIGKILL" in log_text or "signal 9" in log_text
    with transaction(svc.session_factory) as session:
        assert snapshot_agrees(session, load_game(session, game_id, lock=False))
        counts = Counter(session.scalars(select(OutboundMessage.kind).where(OutboundMessage.inbound_id == inbound_id)))
    # A pass by one seat while others still pass: only its acknowledgement, once (the move applied once).
    assert counts == {"pass_done": 1}
