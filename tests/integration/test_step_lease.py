"""A step of a game of computers (``pbem.services.continuation``) is claimed for a lease, decides its
moves with no lock held and applies them in a short transaction: while one step is held open in the
middle of its bots' decisions, the sweep queues no second step, a duplicate task does nothing, and
other writers go on; a step whose worker died is queued again once its lease ran out; a step whose
game moved on while it decided decides again, and every move is applied once.

Through the real services on SQLite and PostgreSQL, and with the sweep of a real Celery worker on
Redis.  The step is held open by a hook on the bots' decisions (``turns.decide``) that waits for an
event; nothing waits for time to pass.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select

from pbem.db.models import Game, Move
from pbem.db.session import transaction
from pbem.services import turns
from pbem.services.app import Services
from pbem.services.continuation import (
    CONTINUE_STALE_AFTER,
    STEP_LEASE,
    Applied,
    claim_step,
    continue_game,
    decide_step,
    due_continuations,
)
from pbem.engine import Rules
from pbem.services.deadlines import Timing
from pbem.services.games import SeatSpec, settle
from pbem.services.gamestore import current_state, load_game
from pbem.services.operator import start_new_game
from pbem.services.tick import run_tick
from pbem.services.turns import begin_turn
from tests.harness.celery_worker import CeleryWorker
from tests.harness.services import ServicesFactory
from tests.harness.smtp_sink import SmtpSink
from tests.integration.test_bounded_work import computers_only, moves_of
from tests.integration.test_worker_tasks import Env, make_env  # noqa: F401 (the fixture)
from workers.queueing import SWEEP

HOLD_LIMIT_S = 120  # a held step is released by the test long before; past this the hook fails it


class HeldStep:
    """The bots' decisions hooked: once ``armed``, the first one waits until ``release`` (the step
    held open in the middle of deciding)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()
        decide = turns.decide

        def held(*args: Any, **kwargs: Any) -> Any:
            if self.armed and not self.entered.is_set():
                self.entered.set()
                if not self.release.wait(HOLD_LIMIT_S):
                    raise AssertionError("the held step was never released")
            return decide(*args, **kwargs)

        monkeypatch.setattr(turns, "decide", held)

    def hold(self, call: Callable[[], Applied]) -> InThread:
        """``call`` (a step) run in a thread of its own, once it is held at its first decision."""
        self.armed = True
        step = InThread(call)
        assert self.entered.wait(HOLD_LIMIT_S), "the step never reached its bots' decisions"
        return step


class InThread:
    """``call()`` run in a thread of its own; ``result()`` joins it and returns or raises."""

    def __init__(self, call: Callable[[], Applied]) -> None:
        self._out: list[Applied] = []
        self._error: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], Applied]) -> None:
        try:
            self._out.append(call())
        except BaseException as error:  # noqa: BLE001 (handed to the test's thread)
            self._error.append(error)

    def result(self) -> Applied:
        self._thread.join(HOLD_LIMIT_S)
        assert not self._thread.is_alive(), "the step did not end"
        if self._error:
            raise self._error[0]
        return self._out[0]


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldStep]:
    hold = HeldStep(monkeypatch)
    yield hold
    hold.release.set()  # never leave a step waiting, whatever the test did


def marked_game(svc: Services) -> tuple[int, int]:
    """A game of four computer players, started: marked to continue, with its mark."""
    game_id = computers_only(svc)
    [(marked, mark)] = due_continuations(svc, svc.clock.now(), older_than=timedelta(0))
    assert marked == game_id
    return game_id, mark


def continue_at(svc: Services, game_id: int) -> Any:
    with transaction(svc.session_factory) as session:
        return session.scalar(select(Game.continue_at).where(Game.id == game_id))


def test_while_a_step_is_held_open_the_sweep_queues_no_second_step(services: ServicesFactory,
                                                                   held: HeldStep) -> None:
    svc = services()
    game_id, mark = marked_game(svc)
    before = moves_of(svc, game_id)
    step = held.hold(lambda: continue_game(svc, game_id, mark))
    # Long after the game was marked, and after any step without a lease would have been stale:
    svc.clock.advance(seconds=(CONTINUE_STALE_AFTER * 3).total_seconds())
    assert due_continuations(svc, svc.clock.now()) == []  # the sweep's query: nothing to queue
    # A duplicate task finds the game taken and does nothing; it commits its own (failed) claim,
    # a write that the held step does not block (it holds no lock while its bots decide).
    assert continue_game(svc, game_id, mark).moves == 0
    assert moves_of(svc, game_id) == before
    held.release.set()
    applied = step.result()
    assert applied.moves > 0 and moves_of(svc, game_id) == before + applied.moves
    # It ended at the bound of its step: marked anew for its follow-up, at the game's next move.
    assert applied.continue_games == [(game_id, mark + applied.moves)]


def test_a_step_whose_worker_died_is_queued_again_once_its_lease_ran_out(services: ServicesFactory) -> None:
    svc = services()
    game_id, mark = marked_game(svc)
    claimed_at = svc.clock.now()
    assert claim_step(svc, game_id, mark, claimed_at)  # then its process dies
    assert not claim_step(svc, game_id, mark, claimed_at)  # held: no second claim
    assert continue_at(svc, game_id) == claimed_at + STEP_LEASE
    assert due_continuations(svc, claimed_at + STEP_LEASE) == []
    assert due_continuations(svc, claimed_at + STEP_LEASE + CONTINUE_STALE_AFTER) == [(game_id, mark)]
    svc.clock.advance(seconds=(STEP_LEASE + CONTINUE_STALE_AFTER).total_seconds())
    assert continue_game(svc, game_id, mark).moves > 0


def test_a_step_decides_without_writing_and_applies_each_decision_without_deciding_again(
        services: ServicesFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = services()
    game_id, mark = marked_game(svc)
    writes: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
            writes.append(statement)

    event.listen(svc.engine, "before_cursor_execute", count)
    try:
        decided = decide_step(svc, game_id, mark)
    finally:
        event.remove(svc.engine, "before_cursor_execute", count)
    assert writes == []
    assert decided is not None and decided.seq == mark and decided.moves > 0 and decided.choices
    assert moves_of(svc, game_id) == mark - 1  # nothing applied yet
    calls: list[int] = []
    decide = turns.decide
    monkeypatch.setattr(turns, "decide", lambda *a, **k: calls.append(1) or decide(*a, **k))
    applied = continue_game(svc, game_id, mark)
    # Each bot decided once, outside the lock (in the step's own decide part), never again in it.
    bot_moves = sum(1 for seq in range(mark, mark + applied.moves) if _by_bot(svc, game_id, seq))
    assert applied.moves > 0 and len(calls) == bot_moves


def _by_bot(svc: Services, game_id: int, seq: int) -> bool:
    with transaction(svc.session_factory) as session:
        return session.scalar(select(Move.kind).where(Move.game_id == game_id, Move.seq == seq)) != "deal"


def test_a_step_whose_game_moved_on_while_it_decided_decides_again(services: ServicesFactory,
                                                                    held: HeldStep) -> None:
    svc = services()
    game_id, _mark = marked_game(svc)
    before = moves_of(svc, game_id)
    step = held.hold(lambda: continue_game(svc, game_id))  # a step queued without a mark
    with transaction(svc.session_factory) as session:  # meanwhile the game moves on (as a tick would)
        game = load_game(session, game_id)
        turn = begin_turn(game, list(game.seats), current_state(game), svc.clock.now())
        settle(session, svc, turn, moves=3)
    assert moves_of(svc, game_id) == before + 3
    held.release.set()
    applied = step.result()
    assert applied.moves > 0
    with transaction(svc.session_factory) as session:
        seqs = session.scalars(select(Move.seq).where(Move.game_id == game_id).order_by(Move.seq)).all()
        assert seqs == list(range(1, before + 3 + applied.moves + 1))  # every move once, in order
        assert session.scalar(select(func.count()).select_from(Move).where(Move.game_id == game_id)) == len(seqs)


def test_the_tick_queues_only_the_games_it_left_to_continue(services: ServicesFactory) -> None:
    svc = services(PBEM_STAND_IN_BOT="heuristic")
    continuing, _mark = marked_game(svc)  # marked by its own start: its next step is queued already
    absent = start_new_game(svc, rules=Rules.make("standard", target=30), timing=Timing(
        deadline_hours=1, grace_hours=0, absence_policy="bot"), seed="tick-steps", title="", first_deck=None,
        seats=[SeatSpec(address="ana@example.org"), *[SeatSpec(bot="heuristic")] * 3]).game_id
    assert run_tick(svc).continue_games == []
    svc.clock.advance(hours=2)  # past ana's deadline: a computer plays for her, the game goes on alone
    ticked = run_tick(svc)
    assert ticked.continue_games == [(absent, moves_of(svc, absent) + 1)]
    assert continuing not in [g for g, _ in ticked.continue_games]


@pytest.mark.redis
def test_the_sweep_of_a_worker_queues_no_second_step_beside_a_held_one(make_env, smtp_sink: SmtpSink,  # noqa: F811
                                                                       held: HeldStep) -> None:
    env = make_env(smtp_sink.port)
    game_id, mark = marked_game(env.svc)
    env.add_outbound("step-lease@example.org")  # due now: the sweep has something to say it ran
    step = held.hold(lambda: continue_game(env.svc, game_id, mark))
    env.clock.advance(seconds=(CONTINUE_STALE_AFTER * 3).total_seconds())  # the worker's clock too
    with CeleryWorker(env.vars) as worker:
        env.celery.send_task(SWEEP)
        line = worker.wait_for_log("Task pbem.sweep[", timeout=60)
        [swept] = [entry for entry in line.splitlines() if "Task pbem.sweep[" in entry]
        assert "'outbound': 1" in swept and "'games': 0" in swept, swept
        held.release.set()
        applied = step.result()
        assert applied.moves > 0
        smtp_sink.wait_for_message(lambda m: "step-lease@example.org" in m.rcpt_tos, timeout=60)
        assert "Task pbem.continue_game[" not in worker.log_text()
