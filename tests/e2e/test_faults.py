"""``pbem bench faults`` in CI: every fault kind once, with short downtimes and a low rate.

The command's own code (``pbem.bench.faults.run``) on the real pipeline it starts for itself:
PostgreSQL, Redis, the SMTP front, a Celery worker and beat, the relay sink. Its servers are its
own, not the suite's session servers, because the faults stop and crash them. Asserted: the
command's goals as its module docstring states them, nothing else: 0 mails lost, 0 moves
applied twice, no respawn loop, every reply accepted before a part came back processed within
60 s of its coming back, every game replays from its log. The only duration asserted is that
deadline, which is the requirement itself; every wait in the command polls with a deadline.
"""

from __future__ import annotations

import pytest

from pbem.bench.faults import FAULTS, FaultOptions, run

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.postgres]


def test_every_fault_loses_nothing_doubles_nothing_and_recovers_within_the_deadline() -> None:
    lines: list[str] = []

    def echo(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    options = FaultOptions(
        rate=5.0, faults=FAULTS, down_seconds=3.0, relay_down_seconds=3.0, busy_seconds=5.0,
        lead_seconds=1.0, settle_seconds=60.0, games=12, drain_seconds=200.0, seed="ci-faults",
    )
    result = run(options, echo=echo)
    report = "\n".join(lines)
    assert [f.record.name for f in result.figures] == list(FAULTS), report
    for figures in result.figures:
        assert figures.accepted > 0, f"{figures.record.name}: no reply accepted in its window\n{report}"
    assert result.drained, report
    assert not any(result.missed.values()), report
