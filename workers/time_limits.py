"""The tasks' time limits in a worker of the solo pool (``pbem serve``'s), as the prefork pool keeps them.

Celery's prefork pool enforces ``task_soft_time_limit`` and ``task_time_limit`` (``workers.app``:
120 s and 150 s): at the soft limit it signals the pool process, whose handler raises
``SoftTimeLimitExceeded`` inside the task (which records its mail as timed out), and at the hard
limit it ends the process.  The solo pool runs each task in the worker's main thread and enforces
neither, so a task stuck for ever would hold one of serve's workers for ever.  Here the start of a
task (``task_prerun``) arms the process's real-time timer (``signal.setitimer``): at the soft limit
SIGALRM raises ``SoftTimeLimitExceeded`` in the task, as the prefork pool's signal does; still
running at the hard limit, the worker process ends (``os._exit``), and ``pbem serve`` starts it
again (``workers.supervisor``); its message ended with it, and the sweep queues the mail again, its
attempt counted.  The end of a task (``task_postrun``) disarms the timer.
"""

from __future__ import annotations

import logging
import os
import signal
from types import FrameType
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import task_postrun, task_prerun

__all__ = ["HARD_LIMIT_EXIT_STATUS", "install"]

log = logging.getLogger("pbem.worker")

#: The status a solo worker exits with when a task ran past its hard limit (``EX_SOFTWARE``).
HARD_LIMIT_EXIT_STATUS = 70


class _Limits:
    """The running task's limits; one task at a time (the solo pool)."""

    def __init__(self) -> None:
        self.task: str | None = None
        self.hard_after_soft: float | None = None  # seconds from the soft limit to the hard one

    def arm(self, task: Task, **_kwargs: Any) -> None:
        soft = task.soft_time_limit or task.app.conf.task_soft_time_limit
        hard = task.time_limit or task.app.conf.task_time_limit
        self.task = task.name
        if soft and (not hard or soft < hard):
            self.hard_after_soft = hard - soft if hard else None
            signal.setitimer(signal.ITIMER_REAL, soft)
        elif hard:
            self.hard_after_soft = None
            signal.setitimer(signal.ITIMER_REAL, hard)

    def disarm(self, **_kwargs: Any) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.task = None
        self.hard_after_soft = None

    def expired(self, _signum: int, _frame: FrameType | None) -> None:
        if self.task is None:  # the task ended as the timer fired
            return
        if self.hard_after_soft is not None:
            signal.setitimer(signal.ITIMER_REAL, self.hard_after_soft)
            self.hard_after_soft = None
            raise SoftTimeLimitExceeded()
        log.error("task %s ran past its hard time limit: ending this worker process", self.task)
        logging.shutdown()
        os._exit(HARD_LIMIT_EXIT_STATUS)


def install() -> None:
    """Enforce the time limits in this process, which runs its tasks in its main thread (solo pool)."""
    limits = _Limits()
    signal.signal(signal.SIGALRM, limits.expired)
    task_prerun.connect(limits.arm, weak=False)
    task_postrun.connect(limits.disarm, weak=False)
