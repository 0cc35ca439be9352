"""Playing cards: RULES.md §2 rules 3 to 6 and 10, and the options of §3 that change the legal cards.

Most tests use deal D1 (below), scripted to the position the rule needs. Each refusal checks the
reason code, its details and that the state did not change (``assert_refused``).
"""

from __future__ import annotations

from pbem.engine import CardPlayed, GameState, HeartsBroken, Reason, Rules, TrickWon
from pbem.engine.cards import CARD_INDEX

from .helpers import assert_refused, canon, cards, play, play_logged, start

# Deal D1, every card placed. Seat 2 is void in clubs and holds QS and six hearts; seat 3 holds most
# clubs; seat 0 holds 2C and so leads the first trick.
D1 = {
    0: "2C 8C 2D 3D 4D 5D 6D 2H 3H 4H 2S 3S 4S",
    1: "3C 9C 7D 8D 9D TD 5H 6H 7H 8H 5S 6S 7S",
    2: "JD QD KD AD 9H TH JH QH KH AH 8S QS AS",
    3: "4C 5C 6C 7C TC JC QC KC AC 9S TS JS KS",
}


def d1(**options) -> GameState:
    return start(Rules(**options), D1)


def legal(state) -> list[str]:
    return list(state.legal_cards())


# -- rule 3: the opening lead ----------------------------------------------------------------------


def test_the_holder_of_2c_leads_it():
    state = d1()
    assert state.to_move == 0 and state.leader == 0
    assert legal(state) == ["2C"]
    assert_refused(state, "8C", Reason.MUST_LEAD_LOWEST_CLUB, card="8C", required="2C", legal=["2C"])
    assert_refused(state, "2H", Reason.MUST_LEAD_LOWEST_CLUB, card="2H", required="2C", legal=["2C"])


def test_first_lead_any_club():
    state = d1(first_lead="any_club")
    assert state.to_move == 0
    assert legal(state) == ["2C", "8C"]
    assert_refused(state, "2D", Reason.MUST_LEAD_CLUB, card="2D", clubs=["2C", "8C"], legal=["2C", "8C"])
    state = play(state, "8C")
    assert state.to_move == 1 and legal(state) == ["3C", "9C"]


def test_first_lead_left_of_dealer_leads_any_card_rule_10d_allows():
    state = d1(first_lead="left_of_dealer")
    assert state.to_move == 0  # hand 1: the dealer is seat 3
    # Rule 10d on the first trick: no penalty cards (rule 5), no hearts (rule 6).
    assert legal(state) == cards("2C 8C 2D 3D 4D 5D 6D 2S 3S 4S")
    assert_refused(state, "2H", Reason.NO_POINTS_ON_FIRST_TRICK, card="2H", legal=legal(state))
    state = start(Rules(first_lead="left_of_dealer", no_pts_on_first_trick=False), D1)
    assert_refused(state, "2H", Reason.HEARTS_NOT_BROKEN, card="2H", legal=legal(state))
    state = start(Rules(first_lead="left_of_dealer", no_pts_on_first_trick=False, must_break_hearts=False), D1)
    assert legal(state) == cards(D1[0])


def test_left_of_dealer_moves_with_the_deal():
    from .helpers import deal_next, play_out

    state = start(Rules(first_lead="left_of_dealer", pass_count=0), D1)
    state, _ = play_out(state)
    state = deal_next(state, D1, None)
    assert state.dealer == 0 and state.to_move == 1


def test_left_of_dealer_leader_with_only_hearts_and_qs_must_lead_qs_on_the_first_trick():
    hands = {0: "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"}
    state = start(Rules(first_lead="left_of_dealer"), hands)
    # 10d1 would leave nothing, so every card stays; 10d2 then removes the hearts.
    assert legal(state) == ["QS"]
    state = start(Rules(first_lead="left_of_dealer", can_lead_hearts_instead_of_qs=True), hands)
    assert legal(state) == canon(hands[0])


# -- rule 4: following suit, the trick's winner -------------------------------------------------


def test_must_follow_suit_with_the_led_suit_held():
    state = play(d1(), "2C")
    assert state.to_move == 1
    assert legal(state) == ["3C", "9C"]
    assert_refused(state, "5H", Reason.MUST_FOLLOW_SUIT, card="5H", led_suit="C", held=["3C", "9C"],
                   legal=["3C", "9C"])
    assert_refused(state, "7D", Reason.MUST_FOLLOW_SUIT, card="7D", led_suit="C", held=["3C", "9C"],
                   legal=["3C", "9C"])


def test_highest_card_of_the_led_suit_wins_there_are_no_trumps():
    state, events = play_logged(d1(), "2C 9C AS TC")
    assert events[-1] == TrickWon(1, 0, tuple(cards("2C 9C AS TC")), 3, 0)
    assert [e for e in events if isinstance(e, CardPlayed)][2] == CardPlayed(2, "AS", 1)
    # The winner leads the next trick.
    assert state.to_move == 3 and state.leader == 3 and state.tricks_played == 1
    assert state.last_trick == (0, tuple(CARD_INDEX[c] for c in cards("2C 9C AS TC")), 3, 0)


def test_a_card_not_held_is_refused():
    state = d1()
    assert_refused(state, "3C", Reason.CARD_NOT_IN_HAND, card="3C", legal=["2C"])
    assert_refused(state, "ZZ", Reason.UNKNOWN_CARD, text="ZZ", legal=["2C"])


def test_unable_to_follow_after_the_first_trick_any_card_is_legal():
    state = play(d1(), "2C 9C AS TC 4C 8C 3C")
    assert state.to_move == 2
    assert legal(state) == cards("JD QD KD AD 9H TH JH QH KH AH 8S QS")


# -- rule 5: the first trick ------------------------------------------------------------------------


def test_no_penalty_card_may_be_discarded_on_the_first_trick():
    state = play(d1(), "2C 9C")
    assert legal(state) == cards("JD QD KD AD 8S AS")
    assert_refused(state, "9H", Reason.NO_POINTS_ON_FIRST_TRICK, card="9H", legal=cards("JD QD KD AD 8S AS"))
    assert_refused(state, "QS", Reason.NO_POINTS_ON_FIRST_TRICK, card="QS", legal=cards("JD QD KD AD 8S AS"))


def test_void_in_clubs_holding_only_penalty_cards_may_play_any_card_qs_included():
    hands = {2: "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", 0: "2C"}
    state = play(start(Rules(), hands), "2C")
    state = play(state, [state.legal_cards()[0]])
    assert state.to_move == 2
    assert legal(state) == canon(hands[2])
    state = play(state, "QS")
    assert state.to_move == 3


def test_no_pts_on_first_trick_false_allows_penalty_discards():
    state = play(d1(no_pts_on_first_trick=False), "2C 9C")
    assert legal(state) == cards(D1[2])
    state, events = play_logged(state, "QS TC")
    assert events[-1] == TrickWon(1, 0, tuple(cards("2C 9C QS TC")), 3, 13)


def test_following_suit_is_never_restricted_on_the_first_trick():
    """Hartenjagen: JC is a penalty card (2 points) and may still follow a club lead on trick 1."""
    rules = Rules.make("hartenjagen")
    state = start(rules, {0: "7C", 1: "8C JC 7D 8D 9D TD JD QD"})
    assert state.to_move == 0 and legal(state) == ["7C"]
    state = play(state, "7C")
    assert legal(state) == ["8C", "JC"]


def test_the_bonus_card_is_not_a_penalty_card_on_the_first_trick():
    rules = Rules.make("omnibus")
    hands = {0: "2C", 2: "JD 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH QS"}
    state = play(start(rules, hands), "2C")
    state = play(state, [state.legal_cards()[0]])
    assert state.to_move == 2
    assert legal(state) == ["JD"]
    assert_refused(state, "2H", Reason.NO_POINTS_ON_FIRST_TRICK, card="2H", legal=["JD"])


def test_extra_penalty_cards_count_as_penalty_cards_on_the_first_trick():
    state = play(d1(extra_penalties={"AS": 7}), "2C 9C")
    assert legal(state) == cards("JD QD KD AD 8S")
    assert_refused(state, "AS", Reason.NO_POINTS_ON_FIRST_TRICK, card="AS", legal=cards("JD QD KD AD 8S"))


def test_qs_penalty_zero_makes_qs_an_ordinary_card():
    state = play(d1(qs_penalty=0), "2C 9C")
    assert legal(state) == cards("JD QD KD AD 8S QS AS")
    state, events = play_logged(state, "QS TC")
    assert events[-1].points == 0


# -- rule 6: hearts broken ----------------------------------------------------------------------------


def test_hearts_may_not_be_led_until_broken():
    # Trick 2: seat 2 discards JD, seat 0 wins with 8C and leads with hearts unbroken.
    state = play(d1(), "2C 9C AS TC 4C 8C 3C JD")
    assert state.to_move == 0 and not state.hearts_broken
    lead = cards("2D 3D 4D 5D 6D 2S 3S 4S")
    assert legal(state) == lead
    assert_refused(state, "2H", Reason.HEARTS_NOT_BROKEN, card="2H", legal=lead)


def test_a_heart_discard_breaks_hearts():
    state, events = play_logged(d1(), "2C 9C AS TC 4C 8C 3C 9H")
    assert HeartsBroken(2, "9H") in events
    assert events[-1] == TrickWon(2, 3, tuple(cards("4C 8C 3C 9H")), 0, 1)
    assert state.hearts_broken and state.to_move == 0
    assert legal(state) == cards(D1[0])[2:]  # 2C and 8C are gone; hearts may now be led


def test_hearts_broken_is_reported_once():
    state, events = play_logged(d1(), "2C 9C AS TC 4C 8C 3C 9H 2H")
    assert [e for e in events if isinstance(e, HeartsBroken)] == [HeartsBroken(2, "9H")]


def test_qs_does_not_break_hearts_by_default():
    state, events = play_logged(d1(), "2C 9C AS TC 4C 8C 3C QS")
    assert not any(isinstance(e, HeartsBroken) for e in events)
    assert not state.hearts_broken
    assert events[-1].points == 13
    assert_refused(state, "2H", Reason.HEARTS_NOT_BROKEN, card="2H", legal=cards("2D 3D 4D 5D 6D 2S 3S 4S"))


def test_qs_breaks_hearts_option():
    state, events = play_logged(d1(qs_breaks_hearts=True), "2C 9C AS TC 4C 8C 3C QS")
    assert HeartsBroken(2, "QS") in events
    assert state.hearts_broken
    assert "2H" in legal(state)


def test_a_leader_holding_only_hearts_may_lead_one():
    hands = {0: "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
             1: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AH"}
    state = play(start(Rules(), hands), "2C 2D 2S AC")
    assert state.to_move == 0 and not state.hearts_broken
    assert legal(state) == cards(hands[0])[1:]


def test_qs_may_be_led_before_hearts_are_broken():
    # Trick 2: seat 3 leads 9S and seat 2 takes it with AS, then leads with hearts unbroken.
    state = play(d1(), "2C 9C JD TC 9S 4S 7S AS")
    assert state.to_move == 2 and not state.hearts_broken
    assert legal(state) == cards("QD KD AD 8S QS")
    assert_refused(state, "9H", Reason.HEARTS_NOT_BROKEN, card="9H", legal=cards("QD KD AD 8S QS"))


def test_qs_lead_needs_broken_hearts_option():
    state = play(d1(qs_lead_needs_broken_hearts=True), "2C 9C JD TC 9S 4S 7S AS")
    assert legal(state) == cards("QD KD AD 8S")
    assert_refused(state, "QS", Reason.QS_NEEDS_BROKEN_HEARTS, card="QS", legal=cards("QD KD AD 8S"))


def test_must_break_hearts_false_hearts_may_be_led_any_time():
    state = play(d1(must_break_hearts=False), "2C 9C AS TC 4C 8C 3C JD")
    assert not state.hearts_broken
    assert legal(state) == cards("2D 3D 4D 5D 6D 2H 3H 4H 2S 3S 4S")


# A leader holding only hearts and QS with hearts unbroken: seat 0 takes trick 1 with AC.
ONLY_HEARTS_AND_QS = {
    0: "AC QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
    1: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC KH",
    2: "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
    3: "AH 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS",
}


def _hearts_and_qs_leader(**options):
    state = play(start(Rules(**options), ONLY_HEARTS_AND_QS), "2C 2D 2S AC")
    assert state.to_move == 0 and not state.hearts_broken
    return state


def test_leader_with_only_hearts_and_qs_must_lead_qs():
    state = _hearts_and_qs_leader()
    assert legal(state) == ["QS"]
    assert_refused(state, "2H", Reason.HEARTS_NOT_BROKEN, card="2H", legal=["QS"])


def test_can_lead_hearts_instead_of_qs():
    state = _hearts_and_qs_leader(can_lead_hearts_instead_of_qs=True)
    assert legal(state) == cards("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH QS")
    state = play(state, "5H")
    assert state.hearts_broken


def test_leader_with_only_hearts_and_qs_when_qs_lead_needs_broken_hearts():
    """Removing hearts and QS leaves nothing, so every card stays legal (rule 10d2)."""
    state = _hearts_and_qs_leader(qs_lead_needs_broken_hearts=True)
    assert legal(state) == cards("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH QS")


def test_can_lead_hearts_instead_of_qs_does_not_matter_when_other_cards_remain():
    state = play(d1(can_lead_hearts_instead_of_qs=True), "2C 9C JD TC 9S 4S 7S AS")
    assert legal(state) == cards("QD KD AD 8S QS")


# -- qs_must_drop_when_safe ---------------------------------------------------------------------------


def test_qs_must_drop_when_unable_to_follow():
    state = play(d1(qs_must_drop_when_safe=True), "2C 9C AS TC 4C 8C 3C")
    assert state.to_move == 2
    assert legal(state) == ["QS"]
    assert_refused(state, "JD", Reason.MUST_PLAY_QS, card="JD", legal=["QS"])


def test_qs_must_drop_when_spades_led_and_ks_already_played():
    state = play(d1(qs_must_drop_when_safe=True), "2C 9C JD TC KS 4S 7S")
    assert state.to_move == 2
    assert legal(state) == ["QS"]
    assert_refused(state, "8S", Reason.MUST_PLAY_QS, card="8S", legal=["QS"])
    assert_refused(state, "9H", Reason.MUST_FOLLOW_SUIT, card="9H", led_suit="S", held=cards("8S QS AS"),
                   legal=["QS"])


def test_qs_must_drop_when_spades_led_and_as_already_played():
    hands = {k: v for k, v in D1.items()}
    hands[2] = "JD QD KD AD 9H TH JH QH KH AH 8S QS KS"
    hands[3] = "4C 5C 6C 7C TC JC QC KC AC 9S TS JS AS"
    state = play(start(Rules(qs_must_drop_when_safe=True), hands), "2C 9C JD TC AS 4S 7S")
    assert legal(state) == ["QS"]


def test_qs_need_not_drop_when_spades_led_without_ak_in_the_trick():
    state = play(d1(qs_must_drop_when_safe=True), "2C 9C JD TC 9S 4S 7S")
    assert legal(state) == cards("8S QS AS")


def test_qs_must_drop_is_off_by_default():
    state = play(d1(), "2C 9C JD TC KS 4S 7S")
    assert legal(state) == cards("8S QS AS")
    state = play(d1(), "2C 9C AS TC 4C 8C 3C")
    assert "QS" in legal(state) and len(legal(state)) > 1


def test_qs_must_drop_yields_to_the_first_trick_rule():
    state = play(d1(qs_must_drop_when_safe=True), "2C 9C")
    assert legal(state) == cards("JD QD KD AD 8S AS")


def test_qs_must_drop_with_only_penalty_cards_on_the_first_trick():
    hands = {2: "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", 0: "2C"}
    state = play(start(Rules(qs_must_drop_when_safe=True), hands), "2C")
    state = play(state, [state.legal_cards()[0]])
    assert legal(state) == ["QS"]
    assert_refused(state, "2H", Reason.MUST_PLAY_QS, card="2H", legal=["QS"])


def test_qs_must_drop_does_not_bind_the_leader():
    state = play(d1(qs_must_drop_when_safe=True), "2C 9C JD TC 9S 4S 7S AS")
    assert state.to_move == 2
    assert legal(state) == cards("QD KD AD 8S QS")


# -- turn order and phases ---------------------------------------------------------------------------


def test_play_goes_clockwise_and_apply_checks_the_seat():
    from pbem.engine import PlayCard, apply

    state = d1()
    assert_refused(state, lambda s: apply(s, PlayCard(1, "3C")), Reason.NOT_YOUR_TURN, seat=1, to_move=0,
                   legal=[])
    state = play(state, "2C")
    assert state.to_move == 1 and state.trick_cards() == ((0, "2C"),)
    assert state.led_suit == "C"
