"""Each preset of RULES.md §5 played on a hand-built deal, showing what sets it apart."""

from __future__ import annotations

from pbem.engine import HandScored, HeartsBroken, Moon, MoonChoiceNeeded, Rules, new_game

from . import reference as ref
from .helpers import canon, cards, deck_for, play, play_logged, play_out, play_sweep, start
from .test_play_rules import D1


def scored(events) -> HandScored:
    return next(e for e in events if isinstance(e, HandScored))


def test_standard_a_whole_hand_with_a_pass():
    rules = Rules.make("standard")
    state = new_game(rules).deal(deck_for(rules, D1))
    assert state.phase == "pass" and state.pass_direction == "left"
    for seat in (2, 0, 3, 1):
        state = state.pass_cards(seat, state.hand(seat)[-3:])
    # Seat 2 passed its last three cards in canonical order to seat 3.
    assert set(cards("8S QS AS")) <= set(state.hand(3))
    assert state.to_move == 0 and state.legal_cards() == ("2C",)
    state, events = play_out(state)
    hs = scored(events)
    assert hs.moon is not None or sum(hs.points) == 26
    assert state.phase == "deal" and state.hand_no == 1


def test_classic_qs_breaks_hearts_and_the_shooter_chooses():
    rules = Rules.make("classic")
    state, events = play_logged(start(rules, D1), "2C 9C AS TC 4C 8C 3C QS")
    assert HeartsBroken(2, "QS") in events
    state, events = play_sweep(new_game(rules), 1)
    assert state.phase == "moon" and events[-1] == MoonChoiceNeeded(1, "moon")


def test_pagat_penalty_cards_allowed_on_the_first_trick():
    rules = Rules.make("pagat")
    state = play(start(rules, D1), "2C 9C")
    assert state.legal_cards() == tuple(canon(D1[2]))
    state, events = play_logged(state, "KH TC")
    assert events[-1].points == 1
    state, events = play_sweep(new_game(rules), 0)
    assert state.phase == "moon"


def test_omnibus_jd_is_worth_minus_ten():
    rules = Rules.make("omnibus")
    # Seat 2 discards JD on trick 1, which seat 3 takes with TC.
    state = play(start(rules, D1), "2C 9C JD TC")
    state, events = play_out(state)
    hs = scored(events)
    assert hs.moon is None
    taken = [set() for _ in range(4)]
    for e in events:
        if hasattr(e, "winner"):
            taken[e.winner] |= set(e.cards)
    taken[3] |= set(cards("2C 9C JD TC"))
    expected = [sum(ref.card_value(rules, c) for c in t) for t in taken]
    expected[3] -= 10
    assert list(hs.points) == expected
    assert sum(hs.points) == 16


def test_spot_hearts_at_face_value_and_qs_25():
    rules = Rules.make("spot")
    state, events = play_logged(start(rules, D1), "2C 9C AS TC 4C 8C 3C 9H")
    assert events[-1].points == 9
    state, events = play_logged(start(rules, D1), "2C 9C AS TC 4C 8C 3C QS")
    assert events[-1].points == 25
    state, events = play_sweep(new_game(rules), 0)
    assert scored(events).points == (0, 129, 129, 129)
    assert state.phase == "deal"  # target 500


BLACK_MARIA = {  # 3 players, 2C removed, 17 cards each
    0: "3C 4C 2D 3D 4D 5D 2H 3H 4H 5H 6H 2S 3S 4S 5S 6S 7S",
    1: "5C 6C 7C 8C 9C TC 6D 7D 8D 9D TD 7H 8H 9H TH 8S 9S",
    2: "JC QC KC AC JD QD KD AD JH QH KH AH TS JS QS KS AS",
}


def test_black_maria():
    rules = Rules.make("black-maria")
    assert len(deck_for(rules, {})) == 51
    state = new_game(rules).deal(deck_for(rules, BLACK_MARIA))
    assert state.pass_direction == "right" and state.dealer == 2
    for seat in range(3):
        state = state.pass_cards(seat, state.hand(seat)[:3])
    # Right: seat 1's 5C 6C 7C went to seat 0.
    assert set(cards("5C 6C 7C")) <= set(state.hand(0))
    # Left of the dealer leads anything, a heart included, on the first trick.
    assert state.to_move == 0
    assert state.legal_cards() == state.hand(0)
    state, events = play_logged(state, "2H 7H AH")
    assert events[-1].winner == 2 and events[-1].points == 3
    # KS is 10, AS 7.
    state, events = play_logged(state, "KS 7S 9S")
    assert events[-1].points == 10
    state, _ = play_out(state)
    state = state.deal(deck_for(rules, {}, 2))
    assert state.pass_direction == "right" and state.dealer == 0


def test_original_1880_no_passing_qs_is_nothing_no_moon():
    rules = Rules.make("original-1880")
    state = new_game(rules).deal(deck_for(rules, D1))
    assert state.phase == "play" and state.pass_direction == "hold"
    assert state.to_move == 0
    assert state.legal_cards() == tuple(canon(D1[0]))  # any card, a heart included
    state, events = play_logged(start(rules, D1), "2C 9C QS TC")
    assert events[-1].points == 0
    state, events = play_sweep(new_game(rules), 0)
    assert scored(events).points == (13, 0, 0, 0) and scored(events).moon is None


def test_dame_de_pique_no_passing_left_of_dealer_leads_but_not_a_heart():
    rules = Rules.make("dame-de-pique")
    hands = {0: "QS 2H 3H 4H 2D 3D 4D 5D 6D 7D 8D 9D TD"}
    state = new_game(rules).deal(deck_for(rules, hands))
    assert state.phase == "play" and state.to_move == 0
    assert state.legal_cards() == tuple(cards("2D 3D 4D 5D 6D 7D 8D 9D TD QS"))
    state, events = play_sweep(new_game(rules), 0)
    assert scored(events).moon == Moon(0, "moon", "old")


def test_reverse_highest_total_wins_and_no_moon():
    rules = Rules.make("reverse", target=52)
    state, events = play_sweep(new_game(rules), 0)
    assert scored(events).points == (26, 0, 0, 0) and scored(events).moon is None
    state, events = play_sweep(state, 0)
    assert state.phase == "over" and state.winners == (0,)


def test_hartenjagen():
    rules = Rules.make("hartenjagen")
    assert len(deck_for(rules, {})) == 32
    state = start(rules, {0: "7C", 1: "JC", 2: "8C", 3: "9C"})
    assert [len(state.hand(s)) for s in range(4)] == [8] * 4
    assert state.to_move == 0 and state.legal_cards() == ("7C",)
    state, events = play_logged(state, "7C JC 8C 9C")
    assert events[-1].winner == 1 and events[-1].points == 2  # JC is worth 2
    state, events = play_sweep(new_game(rules), 0)
    assert scored(events).points == (0, 15, 15, 15)  # 8 hearts, QS 5, JC 2
