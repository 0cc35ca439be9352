"""Scoring a hand and ending a game: RULES.md §2 rules 7 to 9 and the scoring options of §3.

Whole hands are played from hand-built deals. A *sweep* (``play_sweep``) gives one seat every club
and the top spades, so it takes every trick and every card: a moon and a sun at once.
"""

from __future__ import annotations

import pytest

from pbem.engine import (
    GameOver,
    HandScored,
    Moon,
    MoonChoiceNeeded,
    Reason,
    Rules,
    TrickWon,
    new_game,
    seat_view,
)

from . import reference as ref
from .helpers import assert_refused, deal_next, play, play_out, play_sweep, start
from .test_play_rules import D1


def scored(events) -> HandScored:
    found = [e for e in events if isinstance(e, HandScored)]
    assert len(found) == 1
    return found[0]


def check_tricks(rules, events, players=4):
    """Every TrickWon names the winner RULES.md §2 rule 4 gives and the points of its cards; returns
    the cards each seat took and the tricks each won."""
    taken = [set() for _ in range(players)]
    won = [0] * players
    for e in events:
        if isinstance(e, TrickWon):
            assert e.winner == ref.trick_winner(e.cards, e.leader, players)
            assert e.points == sum(ref.card_value(rules, c) for c in e.cards)
            taken[e.winner] |= set(e.cards)
            won[e.winner] += 1
    return taken, won


# -- rule 7: each heart 1, QS 13 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"heart_values": "spot", "qs_penalty": 25}, {"heart_values": "spot_capped"},
     {"extra_penalties": {"KS": 10, "AS": 7}}, {"qs_penalty": 0}, {"jd_bonus": -10},
     {"jd_bonus": -5, "bonus_card": "TD"}, {"avoid_all_tricks_bonus": -5}],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "standard",
)
def test_hand_points_are_the_values_of_the_cards_taken(options):
    rules = Rules(**options)
    state, events = play_out(start(rules, D1))
    taken, won = check_tricks(rules, events)
    hs = scored(events)
    assert hs.moon is None
    assert list(hs.points) == ref.hand_points(rules, taken, won, None)
    assert hs.tricks_won == tuple(won)
    assert hs.totals == hs.points == state.totals
    bonus = rules.jd_bonus + rules.avoid_all_tricks_bonus * won.count(0)
    assert sum(hs.points) == ref.moon_total(rules) + bonus


def test_standard_values_in_a_trick():
    """D1 without rule 5: QS in trick 1 is 13 points for seat 3, a heart in trick 2 is 1 for seat 0."""
    state = play(start(Rules(no_pts_on_first_trick=False), D1), "2C 9C QS TC")
    assert state.last_trick[3] == 13
    state = play(state, "4C 8C 3C 9H")
    assert state.last_trick[3] == 1
    assert state.points_taken() == (1, 0, 0, 13)


@pytest.mark.parametrize(("scheme", "values"), [
    ("one", {"2H": 1, "TH": 1, "JH": 1, "QH": 1, "KH": 1, "AH": 1}),
    ("spot", {"2H": 2, "TH": 10, "JH": 11, "QH": 12, "KH": 13, "AH": 14}),
    ("spot_capped", {"2H": 2, "TH": 10, "JH": 10, "QH": 10, "KH": 10, "AH": 15}),
])
def test_heart_values(scheme, values):
    from pbem.engine import card_points

    rules = Rules(heart_values=scheme)
    for card, value in values.items():
        assert card_points(rules, [card]) == value == ref.card_value(rules, card)


# -- rule 8 and the moon options ----------------------------------------------------------------------


@pytest.mark.parametrize(("moon", "points"), [
    ("old", (0, 26, 26, 26)),
    ("new", (-26, 0, 0, 0)),
    ("none", (26, 0, 0, 0)),
])
def test_moon_scoring(moon, points):
    state, events = play_sweep(new_game(Rules(moon=moon)), 0)
    hs = scored(events)
    assert hs.points == points
    assert hs.moon == (None if moon == "none" else Moon(0, "moon", moon))
    assert hs.tricks_won == (13, 0, 0, 0)


# Seat 0 takes every penalty card but not trick 1, which seat 1 wins with AC (and JD, discarded by
# seat 2). Script: "2C AC JD 3C 2S", then seat 0 takes every trick with its spades.
JD_ELSEWHERE = {0: "2C 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 1: "AC 2S", 2: "JD",
                3: "3C 4C 5C 6C 7C 8C 9C TC JC QC KC"}


def _jd_elsewhere(rules, script="2C AC JD 3C 2S"):
    state = play(start(rules, JD_ELSEWHERE), script)
    return play_out(state)


def test_a_moon_needs_every_penalty_card_not_every_trick():
    state, events = _jd_elsewhere(Rules())
    hs = scored(events)
    assert hs.tricks_won == (12, 1, 0, 0)
    assert hs.moon == Moon(0, "moon", "old")
    assert hs.points == (0, 26, 26, 26)


def test_omnibus_moon_with_jd_taken_by_another_seat_old():
    """The bonus card is still scored for whoever took it (rule 8)."""
    rules = Rules.make("omnibus")
    state, events = _jd_elsewhere(rules)
    assert state.phase == "moon"
    assert events[-1] == MoonChoiceNeeded(0, "moon")
    state, events = _choose(state, 0, "old")
    assert scored(events).points == (0, 16, 26, 26)
    assert scored(events).moon == Moon(0, "moon", "old")


def test_omnibus_moon_with_jd_taken_by_another_seat_new():
    state, events = _jd_elsewhere(Rules.make("omnibus"))
    state, events = _choose(state, 0, "new")
    assert scored(events).points == (-26, -10, 0, 0)


def test_omnibus_moon_with_jd_taken_by_the_shooter():
    hands = {0: "2C 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", 1: "AC 2S", 2: "JD",
             3: "3C 4C 5C 6C 7C 8C 9C TC JC QC KC"}
    # Seat 2 keeps JD for later and discards it into one of seat 0's tricks.
    state = play(start(Rules.make("omnibus", moon="old"), hands), "2C AC AD 3C 2S")
    state, events = play_out(state)
    hs = scored(events)
    assert hs.moon == Moon(0, "moon", "old")
    assert hs.points == (-10, 26, 26, 26)


def test_a_bonus_card_taken_in_an_ordinary_hand():
    rules = Rules(jd_bonus=-10)
    state, events = play_out(start(rules, D1))
    taken, won = check_tricks(rules, events)
    taker = next(s for s in range(4) if "JD" in taken[s])
    hs = scored(events)
    assert hs.points[taker] == sum(ref.card_value(rules, c) for c in taken[taker]) - 10


def test_bonus_card_option():
    rules = Rules(jd_bonus=-5, bonus_card="TD")
    state, events = play_out(start(rules, D1))
    taken, won = check_tricks(rules, events)
    hs = scored(events)
    for seat in range(4):
        base = sum(ref.card_value(rules, c) for c in taken[seat])
        assert hs.points[seat] == base - 5 * ("TD" in taken[seat])


@pytest.mark.parametrize(("preset", "players", "m"), [
    ("standard", 4, 26), ("spot", 4, 129), ("black-maria", 3, 43), ("hartenjagen", 4, 15),
])
def test_moon_totals(preset, players, m):
    rules = Rules.make(preset)
    assert rules.players == players
    assert ref.moon_total(rules) == m
    state, events = play_sweep(new_game(rules), 0)
    hs = scored(events)
    assert hs.moon == Moon(0, "moon", "old")
    assert hs.points == (0,) + (m,) * (players - 1)


def test_spot_capped_moon_total():
    rules = Rules(heart_values="spot_capped")
    state, events = play_sweep(new_game(rules), 0)
    assert scored(events).points == (0, 112, 112, 112)  # 99 + qs_penalty 13


def test_moon_none_the_taker_simply_scores_m():
    state, events = _jd_elsewhere(Rules(moon="none", jd_bonus=-10))
    assert scored(events).points == (26, -10, 0, 0)
    assert scored(events).moon is None


# -- moon=choice and moon=safety ----------------------------------------------------------------------


def _choose(state, seat, choice):
    from pbem.engine import ChooseMoon, apply

    return apply(state, ChooseMoon(seat, choice))


def _answer_old(state, events):
    if state.phase == "moon":
        state, more = _choose(state, state.shooter[0], "old")
        events = list(events) + list(more)
    return state, events


def test_moon_choice_waits_for_the_shooter():
    state, events = play_sweep(new_game(Rules(moon="choice")), 2)
    assert state.phase == "moon"
    assert events[-1] == MoonChoiceNeeded(2, "moon")
    assert not any(isinstance(e, HandScored) for e in events)
    assert state.seats_to_act() == (2,) and state.to_move == -1
    assert state.totals == (0, 0, 0, 0)
    assert seat_view(state, 2)["moon_choice"] == "moon"
    assert seat_view(state, 1)["moon_choice"] is None
    assert_refused(state, lambda s: s.choose_moon(1, "old"), Reason.NOT_THE_SHOOTER, seat=1, shooter=2)
    assert_refused(state, lambda s: s.choose_moon(2, "sideways"), Reason.BAD_MOON_CHOICE, choice="sideways")
    assert_refused(state, lambda s: s.play("2C"), Reason.WRONG_PHASE, phase="moon", expected="play")
    assert_refused(state, lambda s: s.deal(s.deck), Reason.WRONG_PHASE, phase="moon", expected="deal")
    old, _ = _choose(state, 2, "old")
    assert old.totals == (26, 26, 0, 26) and old.phase == "deal"
    new, events = _choose(state, 2, "new")
    assert new.totals == (0, 0, -26, 0)
    assert scored(events) == HandScored(1, (0, 0, -26, 0), (0, 0, -26, 0), Moon(2, "moon", "new"), (0, 0, 13, 0))


def test_choose_moon_with_no_moon_pending_is_refused():
    state, _ = play_out(start(Rules(moon="choice"), D1))
    assert state.phase == "deal"
    assert_refused(state, lambda s: s.choose_moon(0, "old"), Reason.WRONG_PHASE, phase="deal", expected="moon")


def _shoot_late(rules):
    """Hands 1 and 2: seat 1 sweeps (old: 52, 0, 52, 52). Hand 3: seat 0 sweeps. With old scoring
    hand 3 would end the game (52, 26, 78, 78) at target 60 with seat 1 the winner."""
    state = new_game(rules)
    history = []
    for shooter in (1, 1, 0):
        state, events = play_sweep(state, shooter)
        if state.phase == "moon" and shooter == 1:
            state, events = _answer_old(state, events)
        history.append(events)
    return state, history


def test_moon_safety_scores_new_when_old_would_lose_the_game_for_the_shooter():
    state, history = _shoot_late(Rules(moon="safety", target=60))
    assert scored(history[0]).moon == Moon(1, "moon", "old")
    assert scored(history[1]).moon == Moon(1, "moon", "old")
    assert scored(history[2]).moon == Moon(0, "moon", "new")
    assert state.totals == (26, 0, 52, 52)
    assert state.phase == "deal"


def test_moon_safety_scores_old_when_the_shooter_wins_with_it():
    state, events = play_sweep(new_game(Rules(moon="safety", target=26)), 0)
    assert scored(events).moon == Moon(0, "moon", "old")
    assert state.phase == "over" and state.winners == (0,)


def test_moon_safety_scores_old_when_the_shooter_would_be_a_joint_winner():
    rules = Rules(moon="safety", target=52, tie="share")
    state, _ = play_sweep(new_game(rules), 1)  # 26 0 26 26
    state, events = play_sweep(state, 0)  # old: 26 26 52 52, over, winners 0 and 1
    assert scored(events).moon == Moon(0, "moon", "old")
    assert state.winners == (0, 1)


def test_moon_safety_with_play_on_tie_the_game_goes_on_so_old():
    rules = Rules(moon="safety", target=52)
    state, _ = play_sweep(new_game(rules), 1)
    state, events = play_sweep(state, 0)
    assert scored(events).moon == Moon(0, "moon", "old")
    assert state.phase == "deal" and state.totals == (26, 26, 52, 52)


def test_moon_choice_safety_fallback_and_explicit_choices():
    rules = Rules(moon="choice", target=60)
    state, history = _shoot_late(rules)
    assert state.phase == "moon" and state.shooter == (0, "moon")
    fallback, events = _choose(state, 0, "safety")
    assert scored(events).moon == Moon(0, "moon", "new")
    assert fallback.totals == (26, 0, 52, 52) and fallback.phase == "deal"
    old, events = _choose(state, 0, "old")
    assert old.totals == (52, 26, 78, 78) and old.phase == "over" and old.winners == (1,)
    assert events[-1] == GameOver((1,), (1, 0, 2, 3), (52, 26, 78, 78))


# -- sun and the avoid-all-tricks bonus --------------------------------------------------------------


@pytest.mark.parametrize(("moon", "points"), [("old", (0, 52, 52, 52)), ("new", (-52, 0, 0, 0))])
def test_sun_takes_every_trick_and_scores_twice_m(moon, points):
    state, events = play_sweep(new_game(Rules(sun=True, moon=moon)), 0)
    hs = scored(events)
    assert hs.moon == Moon(0, "sun", moon)
    assert hs.points == points


def test_sun_with_moon_choice_asks_about_the_sun():
    state, events = play_sweep(new_game(Rules(sun=True, moon="choice")), 3)
    assert events[-1] == MoonChoiceNeeded(3, "sun")
    state, events = _choose(state, 3, "new")
    assert scored(events).points == (0, 0, 0, -52)


def test_with_sun_a_moon_that_missed_a_trick_is_still_a_moon():
    state, events = _jd_elsewhere(Rules(sun=True))
    assert scored(events).moon == Moon(0, "moon", "old")
    assert scored(events).points == (0, 26, 26, 26)


def test_avoid_all_tricks_bonus_when_no_moon():
    rules = Rules(avoid_all_tricks_bonus=-5, no_pts_on_first_trick=False)
    # Seat 2 discards 2H on trick 1 instead of JD: seat 1 takes a point, so no moon.
    state, events = _jd_elsewhere(rules, script="2C AC 2H 3C 2S")
    hs = scored(events)
    assert hs.moon is None and hs.tricks_won == (12, 1, 0, 0)
    assert hs.points == (25, 1, -5, -5)


def test_avoid_all_tricks_bonus_not_given_when_a_moon_is_scored():
    state, events = _jd_elsewhere(Rules(avoid_all_tricks_bonus=-5))
    assert scored(events).points == (0, 26, 26, 26)


def test_avoid_all_tricks_bonus_with_moon_none():
    state, events = play_sweep(new_game(Rules(avoid_all_tricks_bonus=-3, moon="none")), 0)
    assert scored(events).points == (26, -3, -3, -3)


# -- rule 9: totals, the end of the game ---------------------------------------------------------------


def test_totals_add_up_hand_after_hand_and_may_go_negative():
    state = new_game(Rules(moon="new"))
    for shooter in (0, 0, 2):
        state, _ = play_sweep(state, shooter)
    assert state.totals == (-52, 0, -26, 0)
    assert [h[0] for h in state.history] == [(-26, 0, 0, 0), (-26, 0, 0, 0), (0, 0, -26, 0)]
    assert [h[1] for h in state.history] == [(-26, 0, 0, 0), (-52, 0, 0, 0), (-52, 0, -26, 0)]


def test_the_game_ends_at_the_target_and_the_lowest_total_wins():
    state = new_game(Rules(target=52))
    state, _ = play_sweep(state, 0)
    assert state.phase == "deal" and state.totals == (0, 26, 26, 26)
    state, events = play_sweep(state, 0)
    assert state.phase == "over" and state.winners == (0,)
    assert events[-1] == GameOver((0,), (0, 1, 2, 3), (0, 52, 52, 52))
    assert state.is_over
    assert_refused(state, lambda s: s.deal(s.deck), Reason.GAME_OVER)
    assert_refused(state, lambda s: s.play("2C"), Reason.GAME_OVER)


def test_a_tie_for_lowest_at_the_target_plays_on():
    state = new_game(Rules(target=52))
    state, _ = play_sweep(state, 0)
    state, events = play_sweep(state, 1)
    assert state.totals == (26, 26, 52, 52)
    assert state.phase == "deal" and state.winners == ()
    assert not any(isinstance(e, GameOver) for e in events)
    # Another hand is dealt as usual (hand 3: pass across) and rule 9 runs again after it.
    state = deal_next(state, {}, None)
    assert state.hand_no == 3 and state.pass_direction == "across"
    state = new_game(Rules(target=52))
    for shooter in (0, 1, 2):
        state, _ = play_sweep(state, shooter)
    assert state.totals == (52, 52, 52, 78) and state.phase == "deal"
    state, events = play_sweep(state, 0)
    assert state.totals == (52, 78, 78, 104)
    assert state.phase == "over" and state.winners == (0,)


def test_a_tie_for_lowest_at_the_target_shared():
    state = new_game(Rules(target=52, tie="share"))
    state, _ = play_sweep(state, 0)
    state, events = play_sweep(state, 1)
    assert state.phase == "over" and state.winners == (0, 1)
    assert events[-1] == GameOver((0, 1), (0, 1, 2, 3), (26, 26, 52, 52))


def test_a_tie_that_is_not_for_the_lead_does_not_matter():
    state = new_game(Rules(target=52))
    state, _ = play_sweep(state, 0)
    state, _ = play_sweep(state, 0)
    assert state.totals == (0, 52, 52, 52) and state.winners == (0,)


@pytest.mark.parametrize("reset", [0, 50])
def test_exact_target_reset(reset):
    state = new_game(Rules(target=52, exact_target_reset=reset))
    state, _ = play_sweep(state, 0)
    state, events = play_sweep(state, 1)
    # 26 26 52 52: the totals exactly at the target are reset before the end is checked.
    assert state.totals == (26, 26, reset, reset)
    assert scored(events).totals == (26, 26, reset, reset)
    assert scored(events).points == (26, 0, 26, 26)
    assert state.phase == "deal"


def test_exact_target_reset_only_for_exactly_the_target():
    state = new_game(Rules(target=50, exact_target_reset=0))
    state, _ = play_sweep(state, 0)
    state, _ = play_sweep(state, 0)
    assert state.totals == (0, 52, 52, 52) and state.phase == "over"


def test_end_after_hands_instead_of_a_target():
    state = new_game(Rules(target=20, end_after_hands=2))
    state, _ = play_sweep(state, 0)
    assert state.totals == (0, 26, 26, 26) and state.phase == "deal"
    state, events = play_sweep(state, 0)
    assert state.phase == "over" and state.winners == (0,)
    assert events[-1] == GameOver((0,), (0, 1, 2, 3), (0, 52, 52, 52))


def test_end_after_hands_with_a_tie_plays_on():
    state = new_game(Rules(end_after_hands=2))
    state, _ = play_sweep(state, 0)
    state, _ = play_sweep(state, 1)
    assert state.totals == (26, 26, 52, 52) and state.phase == "deal"
    state, _ = play_sweep(state, 2)
    assert state.phase == "deal"
    state, _ = play_sweep(state, 1)
    assert state.totals == (78, 52, 78, 104) and state.winners == (1,)


def test_lowest_wins_false_the_highest_total_wins():
    rules = Rules(lowest_wins=False, moon="none", target=52)
    state = new_game(rules)
    state, _ = play_sweep(state, 0)
    state, _ = play_sweep(state, 1)
    assert state.totals == (26, 26, 0, 0) and state.phase == "deal"
    state, events = play_sweep(state, 1)
    assert state.phase == "over" and state.winners == (1,)
    assert events[-1] == GameOver((1,), (1, 0, 2, 3), (26, 52, 0, 0))
    assert state.ranking() == (1, 0, 2, 3)
