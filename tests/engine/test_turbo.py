"""Turbo Hearts (RULES.md §6.4, §6.8) from hand-built deals: the options and their refusals, the CHARGE
phase (who decides, the moves, events and refusals, what each seat is shown), a charged card held back
from the first trick of its suit (and its exceptions), the charged values, the 10 of clubs' factor
applied last (to a negative score too, and under an old moon to a player who did not shoot), the
partnership modes, and snapshots and replays taken in the middle of a hand with charges.

Expected values are worked out here from the rules and the cards each seat took, not from the engine.
"""

from __future__ import annotations

import json

import pytest

from pbem.engine import (
    CHARGE,
    DEAL,
    PASS,
    PLAY,
    PRESETS,
    CardsCharged,
    ChargeCards,
    ChargesRevealed,
    Deal,
    GameState,
    HandScored,
    IllegalMove,
    InvalidRules,
    Moon,
    PassCards,
    PlayCard,
    Reason,
    Rules,
    apply,
    chargeable_cards,
    event_to_dict,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
)

from .helpers import ALL_CARDS, assert_refused, cards, deck_for, play, play_logged, play_out, sweep_hands

TURBO = Rules.make("turbo")

# Seat 0 takes every penalty card in tricks 1 to 12: it wins the opening club trick with AC, then leads
# its spades and diamonds from the top while seat 1 (every heart but KH and AH) has nothing but hearts to
# throw and seat 2 throws KH and AH. Seat 1 takes the 10 of clubs alone in the last trick, with the jack
# of diamonds that seat 3 throws. Each seat holds one chargeable card: 0 QS, 1 TC, 2 AH, 3 JD.
MOON_DEAL = {
    0: "AC 4C AS KS QS JS TS 9S 8S 7S AD KD QD",
    1: "TC 3C 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
    2: "2C 5C 6C 7C 8C 9C JC QC KC KH AH 2S 3S",
    3: "4S 5S 6S 2D 3D 4D 5D 6D 7D 8D 9D TD JD",
}
OPENING = ["2C 2D AC 3C", "AS 2H 2S 4S", "KS 3H 3S 5S", "QS 4H KH 6S"]  # seat 2 leads the 2C, then seat 0
MOON_PLAY = OPENING + ["JS 5H AH 3D", "TS 6H 6C 4D", "9S 7H 7C 5D", "8S 8H 8C 6D", "7S 9H 9C 7D",
                       "AD TH JC 8D", "KD JH QC 9D", "QD QH KC TD", "4C TC 5C JD"]
# The same deal, seat 2 keeping AH to the end: seat 0 takes 25 (no moon), seat 1 takes TC, AH and JD.
SHORT_PLAY = OPENING + ["JS 5H 5C 3D", "TS 6H 6C 4D", "9S 7H 7C 5D", "8S 8H 8C 6D", "7S 9H 9C 7D",
                        "AD TH JC 8D", "KD JH QC 9D", "QD QH KC TD", "4C TC AH JD"]

# Seat 0 and seat 2 hold nothing chargeable; seat 1's only spade is QS, seat 3's only club is TC.
SINGLES = {
    0: "2C 3C 4C 5C 2D 3D 4D 2S 3S 2H 3H 4H 5H",
    1: "AC 6C 7C 8C 5D 6D 7D KD QS 6H 7H 8H 9H",
    2: "9C JC QC KC 8D 9D TD 4S 5S TH JH QH KH",
    3: "TC JD QD AD 6S 7S 8S 9S TS JS KS AS AH",
}


def tricks(groups) -> list[str]:
    return [c for g in groups for c in cards(g)]


def charged_start(rules: Rules, hands, charges: dict[int, str] | None = None, direction: str = "hold"):
    """A new game with hand 1 dealt as ``hands``, each seat to charge charging ``charges[seat]`` (none by
    default); the state (in the play phase) and every event."""
    charges = charges or {}
    state, events = apply(new_game(rules), Deal(deck_for(rules, hands), direction))
    events = list(events)
    assert state.phase == CHARGE
    for seat in state.seats_to_charge():
        state, more = apply(state, ChargeCards(seat, tuple(cards(charges.get(seat, "")))))
        events += more
    assert state.phase == PLAY and state.charges_revealed
    return state, events


def scored(events) -> HandScored:
    found = [e for e in events if isinstance(e, HandScored)]
    assert len(found) == 1
    return found[0]


def taken_by(events):
    """The cards each seat took, from the TrickWon events."""
    from pbem.engine import TrickWon

    taken: dict[int, list[str]] = {s: [] for s in range(4)}
    for e in events:
        if isinstance(e, TrickWon):
            taken[e.winner] += e.cards
    return taken


def value(card: str, charged: set[str], qs: int = 13) -> int:
    """A card's value under §6.4: a heart 1 (2 with AH charged), QS 13 (26 charged), others 0."""
    if card[1] == "H":
        return 2 if "AH" in charged else 1
    if card == "QS":
        return 2 * qs if "QS" in charged else qs
    return 0


def hand_of(rules, hands, charges, sequence):
    state, events = charged_start(rules, hands, charges)
    state, more = play_logged(state, tricks(sequence))
    return state, events + more


# -- options, presets and refusals ------------------------------------------------------------------------


def test_presets():
    assert PRESETS["turbo"] == {"turbo": True, "jd_bonus": -10}
    assert PRESETS["turbo-nines"] == {"turbo": True, "jd_bonus": -10, "booster_nines": True}
    rules = Rules.make("turbo")
    assert rules.turbo and rules.charge_limit == 4 and not rules.booster_nines and rules.jd_bonus == -10
    assert Rules.make("turbo-nines").booster_nines
    assert Rules().turbo is False and Rules().charge_limit == 4 and Rules().booster_nines is False
    assert Rules.make("turbo", charge_limit=1).charge_limit == 1
    assert Rules.from_dict(json.loads(json.dumps(Rules.make("turbo-nines", charge_limit=2).to_dict()))) == \
        Rules.make("turbo-nines", charge_limit=2)


def test_chargeable_cards_are_ah_qs_tc_and_the_bonus_card_in_canonical_order():
    assert chargeable_cards(TURBO) == ("TC", "JD", "AH", "QS")
    assert chargeable_cards(Rules.make("turbo", bonus_card="TD")) == ("TC", "TD", "AH", "QS")
    assert chargeable_cards(Rules.make("turbo", jd_bonus=0)) == ("TC", "AH", "QS")
    assert chargeable_cards(Rules.make("turbo", jd_bonus=-5)) == ("TC", "JD", "AH", "QS")
    assert chargeable_cards(Rules.make("turbo", removed_cards=["AH", "2D", "3D", "4D"])) == ("TC", "JD", "QS")
    assert chargeable_cards(Rules.make("omnibus")) == ()
    assert chargeable_cards(Rules()) == ()


@pytest.mark.parametrize(("options", "code", "details"), [
    ({"turbo": True, "charge_limit": 0}, "BAD_CHARGE_LIMIT", {"value": 0}),
    ({"turbo": True, "charge_limit": 5}, "BAD_CHARGE_LIMIT", {"value": 5}),
    ({"turbo": True, "charge_limit": "2"}, "BAD_CHARGE_LIMIT", {"value": "2"}),
    ({"turbo": True, "charge_limit": True}, "BAD_CHARGE_LIMIT", {"value": True}),
    ({"turbo": True, "charge_limit": 2.0}, "BAD_CHARGE_LIMIT", {"value": 2.0}),
    ({"charge_limit": 1}, "CHARGE_LIMIT_NEEDS_TURBO", {"value": 1}),
    ({"charge_limit": 0}, "BAD_CHARGE_LIMIT", {"value": 0}),
    ({"turbo": True, "removed_cards": ["TC", "2D", "3D", "4D"]}, "TURBO_NEEDS_TEN_OF_CLUBS", {}),
    ({"turbo": True, "players": 3, "removed_cards": ["TC"]}, "TURBO_NEEDS_TEN_OF_CLUBS", {}),
    ({"turbo": "yes"}, "NOT_A_BOOL", {"option": "turbo", "value": "yes"}),
    ({"booster_nines": 1}, "NOT_A_BOOL", {"option": "booster_nines", "value": 1}),
])
def test_refusals(options, code, details):
    with pytest.raises(InvalidRules) as info:
        Rules.make("standard", **options)
    assert info.value.code == code and info.value.details == details


def test_turbo_combines_with_other_player_counts_and_the_kitty():
    assert Rules.make("turbo", players=3).table.chargeable_mask
    assert Rules.make("turbo", players=5).removed_cards == ("2C", "2D")  # TC stays
    assert Rules.make("turbo", kitty="penalty").turbo
    assert Rules.make("turbo", partnership="team").turbo


# -- the charge phase ------------------------------------------------------------------------------------


def test_after_the_deal_of_a_hold_hand_the_seats_with_a_chargeable_card_decide():
    state, events = apply(new_game(TURBO), Deal(deck_for(TURBO, SINGLES), "hold"))
    assert state.phase == CHARGE and state.to_move == -1
    assert state.seats_to_charge() == state.seats_to_act() == (1, 3)
    assert state.charges == ((), None, (), None)  # nothing to decide: nothing charged
    assert state.charge_choices(0) == state.charge_choices(2) == ()
    assert state.charge_choices(1) == ("QS",) and state.charge_choices(3) == ("TC", "JD", "AH")
    assert state.charge_limit == 4
    assert state.legal_cards() == () and state.legal_mask() == 0
    assert not state.charges_revealed and state.charged_cards == ()
    assert not [e for e in events if isinstance(e, (CardsCharged, ChargesRevealed))]
    # seat 3 decides first (any order), then seat 1: the reveal comes with the last decision
    state, events = apply(state, ChargeCards(3, ("AH", "TC")))
    assert events == (CardsCharged(3),)
    assert state.phase == CHARGE and state.seats_to_charge() == (1,) and state.charge_choices(3) == ()
    assert state.charges == ((), None, (), ("TC", "AH"))  # canonical order
    assert not state.charges_revealed and state.charged_cards == ()
    state, events = apply(state, ChargeCards(1, ()))
    assert events == (CardsCharged(1), ChargesRevealed(((), (), (), ("TC", "AH"))))
    assert state.phase == PLAY and state.to_move == 0 and state.legal_cards() == ("2C",)
    assert state.seats_to_charge() == () and state.charge_choices(1) == ()
    assert state.charges_revealed and state.charged_cards == ("TC", "AH")
    assert state.suits_led == ""


def test_after_a_pass_the_received_cards_can_be_charged():
    # seat 0 passes its QS left, seat 3 passes JD to seat 0
    state = new_game(TURBO).deal(deck_for(TURBO, MOON_DEAL), "left")
    assert state.phase == PASS and state.charges == () and state.seats_to_charge() == ()
    passes = {0: "QS AS KS", 1: "2H 3H 4H", 2: "2S 3S KH", 3: "JD 4S 5S"}
    events: list = []
    for seat, text in passes.items():
        state, more = apply(state, PassCards(seat, tuple(cards(text))))
        events += more
    assert state.phase == CHARGE
    assert state.charge_choices(0) == ("JD",) and state.charge_choices(1) == ("TC", "QS")
    assert state.charge_choices(2) == ("AH",) and state.charge_choices(3) == ()
    assert state.seats_to_charge() == (0, 1, 2) and state.charges[3] == ()


def test_when_no_seat_holds_a_chargeable_card_play_starts_at_once():
    # turbo with a kitty (RULES.md §6.2): the four chargeable cards lie in it
    from .test_kitty import kitty_deck

    rules = Rules.make("turbo", kitty="penalty")
    state, events = apply(new_game(rules), Deal(kitty_deck(rules, "TC JD AH QS", {}), "hold"))
    assert state.phase == PLAY and state.charges == ((), (), (), ()) and state.charges_revealed
    assert [e for e in events if isinstance(e, ChargesRevealed)] == [ChargesRevealed(((), (), (), ()))]
    assert not [e for e in events if isinstance(e, CardsCharged)]
    assert state.card_value("QS") == 13 and state.moon_total == 26


def test_without_turbo_there_is_no_charge_phase():
    state = new_game(Rules.make("omnibus")).deal(deck_for(Rules.make("omnibus"), SINGLES), "hold")
    assert state.phase == PLAY and state.charges == () and not state.charges_revealed
    assert state.seats_to_charge() == () and state.charge_choices(1) == ()
    assert_refused(state, lambda s: apply(s, ChargeCards(1, ())), Reason.WRONG_PHASE, phase="play",
                   expected="charge")


def charge_phase(rules=TURBO) -> GameState:
    return new_game(rules).deal(deck_for(rules, SINGLES), "hold")


@pytest.mark.parametrize(("move", "reason", "details"), [
    (ChargeCards(0, ()), Reason.ALREADY_CHARGED, {"seat": 0}),  # nothing chargeable: decided at once
    (ChargeCards(3, ("QD",)), Reason.NOT_CHARGEABLE, {"card": "QD", "choices": ["TC", "JD", "AH"]}),
    (ChargeCards(3, ("TC", "KS")), Reason.NOT_CHARGEABLE, {"card": "KS", "choices": ["TC", "JD", "AH"]}),
    (ChargeCards(3, ("QS",)), Reason.CARD_NOT_IN_HAND, {"card": "QS", "cards": ["QS"]}),
    (ChargeCards(1, ("TC", "AH", "QS")), Reason.CARD_NOT_IN_HAND, {"card": "TC", "cards": ["TC", "AH"]}),
    (ChargeCards(3, ("TC", "TC")), Reason.DUPLICATE_CARD, {"card": "TC"}),
    (ChargeCards(3, ("XX",)), Reason.UNKNOWN_CARD, {"text": "XX"}),
    (ChargeCards(3, ("10C",)), Reason.UNKNOWN_CARD, {"text": "10C"}),  # the move is canonical already
    (ChargeCards(4, ()), Reason.BAD_SEAT, {"seat": 4}),
    (ChargeCards(-1, ()), Reason.BAD_SEAT, {"seat": -1}),
])
def test_charge_refusals(move, reason, details):
    assert_refused(charge_phase(), lambda s: apply(s, move), reason, **details)


def test_a_seat_decides_once():
    state, _ = apply(charge_phase(), ChargeCards(1, ("QS",)))
    assert_refused(state, lambda s: apply(s, ChargeCards(1, ())), Reason.ALREADY_CHARGED, seat=1)
    assert_refused(state, lambda s: apply(s, ChargeCards(1, ("QS",))), Reason.ALREADY_CHARGED, seat=1)


def test_charge_limit():
    state = charge_phase(Rules.make("turbo", charge_limit=1))
    assert state.charge_limit == 1 and state.charge_choices(3) == ("TC", "JD", "AH")
    assert_refused(state, lambda s: apply(s, ChargeCards(3, ("TC", "AH"))), Reason.TOO_MANY_CHARGES,
                   limit=1, given=2)
    state, _ = apply(state, ChargeCards(3, ("AH",)))
    assert state.charges[3] == ("AH",)
    two = charge_phase(Rules.make("turbo", charge_limit=2))
    assert_refused(two, lambda s: apply(s, ChargeCards(3, ("TC", "JD", "AH"))), Reason.TOO_MANY_CHARGES,
                   limit=2, given=3)
    every = charge_phase()
    every, _ = apply(every, ChargeCards(3, ("AH", "JD", "TC")))
    assert every.charges[3] == ("TC", "JD", "AH")


def test_other_moves_in_the_charge_phase_and_charges_in_other_phases_are_refused():
    state = charge_phase()
    assert_refused(state, lambda s: apply(s, PlayCard(0, "2C")), Reason.WRONG_PHASE, phase="charge",
                   expected="play")
    assert_refused(state, "2C", Reason.WRONG_PHASE, phase="charge", expected="play")
    assert_refused(state, lambda s: apply(s, PassCards(1, ("QS", "KD", "AC"))), Reason.WRONG_PHASE,
                   phase="charge", expected="pass")
    passing = new_game(TURBO).deal(deck_for(TURBO, SINGLES), "left")
    assert_refused(passing, lambda s: apply(s, ChargeCards(1, ())), Reason.WRONG_PHASE, phase="pass",
                   expected="charge")
    assert_refused(new_game(TURBO), lambda s: apply(s, ChargeCards(1, ())), Reason.WRONG_PHASE, phase="deal",
                   expected="charge")
    playing, _ = charged_start(TURBO, SINGLES)
    assert_refused(playing, lambda s: apply(s, ChargeCards(1, ("QS",))), Reason.WRONG_PHASE, phase="play",
                   expected="charge")


def test_the_move_log_form():
    move = ChargeCards(1, ("QS", "TC"))
    assert move_to_dict(move) == {"type": "charge", "seat": 1, "cards": ["QS", "TC"]}
    assert move_from_dict({"type": "charge", "seat": 1, "cards": ["QS", "TC"]}) == move
    assert move_from_dict(json.loads(json.dumps(move_to_dict(ChargeCards(2, ()))))) == ChargeCards(2, ())
    assert event_to_dict(CardsCharged(2)) == {"type": "cards_charged", "seat": 2}
    revealed = event_to_dict(ChargesRevealed(((), ("QS",), (), ())))
    assert revealed["type"] == "charges_revealed" and [list(c) for c in revealed["charges"]] == [[], ["QS"], [], []]


def test_a_seat_sees_only_its_own_charge_until_every_seat_has_decided():
    state = charge_phase()
    state, _ = apply(state, ChargeCards(3, ("TC",)))
    for seat in range(4):
        view = seat_view(state, seat)
        assert view["charges_revealed"] is False and view["charge_limit"] == 4
        assert view["charges"][3] == (["TC"] if seat == 3 else None)
        # a seat with nothing chargeable has charged nothing: only it knows
        assert view["charges"][0] == ([] if seat == 0 else None)
        assert view["charges"][2] == ([] if seat == 2 else None)
        assert view["charges"][1] is None
        assert "TC" not in json.dumps(view["charges"]) or seat == 3
        # who is still to charge would tell who holds a chargeable card: a seat learns only about itself
        assert view["to_act"] == ([1] if seat == 1 else [])
    assert seat_view(state, 1)["charge_choices"] == ["QS"]
    assert seat_view(state, 3)["charge_choices"] == [] and seat_view(state, 0)["charge_choices"] == []
    state, _ = apply(state, ChargeCards(1, ("QS",)))
    for seat in range(4):
        view = seat_view(state, seat)
        assert view["charges"] == [[], ["QS"], [], ["TC"]] and view["charges_revealed"] is True
        assert view["charge_choices"] == [] and view["suits_led"] == ""


# -- a charged card held back from the first trick of its suit --------------------------------------------


def test_a_charged_card_is_not_played_to_the_first_trick_of_its_suit_nor_led_before_it():
    state, _ = charged_start(TURBO, MOON_DEAL, {0: "QS", 1: "TC", 2: "AH", 3: "JD"})
    assert state.charged_cards == ("TC", "JD", "AH", "QS")
    state = play(state, "2C 2D AC")
    # seat 1 follows the first club trick: the charged TC is held back while it has another club
    assert state.to_move == 1 and state.legal_cards() == ("3C",)
    assert_refused(state, "TC", Reason.CHARGED_CARD_FIRST_TRICK_OF_SUIT, card="TC", suit="C", legal=["3C"])
    state = play(state, "3C")
    assert state.suits_led == "C"
    # seat 0 leads: QS may not lead the first spade trick (hearts are not broken: no hearts either)
    lead = ["4C", "AD", "KD", "QD", "7S", "8S", "9S", "TS", "JS", "KS", "AS"]
    assert state.to_move == 0 and list(state.legal_cards()) == sorted(lead, key=ALL_CARDS.index)
    assert_refused(state, "QS", Reason.CHARGED_CARD_FIRST_TRICK_OF_SUIT, card="QS", suit="S",
                   legal=sorted(lead, key=ALL_CARDS.index))
    state = play(state, "AS 2H 2S 4S")
    assert state.suits_led == "CS"
    assert state.to_move == 0 and "QS" in state.legal_cards()  # spades have been led: QS may lead now
    state = play(state, "KS 3H 3S 5S QS 4H KH 6S")
    # seat 2 throws its charged AH on a spade trick: a trick of another suit, fine
    state = play(state, "JS 5H")
    assert "AH" in state.legal_cards() and state.legal_cards() == ("5C", "6C", "7C", "8C", "9C", "JC", "QC",
                                                                   "KC", "AH")
    state = play(state, "AH 3D TS 6H 6C 4D 9S 7H 7C 5D 8S 8H 8C 6D 7S 9H 9C 7D AD TH JC")
    # the first diamond trick: seat 3 holds back its charged JD
    assert state.to_move == 3 and state.legal_cards() == ("8D", "9D", "TD")
    assert_refused(state, "JD", Reason.CHARGED_CARD_FIRST_TRICK_OF_SUIT, card="JD", suit="D",
                   legal=["8D", "9D", "TD"])
    state = play(state, "8D KD JH QC")
    assert state.suits_led == "CDS"
    assert state.legal_cards() == ("9D", "TD", "JD")  # the second diamond trick: JD may follow


def test_an_uncharged_card_is_not_held_back():
    state, _ = charged_start(TURBO, MOON_DEAL, {0: "QS", 2: "AH", 3: "JD"})
    state = play(state, "2C 2D AC")
    assert state.legal_cards() == ("3C", "TC")


def test_a_refusal_for_another_rule_names_that_rule():
    state, _ = charged_start(TURBO, MOON_DEAL, {1: "TC"})
    state = play(state, "2C 2D AC")
    assert_refused(state, "2H", Reason.MUST_FOLLOW_SUIT, card="2H", led_suit="C", held=["3C", "TC"],
                   legal=["3C"])


def test_a_charged_card_that_is_its_holders_only_card_of_the_suit_may_be_played():
    state, _ = charged_start(TURBO, SINGLES, {1: "QS", 3: "TC JD AH"})
    state = play(state, "2C AC 9C")
    assert state.to_move == 3 and state.legal_cards() == ("TC",)  # its only club: follows with it
    state = play(state, "TC")
    # seat 1 won with AC and leads: QS is its only spade, so it may lead the first spade trick
    assert state.to_move == 1 and state.suits_led == "C"
    assert state.legal_cards() == ("6C", "7C", "8C", "5D", "6D", "7D", "KD", "QS")
    state = play(state, "6C JC")
    # seat 3 has no club left: it may throw the charged AH, its only heart (and QD, JD… any card)
    assert "AH" in state.legal_cards() and "JD" in state.legal_cards()


def test_when_only_charged_cards_are_left_one_of_them_may_be_played():
    # with the jack of spades as the bonus card, seat 1's only spades are two charged cards
    rules = Rules.make("turbo", bonus_card="JS")
    hands = {0: "2C 3C 4C 2D 3D 4D 2S 3S 4S 2H 3H 4H 5H",
             1: "AC 5C 6C 5D 6D 7D KD JS QS 6H 7H 8H 9H",
             2: "7C 8C 9C 8D 9D TD 7S 8S 9S TH JH QH KH",
             3: "JC QC KC TC JD QD AD KS AS TS 5S 6S AH"}
    state, _ = charged_start(rules, hands, {1: "JS QS"})
    assert state.charged_cards == ("JS", "QS")
    state = play(state, "2C AC 7C JC")
    # leading, hearts unbroken: the two spades are held back, the rest may lead
    assert state.to_move == 1 and state.legal_cards() == ("5C", "6C", "5D", "6D", "7D", "KD")
    state = play(state, "KD 8D AD 2D")
    state = play(state, "5S 2S")  # seat 3 leads the first spade trick
    assert state.to_move == 1 and state.legal_cards() == ("JS", "QS")  # nothing else legal: either


def test_qs_must_drop_when_safe_can_leave_only_a_charged_card():
    rules = Rules.make("turbo", qs_must_drop_when_safe=True)
    hands = {0: "2C 3C 4C 2D 3D 4D 2S 3S 4S 2H 3H 4H 5H",
             1: "AC 5C 6C 5D 6D 7D KD QS 8S 6H 7H 8H 9H",
             2: "7C 8C 9C 8D 9D TD 7S TS 9S TH JH QH KH",
             3: "JC QC KC TC JD QD AD KS AS JS 5S 6S AH"}
    state, _ = charged_start(rules, hands, {1: "QS"})
    state = play(state, "2C AC 7C JC KD 8D AD 2D")
    state = play(state, "AS 2S")  # seat 3 leads AS: QS must drop (RULES.md §3), charged or not
    assert state.to_move == 1 and state.legal_cards() == ("QS",)


# -- charged values and the 10 of clubs ---------------------------------------------------------------------


def test_charged_values_in_tricks_and_the_moon_total():
    state, _ = charged_start(TURBO, MOON_DEAL, {0: "QS", 2: "AH"})
    assert state.card_value("QS") == 26 and state.card_value("2H") == 2 and state.card_value("AH") == 2
    assert state.card_value("JD") == 0 and state.card_value("TC") == 0  # the bonus card apart
    assert state.moon_total == 52
    state, events = play_logged(state, tricks(OPENING))
    from pbem.engine import TrickWon

    won = [e for e in events if isinstance(e, TrickWon)]
    assert [e.points for e in won] == [0, 2, 2, 26 + 4]
    assert state.points == (34, 0, 0, 0)
    assert state.last_trick == (0, tuple(ALL_CARDS.index(c) for c in cards("QS 4H KH 6S")), 0, 30)


def test_before_the_reveal_and_at_the_next_deal_the_values_are_the_rules():
    state = new_game(TURBO).deal(deck_for(TURBO, MOON_DEAL), "hold")
    assert state.card_value("QS") == 13 and state.moon_total == 26
    state, _ = apply(state, ChargeCards(0, ("QS",)))
    assert state.card_value("QS") == 13  # charges count once revealed
    for seat in (1, 2, 3):
        state, _ = apply(state, ChargeCards(seat, ()))
    assert state.card_value("QS") == 26 and state.moon_total == 39
    state, events = play_logged(state, tricks(MOON_PLAY))
    assert state.phase == DEAL and scored(events).charged == (("QS",), (), (), ())
    state = state.deal(deck_for(TURBO, MOON_DEAL, 2), "hold")
    assert state.phase == CHARGE and state.charges == (None, None, None, None)
    assert not state.charges_revealed and state.charged_cards == () and state.suits_led == ""
    assert state.card_value("QS") == 13 and state.moon_total == 26
    for seat in range(4):
        state, _ = apply(state, ChargeCards(seat, ()))
    assert state.card_value("QS") == 13 and state.moon_total == 26


@pytest.mark.parametrize(("charges", "points", "multiplier"), [
    # seat 0 takes 12 hearts and QS, seat 1 TC, AH and JD: (1 − 10) × 2, the factor last
    ({}, (25, -18, 0, 0), (1, 2, 1, 1)),
    ({1: "TC"}, (25, -36, 0, 0), (1, 4, 1, 1)),
    ({3: "JD"}, (25, -38, 0, 0), (1, 2, 1, 1)),
    ({2: "AH"}, (37, -16, 0, 0), (1, 2, 1, 1)),
    ({0: "QS"}, (38, -18, 0, 0), (1, 2, 1, 1)),
    ({0: "QS", 1: "TC", 2: "AH", 3: "JD"}, (50, -72, 0, 0), (1, 4, 1, 1)),
])
def test_the_ten_of_clubs_multiplies_the_hand_score_last_a_negative_one_too(charges, points, multiplier):
    state, events = hand_of(TURBO, MOON_DEAL, charges, SHORT_PLAY)
    hs = scored(events)
    charged = {c for text in charges.values() for c in cards(text)}
    taken = taken_by(events)
    assert "TC" in taken[1] and "JD" in taken[1] and "AH" in taken[1]
    bonus = -20 if "JD" in charged else -10
    factor = 4 if "TC" in charged else 2
    expected = [sum(value(c, charged) for c in taken[s]) for s in range(4)]
    assert sum(expected) == state.moon_total
    expected[1] = (expected[1] + bonus) * factor
    assert hs.points == tuple(expected) == points
    assert hs.multiplier == multiplier and hs.moon is None
    assert hs.charged == tuple(tuple(cards(charges.get(s, ""))) for s in range(4))
    assert state.totals == points


@pytest.mark.parametrize(("charges", "points", "total"), [
    # seat 0 shoots; seat 1, who took TC and JD, has (M − 10) doubled (RULES.md §6.8)
    ({}, (0, 32, 26, 26), 26),
    ({1: "TC"}, (0, 64, 26, 26), 26),
    ({0: "QS"}, (0, 58, 39, 39), 39),
    ({2: "AH"}, (0, 58, 39, 39), 39),
    ({3: "JD"}, (0, 12, 26, 26), 26),
    ({0: "QS", 1: "TC", 2: "AH", 3: "JD"}, (0, 128, 52, 52), 52),
])
def test_an_old_moon_with_charges_and_a_player_other_than_the_shooter_taking_the_ten(charges, points, total):
    state, events = hand_of(TURBO, MOON_DEAL, charges, MOON_PLAY)
    hs = scored(events)
    assert hs.moon == Moon(0, "moon", "old", False) and hs.moon.total == total
    # the M each past hand was scored with, for whoever reads the history
    assert [h["moon"]["total"] for h in seat_view(state, 2)["history"]] == [total]
    assert hs.points == points and hs.multiplier == (1, 4 if "TC" in charges.get(1, "") else 2, 1, 1)


@pytest.mark.parametrize(("charges", "points"), [
    ({}, (-26, -20, 0, 0)),            # the shooter −M; seat 1's bonus −10, doubled
    ({1: "TC"}, (-26, -40, 0, 0)),
    ({0: "QS", 3: "JD"}, (-39, -40, 0, 0)),
])
def test_a_new_moon_with_charges(charges, points):
    state, events = hand_of(Rules.make("turbo", moon="new"), MOON_DEAL, charges, MOON_PLAY)
    hs = scored(events)
    assert hs.moon == Moon(0, "moon", "new", False) and hs.points == points


@pytest.mark.parametrize(("moon", "charges", "points"), [
    # seat 0 holds every club, so takes every card: TC, JD and the moon
    ("old", "", (-20, 26, 26, 26)),         # (0 − 10) × 2
    ("old", "TC", (-40, 26, 26, 26)),       # (0 − 10) × 4
    ("new", "", (-72, 0, 0, 0)),            # (−26 − 10) × 2
    ("new", "TC", (-144, 0, 0, 0)),         # (−26 − 10) × 4
])
def test_the_shooter_who_takes_the_ten_multiplies_its_moon_score(moon, charges, points):
    rules = Rules.make("turbo", moon=moon)
    state, events = charged_start(rules, sweep_hands(rules, 0), {0: charges})
    state, more = play_out(state)
    hs = scored(events + more)
    assert hs.moon.seat == 0 and hs.points == points


def test_moon_choice_and_safety_score_with_charges():
    from pbem.engine import ChooseMoon, MoonChoiceNeeded

    rules = Rules.make("turbo", moon="choice")
    state, events = hand_of(rules, MOON_DEAL, {0: "QS"}, MOON_PLAY)
    assert [e for e in events if isinstance(e, MoonChoiceNeeded)] == [MoonChoiceNeeded(0, "moon", False)]
    old, ev_old = apply(state, ChooseMoon(0, "old"))
    new, ev_new = apply(state, ChooseMoon(0, "new"))
    assert scored(ev_old).points == (0, 58, 39, 39) and scored(ev_new).points == (-39, -20, 0, 0)
    # at_moon_choice, built from what the table knows, scores the same
    built = GameState.at_moon_choice(
        rules, shooter=0, kind="moon", hand_no=1, dealer=3, pass_direction="hold", leader=1, tricks_played=13,
        hearts_broken=True, taken=[cards_of(m) for m in state.taken], points=state.points,
        tricks_won=state.tricks_won, totals=(0, 0, 0, 0), charges=[("QS",), (), (), ()])
    assert built.moon_total == 39
    assert apply(built, ChooseMoon(0, "old"))[0].totals == old.totals
    assert apply(built, ChooseMoon(0, "new"))[0].totals == new.totals


def cards_of(mask: int) -> list[str]:
    return [c for i, c in enumerate(ALL_CARDS) if mask >> i & 1]


# -- partnership -------------------------------------------------------------------------------------------


def test_team_mode_multiplies_the_team_score_of_the_ten_of_clubs_taker():
    rules = Rules.make("turbo", partnership="team")
    state, events = hand_of(rules, MOON_DEAL, {}, SHORT_PLAY)
    hs = scored(events)
    # team 0: 25 + 0; team 1: (1 − 10 + 0) × 2
    assert hs.team_points == (25, -18) and hs.points == (25, -18, 25, -18)
    assert hs.multiplier == (1, 2, 1, 2)
    state, events = hand_of(rules, MOON_DEAL, {1: "TC"}, MOON_PLAY)
    hs = scored(events)
    # team 0 slams; team 1 scores (M − 10) × 4
    assert hs.moon == Moon(0, "moon", "old", True) and hs.points == (0, 64, 0, 64) and hs.team_totals == (0, 64)


def test_individual_mode_multiplies_the_seat_alone():
    rules = Rules.make("turbo", partnership="individual")
    hs = scored(hand_of(rules, MOON_DEAL, {}, MOON_PLAY)[1])
    assert hs.points == (0, 32, 0, 26)  # the shooter's partner spared; seat 3 not doubled
    assert hs.multiplier == (1, 2, 1, 1) and hs.team_points == (0, 58)


def test_without_turbo_hand_scored_has_no_multiplier_nor_charges():
    rules = Rules.make("omnibus", moon="old")
    state, events = play_logged(new_game(rules).deal(deck_for(rules, MOON_DEAL), "hold"), tricks(MOON_PLAY))
    hs = scored(events)
    assert hs.points == (0, 16, 26, 26) and hs.multiplier == () and hs.charged == ()


# -- snapshots, replays, views ------------------------------------------------------------------------------


def test_snapshots_mid_charge_and_mid_hand_read_back_as_the_same_state_and_play_on_the_same():
    state = new_game(TURBO).deal(deck_for(TURBO, MOON_DEAL), "hold")
    state, _ = apply(state, ChargeCards(2, ("AH",)))
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state and again.seats_to_charge() == (0, 1, 3) and again.charges[2] == ("AH",)
    assert again.card_value("2H") == 1
    state, _ = apply(state, ChargeCards(0, ("QS",)))
    state, _ = apply(state, ChargeCards(1, ("TC",)))
    state, _ = apply(state, ChargeCards(3, ()))
    state = play(state, tricks(OPENING[:2]) + cards("KS 3H"))
    d = json.loads(json.dumps(state.to_dict()))
    assert d["charges"] == [["QS"], ["TC"], ["AH"], []] and d["suits_led"] == "CS"
    again = GameState.from_dict(d)
    assert again == state
    assert again.card_value("QS") == 26 and again.card_value("3H") == 2 and again.moon_total == 52
    assert again.charged_cards == ("TC", "AH", "QS") and again.suits_led == "CS" and again.points == state.points
    rest = tricks(MOON_PLAY)[10:]
    one, ev_one = play_logged(state, rest)
    two, ev_two = play_logged(again, rest)
    assert one == two and scored(ev_one) == scored(ev_two)
    assert scored(ev_one).points == (0, 4 * (52 - 10), 52, 52)


def test_a_snapshot_in_the_first_trick_keeps_a_charged_card_held_back():
    state, _ = charged_start(TURBO, MOON_DEAL, {1: "TC"})
    state = play(state, "2C 2D AC")
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again.legal_cards() == ("3C",)
    with pytest.raises(IllegalMove):
        again.play("TC")


def test_a_logged_turbo_game_replays_exactly():
    state = new_game(TURBO)
    moves: list = [Deal(deck_for(TURBO, MOON_DEAL), "left")]
    state, _ = apply(state, moves[0])
    for seat, text in {0: "4C 7S 8S", 1: "2H 3H 4H", 2: "2S 3S KH", 3: "JD 4S 5S"}.items():
        moves.append(PassCards(seat, tuple(cards(text))))
        state, _ = apply(state, moves[-1])
    for seat in state.seats_to_charge():
        choices = state.charge_choices(seat)
        moves.append(ChargeCards(seat, choices[:1]))
        state, _ = apply(state, moves[-1])
    while state.phase == PLAY:
        moves.append(PlayCard(state.to_move, state.legal_cards()[-1]))
        state, _ = apply(state, moves[-1])
    logged = [move_from_dict(json.loads(json.dumps(move_to_dict(m)))) for m in moves]
    assert replay(TURBO, logged) == state
    assert state.phase == DEAL and state.hand_no == 1 and state.history


def test_old_snapshots_without_the_turbo_keys_load():
    rules = Rules.make("omnibus")
    state = play(new_game(rules).deal(deck_for(rules, MOON_DEAL), "hold"), "2C 2D AC 3C")
    d = state.to_dict()
    for key in ("charges", "suits_led"):
        d.pop(key)
    for key in ("turbo", "charge_limit", "booster_nines"):
        d["rules"].pop(key)
    again = GameState.from_dict(d)
    assert again == state and again.charges == () and again.suits_led == ""


def test_seat_view_turbo_fields():
    state, _ = charged_start(TURBO, SINGLES, {1: "QS", 3: "TC"})
    state = play(state, "2C AC 9C TC")
    view = seat_view(state, 0)
    assert view["charges"] == [[], ["QS"], [], ["TC"]] and view["charges_revealed"] is True
    assert view["charge_choices"] == [] and view["charge_limit"] == 4 and view["suits_led"] == "C"
    assert view["trick_boosted"] is False and view["boost_round"] is False
    assert view["phase"] == "play" and view["to_act"] == [1]


def test_an_unplayed_ten_of_clubs_can_still_change_a_score():
    # seat 3 follows the second diamond trick with JD: the last trick (4C TC 5C 9D) holds no penalty card
    early_jd = MOON_PLAY[:10] + ["KD JH QC JD", "QD QH KC TD"]
    state = play(charged_start(TURBO, MOON_DEAL)[0], tricks(early_jd))
    assert state.tricks_played == 12 and "TC" in state.hand(1)
    assert state.unplayed_can_change_score()  # whoever takes TC has their hand score doubled
    assert play(state, "4C TC").unplayed_can_change_score()  # on the table: still to be taken
    omnibus = Rules.make("omnibus", moon="old")
    plain = play(new_game(omnibus).deal(deck_for(omnibus, MOON_DEAL), "hold"), tricks(early_jd))
    assert not plain.unplayed_can_change_score()  # without turbo the 10 of clubs is an ordinary card
