"""Booster Nines (RULES.md §6.5, §6.8) from hand-built deals: a nine led or played following suit boosts
the trick to 2n cards (the leader plays again, each follows suit if it can), a nine thrown on another
suit does not, nor one in a trick that starts with one card in every hand; rule 5 over both rounds of
a boosted first trick; the winner among all 2n cards; a hand of fewer tricks (a sun is every trick
played); a leader without the led suit in the boost round (a follow: rule 5, or any card, a heart
before hearts are broken); the kitty taken by a boosted trick, and its exchange after one; Turbo's
charged cards in a boost round; snapshots and replays in the middle of a boost.

Expected values are worked out here from the rules and the cards played, not from the engine.
"""

from __future__ import annotations

import json

import pytest

from pbem.engine import (
    DEAL,
    DISCARD,
    MOON,
    PLAY,
    ChargeCards,
    ChooseMoon,
    Deal,
    DiscardKitty,
    GameState,
    HandScored,
    HeartsBroken,
    KittyDiscarded,
    KittyTaken,
    Moon,
    MoonChoiceNeeded,
    PlayCard,
    Reason,
    Rules,
    TrickBoosted,
    TrickWon,
    apply,
    event_to_dict,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
    trick_winner,
)

from .helpers import ALL_CARDS, assert_refused, cards, deck_for, play, play_logged, play_out, start, sweep_hands
from .test_kitty import kitty_deck

NINES = Rules.make("standard", booster_nines=True)

# Seat 1's only club is 9C, seat 3's only club QC; seat 3 leads 9S in trick 4; seat 1 keeps 9H to the end.
BOOST_DEAL = {
    0: "2C 3C 2D 3D 4D 5D 2S 3S 4S 2H 3H 4H 5H",
    1: "9C 6D 7D 8D 9D 5S 6S 7S 6H 7H 8H 9H TH",
    2: "4C 5C 6C 7C 8C TC JC KC AC TD JD 8S JH",
    3: "QC QD KD AD 9S TS JS QS KS AS QH KH AH",
}
TRICK_1 = "2C 9C 4C QC 3C 6D KC QD"  # 9C follows: boosted; KC, in the second round, wins it
TRICK_2 = "5C QH 2D 9D"              # 9D thrown on a club trick: no boost
TRICK_3 = "TD KD 3D 7D"
TRICK_4 = "9S 2S 5S 8S TS 3S 6S JH"  # 9S led: boosted
MIDDLE = [TRICK_1, TRICK_2, TRICK_3, TRICK_4, "JS 4S 7S 6C", "QS 2H 8D 7C", "KS 3H 6H 8C", "AS 4H 7H TC",
          "AD 4D TH JD"]
# each seat holds two cards: seat 1 follows KH with 8H, and the last trick (one card each) holds 9H
LAST_TWO = ["KH 5H 8H JC", "AH 5D 9H AC"]
# or seat 1 follows with 9H: the trick boosts with two cards each and ends the hand
BOOSTED_END = ["KH 5H 9H JC AH 5D 8H AC"]


def tricks(groups) -> list[str]:
    return [c for g in groups for c in cards(g)]


def scored(events) -> HandScored:
    found = [e for e in events if isinstance(e, HandScored)]
    assert len(found) == 1
    return found[0]


def idx(text: str) -> tuple[int, ...]:
    return tuple(ALL_CARDS.index(c) for c in cards(text))


# -- the boosted trick --------------------------------------------------------------------------------------


def test_a_nine_that_follows_suit_boosts_the_trick_and_the_leader_plays_again():
    state = start(NINES, BOOST_DEAL)
    state = play(state, "2C")
    assert not state.trick_boosted and not state.boost_round
    state, events = play_logged(state, "9C")
    assert state.trick_boosted and not state.boost_round  # known once the nine is down
    assert not [e for e in events if isinstance(e, TrickBoosted)]
    state = play(state, "4C")
    state, events = play_logged(state, "QC")
    assert [e for e in events if isinstance(e, TrickBoosted)] == [TrickBoosted(1, 1, "9C")]
    assert not [e for e in events if isinstance(e, TrickWon)]
    assert state.phase == PLAY and state.to_move == 0 and state.leader == 0 and state.tricks_played == 0
    assert state.trick_boosted and state.boost_round
    assert state.trick_cards() == ((0, "2C"), (1, "9C"), (2, "4C"), (3, "QC"))
    assert state.legal_cards() == ("3C",)  # the second round follows the led suit too
    assert_refused(state, "2D", Reason.MUST_FOLLOW_SUIT, card="2D", led_suit="C", held=["3C"], legal=["3C"])
    state = play(state, "3C")
    assert state.trick_cards()[4:] == ((0, "3C"),) and state.to_move == 1
    view = seat_view(state, 2)
    assert view["trick_boosted"] is True and view["boost_round"] is True and len(view["trick"]) == 5


def test_rule_5_covers_the_second_round_of_a_boosted_first_trick():
    state = play(start(NINES, BOOST_DEAL), "2C 9C 4C QC 3C")
    # seat 1 has no club left: no heart nor QS on the first trick
    assert state.to_move == 1 and state.legal_cards() == ("6D", "7D", "8D", "9D", "5S", "6S", "7S")
    assert_refused(state, "6H", Reason.NO_POINTS_ON_FIRST_TRICK, card="6H",
                   legal=["6D", "7D", "8D", "9D", "5S", "6S", "7S"])
    state = play(state, "6D KC")
    assert state.to_move == 3
    assert state.legal_cards() == ("QD", "KD", "AD", "9S", "TS", "JS", "KS", "AS")
    assert_refused(state, "QS", Reason.NO_POINTS_ON_FIRST_TRICK, card="QS",
                   legal=["QD", "KD", "AD", "9S", "TS", "JS", "KS", "AS"])


def test_the_highest_card_of_the_led_suit_among_all_2n_takes_all_of_them():
    state, events = play_logged(start(NINES, BOOST_DEAL), cards(TRICK_1))
    won = [e for e in events if isinstance(e, TrickWon)]
    # QC was the best of the first round; KC, seat 2's second card, is the best of the eight
    assert trick_winner(cards(TRICK_1), 0, 4) == 2
    assert won == [TrickWon(1, 0, tuple(cards(TRICK_1)), 2, 0, True)]
    assert state.to_move == 2 and state.leader == 2 and state.tricks_played == 1 and state.trick == ()
    assert state.taken[2] == sum(1 << i for i in idx(TRICK_1))
    assert state.last_trick == (0, idx(TRICK_1), 2, 0)
    assert [len(state.hand(s)) for s in range(4)] == [11, 11, 11, 11]
    assert not state.trick_boosted and not state.boost_round
    view = seat_view(state, 0)
    assert view["last_trick"]["cards"] == [[k % 4, c] for k, c in enumerate(cards(TRICK_1))]
    assert view["last_trick"]["winner"] == 2
    d = event_to_dict(won[0])
    assert d["type"] == "trick_won" and d["boosted"] is True and len(d["cards"]) == 8


def test_a_nine_thrown_on_another_suit_does_not_boost():
    state = play(start(NINES, BOOST_DEAL), cards(TRICK_1) + cards("5C QH 2D"))
    assert not state.trick_boosted
    state, events = play_logged(state, "9D")
    assert not [e for e in events if isinstance(e, TrickBoosted)]
    assert [e for e in events if isinstance(e, TrickWon)] == [TrickWon(2, 2, tuple(cards(TRICK_2)), 2, 1, False)]


def test_a_nine_led_boosts():
    state = play(start(NINES, BOOST_DEAL), tricks([TRICK_1, TRICK_2, TRICK_3]))
    assert state.to_move == 3
    state, events = play_logged(state, "9S")
    assert state.trick_boosted and not state.boost_round
    state, events = play_logged(state, cards("2S 5S 8S"))
    assert [e for e in events if isinstance(e, TrickBoosted)] == [TrickBoosted(4, 3, "9S")]
    assert state.to_move == 3 and state.legal_cards() == ("TS", "JS", "QS", "KS", "AS")
    state, events = play_logged(state, cards("TS 3S 6S JH"))
    assert [e for e in events if isinstance(e, TrickWon)] == [TrickWon(4, 3, tuple(cards(TRICK_4)), 3, 1, True)]


def test_the_trick_that_starts_with_one_card_in_every_hand_does_not_boost_and_the_hand_has_fewer_tricks():
    state = play(start(NINES, BOOST_DEAL), tricks(MIDDLE + LAST_TWO[:1]))
    assert [len(state.hand(s)) for s in range(4)] == [1, 1, 1, 1] and state.tricks_played == 10
    state, events = play_logged(state, cards("AH 5D 9H"))
    assert not state.trick_boosted  # the nine of the led suit, but every hand held one card
    state, events = play_logged(state, "AC")
    assert not [e for e in events if isinstance(e, TrickBoosted)]
    assert [e for e in events if isinstance(e, TrickWon)] == [TrickWon(11, 3, ("AH", "5D", "9H", "AC"), 3, 2, False)]
    hs = scored(events)
    assert state.tricks_played == 11 and hs.tricks_won == (0, 0, 2, 9)
    assert hs.points == (0, 0, 1, 25) and hs.moon is None and state.phase == DEAL


def test_a_trick_that_starts_with_two_cards_in_every_hand_boosts_and_ends_the_hand():
    state = play(start(NINES, BOOST_DEAL), tricks(MIDDLE))
    assert [len(state.hand(s)) for s in range(4)] == [2, 2, 2, 2]
    state, events = play_logged(state, tricks(BOOSTED_END))
    assert [e for e in events if isinstance(e, TrickBoosted)] == [TrickBoosted(10, 1, "9H")]
    won = [e for e in events if isinstance(e, TrickWon)]
    assert won == [TrickWon(10, 3, tuple(tricks(BOOSTED_END)), 3, 5, True)]
    hs = scored(events)
    assert state.tricks_played == 10 and hs.tricks_won == (0, 0, 2, 8) and hs.points == (0, 0, 1, 25)
    assert state.phase == DEAL and all(not state.hand(s) for s in range(4))


def test_every_event_of_a_whole_boosted_hand():
    state, events = play_logged(start(NINES, BOOST_DEAL), tricks(MIDDLE + LAST_TWO))
    boosted = [e for e in events if isinstance(e, TrickBoosted)]
    won = [e for e in events if isinstance(e, TrickWon)]
    assert boosted == [TrickBoosted(1, 1, "9C"), TrickBoosted(4, 3, "9S")]
    assert [len(e.cards) for e in won] == [8, 4, 4, 8] + [4] * 7
    assert [e.boosted for e in won] == [True, False, False, True] + [False] * 7
    assert sum(len(e.cards) for e in won) == 52 and sum(e.points for e in won) == 26
    # the cards of each trick went to the seat with the highest card of the led suit
    for e in won:
        assert e.winner == trick_winner(e.cards, e.leader, 4)
    played = [e for e in events if type(e).__name__ == "CardPlayed"]
    assert [e.trick_no for e in played[:8]] == [1] * 8 and [e.seat for e in played[:8]] == [0, 1, 2, 3] * 2


def test_without_booster_nines_a_nine_does_nothing():
    rules = Rules()
    state, events = play_logged(start(rules, BOOST_DEAL), cards("2C 9C 4C QC"))
    assert not [e for e in events if isinstance(e, TrickBoosted)] and not state.trick_boosted
    assert [e for e in events if isinstance(e, TrickWon)][0].boosted is False
    assert state.tricks_played == 1 and state.to_move == 3


# -- a sun is every trick played ------------------------------------------------------------------------------


def test_a_sweep_with_a_boost_is_a_sun_of_fewer_tricks():
    rules = Rules.make("standard", booster_nines=True, sun=True)
    state, events = play_out(start(rules, sweep_hands(rules, 0)))
    boosted = [e for e in events if isinstance(e, TrickBoosted)]
    assert boosted == [TrickBoosted(8, 0, "9C")]  # seat 0 leads its clubs from the 2, the nine eighth
    hs = scored(events)
    assert state.tricks_played == 12 and hs.tricks_won == (12, 0, 0, 0)
    assert hs.moon == Moon(0, "sun", "old") and hs.moon.total == 52 and hs.points == (0, 52, 52, 52)


def test_a_sun_choice_after_fewer_tricks_and_at_moon_choice():
    rules = Rules.make("standard", booster_nines=True, sun=True, moon="choice")
    state, events = play_out(start(rules, sweep_hands(rules, 0)))
    assert [e for e in events if isinstance(e, MoonChoiceNeeded)] == [MoonChoiceNeeded(0, "sun", False)]
    assert state.phase == MOON and state.tricks_played == 12
    built = GameState.at_moon_choice(
        rules, shooter=0, kind="sun", hand_no=1, dealer=3, pass_direction="hold", leader=0, tricks_played=12,
        hearts_broken=True, taken=[ALL_CARDS, (), (), ()],
        points=(26, 0, 0, 0), tricks_won=(12, 0, 0, 0), totals=(0, 0, 0, 0))
    for choice, points in (("old", (0, 52, 52, 52)), ("new", (-52, 0, 0, 0))):
        after, evs = apply(state, ChooseMoon(0, choice))
        assert scored(evs).points == points
        assert apply(built, ChooseMoon(0, choice))[0].totals == after.totals


def test_unplayed_can_change_score_with_fewer_tricks():
    rules = Rules.make("standard", booster_nines=True, sun=True)
    state = play(start(rules, sweep_hands(rules, 0)), "2C 2D 2H 2S")
    assert state.unplayed_can_change_score()  # the sun is still open
    state = play(start(NINES, BOOST_DEAL), tricks(MIDDLE))
    assert state.tricks_played == 9 and state.unplayed_can_change_score()  # hearts left
    state = play(state, tricks(BOOSTED_END)[:7])  # the last card of a boosted last trick
    assert state.boost_round and state.unplayed_can_change_score()  # hearts on the table


# -- Turbo with Booster Nines ----------------------------------------------------------------------------------


def test_turbo_nines_a_charged_card_is_held_back_in_the_boost_round_of_the_first_trick_of_its_suit():
    rules = Rules.make("turbo-nines")
    state = new_game(rules).deal(deck_for(rules, BOOST_DEAL), "hold")
    assert state.seats_to_charge() == (2, 3) and state.charge_choices(2) == ("TC", "JD")
    state, _ = apply(state, ChargeCards(2, ("TC",)))
    state, _ = apply(state, ChargeCards(3, ("AH", "QS")))
    state = play(state, "2C 9C")
    assert state.legal_cards() == ("4C", "5C", "6C", "7C", "8C", "JC", "KC", "AC")
    state = play(state, "4C QC 3C 6D")
    assert state.boost_round and state.to_move == 2
    assert state.legal_cards() == ("5C", "6C", "7C", "8C", "JC", "KC", "AC")
    assert_refused(state, "TC", Reason.CHARGED_CARD_FIRST_TRICK_OF_SUIT, card="TC", suit="C",
                   legal=["5C", "6C", "7C", "8C", "JC", "KC", "AC"])


@pytest.mark.parametrize(("charges", "points", "multiplier"), [
    # seat 3 takes 25, JD and TC: (25 − 10) × 2; seat 2 takes QH
    ({}, (0, 0, 1, 30), (1, 1, 1, 2)),
    ({2: "TC"}, (0, 0, 1, 60), (1, 1, 1, 4)),
    ({2: "TC JD", 3: "AH QS"}, (0, 0, 2, 120), (1, 1, 1, 4)),  # (24 + 26 − 20) × 4
])
def test_a_whole_turbo_nines_hand(charges, points, multiplier):
    rules = Rules.make("turbo-nines")
    state = new_game(rules).deal(deck_for(rules, BOOST_DEAL), "hold")
    for seat in state.seats_to_charge():
        state, _ = apply(state, ChargeCards(seat, tuple(cards(charges.get(seat, "")))))
    state, events = play_logged(state, tricks(MIDDLE + LAST_TWO))
    hs = scored(events)
    assert hs.points == points and hs.multiplier == multiplier and state.tricks_played == 11
    assert sum(e.points for e in events if isinstance(e, TrickWon)) == state.moon_total


# -- snapshots and the move log ----------------------------------------------------------------------------------


def test_a_snapshot_in_the_boost_round_reads_back_and_plays_on_the_same():
    state = play(start(NINES, BOOST_DEAL), "2C 9C 4C QC 3C")
    d = json.loads(json.dumps(state.to_dict()))
    assert d["trick"] == cards("2C 9C 4C QC 3C")
    again = GameState.from_dict(d)
    assert again == state and again.boost_round and again.trick_boosted and again.to_move == 1
    assert again.legal_cards() == state.legal_cards()
    rest = tricks(MIDDLE + LAST_TWO)[5:]
    one, ev_one = play_logged(state, rest)
    two, ev_two = play_logged(again, rest)
    assert one == two and ev_one == ev_two


def test_a_logged_booster_game_replays_exactly():
    rules = Rules.make("turbo-nines")
    moves: list = [Deal(deck_for(rules, BOOST_DEAL), "hold")]
    state, _ = apply(new_game(rules), moves[0])
    for seat in state.seats_to_charge():
        moves.append(ChargeCards(seat, ()))
        state, _ = apply(state, moves[-1])
    for card in tricks(MIDDLE + BOOSTED_END):
        moves.append(PlayCard(state.to_move, card))
        state, _ = apply(state, moves[-1])
    assert state.phase == DEAL and state.tricks_played == 10
    logged = [move_from_dict(json.loads(json.dumps(move_to_dict(m)))) for m in moves]
    assert replay(rules, logged) == state


# -- the leader in the boost round, and the kitty ----------------------------------------------------------------

# Seat 0's only club is the 2C it leads; seat 2's only diamond is the 9D it leads in trick 2.
LEADER_DEAL = {
    0: "2C 3D 6D 7D 8D 2S 2H 3H 4H 3S 4S 5S 6S",
    1: "4C 6C 7C 9C 4D TD JD QD 5H 6H 7H 7S 8S",
    2: "8C TC KC AC 9D 8H 9H TH JH QH KH AH 9S",
    3: "3C 5C JC QC 2D 5D KD AD TS JS QS KS AS",
}
LEADER_1 = "2C 9C AC 3C 2S 4C KC 5C"  # 9C follows; seat 0, out of clubs, plays again under rule 5
LEADER_2 = "9D 2D 3D 4D KH 5D 6D TD"  # 9D led; seat 2, out of diamonds, throws a heart; TD wins


def test_a_leader_without_the_led_suit_in_the_boost_round_of_the_first_trick_keeps_to_rule_5():
    state, events = play_logged(start(NINES, LEADER_DEAL), "2C 9C AC 3C")
    assert [e for e in events if isinstance(e, TrickBoosted)] == [TrickBoosted(1, 1, "9C")]
    # RULES.md §6.8: the boost round is a follow, the leader's card too: no club left, no penalty card
    no_points = ["3D", "6D", "7D", "8D", "2S", "3S", "4S", "5S", "6S"]
    assert state.to_move == 0 and state.boost_round and list(state.legal_cards()) == no_points
    for card in ("2H", "4H"):
        assert_refused(state, card, Reason.NO_POINTS_ON_FIRST_TRICK, card=card, legal=no_points)
    state, events = play_logged(state, "2S 4C KC 5C")
    # AC, from the first round, is still the best club of the eight; 2S (another suit) never wins
    assert [e for e in events if isinstance(e, TrickWon)] == [TrickWon(1, 0, tuple(cards(LEADER_1)), 2, 0, True)]


def test_a_leader_without_the_led_suit_in_the_boost_round_may_play_any_card_a_heart_before_hearts_are_broken():
    state = play(start(NINES, LEADER_DEAL), LEADER_1)
    assert state.to_move == 2 and not state.hearts_broken
    assert state.legal_cards() == ("8C", "TC", "9D", "9S")  # a lead: no heart yet
    state = play(state, "9D 2D 3D 4D")
    assert state.to_move == 2 and state.boost_round
    assert state.legal_cards() == state.hand(2) and "KH" in state.legal_cards()  # a follow: anything
    state, events = play_logged(state, "KH")
    assert [e for e in events if isinstance(e, HeartsBroken)] == [HeartsBroken(2, "KH")]
    state, events = play_logged(state, "5D 6D TD")
    assert [e for e in events if isinstance(e, TrickWon)] == [TrickWon(2, 2, tuple(cards(LEADER_2)), 1, 1, True)]
    assert state.to_move == 1 and [len(state.hand(s)) for s in range(4)] == [9] * 4
    # the rest of the hand: each trick of n or 2n cards, until every hand is empty
    state, more = play_out(state)
    won = [e for e in events + more if isinstance(e, TrickWon)]
    boosts = [e for e in more if isinstance(e, TrickBoosted)]
    assert sum(len(e.cards) for e in won) == 9 * 4 + 8
    assert state.tricks_played == 2 + 9 - len(boosts) and state.phase == DEAL
    assert sum(e.points for e in won) == 26 == sum(scored(more).points)


# The same deal with four cards in the kitty (RULES.md §6.2 penalty: 12 each): KH, thrown in the boost
# round of trick 2, is the first penalty card taken.
KITTY = "4H 8S 9S AS"
KITTY_DEAL = {s: " ".join(c for c in cards(h) if c not in cards(KITTY)) for s, h in LEADER_DEAL.items()}


def test_a_penalty_card_in_the_boost_round_takes_the_kitty_with_the_trick():
    rules = Rules.make("kitty", booster_nines=True)
    state = new_game(rules).deal(kitty_deck(rules, KITTY, KITTY_DEAL), "hold")
    state, events = play_logged(state, LEADER_1 + " " + LEADER_2)
    assert [e for e in events if isinstance(e, KittyTaken)] == [KittyTaken(1, 2)]
    assert state.kitty_taker == 1 and state.kitty_trick == 2
    assert state.points == (0, 1 + 1, 0, 0)  # KH and the kitty's 4H
    assert seat_view(state, 0)["points_taken"] == [0, 1, 0, 0]  # the kitty lies face down
    assert [len(state.hand(s)) for s in range(4)] == [8] * 4
    state, more = play_out(state)
    won = [e for e in events + more if isinstance(e, TrickWon)]
    assert sum(len(e.cards) for e in won) == 48 and state.phase == DEAL and not any(state.hands)
    # the kitty's cards count: every penalty card in play is in somebody's tricks
    assert sum(state.points) == 26 and sum(e.points for e in won) == 25


def test_kitty_exchange_after_a_boosted_trick():
    rules = Rules.make("kitty", booster_nines=True, kitty_exchange=True)
    state = new_game(rules).deal(kitty_deck(rules, KITTY, KITTY_DEAL), "hold")
    state = play(state, LEADER_1 + " " + LEADER_2)
    # the taker holds the kitty and discards as many before the next lead (RULES.md §6.2, §6.8)
    assert state.phase == DISCARD and state.kitty_taker == 1 and state.seats_to_act() == (1,)
    assert [len(state.hand(s)) for s in range(4)] == [8, 12, 8, 8] and set(cards(KITTY)) <= set(state.hand(1))
    discard = ("JD", "QD", "5H", "6H")
    state, events = apply(state, DiscardKitty(1, discard))
    assert events == (KittyDiscarded(1),)
    assert state.phase == PLAY and state.to_move == 1 and [len(state.hand(s)) for s in range(4)] == [8] * 4
    assert state.points[1] == 1 + 1 + 1  # KH and the two hearts discarded
    state, more = play_out(state)
    assert state.phase == DEAL and not any(state.hands)
    assert sum(state.points) == 26
    assert sum(len(e.cards) for e in more if isinstance(e, TrickWon)) == 32  # the rest of the 8 each
