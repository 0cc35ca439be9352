"""What the mail server asks the engine: ``only_legal_card()`` (play it automatically) and
``unplayed_can_change_score()`` (if not, play the rest of the hand automatically)."""

from __future__ import annotations

from pbem.engine import Rules, new_game

from .helpers import ALL_CARDS, cards, deck_for, play, play_out, play_sweep, start
from .test_play_rules import D1, ONLY_HEARTS_AND_QS
from .test_scoring import JD_ELSEWHERE


def test_only_legal_card_the_opening_2c():
    assert start(Rules(), D1).only_legal_card() == "2C"


def test_only_legal_card_none_with_a_choice():
    assert play(start(Rules(), D1), "2C").only_legal_card() is None
    assert start(Rules(first_lead="any_club"), D1).only_legal_card() is None


def test_only_legal_card_a_single_card_of_the_led_suit():
    state = play(start(Rules(), JD_ELSEWHERE), "2C")
    assert state.to_move == 1 and state.only_legal_card() == "AC"


def test_only_legal_card_qs_when_hearts_are_unbroken():
    state = play(start(Rules(), ONLY_HEARTS_AND_QS), "2C 2D 2S AC")
    assert state.only_legal_card() == "QS"
    state = play(start(Rules(can_lead_hearts_instead_of_qs=True), ONLY_HEARTS_AND_QS), "2C 2D 2S AC")
    assert state.only_legal_card() is None


def test_only_legal_card_qs_must_drop():
    state = play(start(Rules(qs_must_drop_when_safe=True), D1), "2C 9C JD TC KS 4S 7S")
    assert state.only_legal_card() == "QS"


def test_only_legal_card_the_last_card_of_the_hand():
    state = start(Rules(), D1)
    while len(state.hand(state.to_move)) > 1:
        state = state.play(state.legal_cards()[0])
    assert state.only_legal_card() == state.hand(state.to_move)[0]


def test_only_legal_card_none_outside_the_play_phase():
    rules = Rules()
    assert new_game(rules).only_legal_card() is None
    passing = new_game(rules).deal(deck_for(rules, D1))
    assert passing.phase == "pass" and passing.only_legal_card() is None
    moon, _ = play_sweep(new_game(Rules(moon="choice")), 0)
    assert moon.phase == "moon" and moon.only_legal_card() is None


# A 12-card deck, 3 cards each. Trick 1: seat 1 leads 2C, seat 3 discards QS, seat 0 takes it with
# 4C. Trick 2: seat 0 leads 5D, seat 3 discards 2H, seat 0 takes it. Then no penalty card is left.
SMALL_IN_PLAY = cards("2C 3C 4C 2D 3D 4D 5D 2H 2S 3S 4S QS")
SMALL = {0: "4C 5D 4S", 1: "2C 3D 2S", 2: "3C 2D 4D", 3: "QS 2H 3S"}


def small_rules(**options) -> Rules:
    removed = [c for c in ALL_CARDS if c not in SMALL_IN_PLAY]
    return Rules(removed_cards=removed, no_pts_on_first_trick=False, **options)


def _after_two_tricks(rules):
    state = play(start(rules, SMALL), "2C 3C QS 4C 5D 3D 2D")
    assert state.unplayed_can_change_score()  # 2H is still in seat 3's hand
    state = play(state, "2H")
    assert state.tricks_played == 2 and state.tricks_won == (2, 0, 0, 0)
    return state


def test_no_penalty_card_left_nothing_can_change():
    state = _after_two_tricks(small_rules())
    assert not state.unplayed_can_change_score()
    before = state.points_taken()
    assert before == (14, 0, 0, 0)
    low, events = play_out(state)
    assert events[-1].points == (0, 14, 14, 14)  # the moon was already certain
    high, _ = play_out(state, lambda s: s.legal_cards()[-1])
    assert high.totals == low.totals


def test_sun_still_possible_can_change():
    state = _after_two_tricks(small_rules(sun=True))
    assert state.unplayed_can_change_score()


def test_avoid_all_tricks_bonus_still_open_can_change():
    state = _after_two_tricks(small_rules(avoid_all_tricks_bonus=-5))
    assert state.unplayed_can_change_score()


def test_unplayed_bonus_card_can_change():
    state = _after_two_tricks(small_rules(jd_bonus=-10, bonus_card="4D"))
    assert state.unplayed_can_change_score()
    assert not _after_two_tricks(small_rules(jd_bonus=-10, bonus_card="2D")).unplayed_can_change_score()


def test_a_penalty_card_on_the_table_can_change():
    state = play(start(small_rules(), SMALL), "2C 3C QS")
    assert state.unplayed_can_change_score()
