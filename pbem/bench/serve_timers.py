"""Timers inside the worker of ``pbem bench serve``: where a move's time goes under ``pbem serve``.

``install(path)`` wraps, in this process, the three calls of a move's task that the benchmark
breaks its latency into (``workers.tasks.run_move``, what ``pbem.process_inbound`` runs):

- ``apply_inbound``: the move applied and its mails written, in one transaction;
- ``MailRenderer.render``: the templates rendered, inside the above (the rest of it is the move's
  processing: reading the reply, the engine, the database);
- ``send_claimed``: the mails sent to the relay, after the commit;
- ``pbem.bots.decide`` as the turns call it (``pbem.services.turns.decide``): each computer
  player's decision, one JSON line to ``path`` + ``.bots`` (the bot's name, its CPU by
  ``time.thread_time`` and its wall time), for ``pbem bench serve --bots``.

For ``pbem bench serve --beside`` it also records, through Celery's task signals and SQLAlchemy's
engine events (on the database of ``PBEM_DATABASE_URL``, not the embedded broker's):

- each task, one JSON line to ``path`` + ``.tasks``: its name, start and end, and how many rows
  its transactions inserted into the move log (a ``pbem.continue_game`` that inserted none found
  nothing to do);
- each transaction that wrote, one JSON line to ``path`` + ``.tx``: the task it ran in (or
  none), how long it held the database from its start (on SQLite ``BEGIN IMMEDIATE``, i.e.
  SQLite's one write lock; on PostgreSQL its first statement) to its COMMIT or ROLLBACK, and
  from its first INSERT, UPDATE or DELETE to that end.

At the end of each move it appends one JSON line to ``path`` (``inbound_id`` and
``time.monotonic()`` readings, system-wide on Linux so comparable with the benchmark's own).
The benchmark installs it in the worker it starts through a ``sitecustomize`` module on
``PYTHONPATH`` that calls ``install`` when ``PBEM_BENCH_TIMERS`` names a file; nothing else
ever imports this module.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from celery.signals import task_postrun, task_prerun
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url

import pbem.services.turns as turns
import workers.tasks as tasks
from pbem.config import Settings
from pbem.mail.render import MailRenderer

__all__ = ["BOTS_SUFFIX", "ENV", "TASKS_SUFFIX", "TX_SUFFIX", "install"]

ENV = "PBEM_BENCH_TIMERS"
BOTS_SUFFIX = ".bots"
TASKS_SUFFIX = ".tasks"
TX_SUFFIX = ".tx"
_WRITES = ("INSERT", "UPDATE", "DELETE")
_TX = "pbem.bench.tx"
_local = threading.local()
_installed: list[str] = []


def install(path: str) -> None:
    """Wrap the move's calls in this process (once); each move appends a line to ``path``."""
    if _installed:
        return
    _installed.append(path)
    run_move, apply_inbound, send_claimed = tasks.run_move, tasks.apply_inbound, tasks.send_claimed
    render = MailRenderer.render

    def timed_render(self: MailRenderer, *args: Any, **kwargs: Any) -> Any:
        t0 = time.monotonic()
        try:
            return render(self, *args, **kwargs)
        finally:
            _add("render", time.monotonic() - t0)

    def timed(name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            marks = getattr(_local, "marks", None)
            if marks is not None:
                marks[f"{name}_start"] = time.monotonic()
            try:
                return call(*args, **kwargs)
            finally:
                if marks is not None:
                    marks[f"{name}_end"] = time.monotonic()

        return wrapper

    def timed_move(svc: Any, inbound_id: int, **kwargs: Any) -> Any:
        _local.marks = {"render": 0.0, "start": time.monotonic()}
        try:
            return run_move(svc, inbound_id, **kwargs)
        finally:
            marks, _local.marks = _local.marks, None
            marks.update(end=time.monotonic(), inbound_id=int(inbound_id), pid=os.getpid())
            _append(path, (json.dumps(marks) + "\n").encode())

    decide = turns.decide
    bots_path = path + BOTS_SUFFIX

    def timed_decide(bot: Any, *args: Any, **kwargs: Any) -> Any:
        c0, t0 = time.thread_time(), time.monotonic()
        try:
            return decide(bot, *args, **kwargs)
        finally:
            record = {"bot": getattr(bot, "name", type(bot).__name__), "cpu": time.thread_time() - c0,
                      "wall": time.monotonic() - t0, "pid": os.getpid()}
            _append(bots_path, (json.dumps(record) + "\n").encode())

    tasks.run_move = timed_move
    turns.decide = timed_decide
    tasks.apply_inbound = timed("apply", apply_inbound)
    tasks.send_claimed = timed("send", send_claimed)
    MailRenderer.render = timed_render  # type: ignore[method-assign]
    _watch_tasks(path + TASKS_SUFFIX)
    _watch_transactions(path + TX_SUFFIX)


def _watch_tasks(path: str) -> None:
    """One line per task run in this process: its name, start, end, and the move log rows it wrote."""

    def started(task: Any = None, **_kwargs: Any) -> None:
        _local.task = {"task": getattr(task, "name", "?"), "start": time.monotonic(), "moves": 0}

    def ended(**_kwargs: Any) -> None:
        record, _local.task = getattr(_local, "task", None), None
        if record is not None:
            record.update(end=time.monotonic(), pid=os.getpid())
            _append(path, (json.dumps(record) + "\n").encode())

    task_prerun.connect(started, weak=False)
    task_postrun.connect(ended, weak=False)


def _watch_transactions(path: str) -> None:
    """One line per transaction on pbem's database that wrote or held SQLite's write lock (see the
    module's docstring)."""
    try:
        database = make_url(Settings.from_env(dict(os.environ)).database_url).database
    except Exception:  # noqa: BLE001 (a process without pbem's settings: nothing of ours to watch)
        return

    def begun(conn: Connection) -> None:
        if conn.engine.url.database == database:
            conn.info[_TX] = {"start": None, "write": None, "locks": False, "moves": 0}

    def executing(conn: Connection, _cursor: Any, statement: str, *_args: Any) -> None:
        tx = conn.info.get(_TX)
        if tx is None:
            return
        now = time.monotonic()
        if statement.startswith(("BEGIN IMMEDIATE", "BEGIN EXCLUSIVE")):
            tx["locks"] = True
        elif tx["start"] is None:
            tx["start"] = now  # PostgreSQL, or SQLite's deferred BEGIN: the first statement
        if tx["write"] is None and statement.lstrip().startswith(_WRITES):
            tx["write"] = now
        if statement.startswith("INSERT INTO moves"):
            tx["moves"] += 1

    def executed(conn: Connection, _cursor: Any, statement: str, *_args: Any) -> None:
        tx = conn.info.get(_TX)
        if tx is not None and tx["locks"] and tx["start"] is None:
            tx["start"] = time.monotonic()  # BEGIN IMMEDIATE returned: SQLite's write lock is held

    def ended(conn: Connection, committed: bool) -> None:
        tx = conn.info.pop(_TX, None)
        if tx is None or (tx["write"] is None and not tx["locks"]) or tx["start"] is None:
            return
        now = time.monotonic()
        task = getattr(_local, "task", None)
        if task is not None and committed:
            task["moves"] += tx["moves"]
        record = {"task": task["task"] if task is not None else None, "end": now, "held": now - tx["start"],
                  "write": None if tx["write"] is None else now - tx["write"], "committed": committed,
                  "pid": os.getpid()}
        _append(path, (json.dumps(record) + "\n").encode())

    event.listen(Engine, "begin", begun)
    event.listen(Engine, "before_cursor_execute", executing)
    event.listen(Engine, "after_cursor_execute", executed)
    event.listen(Engine, "commit", lambda conn: ended(conn, True))
    event.listen(Engine, "rollback", lambda conn: ended(conn, False))


def _append(path: str, line: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)  # one write with O_APPEND: lines of two pool processes never mix
    finally:
        os.close(fd)


def _add(name: str, seconds: float) -> None:
    marks = getattr(_local, "marks", None)
    if marks is not None:
        marks[name] = marks.get(name, 0.0) + seconds
