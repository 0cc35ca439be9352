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

import pbem.services.turns as turns
import workers.tasks as tasks
from pbem.mail.render import MailRenderer

__all__ = ["BOTS_SUFFIX", "ENV", "install"]

ENV = "PBEM_BENCH_TIMERS"
BOTS_SUFFIX = ".bots"
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
