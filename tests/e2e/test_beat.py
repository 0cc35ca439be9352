"""Long games (README, "Time"): time-driven work runs from Celery beat itself, not from a test queueing it.

A real Celery worker with beat inside it (``--beat``, as ``pbem serve`` runs it) on Redis, the
SMTP front, PostgreSQL and an SMTP sink as the relay. Beat queues ``pbem.tick`` every half second
here (``PBEM_TICK_SECONDS=0.5``); the clock is the services' offset clock, moved forward by the
test. A game made on the command line waits for both people's passes: once the clock passes the
point 24 hours before their 72-hour deadline, the ticks that beat queues send each of them one
reminder, and the ticks after it send nothing more.
"""

from __future__ import annotations

import re
from collections import Counter
from email.parser import BytesHeaderParser
from email.policy import default

import pytest

from pbem.services.clock import OffsetClock
from tests.e2e.pipeline import Pipeline, redis_db
from tests.harness.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.postgres]

PEOPLE = ("ana@players.test", "bob@players.test")
TICK_SENT = "Sending due task pbem-tick (pbem.tick)"  # beat's own log line
TICK_DONE = re.compile(r"Task pbem\.tick\[[0-9a-f-]+\] succeeded")
HEADERS = BytesHeaderParser(policy=default)


def test_beat_queues_the_tick_that_sends_each_due_reminder_once(pg_migrated_url, redis_url, smtp_sink, tmp_path):
    smtp_sink.clear()
    offset = tmp_path / "clock-offset"
    pipeline = Pipeline(pg_migrated_url, redis_db(redis_url, 6), smtp_sink, tmp_path, concurrency=1, beat=True,
                        extra_env={"PBEM_CLOCK_OFFSET_FILE": str(offset), "PBEM_TICK_SECONDS": "0.5"})
    # A tick that did nothing, and beat's line sending it, are DEBUG lines (README, "Metrics and logs").
    pipeline.worker.extra_args.append("--loglevel=DEBUG")

    kind_of: dict[object, object] = {}  # each mail's X-Hearts-Kind, read once (kinds() is polled)

    def kinds() -> Counter:
        messages = smtp_sink.messages
        for m in messages:
            if m not in kind_of:
                kind_of[m] = HEADERS.parsebytes(m.raw)["X-Hearts-Kind"]
        return Counter((kind_of[m], m.rcpt_tos[0]) for m in messages)

    def ticks_done() -> int:
        """Ticks run to the end by the worker, each one queued by beat (nothing else queues one here)."""
        log = pipeline.worker.log_text()
        done = len(TICK_DONE.findall(log))
        assert done <= log.count(TICK_SENT)
        return done

    with pipeline:
        pipeline.cli("game", "new", *(arg for a in PEOPLE for arg in ("--player", a)), "--bots", "2",
                     "--seed", "beat", "--deadline", "72", "--reminder", "24")
        wait_for(lambda: all(kinds()[("your_turn", a)] == 1 for a in PEOPLE), timeout=30,
                 message="the first decision mails, which say the game began")
        # Beat ticks while nothing is due: no reminder yet.
        first = ticks_done()
        wait_for(lambda: ticks_done() >= first + 2, timeout=30, message="two ticks from beat")
        assert not any(kind == "reminder" for kind, _ in kinds())

        OffsetClock(offset).advance(hours=49)  # 23 hours left of 72: the early reminder is due
        wait_for(lambda: all(kinds()[("reminder", a)] == 1 for a in PEOPLE), timeout=30,
                 message="a reminder for each person, from a tick beat queued")
        after = ticks_done()
        wait_for(lambda: ticks_done() >= after + 3, timeout=30, message="three more ticks from beat")
        assert [(kind, n) for (kind, _), n in kinds().items() if kind == "reminder"] == [("reminder", 1)] * 2
