"""``pbem simulate`` and ``pbem bench variants`` under the §6 variants (RULES.md): §6.1 partnership,
§6.2 kitty, §6.4 Turbo, §6.5 Booster Nines, §6.7 Dirty Nasty Filthy."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from pbem.bench.variants import CONFIGURATIONS, play_game, run
from pbem.cli import main
from pbem.engine import PRESETS, Rules
from pbem.sim.runner import PRESET_NAMES, SimConfig, play_unit, simulate


def sim(*args: str) -> str:
    result = CliRunner().invoke(main, ["simulate", "--no-progress", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_preset_choice_has_every_preset_of_the_engine() -> None:
    assert set(PRESET_NAMES) == set(PRESETS)
    assert {"partnership", "partnership-individual", "kitty"} <= set(PRESET_NAMES)


@pytest.mark.parametrize("args", [
    ["--preset", "partnership"],
    ["--preset", "partnership-individual"],
    ["--preset", "kitty"],
    ["--preset", "kitty", "--option", "kitty_exchange=true"],
    ["--preset", "partnership", "--option", "pass_to_partner=true"],
    ["--preset", "partnership-individual", "--option", "partner_moon=charged"],
    ["--option", "kitty=first_trick", "--option", "players=3"],
    ["--option", "kitty=first_penalty", "--option", "players=5", "--option", "kitty_exchange=true"],
], ids=" ".join)
def test_simulate_runs_every_configuration(args: list[str]) -> None:
    players = 3 if "players=3" in args else 5 if "players=5" in args else 4
    bots = ",".join(["heuristic", "random", "heuristic", "random", "random"][:players])
    out = sim("--deals", "2", "--bots", bots, "--seed", "2", *args)
    assert f"2 deals x {players} seatings" in out
    if "partnership" in " ".join(args):
        assert re.search(r"team 0\s+heuristic\+heuristic\s+-?\d+\.\d+", out), out
        assert re.search(r"team 1\s+random\+random\s+-?\d+\.\d+", out), out


def test_partnership_games_report_team_wins_and_the_teams_score() -> None:
    rules = Rules.make("partnership", target=40)
    config = SimConfig(rules=rules, bots=("heuristic", "random", "heuristic", "random"), units=3, games=True, seed=3)
    report = simulate(config)
    team0, team1 = report.teams
    assert team0.bots == ("heuristic", "heuristic") and team1.bots == ("random", "random")
    # A game has one winning team: the two teams' win rates add up to 1, and a player's is its team's.
    assert team0.win_rate.mean + team1.win_rate.mean == pytest.approx(1)
    assert report.players[0].win_rate.mean == pytest.approx(team0.win_rate.mean)
    # Team mode: each partner holds the team's score, the team line is that score.
    assert report.players[0].points_per_hand.mean == pytest.approx(team0.points_per_hand.mean)
    out = sim("--games", "2", "--bots", "heuristic,random,heuristic,random", "--preset", "partnership",
              "--option", "target=40")
    assert "the team's hand score" in out and "win rate" in out


def test_individual_mode_teams_are_the_partners_sums() -> None:
    rules = Rules.make("partnership-individual")
    config = SimConfig(rules=rules, bots=("heuristic", "random", "heuristic", "random"), units=2, seed=4)
    report = simulate(config)
    p = report.players
    assert report.teams[0].points_per_hand.mean == pytest.approx(p[0].points_per_hand.mean + p[2].points_per_hand.mean)
    assert report.teams[1].points_per_hand.mean == pytest.approx(p[1].points_per_hand.mean + p[3].points_per_hand.mean)


def test_duplicate_deals_with_a_kitty_deal_the_same_deck_kitty_included(monkeypatch) -> None:
    import pbem.sim.runner as runner

    rules = Rules.make("standard", players=3, kitty="first_trick", kitty_exchange=True)
    config = SimConfig(rules=rules, bots=("heuristic", "random", "strong"), units=1, seed=4,
                       bot_options={"strong": {"playouts": 6, "time_limit": None}})
    dealt = []
    real_play_hand = runner.play_hand

    def recording_play_hand(state, seated, *rest):
        dealt.append((state.deck, state.kitty))
        return real_play_hand(state, seated, *rest)

    monkeypatch.setattr(runner, "play_hand", recording_play_hand)
    play_unit(config, 0)
    assert len(dealt) == 3 and len({d for d in dealt}) == 1
    deck, kitty = dealt[0]
    assert len(deck) == 52 and len(kitty) == 1 and kitty[0] == deck[0]


# -- pbem bench variants ----------------------------------------------------------------------------


def test_the_benchmark_lists_every_configuration_of_the_issue() -> None:
    names = {c.name for c in CONFIGURATIONS}
    assert {"standard", "partnership", "partnership-individual", "kitty", "partnership pass_to_partner",
            "partnership-individual partner_moon=charged"} <= names
    for form in ("first_trick", "first_penalty"):
        for players in (3, 5):
            assert f"kitty={form} players={players}" in names
            assert f"kitty={form} players={players} kitty_exchange" in names
    for c in CONFIGURATIONS:
        c.rules()  # every one is valid


def test_a_small_benchmark_run_finishes_with_no_error() -> None:
    lines: list[str] = []
    results = run(games=3, seed="t", echo=lines.append)
    assert len(results) == len(CONFIGURATIONS)
    for r in results:
        assert r.games == 3 and r.errors == 0, (r.configuration.name, r.messages)
        assert r.moves > 0 and r.hands >= 3
    assert lines[-1].startswith("total") and re.search(rf"total\s+{3 * len(CONFIGURATIONS)}\s+0\s", lines[-1])


def test_the_benchmark_counts_an_error(monkeypatch) -> None:
    import pbem.bench.variants as variants

    rules = Rules.make("kitty", kitty_exchange=True)
    moves, hands = play_game(rules, ["heuristic", "random", "heuristic", "random"], "x")
    assert moves > 0 and hands >= 1

    def failing(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(variants, "play_game", failing)
    r = variants.run_configuration(CONFIGURATIONS[0], 2)
    assert r.games == 2 and r.errors == 2 and "boom" in r.messages[0]


def test_the_bench_command() -> None:
    result = CliRunner().invoke(main, ["bench", "variants", "--games", "1", "--only", "kitty=first_trick players=3",
                                       "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "kitty=first_trick players=3 kitty_exchange" in result.output
    assert re.search(r"total\s+2\s+0\s", result.output), result.output


# -- §6.4 Turbo, §6.5 Booster Nines, §6.7 Dirty Nasty Filthy ----------------------------------------


@pytest.mark.parametrize("args", [
    ["--preset", "turbo"],
    ["--preset", "turbo-nines"],
    ["--preset", "dnf"],
    ["--preset", "turbo", "--option", "charge_limit=1"],
    ["--option", "booster_nines=true"],
], ids=" ".join)
def test_simulate_runs_every_turbo_configuration(args: list[str]) -> None:
    out = sim("--deals", "2", "--bots", "strong,heuristic,random,heuristic", "--playouts", "8", "--seed", "3", *args)
    assert "2 deals x 4 seatings" in out
    assert re.search(r"player 0\s+strong\s+-?\d+\.\d+", out), out


def test_simulate_plays_whole_dnf_games() -> None:
    out = sim("--games", "2", "--bots", "heuristic,random,heuristic,random", "--preset", "dnf", "--seed", "4")
    assert "2 games x 4 seatings" in out and "win rate" in out


def test_the_benchmark_lists_the_turbo_configurations_and_picks_several_by_name() -> None:
    names = [c.name for c in CONFIGURATIONS]
    assert {"turbo", "turbo-nines", "dnf", "turbo charge_limit=1", "booster_nines"} <= set(names)
    one = next(c for c in CONFIGURATIONS if c.name == "turbo charge_limit=1")
    assert one.rules() == Rules.make("turbo", charge_limit=1)
    result = CliRunner().invoke(main, ["bench", "variants", "--games", "1", "--only", "dnf", "--only", "booster",
                                       "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert re.search(r"^dnf\s+1\s+0\s", result.output, re.M)
    assert re.search(r"^booster_nines\s+1\s+0\s", result.output, re.M)
    assert re.search(r"total\s+2\s+0\s", result.output), result.output
