"""A worker whose pool processes are all killed while its CPU is busy comes back and processes the
moves waiting for it: a restart never depends on how fast a new pool process starts.

Celery kills a new pool process that has not reported "up" within ``worker_proc_alive_timeout``
and forks another.  Any slow work done at the start of each pool process (compiling the mail
templates was a second of CPU) turns a restart on a busy machine into an endless loop of forks and
kills, while the worker still says "ready".  Here the worker is pinned to one core shared with two
busy loops, runs four pool processes, and loses all four to SIGKILL; the four passes of a game
mailed meanwhile must still be applied and the mails they cause sent.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
from pathlib import Path

import pytest
import redis
from jinja2 import FileSystemLoader
from sqlalchemy import select

from pbem.config import Settings
from pbem.db.models import InboundMessage, OutboundMessage, OutboundStatus
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.app import Services
from pbem.services.games import SeatSpec, create_game, start_game
from pbem.services.intake import store_inbound
from tests.e2e.pipeline import redis_db
from tests.harness.celery_worker import CeleryWorker
from tests.harness.cpu_load import BusyLoops
from tests.harness.players import Received, reply_bytes
from tests.harness.waiting import WaitTimeout, wait_for
from workers.app import make_celery
from workers.queueing import queue_inbound

PLAYERS = [f"r{i}@players.test" for i in range(4)]
REDIS_DB = 7  # this module's own database on the shared test Redis
#: Generous: on a loaded machine the four moves and their mails take seconds, not minutes.
DEADLINE_S = 120


@pytest.fixture
def env(pg_migrated_url: str, redis_url: str, smtp_sink, tmp_path: Path) -> dict[str, str]:
    broker_url = redis_db(redis_url, REDIS_DB)
    client = redis.Redis.from_url(broker_url)
    client.flushdb()  # no task left over from an earlier run (this test's ids start at 1 again)
    client.close()
    return {
        "PBEM_DATABASE_URL": pg_migrated_url,
        "PBEM_BROKER_URL": broker_url,
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_MAIL_DOMAIN": "hearts.test",
        "PBEM_SECRET_KEY": "restart-test-secret",
        "PBEM_RELAY_HOST": smtp_sink.host,
        "PBEM_RELAY_PORT": str(smtp_sink.port),
    }


@pytest.mark.postgres
@pytest.mark.redis
def test_a_pool_killed_whole_on_a_busy_core_comes_back_and_processes_the_waiting_moves(env) -> None:
    assert shutil.which("taskset"), "taskset (util-linux) pins the worker to one core"
    settings = Settings.from_env(env)
    with Services.from_settings(settings) as svc:
        with transaction(svc.session_factory) as session:
            game = create_game(session, svc, rules=Rules(), seats=[SeatSpec(address=a) for a in PLAYERS],
                               seed="restart")
            turns = {PLAYERS.index(m.recipient): Received.parse(m.raw)
                     for m in start_game(session, svc, game) if m.kind == "your_turn"}

        with CeleryWorker(env, concurrency=4, cpus="0") as worker, BusyLoops(2, cpus="0"):
            children = worker.pool_pids()
            assert len(children) == 4
            for pid in children:
                os.kill(pid, signal.SIGKILL)
            # Each seat passes three cards; the last pass ends the passing and mails the players.
            ids: list[int] = []
            with transaction(svc.session_factory) as session:
                for seat, sender in enumerate(PLAYERS):
                    raw = reply_bytes(turns[seat], sender=sender, body=" ".join(turns[seat].hand[:3]))
                    ids += store_inbound(session, raw=raw, mail_from=sender, recipients=[turns[seat].reply_to],
                                         source="smtp", received_at=svc.clock.now())
            queue_inbound(make_celery(settings), ids)

            def settled() -> tuple[dict[int, tuple[str, str]], list[str]]:
                """Each mail's (status, outcome code); the statuses of the mails they caused."""
                with svc.session_factory() as session:
                    rows = session.scalars(select(InboundMessage).where(InboundMessage.id.in_(ids))).all()
                    mails = session.scalars(select(OutboundMessage.status)
                                            .where(OutboundMessage.inbound_id.in_(ids))).all()
                return ({row.id: (str(row.status), (row.outcome or {}).get("code")) for row in rows},
                        sorted(str(status) for status in mails))

            def all_applied_and_sent() -> bool:
                moves, mails = settled()
                return (set(moves.values()) == {("done", "MOVE_APPLIED")} and bool(mails)
                        and set(mails) == {"sent"})

            try:
                wait_for(all_applied_and_sent, timeout=DEADLINE_S, interval=0.5,
                         message="the four passes applied and their mails sent")
            except WaitTimeout as error:
                respawns = worker.log_text().count("Timed out waiting for UP message")
                raise AssertionError(f"{error}; now {settled()}; pool processes killed for a slow "
                                     f"start: {respawns}") from None
            assert worker.alive()
        moves, mails = settled()
    assert len(moves) == 4 and mails, (moves, mails)


def _pool_process(app, renderer, queue) -> None:
    """In a forked process: its Services render with the parent's renderer, whose templates are
    all compiled already (nothing reads a template file)."""

    def no_reading(*_args: object) -> None:
        raise AssertionError("a pool process compiled a template")

    try:
        FileSystemLoader.get_source = no_reading  # what Jinja calls to compile a template
        with app.services() as services:  # built in this process, as in a pool process
            assert services.composer.renderer is renderer, "the pool process made its own renderer"
            renderer.preload()  # looks every template up: each found compiled
        queue.put("ok")
    except BaseException as error:  # reported to the parent, whatever it is
        queue.put(repr(error))


def test_the_mail_templates_are_compiled_before_the_pool_forks(tmp_path: Path) -> None:
    """What the worker's main process does before it forks its pool (``worker_init``): the pool
    processes inherit a renderer with every template compiled, and their Services use it."""
    settings = Settings.from_env({"PBEM_DATA_DIR": str(tmp_path),
                                  "PBEM_DATABASE_URL": f"sqlite:///{tmp_path / 'pbem.db'}"})
    app = make_celery(settings)
    renderer = app.compile_mail_templates()
    fork = multiprocessing.get_context("fork")  # as the prefork pool starts its processes
    queue = fork.SimpleQueue()
    child = fork.Process(target=_pool_process, args=(app, renderer, queue))
    child.start()
    child.join(60)
    assert queue.get() == "ok"
