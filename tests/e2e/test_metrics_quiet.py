"""An idle server is quiet (README, "Metrics and logs"): a worker with beat embedded, on Redis, with
nothing to do writes no line at INFO or above while beat queues ticks and sweeps.

The worker logs at DEBUG, so the lines of the sweeps and ticks that did nothing are still written,
at DEBUG: the test waits for them (the events), then reads that nothing else was written above DEBUG.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.pipeline import redis_db
from tests.harness.celery_worker import CeleryWorker
from tests.harness.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.redis]

LEVEL = re.compile(r"^\[[^\]]*: (DEBUG|INFO|WARNING|ERROR|CRITICAL)/", re.MULTILINE)
DONE = re.compile(r"DEBUG/[^\]]*\] Task (pbem\.tick|pbem\.sweep)\[[0-9a-f-]+\] succeeded")
SENT = re.compile(r"DEBUG/[^\]]*\] Scheduler: Sending due task pbem-(tick|sweep)")


def test_an_idle_worker_and_beat_write_nothing_at_info(sqlite_migrated_url, redis_url, tmp_path):
    env = {
        "PBEM_DATABASE_URL": sqlite_migrated_url,
        "PBEM_BROKER_URL": redis_db(redis_url, 10),
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_SECRET_KEY": "quiet-secret",
        "PBEM_TICK_SECONDS": "0.5",
        "PBEM_SWEEP_SECONDS": "0.5",
    }
    with CeleryWorker(env, concurrency=1, beat=True, extra_args=["--loglevel=DEBUG"], log_dir=tmp_path) as worker:
        start = len(worker.log_text())

        def since_ready() -> str:
            return worker.log_text()[start:]

        def ticked() -> bool:
            text = since_ready()
            done = [m.group(1) for m in DONE.finditer(text)]
            sent = [m.group(1) for m in SENT.finditer(text)]
            return done.count("pbem.tick") >= 3 and done.count("pbem.sweep") >= 3 and len(sent) >= 6

        wait_for(ticked, timeout=60, interval=0.1, message="three ticks and three sweeps, queued by beat and done")
        text = since_ready()
    loud = [line for line in text.splitlines() if (m := LEVEL.match(line)) and m.group(1) != "DEBUG"]
    assert loud == []
