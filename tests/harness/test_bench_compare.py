"""``pbem bench e2e --compare`` (``pbem.bench.compare``): reading a run's printed figures, the
medians' ratios and the goals, and the options passed through to both sides.

The runs read here were recorded from real short runs (``--modes heavy --flat "" --idle-moves 10
--rates 50,400 --step-seconds 6 --games 60`` on a busy shared machine): ``cb2379d.txt`` printed by
cb2379d's own benchmark, ``head.txt`` by today's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.bench.compare import Cpu, RunFigures, command_line, figures, parse_run, summary
from pbem.cli.bench import e2e

RUNS = Path(__file__).parent / "e2e_runs"


@pytest.fixture(scope="module")
def rev_text() -> str:
    return (RUNS / "cb2379d.txt").read_text()


@pytest.fixture(scope="module")
def head_text() -> str:
    return (RUNS / "head.txt").read_text()


def test_parse_cb2379d_run(rev_text: str) -> None:
    run = parse_run(rev_text)
    assert run.idle["heavy"] == (15.6, 35.1, Cpu(18.0, {"smtp": 3.0, "wrk": 1.0, "pool": 9.0, "pg": 5.0,
                                                        "redis": 0.0, "bench": 2.0, "rest": 120.0}))
    assert run.idle["default"][:2] == (11.1, 11.9)
    assert run.idle["default"][2].pbem == 14.0
    assert run.steps == {"heavy": {50.0: (43.7, Cpu(16.18, {"smtp": 2.1, "wrk": 1.22, "pool": 9.39, "pg": 3.17,
                                                             "redis": 0.31, "bench": 1.15, "rest": 28.55}))}}
    assert run.saturated == {"heavy": 43.7}


def test_parse_today_run(head_text: str) -> None:
    run = parse_run(head_text)
    assert run.idle["heavy"][:2] == (59.4, 70.1)
    assert run.idle["heavy"][2].kinds["pool"] == 23.0
    assert run.idle["default"][:2] == (54.5, 71.2)
    assert run.steps["heavy"][50.0][0] == 15.7
    assert run.steps["heavy"][50.0][1].pbem == 35.0
    assert run.steps["heavy"][50.0][1].kinds["pg"] == 6.81
    assert run.saturated == {"heavy": 15.7}


def test_figures_name_what_the_comparison_shows(rev_text: str) -> None:
    named = figures(parse_run(rev_text))
    assert named["heavy sustained moves/s"] == 43.7
    assert named["heavy idle p50 ms"] == 15.6
    assert named["heavy idle CPU ms a move"] == 18.0
    assert named["heavy idle CPU ms a move: pool"] == 9.0
    assert named["heavy 50/s CPU ms a move"] == 16.18
    assert "heavy 50/s CPU ms a move: rest" not in named  # not pbem's processes


def test_a_run_that_never_saturated_stands_in_with_its_last_step(rev_text: str) -> None:
    unsaturated = "\n".join(line for line in rev_text.splitlines() if "saturated at" not in line)
    run = parse_run(unsaturated)
    assert run.saturated == {}
    assert figures(run)["heavy sustained moves/s"] == 43.7
    assert any("REV run 1 never saturated in heavy" in line for line in summary([run], [run]))


def test_ratios_of_the_medians(rev_text: str, head_text: str) -> None:
    rev, head = parse_run(rev_text), parse_run(head_text)
    lines = summary([rev, rev, head], [head])  # REV's medians are REV's figures
    row = next(line for line in lines if line.strip().startswith("heavy sustained moves/s"))
    assert row.split()[-3:] == ["43.7", "15.7", f"{15.7 / 43.7:.2f}"]
    row = next(line for line in lines if line.strip().startswith("heavy idle p50 ms"))
    assert row.split()[-1] == f"{59.4 / 15.6:.2f}"
    assert "  sustained >= 1.50 x REV's: 0.36 - NOT met" in lines
    assert any("pool 9.0 -> 23.0" in line for line in lines)


def _run(sustained: float, idle_p50: float, idle_cpu: float, step_cpu: float) -> RunFigures:
    return RunFigures(idle={"heavy": (idle_p50, idle_p50 * 1.2, Cpu(idle_cpu, {}))},
                      steps={"heavy": {50.0: (49.0, Cpu(step_cpu, {})), 100.0: (80.0, Cpu(step_cpu, {}))}},
                      saturated={"heavy": sustained})


@pytest.mark.parametrize(("head", "met"), [
    (_run(150.0, 16.0, 15.0, 15.0), ["met", "met", "met"]),
    (_run(149.0, 16.1, 15.0, 15.1), ["NOT met", "NOT met", "NOT met"]),
])
def test_goals(head: RunFigures, met: list[str]) -> None:
    rev = _run(100.0, 16.0, 20.0, 20.0)
    lines = summary([rev], [head])
    goals = lines[lines.index("goals (the ratios of the medians, heavy):") + 1:]
    assert [line.rsplit(" - ", 1)[1] for line in goals] == met


def test_goals_without_heavy_figures_say_so() -> None:
    lines = summary([RunFigures()], [RunFigures()])
    assert lines[-3:] == [line for line in lines if "not measured" in line]


def test_the_options_given_pass_through_but_compare_and_repeat() -> None:
    argv = ["--modes", "heavy", "--flat", "", "--no-durable", "--keep-dir", "--compare", "cb2379d",
            "--repeat", "1", "--step-seconds", "6"]
    context = e2e.make_context("e2e", argv)
    assert command_line(context, leave_out=("compare_rev", "repeat")) == [
        "--step-seconds", "6.0", "--modes", "heavy", "--flat", "", "--no-durable", "--keep-dir"]
