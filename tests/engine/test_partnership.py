"""Partnership Hearts (RULES.md §6.1, §6.8) from hand-built deals: team scoring and the team slam under
every moon rule, individual scoring with ``partner_moon``, the team sums that decide the game,
``pass_to_partner``, the refusals, and the snapshot of the new state.

Expected values are worked out here from the rules and the events (tricks won), not from the engine.
"""

from __future__ import annotations

import json

import pytest

from pbem.engine import (
    PRESETS,
    ChooseMoon,
    GameOver,
    GameState,
    HandScored,
    InvalidRules,
    Moon,
    MoonChoiceNeeded,
    PassCards,
    Reason,
    Rules,
    TrickWon,
    apply,
    new_game,
    seat_view,
)

from .helpers import assert_refused, deal_next, play_logged, play_out, play_sweep, start, suit

# Seats 0 and 2 hold every club and diamond, seats 1 (hearts) and 3 (spades) never follow: team 0
# takes every trick, so every penalty card (a team slam and a team sun); seat 2 wins the last trick.
TEAM_SWEEP = {0: "2C 9C TC JC QC KC AC 2D 3D 4D 5D 6D 2S", 2: "3C 4C 5C 6C 7C 8C 7D 8D 9D TD JD QD KD",
              3: "AD 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 1: " ".join(suit("H"))}
# A recorded deal (deck, then the cards played in order, from a seeded search): team 0 takes every
# penalty card, seat 0 wins team 0's latest trick (trick 12) and seat 3 the last trick, which holds none.
LATE_DECK = ("KH 5H 4C 5D KS 4H AC JC TH 9H QD 8H 6C QH AH 4S JH 7D AS 6H JS 3H 5S 2C 3S 4D 2D 5C 6D TD "
             "7S 8D KD 2H AD 9C 9S 8C 6S KC 7C TC 9D QS 8S JD TS 3C QC 3D 7H 2S").split()
LATE_PLAY = ("2C QC 8C AC AD 5D KD 3D AS 2S KS 2H AH 6H KH 3H QD 8D 6D 4D TS 4S JS 4H JH 5H 7H 8H TH 9H 9D QS "
             "9S QH 7S 3C 8S TC 6S 5C 7C 7D 4C 9C JC 6C TD 5S KC 3S JD 2D")


def scored(events) -> HandScored:
    found = [e for e in events if isinstance(e, HandScored)]
    assert len(found) == 1
    return found[0]


def team_sweep(**options):
    state, events = play_out(start(Rules.make("partnership", **options), TEAM_SWEEP))
    wins = [e.winner for e in events if isinstance(e, TrickWon)]
    assert set(wins) == {0, 2} and wins[-1] == 2, "team 0 takes every trick, seat 2 the last"
    return state, events


# -- rules and refusals --------------------------------------------------------------------------------


def test_presets_and_teams():
    assert PRESETS["partnership"] == {"partnership": "team"}
    assert PRESETS["partnership-individual"] == {"partnership": "individual"}
    rules = Rules.make("partnership")
    assert rules.teams == ((0, 2), (1, 3))
    assert [rules.team_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert Rules().teams == () and Rules().team_of(0) is None
    assert Rules.make("partnership-individual").partner_moon == "spared"


@pytest.mark.parametrize(("options", "code", "details"), [
    ({"partnership": "team", "players": 3}, "PARTNERSHIP_NEEDS_FOUR_PLAYERS", {"players": 3}),
    ({"partnership": "individual", "players": 5}, "PARTNERSHIP_NEEDS_FOUR_PLAYERS", {"players": 5}),
    ({"pass_to_partner": True}, "PASS_TO_PARTNER_NEEDS_PARTNERSHIP", {}),
    ({"partnership": "teams"}, "BAD_CHOICE",
     {"option": "partnership", "value": "teams", "choices": ["none", "team", "individual"]}),
    ({"partnership": "individual", "partner_moon": "free"}, "BAD_CHOICE",
     {"option": "partner_moon", "value": "free", "choices": ["spared", "charged"]}),
    ({"partnership": "team", "pass_to_partner": "yes"}, "NOT_A_BOOL", {"option": "pass_to_partner", "value": "yes"}),
])
def test_refusals(options, code, details):
    with pytest.raises(InvalidRules) as info:
        Rules.make("standard", **options)
    assert info.value.code == code and info.value.details == details


# -- team mode: scores, the team slam under each moon rule ------------------------------------------------


def test_team_scores_are_the_partners_cards_and_both_partners_carry_them():
    rules = Rules.make("partnership")
    state, events = play_out(start(rules, {0: "2C 8C 2D 3D 4D 5D 6D 2H 3H 4H 2S 3S 4S",
                                           1: "3C 9C 7D 8D 9D TD 5H 6H 7H 8H 5S 6S 7S",
                                           2: "JD QD KD AD 9H TH JH QH KH AH 8S QS AS",
                                           3: "4C 5C 6C 7C TC JC QC KC AC 9S TS JS KS"}))
    hs = scored(events)
    per_seat = [0, 0, 0, 0]
    for e in events:
        if isinstance(e, TrickWon):
            per_seat[e.winner] += e.points
    team = (per_seat[0] + per_seat[2], per_seat[1] + per_seat[3])
    assert hs.moon is None and sum(team) == 26
    assert hs.points == team * 2 and hs.team_points == team
    assert hs.totals == team * 2 and hs.team_totals == team
    assert state.totals == team * 2 and state.team_totals == team


@pytest.mark.parametrize(("moon", "points"), [
    ("old", (0, 26, 0, 26)),
    ("new", (-26, 0, -26, 0)),
    ("safety", (0, 26, 0, 26)),  # old ends nothing at 26: old
    ("none", (26, 0, 26, 0)),
])
def test_team_slam_under_each_moon_rule(moon, points):
    state, events = team_sweep(moon=moon)
    hs = scored(events)
    assert hs.points == points and hs.team_points == points[:2]
    assert hs.moon == (None if moon == "none" else Moon(2, "moon", "old" if moon == "safety" else moon, team=True))


def test_team_slam_safety_scores_new_when_old_would_lose_the_game_for_the_slamming_team():
    rules = Rules.make("partnership", moon="safety")
    d = new_game(rules).to_dict()
    d["totals"] = [90, 80, 90, 80]
    state, events = play_out(deal_next(GameState.from_dict(d), TEAM_SWEEP))
    # old would give (90, 106, 90, 106): the game ends and team 0 (the slammers) wins: old stays.
    assert scored(events).moon == Moon(2, "moon", "old", team=True)
    d["totals"] = [95, 60, 95, 60]  # old: (95, 86): nobody reaches 100, old
    _, events = play_out(deal_next(GameState.from_dict(d), TEAM_SWEEP))
    assert scored(events).moon.scoring == "old"
    d["totals"] = [99, 80, 99, 80]
    d["rules"] = Rules.make("partnership", moon="safety", lowest_wins=False).to_dict()
    # highest wins: old (99, 106) ends the game with team 1 winning: new instead (73, 80), game goes on
    _, events = play_out(deal_next(GameState.from_dict(d), TEAM_SWEEP))
    hs = scored(events)
    assert hs.moon == Moon(2, "moon", "new", team=True)
    assert hs.team_totals == (73, 80)


@pytest.mark.parametrize(("choice", "points"), [("old", (0, 26, 0, 26)), ("new", (-26, 0, -26, 0)),
                                                ("safety", (0, 26, 0, 26))])
def test_team_slam_under_choice_asks_the_partner_who_won_the_teams_latest_trick(choice, points):
    state, events = team_sweep(moon="choice")
    assert events[-1] == MoonChoiceNeeded(2, "moon", team=True)
    assert state.phase == "moon" and state.shooter == (2, "moon") and state.seats_to_act() == (2,)
    assert state.moon_choices() == ("old", "new", "safety")
    assert_refused(state, lambda s: s.choose_moon(0, "old"), Reason.NOT_THE_SHOOTER, seat=0, shooter=2)
    state, events = apply(state, ChooseMoon(2, choice))
    hs = scored(events)
    assert hs.points == points
    assert hs.moon == Moon(2, "moon", "old" if choice == "safety" else choice, team=True)


def test_team_slam_chooser_is_the_teams_latest_trick_winner_not_the_last_tricks():
    rules = Rules.make("partnership", moon="choice")
    state, events = play_logged(new_game(rules).deal(LATE_DECK, "hold"), LATE_PLAY)
    wins = [e for e in events if isinstance(e, TrickWon)]
    assert wins[-1].winner == 3 and wins[-1].points == 0
    team0 = [e.winner for e in wins if e.winner % 2 == 0]
    assert state.shooter == (team0[-1], "moon") == (0, "moon")
    assert events[-1] == MoonChoiceNeeded(0, "moon", team=True)
    state, events = apply(state, ChooseMoon(0, "new"))
    assert scored(events).points == (-26, 0, -26, 0)


def test_team_sun_takes_every_trick_scored_with_twice_m():
    state, events = team_sweep(sun=True)
    hs = scored(events)
    assert hs.moon == Moon(2, "sun", "old", team=True)
    assert hs.points == (0, 52, 0, 52)


def test_team_avoid_all_tricks_bonus_goes_once_to_a_team_without_a_trick():
    rules = Rules.make("partnership", avoid_all_tricks_bonus=-5, moon="none")
    _, events = play_out(start(rules, TEAM_SWEEP))
    assert scored(events).points == (26, -5, 26, -5)


def test_team_game_ends_on_a_team_total_and_both_partners_win():
    rules = Rules.make("partnership", target=20)
    _, events = play_out(start(rules, TEAM_SWEEP))  # old slam: team 1 scores 26
    over = events[-1]
    assert isinstance(over, GameOver)
    assert over.winners == (0, 2) and over.team_totals == (0, 26) and over.totals == (0, 26, 0, 26)
    assert over.ranking == (0, 2, 1, 3)


def test_team_tie_plays_on_or_is_shared():
    for tie, winners in (("play_on", None), ("share", (0, 1, 2, 3))):
        rules = Rules.make("partnership", target=20, tie=tie, moon="none")
        d = new_game(rules).to_dict()
        d["totals"] = [0, 26, 0, 26]
        state, events = play_out(deal_next(GameState.from_dict(d), TEAM_SWEEP))  # team 0 takes 26
        assert state.team_totals == (26, 26)
        if winners is None:
            assert state.phase == "deal" and not any(isinstance(e, GameOver) for e in events)
        else:
            assert state.phase == "over" and events[-1].winners == winners


# -- individual mode ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("partner_moon", "points"), [("spared", (0, 26, 0, 26)), ("charged", (0, 26, 26, 26))])
def test_individual_old_moon_spares_or_charges_the_partner(partner_moon, points):
    rules = Rules.make("partnership-individual", partner_moon=partner_moon)
    state, events = play_sweep(new_game(rules), 0)
    hs = scored(events)
    assert hs.moon == Moon(0, "moon", "old")
    assert hs.points == points
    assert hs.team_points == (points[0] + points[2], points[1] + points[3])
    assert state.team_totals == hs.team_totals == hs.team_points


def test_individual_new_moon_and_a_moon_needs_one_player():
    rules = Rules.make("partnership-individual", moon="new")
    _, events = play_sweep(new_game(rules), 0)
    assert scored(events).points == (-26, 0, 0, 0)
    # team 0 taking everything between two partners is no moon in individual mode
    _, events = play_out(start(Rules.make("partnership-individual"), TEAM_SWEEP))
    hs = scored(events)
    assert hs.moon is None and hs.points[1] == hs.points[3] == 0 and hs.points[0] + hs.points[2] == 26


def test_individual_game_is_won_by_the_lower_team_sum_the_seeds_example():
    """RULES.md §6.1: 105 + 34 = 139 beats 78 + 69 = 147, though seat 0's 105 is the highest total."""
    rules = Rules.make("partnership-individual")
    d = new_game(rules).to_dict()
    # the sweep gives seat 0 nothing, each other seat 26 (partner spared: seat 2 0)
    d["totals"] = [105, 52, 34, 43]
    state, events = play_sweep(GameState.from_dict(d), 0)
    assert state.totals == (105, 78, 34, 69)
    over = events[-1]
    assert isinstance(over, GameOver)
    assert over.winners == (0, 2)
    assert over.team_totals == state.team_totals == (139, 147)
    assert over.ranking == (2, 0, 3, 1)  # team 0 first (its better total first), then team 1


def test_individual_game_end_needs_a_player_at_the_target_and_a_tie_of_sums_plays_on():
    rules = Rules.make("partnership-individual")
    d = new_game(rules).to_dict()
    d["totals"] = [70, 40, 0, 30]  # after the sweep: 70, 66, 0, 56: nobody at 100
    state, _ = play_sweep(GameState.from_dict(d), 0)
    assert state.phase == "deal"
    d["totals"] = [100, 0, 26, 0]  # after: 100, 26, 26, 26: team sums 126 and 52
    state, events = play_sweep(GameState.from_dict(d), 0)
    assert events[-1].winners == (1, 3)
    d["totals"] = [100, 48, 26, 52]  # after: 100, 74, 26, 78: sums 126 and 152... team 0 wins
    state, events = play_sweep(GameState.from_dict(d), 0)
    assert events[-1].winners == (0, 2)
    d["totals"] = [100, 48, 48, 48]  # after: 100, 74, 48, 74: sums 148 and 148: a tie, play on
    state, events = play_sweep(GameState.from_dict(d), 0)
    assert state.phase == "deal" and state.team_totals == (148, 148)


def test_individual_safety_judges_the_shooters_team():
    rules = Rules.make("partnership-individual", moon="safety")
    d = new_game(rules).to_dict()
    # old: (80, 116, 60, 70): over, sums 140 v 186: the shooter's team wins: old
    d["totals"] = [80, 90, 60, 44]
    _, events = play_sweep(GameState.from_dict(d), 0)
    assert scored(events).moon.scoring == "old"
    # old: (80, 100, 90, 30): over, sums 170 v 130: the shooter's team loses: new
    d["totals"] = [80, 74, 90, 4]
    _, events = play_sweep(GameState.from_dict(d), 0)
    hs = scored(events)
    assert hs.moon.scoring == "new" and hs.points == (-26, 0, 0, 0)


# -- pass_to_partner ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("cycle", [("left", "right", "across", "hold"), ("scatter",)])
def test_pass_to_partner_passes_across_every_passing_hand(cycle):
    rules = Rules.make("partnership", pass_to_partner=True, pass_cycle=cycle)
    assert [rules.table.pass_direction(k) for k in range(1, 5)] == [
        "hold" if d == "hold" else "across" for d in (cycle * 4)[:4]]
    state = deal_next(new_game(rules), {0: "2C 3C 4C", 1: "5C 6C 7C", 2: "8C 9C TC", 3: "JC QC KC"},
                      pass_direction=None)
    assert state.pass_direction == "across"
    for seat, chosen in ((0, "2C 3C 4C"), (1, "5C 6C 7C"), (2, "8C 9C TC"), (3, "JC QC KC")):
        state, _ = apply(state, PassCards(seat, tuple(chosen.split())))
    view = [seat_view(state, s)["received"] for s in range(4)]
    assert view == [["8C", "9C", "TC"], ["JC", "QC", "KC"], ["2C", "3C", "4C"], ["5C", "6C", "7C"]]
    # an explicit direction for the deal (bot authors) is made across too; hold stays hold
    assert new_game(rules).deal(LATE_DECK, "left").pass_direction == "across"
    assert new_game(rules).deal(LATE_DECK, "hold").pass_direction == "hold"


# -- snapshots ---------------------------------------------------------------------------------------------


def test_snapshot_round_trip_and_old_snapshots_load():
    state, _ = team_sweep(moon="choice")
    d = json.loads(json.dumps(state.to_dict()))
    again = GameState.from_dict(d)
    assert again == state and again.shooter == (2, "moon")
    assert GameState.from_dict(d).choose_moon(2, "new").history[-1][2] == Moon(2, "moon", "new", team=True)
    for key in ("kitty", "kitty_taker", "kitty_trick", "discarded", "team_last"):
        del d[key]
    old = GameState.from_dict(d)
    assert old.choose_moon(2, "old").totals == (0, 26, 0, 26)
    # a snapshot of a standard game written before the §6 fields existed
    plain = new_game(Rules()).to_dict()
    for key in ("kitty", "kitty_taker", "kitty_trick", "discarded", "team_last"):
        del plain[key]
    for key in ("partnership", "partner_moon", "pass_to_partner", "kitty", "kitty_exchange"):
        del plain["rules"][key]
    assert GameState.from_dict(plain) == new_game(Rules())


def test_seat_view_shows_teams_and_partner():
    state, _ = team_sweep()
    view = seat_view(state, 1)
    assert view["teams"] == [[0, 2], [1, 3]] and view["partner"] == 3
    assert view["team_totals"] == [0, 26]
    assert seat_view(new_game(Rules()), 0)["partner"] is None
