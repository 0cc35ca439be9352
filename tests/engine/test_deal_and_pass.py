"""Dealing, the dealer's rotation and passing (RULES.md §1, §2 rules 1 to 3, §3 pass options)."""

from __future__ import annotations

import pytest

from pbem.engine import (
    CardsPassed,
    Deal,
    HandDealt,
    PassCards,
    PassesExchanged,
    Reason,
    Rules,
    apply,
    new_game,
    seat_view,
)
from pbem.engine.cards import mask_of

from .helpers import ALL_CARDS, assert_refused, cards, deal_next, deck_for, play_sweep, start, suit, sweep_hands


def test_hand_one_is_dealt_one_card_at_a_time_from_seat_0():
    """Hand 1's dealer is the last seat, so seat 0 gets the 1st, 5th, 9th … card of the deck."""
    state, events = apply(new_game(Rules()), Deal(ALL_CARDS))
    assert events == (HandDealt(1, 3, "left"),)
    assert state.dealer == 3
    assert state.hand(0) == tuple(cards("2C 6C TC AC 5D 9D KD 4H 8H QH 3S 7S JS"))
    assert state.hand(1) == tuple(cards("3C 7C JC 2D 6D TD AD 5H 9H KH 4S 8S QS"))
    assert state.hand(3) == tuple(cards("5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS"))
    assert all(len(state.hand(s)) == 13 for s in range(4))


def test_the_deal_moves_one_seat_clockwise_each_hand():
    """Hand 2's dealer is seat 0, so seat 1 gets the first card; the dealers run 3, 0, 1, 2, 3."""
    state, _ = play_sweep(new_game(Rules(target=10_000)), 0)
    state, events = apply(state, Deal(ALL_CARDS, "hold"))
    assert events == (HandDealt(2, 0, "hold"),)
    assert state.hand(1)[:4] == tuple(cards("2C 6C TC AC"))
    assert state.hand(0)[:4] == tuple(cards("5C 9C KC 4D"))
    dealers = [3, state.dealer]
    state = _finish(state)
    for _ in range(3):
        state, _ = play_sweep(state, 0)
        dealers.append(state.dealer)
    assert dealers == [3, 0, 1, 2, 3]


def _finish(state):
    from .helpers import play_out

    return play_out(state)[0]


@pytest.mark.parametrize("players", [3, 5, 6, 7])
def test_dealer_rotation_with_other_player_counts(players):
    rules = Rules(players=players, target=10_000)
    state = new_game(rules)
    dealers = []
    for hand_no in range(1, players + 2):
        state = state.deal(deck_for(rules, {}, hand_no), "hold")
        dealers.append(state.dealer)
        state = _finish(state)
    assert dealers == [(k - 2) % players for k in range(1, players + 2)]


def test_standard_pass_cycle_is_left_right_across_hold():
    state = new_game(Rules(target=10_000))
    directions = []
    for hand_no in range(1, 6):
        state = state.deal(deck_for(state.rules, sweep_hands(state.rules, 0), hand_no))
        directions.append(state.pass_direction)
        if state.phase == "pass":
            assert state.to_move == -1 and state.legal_cards() == ()
            for seat in range(4):
                state = state.pass_cards(seat, state.hand(seat)[-3:])
        state = _finish(state)
    assert directions == ["left", "right", "across", "hold", "left"]


@pytest.mark.parametrize("players", [3, 5, 6, 7])
def test_default_pass_cycle_with_other_player_counts_is_left_right(players):
    assert Rules(players=players).pass_cycle == ("left", "right")
    assert Rules.make("standard", players=players).pass_cycle == ("left", "right")


def test_a_hold_hand_goes_straight_to_play():
    state = new_game(Rules()).deal(deck_for(Rules(), {}), "hold")
    assert state.phase == "play"
    assert_refused(state, lambda s: s.pass_cards(0, s.hand(0)[:3]), Reason.NO_PASS_THIS_HAND)


def _pass_all(state, chosen: dict[int, str], order=None):
    events = []
    for seat in order or sorted(chosen):
        state, evs = apply(state, PassCards(seat, tuple(cards(chosen[seat]))))
        events.extend(evs)
    return state, events


# Hands for the pass tests: each seat holds one whole suit, so where a passed card lands is plain.
SUIT_HANDS = {0: suit("C"), 1: suit("D"), 2: suit("H"), 3: suit("S")}
PASSES = {0: "2C 3C 4C", 1: "2D 3D 4D", 2: "2H 3H 4H", 3: "2S 3S 4S"}


@pytest.mark.parametrize(
    ("direction", "to"),
    [("left", [1, 2, 3, 0]), ("right", [3, 0, 1, 2]), ("across", [2, 3, 0, 1])],
)
def test_pass_directions(direction, to):
    state = start(Rules(), SUIT_HANDS, pass_direction=direction)
    assert state.phase == "pass" and state.pass_direction == direction
    state, events = _pass_all(state, PASSES)
    assert state.phase == "play"
    for giver, receiver in enumerate(to):
        passed = cards(PASSES[giver])
        assert set(passed) <= set(state.hand(receiver))
        assert not set(passed) & set(state.hand(giver))
        assert state.received[receiver] == mask_of(passed)
        assert seat_view(state, receiver)["received"] == passed
        assert seat_view(state, giver)["passed"] == passed
    exchanged = [e for e in events if isinstance(e, PassesExchanged)]
    assert exchanged == [PassesExchanged(direction, tuple(tuple(cards(PASSES[to.index(r)])) for r in range(4)))]


def test_passing_is_simultaneous_cards_join_only_when_every_seat_has_passed():
    state = start(Rules(), SUIT_HANDS, pass_direction="left")
    state, events = _pass_all(state, {3: PASSES[3], 0: PASSES[0], 2: PASSES[2]}, order=[3, 0, 2])
    assert events == [CardsPassed(3), CardsPassed(0), CardsPassed(2)]
    assert state.phase == "pass"
    assert state.seats_to_pass() == (1,)
    assert state.seats_to_act() == (1,)
    # Passed cards have left their hands; nothing has arrived anywhere yet.
    assert state.hand(0) == tuple(suit("C")[3:])
    assert state.hand(1) == tuple(suit("D"))  # seat 0's clubs are not there yet
    assert state.hand(3) == tuple(suit("S")[3:])
    assert seat_view(state, 1)["received"] is None
    assert seat_view(state, 0)["passed"] == cards(PASSES[0])
    assert_refused(state, lambda s: s.play("2D"), Reason.WRONG_PHASE, phase="pass", expected="play")
    state, events = _pass_all(state, {1: PASSES[1]})
    assert [type(e) for e in events] == [CardsPassed, PassesExchanged]
    assert state.phase == "play"
    assert set(cards("2C 3C 4C")) <= set(state.hand(1))


def test_a_pass_cannot_be_changed():
    state = start(Rules(), SUIT_HANDS, pass_direction="left")
    state = state.pass_cards(0, cards("2C 3C 4C"))
    assert_refused(state, lambda s: s.pass_cards(0, cards("5C 6C 7C")), Reason.ALREADY_PASSED, seat=0)
    # Once every seat has passed the hand is in play and passing is over.
    state, _ = _pass_all(state, {1: PASSES[1], 2: PASSES[2], 3: PASSES[3]})
    assert_refused(state, lambda s: s.pass_cards(0, cards("5C 6C 7C")), Reason.WRONG_PHASE,
                   phase="play", expected="pass")


@pytest.mark.parametrize(
    ("seat", "passed", "reason", "details"),
    [
        (0, "2C 3C", Reason.WRONG_PASS_COUNT, {"expected": 3, "given": 2}),
        (0, "2C 3C 4C 5C", Reason.WRONG_PASS_COUNT, {"expected": 3, "given": 4}),
        (0, "2C 3C 2C", Reason.DUPLICATE_CARD, {"card": "2C"}),
        (0, "2C 3C 2D", Reason.CARD_NOT_IN_HAND, {"card": "2D", "cards": ["2D"]}),
        # Every card passed but not held is named, in the order written, not only the first.
        (0, "2H 3C 2D", Reason.CARD_NOT_IN_HAND, {"card": "2H", "cards": ["2H", "2D"]}),
        (0, "AS 2H 2D", Reason.CARD_NOT_IN_HAND, {"card": "AS", "cards": ["AS", "2H", "2D"]}),
        (0, "2C 3C XX", Reason.UNKNOWN_CARD, {"text": "XX"}),
        (4, "2C 3C 4C", Reason.BAD_SEAT, {"seat": 4}),
        (-1, "2C 3C 4C", Reason.BAD_SEAT, {"seat": -1}),
    ],
)
def test_bad_passes_are_refused(seat, passed, reason, details):
    state = start(Rules(), SUIT_HANDS, pass_direction="left")
    state = state.pass_cards(1, cards("2D 3D 4D"))
    assert_refused(state, lambda s: s.pass_cards(seat, cards(passed)), reason, **details)


def test_the_first_lead_goes_to_whoever_holds_2c_after_the_pass():
    state = start(Rules(), SUIT_HANDS, pass_direction="left")
    state, _ = _pass_all(state, PASSES)
    assert state.to_move == 1
    assert state.legal_cards() == ("2C",)


def test_scatter_with_four_players_gives_one_card_to_each_other_seat():
    rules = Rules(pass_cycle=("scatter",))
    state = start(rules, SUIT_HANDS, pass_direction=None)
    assert state.pass_direction == "scatter"
    state, _ = _pass_all(state, PASSES)
    # Seat s's first card goes to s+1, the second to s+2, the third to s+3.
    assert state.received[0] == mask_of(cards("4D 3H 2S"))
    assert seat_view(state, 0)["received"] == cards("4D 3H 2S")
    assert seat_view(state, 1)["received"] == cards("2C 4H 3S")
    assert seat_view(state, 2)["received"] == cards("3C 2D 4S")
    assert seat_view(state, 3)["received"] == cards("4C 3D 2H")


def test_scatter_with_three_players_gives_two_cards_to_each_other_seat():
    rules = Rules(players=3, pass_cycle=("scatter",), pass_count=4)
    state = start(rules, {0: suit("C")[:13] + cards("2S 3S 4S 5S"), 1: suit("D")[1:] + suit("H")[:5]}, None)
    state = state.pass_cards(0, cards("2C 3C 4C 5C"))
    state = state.pass_cards(1, cards("3D 4D 5D 6D"))
    state = state.pass_cards(2, state.hand(2)[:4])
    passed2 = [c for c in seat_view(state, 2)["passed"]]
    assert seat_view(state, 1)["received"] == sorted(cards("2C 3C") + passed2[2:], key=ALL_CARDS.index)
    assert seat_view(state, 2)["received"] == sorted(cards("4C 5C 3D 4D"), key=ALL_CARDS.index)
    assert seat_view(state, 0)["received"] == sorted(cards("5D 6D") + passed2[:2], key=ALL_CARDS.index)


@pytest.mark.parametrize("count", [1, 2, 4])
def test_pass_count(count):
    rules = Rules(pass_count=count)
    state = start(rules, SUIT_HANDS, pass_direction=None)
    assert_refused(state, lambda s: s.pass_cards(0, s.hand(0)[: count + 1]), Reason.WRONG_PASS_COUNT,
                   expected=count, given=count + 1)
    for seat in range(4):
        state = state.pass_cards(seat, state.hand(seat)[-count:])
    assert state.phase == "play"
    assert seat_view(state, 1)["received"] == suit("C")[-count:]


def test_pass_count_zero_means_every_hand_is_a_hold_hand():
    rules = Rules(pass_count=0, target=10_000)
    state = new_game(rules)
    for hand_no in range(1, 5):
        state = state.deal(deck_for(rules, {}, hand_no))
        assert state.pass_direction == "hold" and state.phase == "play"
        state = _finish(state)


@pytest.mark.parametrize(
    ("deck", "direction", "details"),
    [
        (ALL_CARDS[:51], None, {"problem": "not_the_cards_in_play", "size": 51, "expected": 52}),
        (ALL_CARDS[:51] + ("2C",), None, {"problem": "not_the_cards_in_play", "size": 52, "expected": 52}),
        (ALL_CARDS[:51] + ("1X",), None, {"problem": "unknown_card", "card": "1X"}),
        (ALL_CARDS, "sideways", {"problem": "bad_pass_direction", "pass_direction": "sideways"}),
    ],
)
def test_bad_deals_are_refused(deck, direction, details):
    assert_refused(new_game(Rules()), lambda s: s.deal(deck, direction), Reason.BAD_DECK, **details)


def test_a_deal_must_hold_exactly_the_cards_in_play():
    rules = Rules(players=3)  # 2D removed
    assert_refused(new_game(rules), lambda s: s.deal(ALL_CARDS[:51]), Reason.BAD_DECK,
                   problem="not_the_cards_in_play", size=51, expected=51)


def test_across_cannot_be_forced_on_an_odd_table_nor_passing_when_it_is_off():
    assert_refused(new_game(Rules(players=3)), lambda s: s.deal(deck_for(s.rules, {}), "across"),
                   Reason.BAD_DECK, problem="bad_pass_direction", pass_direction="across")
    assert_refused(new_game(Rules(pass_count=0)), lambda s: s.deal(deck_for(s.rules, {}), "left"),
                   Reason.BAD_DECK, problem="passing_disabled", pass_direction="left")


def test_no_deal_in_the_middle_of_a_hand():
    state = start(Rules(), {})
    assert_refused(state, lambda s: s.deal(ALL_CARDS), Reason.WRONG_PHASE, phase="play", expected="deal")
    state = deal_next(new_game(Rules()), {}, "left")
    assert_refused(state, lambda s: s.deal(ALL_CARDS), Reason.WRONG_PHASE, phase="pass", expected="deal")


def test_scatter_cannot_be_forced_where_it_does_not_divide():
    assert_refused(new_game(Rules(players=3)), lambda s: s.deal(deck_for(s.rules, {}), "scatter"),
                   Reason.BAD_DECK, problem="bad_pass_direction", pass_direction="scatter")
