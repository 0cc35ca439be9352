"""RULES.md §6.3 passing variants, on hand-built deals: ``mix`` (the MIX chance phase and its deal-back
order, with a kitty too), ``pass_optional`` (decliners: chains, loops, split calls and scatter, each
packet along its own direction) and ``dealer_calls_pass`` (the CALL phase, every call legal or not,
the deadline's default call); refusals, snapshots, seat views and the move log's forms.

Most deals give seat s one whole suit (0 clubs, 1 diamonds, 2 hearts, 3 spades), so where a card went
says where it came from.
"""

from __future__ import annotations

import json

import pytest

from pbem.engine import (
    CALL,
    DEAL,
    MIX,
    PASS,
    PLAY,
    CallPass,
    CardsPassed,
    Deal,
    DeclinePass,
    GameState,
    HandDealt,
    InvalidRules,
    MixCards,
    PassCalled,
    PassCards,
    PassesExchanged,
    Reason,
    Rules,
    apply,
    event_to_dict,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
    shuffled_mix,
)

from .helpers import ALL_CARDS, assert_refused, canon, cards, deck_for, play_out, suit
from .test_kitty import kitty_deck

SUITED = {0: suit("C"), 1: suit("D"), 2: suit("H"), 3: suit("S")}


def dealt(rules: Rules, direction: str | None = None, hands=SUITED) -> GameState:
    state = new_game(rules)
    if state.phase == CALL:
        raise AssertionError("call first")
    return state.deal(deck_for(rules, hands), direction)


def run(state: GameState, moves) -> tuple[GameState, list]:
    events: list = []
    for move in moves:
        state, more = apply(state, move)
        events += more
    return state, events


def exchanged(events) -> PassesExchanged:
    found = [e for e in events if isinstance(e, PassesExchanged)]
    assert len(found) == 1
    return found[0]


OPTIONAL = Rules.make("standard", pass_optional=True)


# -- pass_optional: decliners -------------------------------------------------------------------------

def test_a_decliner_forwards_to_the_next_seat_that_chose_and_receives_nothing():
    state = dealt(OPTIONAL, "left")
    assert state.may_decline
    state, events = run(state, [PassCards(0, ("2C", "3C", "4C")), DeclinePass(1),
                                PassCards(2, ("2H", "3H", "4H")), PassCards(3, ("2S", "3S", "4S"))])
    assert [e for e in events if isinstance(e, CardsPassed)] == [CardsPassed(s) for s in range(4)]
    got = exchanged(events).received
    assert got[1] == () and state.received[1] == 0
    assert got[2] == ("2C", "3C", "4C")  # 0's left pass went through the decliner 1 to 2
    assert got[3] == ("2H", "3H", "4H") and got[0] == ("2S", "3S", "4S")
    assert state.hand(1) == tuple(suit("D"))  # the decliner's hand is unchanged
    assert state.declined == (1,) and state.phase == PLAY


def test_a_chain_of_decliners_is_followed_to_the_first_seat_that_chose():
    state = dealt(OPTIONAL, "left")
    state, events = run(state, [DeclinePass(1), DeclinePass(2), PassCards(0, ("AC", "KC", "QC")),
                                PassCards(3, ("AS", "KS", "QS"))])
    got = exchanged(events).received
    assert got == (("QS", "KS", "AS"), (), (), ("QC", "KC", "AC"))
    assert state.hand(1) == tuple(suit("D")) and state.hand(2) == tuple(suit("H"))


def test_a_chain_back_to_its_origin_returns_the_cards_to_it():
    state = dealt(OPTIONAL, "right")
    state, events = run(state, [DeclinePass(1), DeclinePass(2), DeclinePass(3), PassCards(0, ("AC", "KC", "QC"))])
    got = exchanged(events).received
    assert got == (("QC", "KC", "AC"), (), (), ())
    assert state.hand(0) == tuple(suit("C"))


@pytest.mark.parametrize("direction", ["left", "right", "across"])
def test_a_loop_of_decliners_each_keeps_their_own(direction):
    state = dealt(OPTIONAL, direction)
    state, events = run(state, [DeclinePass(s) for s in range(4)])
    assert exchanged(events).received == ((), (), (), ())
    assert state.hands == dealt(OPTIONAL, direction).hands and state.phase == PLAY


def test_across_a_loop_of_two_decliners_keeps_its_cards_while_the_other_loop_swaps():
    state = dealt(OPTIONAL, "across")
    state, events = run(state, [DeclinePass(0), DeclinePass(2), PassCards(1, ("2D", "3D", "4D")),
                                PassCards(3, ("2S", "3S", "4S"))])
    assert exchanged(events).received == ((), ("2S", "3S", "4S"), (), ("2D", "3D", "4D"))
    assert state.hand(0) == tuple(suit("C")) and state.hand(2) == tuple(suit("H"))


def test_a_decliner_with_scatter_forwards_each_packet_along_its_own_direction():
    state = dealt(OPTIONAL, "scatter")
    # scatter with 4 players: the 1st card to the left, the 2nd across, the 3rd to the right
    state, events = run(state, [PassCards(0, ("2C", "3C", "4C")), DeclinePass(1),
                                PassCards(2, ("2H", "3H", "4H")), PassCards(3, ("2S", "3S", "4S"))])
    got = exchanged(events).received
    # 0: 2C left -> 1 declined -> 2; 3C across -> 2; 4C right -> 3
    # 2: 2H left -> 3; 3H across -> 0; 4H right -> 1 declined -> 0
    # 3: 2S left -> 0; 3S across -> 1 declined -> 3 itself (the loop {1, 3}); 4S right -> 2
    assert got[1] == ()
    assert got[0] == tuple(canon("2S 3H 4H"))
    assert got[2] == tuple(canon("2C 3C 4S"))
    assert got[3] == tuple(canon("4C 2H 3S"))
    assert all(len(state.hand(s)) == 13 for s in range(4))


def test_a_decliner_with_a_split_call_forwards_each_packet_along_its_own_direction():
    rules = Rules.make("standard", pass_optional=True, dealer_calls_pass=True)
    state = new_game(rules).call_pass(3, (("left", 2), ("right", 1)))
    state = state.deal(deck_for(rules, SUITED))
    assert state.pass_direction == "split" and state.pass_call == (("left", 2), ("right", 1))
    state, events = run(state, [PassCards(0, ("2C", "3C", "4C")), DeclinePass(1),
                                PassCards(2, ("2H", "3H", "4H")), PassCards(3, ("2S", "3S", "4S"))])
    got = exchanged(events).received
    # 0: 2C 3C left -> 1 declined -> 2; 4C right -> 3.  2: 2H 3H left -> 3; 4H right -> 1 declined -> 0.
    # 3: 2S 3S left -> 0; 4S right -> 2.
    assert got == (tuple(canon("4H 2S 3S")), (), tuple(canon("2C 3C 4S")), tuple(canon("4C 2H 3H")))
    assert exchanged(events).pass_direction == "split"


def test_a_decliner_never_sees_the_forwarded_cards():
    state = dealt(OPTIONAL, "left")
    state, _ = run(state, [PassCards(0, ("2C", "3C", "4C")), DeclinePass(1)])
    view = seat_view(state, 1)
    assert view["declined"] and view["passed"] == [] and not view["may_decline"]
    state, _ = run(state, [PassCards(2, ("2H", "3H", "4H")), PassCards(3, ("2S", "3S", "4S"))])
    view = seat_view(state, 1)
    text = json.dumps(view)
    for card in ("2C", "3C", "4C"):
        assert card not in text  # not in its hand, nor received, nor anywhere (nothing is played yet)
    assert view["received"] == [] and view["hand"] == suit("D")
    assert seat_view(state, 2)["received"] == ["2C", "3C", "4C"]


def test_declining_is_refused_on_a_mix_hand_without_the_option_and_twice():
    rules = Rules.make("standard", pass_optional=True, pass_cycle="mix")
    state = dealt(rules)
    assert state.pass_direction == "mix" and not state.may_decline
    assert_refused(state, lambda s: s.decline_pass(0), Reason.NO_DECLINE_ON_MIX)
    state = dealt(Rules.make("standard"), "left")
    assert not state.may_decline
    assert_refused(state, lambda s: s.decline_pass(0), Reason.PASS_NOT_OPTIONAL)
    state = dealt(OPTIONAL, "left").decline_pass(2)
    assert_refused(state, lambda s: s.decline_pass(2), Reason.ALREADY_PASSED, seat=2)
    assert_refused(state, lambda s: s.pass_cards(2, ["2H", "3H", "4H"]), Reason.ALREADY_PASSED, seat=2)
    assert_refused(state, lambda s: s.decline_pass(7), Reason.BAD_SEAT, seat=7)
    held = dealt(OPTIONAL, "hold")
    assert_refused(held, lambda s: s.decline_pass(0), Reason.NO_PASS_THIS_HAND)
    assert_refused(new_game(OPTIONAL), lambda s: s.decline_pass(0), Reason.WRONG_PHASE, phase=DEAL, expected=PASS)


# -- mix ------------------------------------------------------------------------------------------------

MIXED = Rules.make("standard", pass_cycle="mix")


def test_a_mix_hand_waits_for_the_shuffle_then_deals_back_from_the_dealers_left():
    state = dealt(MIXED)
    state, events = run(state, [PassCards(s, tuple(SUITED[s][:3])) for s in (2, 0, 3, 1)])
    assert not any(isinstance(e, PassesExchanged) for e in events)
    assert state.phase == MIX and state.seats_to_act() == () and state.to_move == -1
    to_mix = state.cards_to_mix
    assert to_mix == tuple(canon("2C 3C 4C 2D 3D 4D 2H 3H 4H 2S 3S 4S"))
    for seat in range(4):  # hidden from every seat: it sees only its own pass
        view = seat_view(state, seat)
        assert view["passed"] == SUITED[seat][:3] and view["received"] == []
        text = json.dumps(view)
        assert [c for c in to_mix if c in text] == SUITED[seat][:3]
    order = tuple(cards("4S 3S 2S 4H 3H 2H 4D 3D 2D 4C 3C 2C"))
    state, events = apply(state, MixCards(order))
    # hand 1's dealer is seat 3: one card at a time from seat 0
    got = exchanged(events)
    assert got.pass_direction == "mix"
    # 4S 3S 2S 4H | 3H 2H 4D 3D | 2D 4C 3C 2C to seats 0 1 2 3 | 0 1 2 3 | 0 1 2 3
    assert got.received == (tuple(canon("4S 3H 2D")), tuple(canon("3S 2H 4C")), tuple(canon("2S 4D 3C")),
                            tuple(canon("4H 3D 2C")))
    assert state.phase == PLAY and state.to_move == 3  # seat 3 got the 2C back
    assert all(len(state.hand(s)) == 13 for s in range(4))


def test_a_mix_with_the_kitty_deals_a_new_kitty_first():
    rules = Rules.make("kitty", pass_cycle="mix")  # 12 cards each and 4 in the kitty
    hands = {0: " ".join(suit("C")[1:]), 1: " ".join(suit("D")[1:]), 2: " ".join(suit("H")[1:]),
             3: " ".join(suit("S")[1:])}
    state = new_game(rules).deal(kitty_deck(rules, "2C 2D 2H 2S", hands))
    assert state.kitty == ("2C", "2D", "2H", "2S")
    state = run(state, [PassCards(s, tuple(cards(hands[s])[:3])) for s in range(4)])[0]
    assert state.phase == MIX and len(state.cards_to_mix) == 16 and set(state.kitty) <= set(state.cards_to_mix)
    assert seat_view(state, 0)["kitty"] == []
    order = tuple(cards("3C 3D 3H 3S  2C 2D 2H 2S  4C 4D 4H 4S  5C 5D 5H 5S"))
    state, events = apply(state, MixCards(order))
    assert state.kitty == ("3C", "3D", "3H", "3S") and state.kitty_taker is None
    # after the new kitty, one card at a time from seat 0 (hand 1's dealer is seat 3)
    assert exchanged(events).received == (("2C", "4C", "5C"), ("2D", "4D", "5D"), ("2H", "4H", "5H"),
                                          ("2S", "4S", "5S"))
    assert state.to_move == 0  # the 2C dealt back to seat 0 leads
    assert sum(len(state.hand(s)) for s in range(4)) == 48
    # and when the 2C goes into the new kitty, the lowest club dealt to a player leads
    state = new_game(rules).deal(kitty_deck(rules, "2C 2D 2H 2S", hands))
    state = run(state, [PassCards(s, tuple(cards(hands[s])[:3])) for s in range(4)])[0]
    state = state.mix(cards("2C 2D 2H 2S  3C 3D 3H 3S  4C 4D 4H 4S  5C 5D 5H 5S"))
    assert state.kitty == ("2C", "2D", "2H", "2S") and "3C" in state.hand(0) and state.to_move == 0
    assert state.legal_cards() == ("3C",)


def test_the_mix_is_refused_unless_it_is_exactly_the_mixed_cards():
    state = run(dealt(MIXED), [PassCards(s, tuple(SUITED[s][:3])) for s in range(4)])[0]
    to_mix = list(state.cards_to_mix)
    assert_refused(state, lambda s: s.mix(to_mix[:-1]), Reason.BAD_DECK, problem="not_the_mixed_cards",
                   size=11, expected=12)
    assert_refused(state, lambda s: s.mix(to_mix[:-1] + ["AS"]), Reason.BAD_DECK, problem="not_the_mixed_cards",
                   size=12, expected=12)
    assert_refused(state, lambda s: s.mix(to_mix[:-1] + [to_mix[0]]), Reason.BAD_DECK,
                   problem="not_the_mixed_cards", size=12, expected=12)
    assert_refused(state, lambda s: s.mix(to_mix[:-1] + ["ZZ"]), Reason.BAD_DECK, problem="unknown_card", card="ZZ")
    assert_refused(state, lambda s: s.play("AC"), Reason.WRONG_PHASE, phase=MIX, expected=PLAY)
    assert_refused(dealt(MIXED), lambda s: s.mix(to_mix), Reason.WRONG_PHASE, phase=PASS, expected=MIX)


def test_shuffled_mix_is_a_permutation_drawn_from_the_rng():
    import random

    state = run(dealt(MIXED), [PassCards(s, tuple(SUITED[s][:3])) for s in range(4)])[0]
    one = shuffled_mix(state, random.Random(5))
    assert sorted(one) == sorted(state.cards_to_mix) and one == shuffled_mix(state, random.Random(5))
    assert shuffled_mix(dealt(MIXED), random.Random(5)) == ()


def test_pass_to_partner_makes_a_mix_hand_pass_across():
    rules = Rules.make("partnership", pass_to_partner=True, pass_cycle="mix")
    assert dealt(rules).pass_direction == "across"


# -- dealer_calls_pass ----------------------------------------------------------------------------------

CALLS = Rules.make("standard", dealer_calls_pass=True)


def test_the_game_starts_with_the_dealers_call_and_every_hand_after_it():
    state = new_game(CALLS)
    assert state.phase == CALL and state.seats_to_act() == (3,) and state.next_dealer == 3
    state, events = apply(state, CallPass(3, (("across", 3),)))
    assert events == (PassCalled(3, (("across", 3),)),) and state.phase == DEAL and state.seats_to_act() == ()
    state, events = apply(state, Deal(deck_for(CALLS, SUITED)))
    assert events == (HandDealt(1, 3, "across", (("across", 3),)),) and state.pass_direction == "across"
    state = run(state, [PassCards(s, tuple(SUITED[s][:3])) for s in range(4)])[0]
    assert state.hand(0)[:3] == ("2C", "3C", "4C") or "2H" in state.hand(0)
    state, _ = play_out(state)
    assert state.phase == CALL and state.next_dealer == 0 and state.seats_to_act() == (0,)
    assert_refused(state, lambda s: s.deal(deck_for(CALLS, SUITED, 2)), Reason.WRONG_PHASE, phase=CALL,
                   expected=DEAL)


FOUR = [[("left", 3)], [("left", 2), ("right", 1)], [("left", 2), ("across", 1)], [("left", 1), ("right", 2)],
        [("left", 1), ("right", 1), ("across", 1)], [("left", 1), ("across", 2)], [("right", 3)],
        [("right", 2), ("across", 1)], [("right", 1), ("across", 2)], [("across", 3)], [("mix", 3)]]


def test_the_legal_calls_with_four_and_with_three_players():
    assert [list(c) for c in new_game(CALLS).call_choices()] == FOUR
    three = Rules.make("standard", players=3, pass_count=4, dealer_calls_pass=True)
    assert [list(c) for c in new_game(three).call_choices()] == [
        [("left", 4)], [("left", 3), ("right", 1)], [("left", 2), ("right", 2)], [("left", 1), ("right", 3)],
        [("right", 4)], [("mix", 4)]]
    assert dealt(OPTIONAL, "left").call_choices() == () and dealt(OPTIONAL, "left").default_call() == ()


@pytest.mark.parametrize("call", FOUR, ids=lambda c: " ".join(f"{n} {d}" for d, n in c))
def test_every_legal_call_passes_as_called(call):
    call = tuple(call)
    state = new_game(CALLS).call_pass(3, call)
    state = state.deal(deck_for(CALLS, SUITED))
    direction = call[0][0] if len(call) == 1 else "split"
    assert state.pass_direction == direction and state.pass_call == call
    state, events = run(state, [PassCards(s, tuple(SUITED[s][:3])) for s in range(4)])
    if direction == "mix":
        assert state.phase == MIX
        state, events = apply(state, MixCards(state.cards_to_mix))
    got = exchanged(events).received
    if direction != "mix":
        offsets = {"left": 1, "right": 3, "across": 2}
        for seat in range(4):
            expected, start = [], 0
            for d, count in call:
                expected += SUITED[(seat - offsets[d]) % 4][start:start + count]
                start += count
            assert got[seat] == tuple(canon(expected)), (seat, call)
    assert state.phase == PLAY and all(len(state.hand(s)) == 13 for s in range(4))


@pytest.mark.parametrize("call", [
    (("left", 2),), (("left", 4),), (("left", 2), ("left", 1)), (("up", 3),), (("hold", 0),), (("mix", 2),),
    (("scatter", 3),), (), "3 left", None, (("left", "x"),),
])
def test_a_call_that_is_not_legal_is_refused_with_the_choices(call):
    state = new_game(CALLS)
    err_choices = [[list(p) for p in c] for c in FOUR]
    from .helpers import refusal

    err = refusal(state, lambda s: s.call_pass(3, call))
    assert err.reason == Reason.BAD_CALL and err.details["choices"] == err_choices
    assert set(err.details) == {"call", "choices"}


def test_the_call_is_made_by_the_dealer_in_the_call_phase_only():
    state = new_game(CALLS)
    assert_refused(state, lambda s: s.call_pass(0, (("left", 3),)), Reason.NOT_THE_DEALER, seat=0, dealer=3)
    assert_refused(state, lambda s: s.call_pass(9, (("left", 3),)), Reason.BAD_SEAT, seat=9)
    called = state.call_pass(3, (("left", 3),))
    assert_refused(called, lambda s: s.call_pass(3, (("left", 3),)), Reason.WRONG_PHASE, phase=DEAL, expected=CALL)
    assert_refused(dealt(OPTIONAL, "left"), lambda s: s.call_pass(3, (("left", 3),)), Reason.WRONG_PHASE,
                   phase=PASS, expected=CALL)


def test_a_split_given_in_another_order_is_the_canonical_call():
    state = new_game(CALLS).call_pass(3, [["right", 1], ["left", 2]])
    assert state.pass_call == (("left", 2), ("right", 1))


def test_the_default_call_is_the_cycles_direction_hold_included():
    rules = Rules.make("standard", dealer_calls_pass=True, pass_cycle="left scatter mix hold")
    state = new_game(rules)
    seen = []
    for hand in range(4):
        default = state.default_call()
        seen.append(default)
        state, events = apply(state, CallPass(state.next_dealer, default))
        assert events == (PassCalled(state.next_dealer, default),)
        state = state.deal(deck_for(rules, SUITED, hand + 1))
        if state.phase == PASS:
            state = run(state, [PassCards(s, tuple(state.hand(s)[:3])) for s in range(4)])[0]
        if state.phase == MIX:
            state = state.mix(state.cards_to_mix)
        state, _ = play_out(state)
    assert seen == [(("left", 3),), (("left", 1), ("right", 1), ("across", 1)), (("mix", 3),), (("hold", 0),)]
    # hold is legal only as the default: not among the choices, refused when it is not the default
    assert (("hold", 0),) not in new_game(rules).call_choices()
    assert_refused(new_game(rules), lambda s: s.call_pass(3, (("hold", 0),)), Reason.BAD_CALL,
                   call=[["hold", 0]], choices=[[list(p) for p in c] for c in FOUR])


def test_a_hold_call_deals_straight_into_play():
    rules = Rules.make("standard", dealer_calls_pass=True, pass_cycle="hold left")
    state = new_game(rules).call_pass(3, (("hold", 0),)).deal(deck_for(rules, SUITED))
    assert state.phase == PLAY and state.pass_direction == "hold"


def test_the_options_refused_together():
    with pytest.raises(InvalidRules) as info:
        Rules.make("standard", dealer_calls_pass=True, pass_count=0)
    assert info.value.code == "CALL_NEEDS_PASSING" and info.value.details == {}
    with pytest.raises(InvalidRules) as info:
        Rules.make("partnership", dealer_calls_pass=True, pass_to_partner=True)
    assert info.value.code == "CALL_WITH_PASS_TO_PARTNER"
    for name in ("pass_optional", "dealer_calls_pass"):
        with pytest.raises(InvalidRules) as info:
            Rules.make("standard", **{name: "yes"})
        assert info.value.code == "NOT_A_BOOL" and info.value.details == {"option": name, "value": "yes"}
    assert Rules.make("standard", pass_cycle="left mix").pass_cycle == ("left", "mix")


def test_with_options_keeps_the_passing_variants():
    three = Rules.make("standard", dealer_calls_pass=True, pass_optional=True).with_options(players=3)
    assert three.dealer_calls_pass and three.pass_optional and three.pass_cycle == ("left", "right")
    assert new_game(three).call_choices()[-1] == (("mix", 3),)
    assert all(d != "across" for call in new_game(three).call_choices() for d, _ in call)
    mixed = Rules.make("standard", pass_cycle="mix hold").with_options(players=5)
    assert mixed.pass_cycle == ("mix", "hold")  # an explicit cycle is kept
    assert Rules.make("kitty", pass_cycle="mix").with_options(kitty_exchange=True).table.kitty_size == 4
    with pytest.raises(InvalidRules) as info:
        CALLS.with_options(pass_count=0)
    assert info.value.code == "CALL_NEEDS_PASSING"
    assert Rules.from_dict({k: v for k, v in CALLS.to_dict().items()
                            if k not in ("pass_optional", "dealer_calls_pass")}) == Rules.make("standard")


# -- snapshots, the move log ---------------------------------------------------------------------------

def test_snapshots_round_trip_and_old_ones_still_load():
    rules = Rules.make("kitty", pass_optional=True, dealer_calls_pass=True, pass_cycle="left mix")
    states = [new_game(rules)]
    states.append(states[-1].call_pass(3, (("left", 2), ("right", 1))))
    states.append(states[-1].deal(kitty_deck(rules, "2C 2D 2H 2S", {})))
    states.append(states[-1].decline_pass(1))
    mixed = new_game(rules).call_pass(3, (("mix", 3),)).deal(kitty_deck(rules, "2C 2D 2H 2S", {}))
    for s in range(4):
        mixed = mixed.pass_cards(s, mixed.hand(s)[:3])
    states.append(mixed)
    for state in states:
        d = json.loads(json.dumps(state.to_dict()))
        assert GameState.from_dict(d) == state
    assert states[3].to_dict()["passes"] == [None, "declined", None, None]
    assert states[1].to_dict()["pass_call"] == [["left", 2], ["right", 1]]
    old = dealt(Rules.make("standard"), "left").to_dict()
    del old["pass_call"]
    assert GameState.from_dict(old).pass_call == () and GameState.from_dict(old).declined == ()


def test_the_move_log_forms_and_replay():
    rules = Rules.make("standard", pass_optional=True, dealer_calls_pass=True)
    moves = [CallPass(3, (("left", 2), ("right", 1))), Deal(deck_for(rules, SUITED)), DeclinePass(0),
             PassCards(1, ("2D", "3D", "4D")), DeclinePass(2), PassCards(3, ("2S", "3S", "4S"))]
    assert move_to_dict(moves[0]) == {"type": "call", "seat": 3, "call": [["left", 2], ["right", 1]]}
    assert move_to_dict(moves[2]) == {"type": "decline", "seat": 0}
    assert move_to_dict(MixCards(("2C", "3C"))) == {"type": "mix", "cards": ["2C", "3C"]}
    logged = [move_from_dict(json.loads(json.dumps(move_to_dict(m)))) for m in moves]
    assert logged == moves
    assert move_from_dict({"type": "mix", "cards": ["2C", "3C"]}) == MixCards(("2C", "3C"))
    assert event_to_dict(PassCalled(3, (("left", 2), ("right", 1)))) == {
        "type": "pass_called", "seat": 3, "call": (("left", 2), ("right", 1))}
    assert json.loads(json.dumps(event_to_dict(HandDealt(1, 3, "split", (("left", 2), ("right", 1))))))[
        "pass_call"] == [["left", 2], ["right", 1]]
    state = new_game(rules)
    for m in moves:
        state, _ = apply(state, m)
    assert replay(rules, logged) == state and state.phase == PLAY
    # 1 and 3 chose, each on its own loop for "left 2" (1 -> 3 past 2; 3 -> 1 past 0) and "right 1"
    assert state.received[0] == 0 and state.received[2] == 0
    assert canon(state.hand(3)) == canon(suit("S")[3:] + ["2D", "3D", "4D"])


def test_the_views_show_the_call_to_everyone_and_the_choices_to_the_dealer():
    state = new_game(CALLS)
    assert seat_view(state, 3)["call_choices"] == [[list(p) for p in c] for c in FOUR]
    assert seat_view(state, 3)["default_call"] == [["left", 3]]
    assert seat_view(state, 0)["call_choices"] == [] and seat_view(state, 0)["to_act"] == [3]
    state = state.call_pass(3, (("right", 3),)).deal(deck_for(CALLS, SUITED))
    assert all(seat_view(state, s)["pass_call"] == [["right", 3]] for s in range(4))


def test_a_later_mix_hand_deals_back_from_its_own_dealers_left():
    rules = Rules.make("standard", pass_cycle="hold mix")
    state, _ = play_out(dealt(rules))
    state = state.deal(deck_for(rules, SUITED, 2))
    assert state.pass_direction == "mix" and state.dealer == 0
    state = run(state, [PassCards(s, tuple(SUITED[s][-3:])) for s in range(4)])[0]
    order = state.cards_to_mix  # canonical: QC KC AC QD KD AD QH KH AH QS KS AS
    state, events = apply(state, MixCards(order))
    # hand 2's dealer is seat 0: the first card to seat 1
    # QC KC AC QD | KD AD QH KH | AH QS KS AS to seats 1 2 3 0 | 1 2 3 0 | 1 2 3 0
    assert exchanged(events).received == (tuple(canon("QD KH AS")), tuple(canon("QC KD AH")), tuple(canon("KC AD QS")),
                                          tuple(canon("AC QH KS")))
