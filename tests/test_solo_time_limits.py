"""A worker of the solo pool keeps the tasks' time limits (``workers.time_limits``): past the soft
limit ``SoftTimeLimitExceeded`` is raised in the task, past the hard one the process ends with
``HARD_LIMIT_EXIT_STATUS``; a task that ends in time is left alone.

Each case runs in a process of its own, as a solo worker does, sending Celery's real
``task_prerun``/``task_postrun`` signals around a task of a real app: the limits use SIGALRM,
which pytest-timeout uses in the test process.  Every wait is a loop with a deadline."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from workers.time_limits import HARD_LIMIT_EXIT_STATUS

SCRIPT = textwrap.dedent("""
    import sys, time
    from celery import Celery
    from celery.exceptions import SoftTimeLimitExceeded
    from celery.signals import task_postrun, task_prerun
    from workers import time_limits

    app = Celery("limits", set_as_current=False)
    app.conf.task_soft_time_limit, app.conf.task_time_limit = float(sys.argv[1]), float(sys.argv[2])

    @app.task(name="limits.spin")
    def spin(): ...

    time_limits.install()

    def run(seconds):
        task_prerun.send(sender=spin, task_id="t", task=spin, args=(), kwargs={})
        try:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                time.sleep(0.01)
        except SoftTimeLimitExceeded:
            print("soft limit", flush=True)
            deadline = time.monotonic() + 60  # still stuck after it: the hard limit ends the process
            while time.monotonic() < deadline:
                time.sleep(0.01)
            print("not ended at the hard limit", flush=True)
        finally:
            task_postrun.send(sender=spin, task_id="t", task=spin, args=(), kwargs={}, retval=None, state="")
        print("ended in time", flush=True)

    run(float(sys.argv[3]))
    time.sleep(float(sys.argv[2]) + 0.5)  # past the hard limit: a disarmed timer fires no more
    print("still alive", flush=True)
""")


def run_case(soft: float, hard: float, task_seconds: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT, str(soft), str(hard), str(task_seconds)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_task_past_its_soft_limit_gets_the_exception_and_past_its_hard_limit_the_process_ends() -> None:
    case = run_case(soft=0.2, hard=0.6, task_seconds=60)
    assert case.stdout.splitlines() == ["soft limit"], case.stdout + case.stderr
    assert case.returncode == HARD_LIMIT_EXIT_STATUS, case.stderr
    assert "ran past its hard time limit" in case.stderr


def test_a_task_that_ends_in_time_is_left_alone() -> None:
    case = run_case(soft=3.0, hard=4.0, task_seconds=0.01)
    assert case.stdout.splitlines() == ["ended in time", "still alive"], case.stdout + case.stderr
    assert case.returncode == 0, case.stderr
