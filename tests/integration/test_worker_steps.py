"""A game whose automatic moves outlast one step goes on through ``pbem.continue_game`` tasks on a
real Celery worker and Redis, one committed step each, to its end; a step that was never queued is
found by the sweep."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from pbem.db.models import Game, GameStatus, Move
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services.games import SeatSpec, create_game, start_game
from pbem.services.turns import AUTOMATIC_MOVES_PER_STEP, games_to_continue
from tests.harness.celery_worker import CeleryWorker
from tests.harness.smtp_sink import SmtpSink
from tests.harness.waiting import wait_for
from tests.integration.test_worker_tasks import Env, make_env  # noqa: F401 (the fixture)
from workers.queueing import SWEEP, queue_continue

pytestmark = pytest.mark.redis


def computers_only(env: Env) -> tuple[int, list[tuple[int, int]]]:
    with transaction(env.svc.session_factory) as session:
        game = create_game(session, env.svc, rules=Rules.make("standard", target=26),
                           seats=[SeatSpec(bot="heuristic")] * 4, seed="worker-steps")
        start_game(session, env.svc, game)
        return game.id, games_to_continue(session)


def game_state(env: Env, game_id: int) -> tuple[GameStatus, int]:
    with transaction(env.svc.session_factory) as session:
        game = session.get(Game, game_id)
        moves = session.scalar(select(func.count()).select_from(Move).where(Move.game_id == game_id))
        return game.status, moves


def test_a_game_of_computers_is_played_to_its_end_in_steps_by_the_worker(make_env, smtp_sink: SmtpSink) -> None:
    env = make_env(smtp_sink.port)
    game_id, marked = computers_only(env)
    assert [g for g, _ in marked] == [game_id]
    assert game_state(env, game_id) == (GameStatus.ACTIVE, 1 + AUTOMATIC_MOVES_PER_STEP)
    with CeleryWorker(env.vars) as worker:
        queue_continue(env.celery, marked)
        wait_for(lambda: game_state(env, game_id)[0] == GameStatus.FINISHED, timeout=300,
                 message="the game played to its end by the worker")
        steps = worker.log_text().count("Task pbem.continue_game[")
    _status, moves = game_state(env, game_id)
    assert steps >= (moves - 1) // AUTOMATIC_MOVES_PER_STEP - 1  # one task a step, none longer


def test_a_step_that_was_never_queued_is_queued_by_the_sweep(make_env, smtp_sink: SmtpSink) -> None:
    env = make_env(smtp_sink.port)
    game_id, _marked = computers_only(env)  # its follow-up is "lost": never queued
    env.clock.advance(seconds=60)  # the worker's clock too (PBEM_CLOCK_OFFSET_FILE)
    with CeleryWorker(env.vars):
        env.celery.send_task(SWEEP)
        wait_for(lambda: game_state(env, game_id)[0] == GameStatus.FINISHED, timeout=300,
                 message="the sweep found the game and its steps played it to its end")
