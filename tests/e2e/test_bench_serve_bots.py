"""``pbem bench serve --bots`` end to end: a person against three bots by mail on a real ``pbem serve``.

The command's own code (``pbem.bench.serve_bots.run``) starts serve for itself (SQLite, the
embedded broker, the relay sink in the test process) and plays a couple of replies against each
bot. Asserted: the replies went through and were answered with the person's next mail, the bots'
decisions were read from the worker and serve's CPU was read; no figure's size.  With ``--beside``,
a game of computers played on in steps meanwhile, and the worker's tasks and write transactions were
read.
"""

from __future__ import annotations

import pytest

from pbem.bench.serve_bots import run, run_beside
from pbem.bench.serve_latency import Options

pytestmark = [pytest.mark.slow]


def test_a_short_game_against_each_bot_is_played_by_mail_and_measured() -> None:
    lines: list[str] = []
    games = run(Options(moves=3, idle_seconds=0, seed="ci-bots"), bots=["heuristic", "strong"], echo=lines.append)
    report = "\n".join(lines)
    assert [g.bot for g in games] == ["heuristic", "strong"], report
    for game in games:
        assert game.replies == 3 and game.passes == 1, report
        assert len(game.latencies) == 3, report
        assert game.bot_cpu, report
        assert game.serve_cpu > 0, report


def test_a_person_plays_beside_a_game_of_computers_and_the_worker_is_measured() -> None:
    lines: list[str] = []
    result = run_beside(Options(moves=3, idle_seconds=0, seed="ci-beside"), beside=1, echo=lines.append)
    report = "\n".join(lines)
    assert result.person.replies == 3 and len(result.person.latencies) == 3, report
    assert result.moves > 0, report  # the game beside moved while the person played
    names = {r["task"] for r in result.tasks}
    assert {"pbem.process_inbound", "pbem.continue_game"} <= names, report
    assert any(r["task"] == "pbem.continue_game" for r in result.transactions), report
    assert "found nothing to do" in report and "p99" in report, report
