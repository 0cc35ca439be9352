"""``pbem simulate``: small runs of the real command, the duplicate seatings, and the statistics."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from pbem.cli import main
from pbem.cli.sim import parse_option
from pbem.engine import Rules
from pbem.sim.runner import SimConfig, play_unit, simulate, summarise
from pbem.sim.stats import estimate, t_quantile


def run(*args: str) -> str:
    result = CliRunner().invoke(main, ["simulate", "--no-progress", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def numbers(text: str) -> list[str]:
    return re.findall(r"-?\d+\.\d+", text.split("decision time")[0])


def test_a_plain_run_prints_every_player_with_an_interval() -> None:
    out = run("--deals", "6", "--bots", "heuristic,random,random,random", "--seed", "3")
    assert "6 deals x 4 seatings" in out
    for j in range(4):
        assert re.search(rf"player {j}\s+(heuristic|random)\s+\d+\.\d+ ± \d+\.\d+", out), out
    assert "decision time" in out


def test_runs_are_reproducible_with_a_seed_and_any_number_of_workers() -> None:
    args = ["--deals", "4", "--compare", "strong:heuristic", "--playouts", "30", "--seed", "x"]
    one = run(*args)
    two = run(*args, "--workers", "2")
    assert numbers(one) == numbers(two)
    assert numbers(one) != numbers(run(*args[:-1], "y"))


def test_compare_prints_the_paired_difference() -> None:
    out = run("--deals", "8", "--compare", "heuristic:random", "--bots", "random,random,random")
    assert re.search(r"paired difference heuristic - random per hand: +-?\d+\.\d+ ± \d+\.\d+", out), out


def test_games_mode_prints_win_rates_under_a_preset_with_options() -> None:
    out = run("--games", "2", "--bots", "heuristic,random,random", "--preset", "black-maria",
              "--option", "target=40")
    assert "2 games x 3 seatings" in out and "win rate" in out
    assert "black-maria target=40" in out


def test_bad_input_is_refused_with_a_reason() -> None:
    runner = CliRunner()
    for args, reason in [
        (["--bots", "heuristic,random"], "give 4 bots"),
        (["--bots", "heuristic,random,random,wizard"], "unknown bot"),
        (["--bots", "random,random,random,random", "--option", "players=9"], "rules"),
        (["--deals", "2", "--games", "2", "--bots", "random,random,random,random"], "not both"),
    ]:
        result = runner.invoke(main, ["simulate", "--no-progress", *args])
        assert result.exit_code != 0 and reason in result.output, (args, result.output)


def test_every_bot_plays_every_seat_of_a_deal(monkeypatch) -> None:
    import pbem.sim.runner as runner

    bots = ("heuristic", "random", "strong")  # distinct, so each seat's player can be told apart
    config = SimConfig(rules=Rules.make("standard", players=3), bots=bots, units=1, seed=4,
                       bot_options={"strong": {"playouts": 6, "time_limit": None}})
    dealt = []  # per hand played: the deal, its pass direction and the bots by seat
    real_play_hand = runner.play_hand

    def recording_play_hand(state, seated, *rest):
        dealt.append((state.deck, state.pass_direction, tuple(b.name for b in seated)))
        return real_play_hand(state, seated, *rest)

    monkeypatch.setattr(runner, "play_hand", recording_play_hand)
    result = play_unit(config, 0)
    assert len(dealt) == len(result.seatings) == 3
    # The same cards, passed the same way, at every seating.
    assert len({(deck, direction) for deck, direction, _ in dealt}) == 1
    # The seatings played are the ones declared, and each bot sits once in every seat.
    assert [lineup for _, _, lineup in dealt] == [s.lineup for s in config.seatings()]
    for name in bots:
        assert sorted(lineup.index(name) for _, _, lineup in dealt) == [0, 1, 2]


def test_compare_pairs_each_seat_with_the_same_others() -> None:
    config = SimConfig(rules=Rules.make("standard"), bots=("random", "heuristic", "random"),
                       compare=("strong", "heuristic"), units=1)
    seatings = config.seatings()
    assert len(seatings) == 8
    for a, b in zip(seatings[::2], seatings[1::2]):
        assert a.key == b.key and (a.variant, b.variant) == (0, 1)
        assert a.lineup[a.key] == "strong" and b.lineup[b.key] == "heuristic"
        assert [x for i, x in enumerate(a.lineup) if i != a.key] == [x for i, x in enumerate(b.lineup) if i != b.key]


def test_the_paired_difference_is_zero_for_a_bot_against_itself() -> None:
    config = SimConfig(rules=Rules.make("standard"), bots=("random",) * 3, compare=("heuristic", "heuristic"),
                       units=3, seed=5)
    report = simulate(config)
    assert report.comparison is not None
    assert report.comparison.difference.mean == 0 and report.comparison.difference.half == 0


def test_summaries_average_each_player_over_its_seats() -> None:
    # Three different bots, so a player's figures taken from another player's seat would show.
    bots = ("heuristic", "random", "strong")
    config = SimConfig(rules=Rules.make("standard", players=3), bots=bots, units=2, seed=1,
                       bot_options={"strong": {"playouts": 6, "time_limit": None}})
    results = [play_unit(config, u) for u in range(2)]
    report = summarise(config, results)
    seatings = config.seatings()
    for j, (name, line) in enumerate(zip(bots, report.players)):
        assert (line.label, line.bot) == (f"player {j}", name)
        # Where this bot sat at each seating, found from the line-up itself.
        per_unit = [sum(res.points[s.lineup.index(name)] / res.hands for s, res in zip(seatings, u.seatings))
                    / len(seatings) for u in results]
        assert line.points_per_hand.mean == pytest.approx(sum(per_unit) / len(per_unit))
        assert line.moons == sum(res.moons[s.lineup.index(name)] for u in results
                                 for s, res in zip(seatings, u.seatings))
    # The bots' figures differ, so the check above tells the seats apart.
    assert len({round(p.points_per_hand.mean, 9) for p in report.players}) == 3


@pytest.mark.parametrize("text,expected", [
    ("target=50", ("target", 50)),
    ("moon=new", ("moon", "new")),
    ("qs_breaks_hearts=true", ("qs_breaks_hearts", True)),
    ("exact_target_reset=none", ("exact_target_reset", None)),
    ("pass_cycle=left,right,hold", ("pass_cycle", ["left", "right", "hold"])),
    ("extra_penalties=KS:10,AS:7", ("extra_penalties", {"KS": 10, "AS": 7})),
    ('removed_cards=["2D"]', ("removed_cards", ["2D"])),
])
def test_parse_option(text: str, expected: tuple) -> None:
    assert parse_option(text) == expected


def test_t_quantiles_match_the_tables() -> None:
    for df, value in [(1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042), (10_000, 1.960)]:
        assert t_quantile(0.975, df) == pytest.approx(value, abs=0.002)


def test_estimate() -> None:
    e = estimate([1.0, 2.0, 3.0, 4.0])
    assert e.mean == 2.5
    assert e.half == pytest.approx(3.182 * 1.2910 / 2, abs=0.01)
    assert e.excludes_zero()
    assert not estimate([-1.0, 2.0, 0.5, -1.5]).excludes_zero()
    assert not estimate([3.0]).excludes_zero()  # one value: no interval
