"""Cancellation Hearts (RULES.md §6.6, §6.8) from hand-built deals: the ``decks`` option, the preset and
what two decks refuse; hand and kitty sizes for 6 to 10 players; a hand holding both copies of a card
(playing and passing them); the unrestricted opening lead; identical cards cancelling each other, a fully
cancelled trick carried to the next trick's winner (several in a row, the kitty with them), the last
trick with no winner going to the winner of the trick before it; the moon needing both copies of every
penalty card (M = 52) and the bonus card counted per copy; snapshots, views and replays with a carried
pile on the table.

The decks are laid out by ``helpers.two_deck_deck`` from RULES.md §6.6 and §6.2 (the leftovers,
``104 % players`` cards, first, then one card at a time clockwise from the dealer's left). Expected
values are worked out here from the rules, not from the engine.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from pbem.engine import (
    PASS,
    PLAY,
    PRESETS,
    CardPlayed,
    Deal,
    GameState,
    HandScored,
    HeartsBroken,
    IllegalMove,
    InvalidRules,
    KittyTaken,
    Moon,
    PassCards,
    PlayCard,
    Reason,
    Rules,
    TrickCancelled,
    TrickWon,
    apply,
    deck_in_play,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
    shuffled_deck,
    trick_winner,
)

from .helpers import ALL_CARDS, assert_refused, canon, cards, lowest_legal, play_logged, play_out, two_deck_deck, \
    two_deck_start
from .reference import card_value, two_deck_moon_total, two_deck_winner

R8 = Rules.make("cancellation")  # 8 players, 13 cards each, no kitty; hand 1: dealer 7, seat 0 leads
D_VOIDS = {4: "D", 5: "D", 6: "D", 7: "D"}


def rules(players: int, **options) -> Rules:
    return Rules.make("cancellation", players=players, **options)


def value(rules_: Rules, cs) -> int:
    return sum(card_value(rules_, c) for c in cs)


def names(indices) -> tuple[str, ...]:
    return tuple(ALL_CARDS[i] for i in indices)


def hands_from_tricks(tricks: list[str], extra: dict[int, str] | None = None) -> dict[int, list[str]]:
    """The hands that hold, seat by seat, the cards of ``tricks`` (each written in seat order 0, 1, …:
    seat 0 leads every one of them), plus ``extra``."""
    out: dict[int, list[str]] = {}
    for trick in tricks:
        for seat, card in enumerate(cards(trick)):
            out.setdefault(seat, []).append(card)
    for seat, more in (extra or {}).items():
        out.setdefault(seat, []).extend(cards(more))
    return out


def play(state, seq):
    return play_logged(state, seq)[0]


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def scored(events) -> HandScored:
    found = of(events, HandScored)
    assert len(found) == 1
    return found[0]


# -- the options and refusals --------------------------------------------------------------------------


def test_preset_values():
    assert PRESETS["cancellation"] == {"decks": 2, "players": 8, "first_lead": "left_of_dealer",
                                       "no_pts_on_first_trick": False, "pass_cycle": ("left", "right")}
    r = Rules.make("cancellation")
    assert (r.decks, r.players, r.first_lead, r.no_pts_on_first_trick) == (2, 8, "left_of_dealer", False)
    assert r.must_break_hearts and r.pass_cycle == ("left", "right") and r.removed_cards == ()
    assert r.table.moon_total == 52 == two_deck_moon_total(r)
    assert r.kitty == "none" and r.table.kitty_form == "first_trick"
    assert Rules().decks == 1 and new_game(Rules()).decks == 1 and new_game(r).decks == 2


@pytest.mark.parametrize(("players", "hand_size", "kitty_size"),
                         [(6, 17, 2), (7, 14, 6), (8, 13, 0), (9, 11, 5), (10, 10, 4)])
def test_hand_and_kitty_sizes(players, hand_size, kitty_size):
    r = rules(players)
    assert (r.table.hand_size, r.table.kitty_size) == (hand_size, kitty_size)
    assert hand_size * players + kitty_size == 104
    deck = deck_in_play(r)
    assert Counter(deck) == Counter({c: 2 for c in ALL_CARDS})
    shuffled = shuffled_deck(r, random.Random(players))
    assert Counter(shuffled) == Counter(deck)
    state = new_game(r).deal(shuffled, "hold")
    assert [len(state.hand(s)) for s in range(players)] == [hand_size] * players
    assert len(state.kitty) == kitty_size and Counter(state.kitty) == Counter(shuffled[:kitty_size])
    assert state.kitty_taker is None and state.to_move == 0  # hand 1: left of the dealer (seat n - 1)
    # the deal: the leftovers first, then one card at a time clockwise from the dealer's left
    for seat in range(players):
        assert Counter(state.hand(seat)) == Counter(shuffled[kitty_size + seat::players])


@pytest.mark.parametrize(("options", "code", "details"), [
    ({"players": 5}, "TWO_DECKS_NEED_PLAYERS", {"players": 5, "allowed": [6, 10]}),
    ({"players": 11}, "TWO_DECKS_NEED_PLAYERS", {"players": 11, "allowed": [6, 10]}),
    ({"players": 4}, "TWO_DECKS_NEED_PLAYERS", {"players": 4, "allowed": [6, 10]}),
    ({"decks": 3}, "BAD_CHOICE", {"option": "decks", "value": 3, "choices": [1, 2]}),
    ({"decks": 0}, "BAD_CHOICE", {"option": "decks", "value": 0, "choices": [1, 2]}),
    ({"first_lead": "two_of_clubs"}, "NOT_WITH_TWO_DECKS", {"option": "first_lead", "value": "two_of_clubs"}),
    ({"first_lead": "any_club"}, "NOT_WITH_TWO_DECKS", {"option": "first_lead", "value": "any_club"}),
    ({"turbo": True}, "NOT_WITH_TWO_DECKS", {"option": "turbo", "value": True}),
    ({"booster_nines": True}, "NOT_WITH_TWO_DECKS", {"option": "booster_nines", "value": True}),
    ({"kitty_exchange": True}, "NOT_WITH_TWO_DECKS", {"option": "kitty_exchange", "value": True}),
    ({"pass_optional": True}, "NOT_WITH_TWO_DECKS", {"option": "pass_optional", "value": True}),
    ({"dealer_calls_pass": True}, "NOT_WITH_TWO_DECKS", {"option": "dealer_calls_pass", "value": True}),
    ({"removed_cards": ["2C"]}, "NOT_WITH_TWO_DECKS", {"option": "removed_cards", "value": ["2C"]}),
    ({"removed_cards": ["2D", "2C"]}, "NOT_WITH_TWO_DECKS", {"option": "removed_cards", "value": ["2C", "2D"]}),
    ({"pass_cycle": ["left", "mix"]}, "NOT_WITH_TWO_DECKS", {"option": "pass_cycle", "value": "mix"}),
    ({"kitty": "first_trick"}, "KITTY_NEEDS_PLAYERS", {"kitty": "first_trick", "players": 8, "allowed": [3, 5]}),
    ({"kitty": "penalty"}, "KITTY_NEEDS_PLAYERS", {"kitty": "penalty", "players": 8, "allowed": [4]}),
    ({"partnership": "team"}, "PARTNERSHIP_NEEDS_FOUR_PLAYERS", {"players": 8}),
])
def test_refusals(options, code, details):
    with pytest.raises(InvalidRules) as info:
        Rules.make("cancellation", **options)
    assert info.value.code == code and info.value.details == details


def test_eight_players_need_two_decks_and_two_decks_need_a_free_opening_lead():
    with pytest.raises(InvalidRules) as info:
        Rules.make("standard", players=8)
    assert info.value.code == "BAD_PLAYERS" and info.value.details == {"players": 8}
    # the standard game's 2C lead is refused with two decks (two players would hold a 2C)
    with pytest.raises(InvalidRules) as info:
        Rules.make("standard", players=8, decks=2)
    assert info.value.code == "NOT_WITH_TWO_DECKS" and info.value.details == {"option": "first_lead",
                                                                              "value": "two_of_clubs"}
    r = Rules.make("standard", players=6, decks=2, first_lead="left_of_dealer")
    assert r.removed_cards == () and r.table.hand_size == 17 and r.table.moon_total == 52


def test_allowed_combinations():
    for options in ({"players": 6, "pass_cycle": ["left", "right", "across"]}, {"players": 10, "moon": "new"},
                    {"jd_bonus": -10}, {"sun": True, "moon": "choice"}, {"pass_count": 0},
                    {"must_break_hearts": False, "qs_breaks_hearts": True}):
        Rules.make("cancellation", **options)


# -- holding both copies -------------------------------------------------------------------------------

COPIES = {0: "2C 5D QS QS 2H 2H AS KH", 1: "KS 3C 3C", 2: "AS"}


def test_a_hand_names_a_card_held_twice_twice():
    state = two_deck_start(R8, COPIES)
    hand = state.hand(0)
    assert len(hand) == 13 and Counter(hand)["QS"] == 2 and Counter(hand)["2H"] == 2
    assert list(hand) == canon(hand)  # canonical order, the two copies adjacent
    assert hand[hand.index("QS") + 1] == "QS"
    twice = {c for c, m in Counter(hand).items() if m == 2}
    assert state.doubles(0) == sum(1 << ALL_CARDS.index(c) for c in twice)
    assert state.hand_mask(0) == sum(1 << ALL_CARDS.index(c) for c in set(hand))
    legal = state.legal_cards()
    assert sorted(legal) == sorted(set(hand)) and len(legal) == len(set(legal))  # each card once
    view = seat_view(state, 0)
    assert view["hand"] == list(hand) and view["decks"] == 2 and view["carried"] == []
    assert view["legal"] == list(legal)


def test_playing_a_card_held_twice_plays_one_copy():
    state = two_deck_start(R8, COPIES)
    state, events = play_logged(state, "QS")  # the opening lead: any card
    assert events == [CardPlayed(0, "QS", 1)]
    assert Counter(state.hand(0))["QS"] == 1 and not state.doubles(0) >> ALL_CARDS.index("QS") & 1
    assert state.hand_mask(0) >> ALL_CARDS.index("QS") & 1
    assert len(state.hand(0)) == 12
    state = play(state, "KS")  # seat 1 follows
    assert Counter(state.hand(0))["QS"] == 1


def pass_deal(pass_direction: str = "left"):
    return new_game(R8).deal(two_deck_deck(R8, COPIES), pass_direction)


def test_passing_both_copies():
    state = pass_deal()
    assert state.phase == PASS
    state, _ = apply(state, PassCards(0, ("QS", "QS", "AS")))  # to the left: seat 1
    assert "QS" not in state.hand(0) and "AS" not in state.hand(0) and len(state.hand(0)) == 10
    assert not state.doubles(0) >> ALL_CARDS.index("QS") & 1
    for seat in range(1, 8):
        keep = {1: ["KS", "3C"], 2: ["AS"]}.get(seat, [])
        state, _ = apply(state, PassCards(seat, tuple(c for c in state.hand(seat) if c not in keep)[:3]))
    assert state.phase == PLAY
    assert state.received_cards(1) == ("QS", "QS", "AS")
    hand1 = Counter(state.hand(1))
    assert hand1["QS"] == 2 and hand1["3C"] == 2 and hand1["AS"] == 1
    assert state.doubles(1) >> ALL_CARDS.index("QS") & 1 and state.doubles(1) >> ALL_CARDS.index("3C") & 1
    assert seat_view(state, 1)["received"] == ["QS", "QS", "AS"]


def test_a_received_twin_makes_a_pair():
    state = new_game(R8).deal(two_deck_deck(R8, {0: "KS 2H QS", 1: "KS 3D"}), "left")
    assert Counter(state.hand(1))["KS"] == 1 and not state.doubles(1) >> ALL_CARDS.index("KS") & 1
    for seat in range(8):
        chosen = ("KS", "2H", "QS") if seat == 0 else tuple(c for c in state.hand(seat) if c != "KS")[:3]
        state, _ = apply(state, PassCards(seat, chosen))
    assert Counter(state.hand(1))["KS"] == 2
    assert state.doubles(1) >> ALL_CARDS.index("KS") & 1
    assert Counter(state.received_cards(1))["KS"] == 1
    assert Counter(seat_view(state, 1)["hand"])["KS"] == 2


def test_naming_a_card_more_often_than_held_is_refused():
    state = pass_deal()  # seat 0: 2C 5D QS QS 2H 2H AS KH and filler
    assert Counter(state.hand(0))["AS"] == 1
    assert_refused(state, lambda s: s.pass_cards(0, ("QS", "QS", "QS")), Reason.DUPLICATE_CARD, card="QS")
    assert_refused(state, lambda s: s.pass_cards(0, ("AS", "AS", "2H")), Reason.DUPLICATE_CARD, card="AS")
    assert_refused(state, lambda s: s.pass_cards(0, ("2H", "2H", "2H")), Reason.DUPLICATE_CARD, card="2H")
    missing = next(c for c in ALL_CARDS if c not in state.hand(0))
    with pytest.raises(IllegalMove) as info:
        state.pass_cards(0, (missing, "QS", "QS"))
    assert info.value.reason == Reason.CARD_NOT_IN_HAND
    # both copies and one of another card: fine
    after = state.pass_cards(0, ("2H", "2H", "QS"))
    assert Counter(after.hand(0))["QS"] == 1 and "2H" not in after.hand(0)


# -- the opening lead and breaking hearts --------------------------------------------------------------


def test_the_opening_lead_is_unrestricted_a_heart_may_be_led():
    state = two_deck_start(R8, {0: "2C 2H KH QS 5D"})
    assert not state.hearts_broken
    assert {"2H", "KH", "QS", "2C"} <= set(state.legal_cards())
    state, events = play_logged(state, "KH")
    assert HeartsBroken(0, "KH") in events and state.hearts_broken


def test_after_the_opening_lead_hearts_must_be_broken():
    # trick 1: clubs only; seat 7 wins with AC and leads trick 2 holding hearts and diamonds
    trick = "2C 3C 4C 5C 6C 7C 8C AC"
    state = two_deck_start(R8, hands_from_tricks([trick], {7: "2H 3H 4D"}))
    state, events = play_logged(state, trick)
    assert of(events, TrickWon)[0].winner == 7 and not state.hearts_broken
    assert state.to_move == 7
    legal = state.legal_cards()
    assert "4D" in legal and not [c for c in legal if c[1] == "H"]
    assert_refused(state, "2H", Reason.HEARTS_NOT_BROKEN, card="2H", legal=list(legal))


def test_the_lead_again_after_a_cancelled_first_trick_is_not_the_opening_lead():
    # trick 1: 5D 5D and 9D 9D cancel, seats 4 to 7 have no diamond: carried; seat 0 leads again, hearts
    # still unbroken
    trick = "5D 5D 9D 9D 2C 3C 4C 6C"
    state = two_deck_start(R8, hands_from_tricks([trick], {0: "2H 9S"}), voids=D_VOIDS)
    state, events = play_logged(state, trick)
    assert of(events, TrickCancelled) and state.to_move == 0 and not state.hearts_broken
    legal = state.legal_cards()
    assert "9S" in legal and not [c for c in legal if c[1] == "H"]
    assert_refused(state, "2H", Reason.HEARTS_NOT_BROKEN, card="2H", legal=list(legal))


def test_a_heart_in_a_cancelled_trick_breaks_hearts():
    trick = "5D 5D 9D 9D 2H 3C 4C 6C"
    state = two_deck_start(R8, hands_from_tricks([trick], {0: "3H 9S"}), voids=D_VOIDS)
    state, events = play_logged(state, trick)
    assert HeartsBroken(4, "2H") in events and of(events, TrickCancelled)
    assert "3H" in state.legal_cards()


# -- which card wins ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("trick", "voids", "winner"), [
    ("2C 3C 4C 5C 6C 7C 8C AC", "", 7),  # no twins: the highest club
    ("AC AC KC 2C 3C 4C 5C 6C", "", 2),  # the highest is cancelled: the lower single KC wins
    ("KC 2C AC 3C 4C AC 5C 6C", "", 0),  # twins apart in the trick cancel too
    ("KD KD QD QD 2D 2D JD 9D", "", 6),  # three pairs cancel, the best single left wins
    ("5D AS AS 3D 3D QH QH 4D", "1 2 5 6", 0),  # off-suit twins do not matter; 3D 3D cancel; 5D beats 4D
    ("4D AD AD 3D KH 5S 5S 2D", "4 5 6", 0),  # the led suit's ace twice cancels: 4D is the best left
    ("QH QH 5H 9H 9H KH KH 2C", "7", 2),  # a heart led first (the opening lead is free); 5H alone left
    ("5D 5D 9D 9D AS QS QH 2S", "4 5 6 7", None),  # every diamond cancelled
])
def test_identical_cards_cancel_the_highest_card_left_wins(trick, voids, winner):
    played = cards(trick)
    led = played[0][1]
    void_seats = {int(s): led for s in voids.split()}
    assert two_deck_winner(played, 0, 8) == winner  # the reference agrees with the table above
    state = two_deck_start(R8, hands_from_tricks([trick]), voids=void_seats)
    state, events = play_logged(state, trick)
    pts = value(R8, played)
    if winner is None:
        assert of(events, TrickCancelled) == [TrickCancelled(1, 0, tuple(played), pts)]
        assert not of(events, TrickWon)
    else:
        assert of(events, TrickWon) == [TrickWon(1, 0, tuple(played), winner, pts, False, (), False)]
        assert not of(events, TrickCancelled) and state.to_move == winner
        assert state.points[winner] == pts and state.tricks_won[winner] == 1
    assert trick_winner(played, 0, 8) == winner


# -- a fully cancelled trick is carried -----------------------------------------------------------------

T1 = "5D 5D 9D 9D AS QS QH 2S"  # every diamond cancelled; QS and QH: 14 points stay on the table
T2 = "3C 3C 7C 7C 8C 8C JC JC"  # every club cancelled: no points
T3 = "4C KC 5C 6C 9C TC 2C QC"  # KC (seat 1) wins, and the cards of T1 and T2


def carried_start(tricks):
    return two_deck_start(R8, hands_from_tricks(tricks), voids=D_VOIDS)


def test_a_cancelled_trick_stays_on_the_table_and_its_leader_leads_again():
    state = carried_start([T1, T3])
    state, events = play_logged(state, T1)
    assert of(events, TrickCancelled) == [TrickCancelled(1, 0, tuple(cards(T1)), 14)]
    assert not of(events, TrickWon) and not of(events, KittyTaken)
    assert state.to_move == 0 and state.leader == 0 and state.trick == ()
    assert state.tricks_played == 1
    leader, trick, winner, points = state.last_trick
    assert (leader, names(trick), winner, points) == (0, tuple(cards(T1)), -1, 14)
    assert state.carried == tuple(cards(T1)) and state.carried_tricks == 1
    assert state.last_carried == () and not state.last_trick_cancelled
    assert state.points == (0,) * 8 and state.tricks_won == (0,) * 8
    assert state.taken_cards() == ((),) * 8
    # every seat's view shows the pile (it is public)
    for seat in range(8):
        view = seat_view(state, seat)
        assert view["carried"] == cards(T1) and view["last_trick"]["winner"] == -1
    # the cards are in nobody's hand any more: 13 - 1 each
    assert [len(state.hand(s)) for s in range(8)] == [12] * 8


def test_the_carried_pile_and_its_points_go_to_the_next_trick_winner():
    state = carried_start([T1, T3])
    state = play(state, T1)
    state, events = play_logged(state, T3)
    won = of(events, TrickWon)
    assert won == [TrickWon(2, 0, tuple(cards(T3)), 1, 14, False, tuple(cards(T1)), False)]
    assert state.carried == () and state.carried_tricks == 0
    assert state.points[1] == 14 and sum(state.points) == 14
    assert state.tricks_won[1] == 2 and sum(state.tricks_won) == 2  # the carried trick counts for its taker
    assert Counter(state.taken_cards()[1]) == Counter(cards(T1) + cards(T3))
    assert state.to_move == 1 and state.tricks_played == 2


def test_several_cancelled_tricks_in_a_row_accumulate():
    state = carried_start([T1, T2, T3])
    state = play(state, T1)
    state, events = play_logged(state, T2)
    assert of(events, TrickCancelled) == [TrickCancelled(2, 0, tuple(cards(T2)), 0)]
    assert state.carried == tuple(cards(T1) + cards(T2)) and state.carried_tricks == 2
    assert state.to_move == 0 and state.tricks_played == 2
    state, events = play_logged(state, T3)
    assert of(events, TrickWon) == [TrickWon(3, 0, tuple(cards(T3)), 1, 14, False, tuple(cards(T1) + cards(T2)), False)]
    assert state.tricks_won == (0, 3, 0, 0, 0, 0, 0, 0)
    assert state.last_carried == tuple(cards(T1) + cards(T2)) and not state.last_trick_cancelled
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state and again.last_carried == state.last_carried
    assert Counter(state.taken_cards()[1]) == Counter(cards(T1) + cards(T2) + cards(T3))
    # the rest of the hand: every penalty point in play is taken, the hand is scored
    state, events = play_out(state)
    assert sum(scored(events).tricks_won) == 13


def test_snapshot_view_and_replay_with_a_carried_pile():
    state = carried_start([T1, T2, T3])
    deck = state.deck
    moves = [Deal(deck, "hold")]
    for card in cards(T1) + cards(T2) + cards(T3)[:3]:
        moves.append(PlayCard(state.to_move, card))
        state, _ = apply(state, moves[-1])
    assert state.carried_tricks == 2 and len(state.trick) == 3
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state and type(again) is type(state)
    assert again.carried == state.carried and again.carried_tricks == 2 and again.hand(0) == state.hand(0)
    assert [again.doubles(s) for s in range(8)] == [state.doubles(s) for s in range(8)]
    # both go on the same way
    a, ea = play_logged(state, cards(T3)[3:])
    b, eb = play_logged(again, cards(T3)[3:])
    assert a == b and ea == eb and a.tricks_won[1] == 3
    logged = [move_from_dict(json.loads(json.dumps(move_to_dict(m)))) for m in moves]
    assert replay(R8, logged) == state
    # the whole hand, then the log again
    full, _ = play_out(a)
    rest = []
    s = state
    for card in cards(T3)[3:]:
        rest.append(PlayCard(s.to_move, card))
        s, _ = apply(s, rest[-1])
    while s.phase == PLAY:
        rest.append(PlayCard(s.to_move, lowest_legal(s)))
        s, _ = apply(s, rest[-1])
    assert s == full and replay(R8, logged + rest) == full


# -- the kitty with a cancelled first trick (6 players: 17 cards each, a kitty of 2) -------------------

R6 = rules(6)
K1 = "5D 5D 9D 9D AS 2S"  # seats 4 and 5 have no diamond: every diamond cancelled
K2 = "3C 4C AC 5C 6C 7C"  # AC (seat 2) wins trick 2, the carried trick 1 and the kitty


def test_the_kitty_goes_with_a_cancelled_first_trick_to_the_next_winner():
    state = two_deck_start(R6, hands_from_tricks([K1, K2]), kitty="QS QS", voids={4: "D", 5: "D"})
    assert state.kitty == ("QS", "QS") and state.kitty_taker is None
    state, events = play_logged(state, K1)
    assert of(events, TrickCancelled) and not of(events, KittyTaken) and state.kitty_taker is None
    state, events = play_logged(state, K2)
    won = of(events, TrickWon)
    assert won == [TrickWon(2, 0, tuple(cards(K2)), 2, 0, False, tuple(cards(K1)), False)]
    assert of(events, KittyTaken) == [KittyTaken(2, 2)]
    assert events.index(won[0]) < events.index(KittyTaken(2, 2))
    assert state.kitty_taker == 2 and state.kitty_trick == 2
    assert state.points[2] == 26 and state.tricks_won[2] == 2
    assert Counter(state.taken_cards()[2]) == Counter(cards(K1) + cards(K2) + ["QS", "QS"])
    # only the taker sees the kitty; the others see the tricks without it, and its points hidden
    mine = seat_view(state, 2)
    assert mine["kitty"] == ["QS", "QS"] and mine["points_taken"][2] == 26
    assert Counter(mine["taken"][2]) == Counter(cards(K1) + cards(K2) + ["QS", "QS"])
    for seat in (0, 1, 3, 4, 5):
        view = seat_view(state, seat)
        assert view["kitty"] == [] and view["kitty_taker"] == 2
        assert Counter(view["taken"][2]) == Counter(cards(K1) + cards(K2))
        assert view["points_taken"][2] == 0 and "QS" not in json.dumps(view["taken"])
    # once the hand is scored the kitty is no secret
    state, events = play_out(state)
    assert state.phase in ("deal", "over")
    assert seat_view(state, 0)["kitty"] == ["QS", "QS"]


def test_the_kitty_goes_to_the_first_trick_winner():
    trick = "2C 3C 4C 5C AC 6C"
    state = two_deck_start(R6, hands_from_tricks([trick]), kitty="KH 2H")
    state, events = play_logged(state, trick)
    assert of(events, KittyTaken) == [KittyTaken(4, 1)]
    assert of(events, TrickWon)[0].points == 0  # the event does not tell the kitty's points
    assert state.points[4] == 2 and not state.hearts_broken  # the kitty's hearts broke nothing


# -- the last trick with no winner ---------------------------------------------------------------------


def twin_deal(n: int, kitty: list[str], first: dict[int, str]):
    """A deal where seats (0, 1), (2, 3), … hold identical hands once the cards of ``first`` (seat ->
    card, the first trick) are played: then each of the twins plays the same card as the other when
    both play their lowest legal card, and every later trick is fully cancelled."""
    size = (104 - len(kitty)) // n
    special = Counter(kitty) + Counter(first.values())
    assert all(m == 2 for m in special.values())
    rest = [c for c in ALL_CARDS if c not in special]
    hands: dict[int, list[str]] = {}
    for p in range(n // 2):
        common = rest[:size - 1]
        rest = rest[size - 1:]
        for seat in (2 * p, 2 * p + 1):
            hands[seat] = [first[seat]] + common
    assert not rest
    return hands


def test_the_last_trick_with_no_winner_goes_to_the_winner_of_the_trick_before_it():
    # 6 players: trick 1 2C (seat 0) and AC (seat 1) single, 5C 5C and 6C 6C cancel: seat 1 wins it and
    # the kitty (the other 2C and AC). Then seats 0 and 1, 2 and 3, 4 and 5 hold identical hands: every
    # trick is cancelled; the last one (17) goes with all of them to seat 1, who won trick 1.
    first = {0: "2C", 1: "AC", 2: "5C", 3: "5C", 4: "6C", 5: "6C"}
    hands = twin_deal(6, ["2C", "AC"], first)
    state = two_deck_start(R6, hands, kitty="2C AC")
    state, events = play_logged(state, "2C AC 5C 5C 6C 6C")
    assert of(events, TrickWon)[0].winner == 1 and of(events, KittyTaken) == [KittyTaken(1, 1)]
    for seat in (0, 2, 4):
        assert state.hand(seat) == state.hand(seat + 1)
    state, events = play_out(state)
    cancelled = of(events, TrickCancelled)
    assert [e.trick_no for e in cancelled] == list(range(2, 17)) and all(e.leader == 1 for e in cancelled)
    last = of(events, TrickWon)
    assert len(last) == 1
    last = last[0]
    carried = tuple(c for e in cancelled for c in e.cards)
    assert (last.trick_no, last.leader, last.winner, last.cancelled) == (17, 1, 1, True)
    assert last.carried == carried and two_deck_winner(last.cards, 1, 6) is None
    assert last.points == value(R6, carried + last.cards)
    assert state.last_trick_cancelled and state.last_carried == carried
    assert state.last_trick[2] == 1 and names(state.last_trick[1]) == last.cards
    hs = scored(events)
    assert hs.tricks_won == (0, 17, 0, 0, 0, 0)
    # seat 1 took all 104 cards: both copies of every penalty card, a moon of M = 52
    assert hs.moon == Moon(1, "moon", "old") and hs.points == (52, 0, 52, 52, 52, 52)


def test_a_hand_where_no_trick_has_a_winner_goes_to_the_last_trick_leader():
    # 8 players in twin pairs from the start: every trick is cancelled, the last goes to its leader
    # (the engine's reading where "the trick before it" had no winner either: engine_api.md)
    hands = twin_deal(8, [], {0: "2C", 1: "2C", 2: "3C", 3: "3C", 4: "4C", 5: "4C", 6: "5C", 7: "5C"})
    state = two_deck_start(R8, hands)
    state, events = play_out(state)
    assert len(of(events, TrickCancelled)) == 12
    last = of(events, TrickWon)[0]
    assert (last.trick_no, last.winner, last.cancelled) == (13, 0, True) and last.points == 52
    assert len(last.carried) == 12 * 8
    hs = scored(events)
    assert hs.tricks_won == (13, 0, 0, 0, 0, 0, 0, 0) and hs.moon == Moon(0, "moon", "old")


def test_a_moon_with_a_cancelled_last_trick_under_new_moon_and_the_bonus_per_copy():
    r = rules(6, moon="new", jd_bonus=-10)
    first = {0: "2C", 1: "AC", 2: "5C", 3: "5C", 4: "6C", 5: "6C"}
    state = two_deck_start(r, twin_deal(6, ["2C", "AC"], first), kitty="2C AC")
    state, events = play_out(play(state, "2C AC 5C 5C 6C 6C"))
    hs = scored(events)
    assert hs.moon == Moon(1, "moon", "new") and hs.points == (0, -52 - 20, 0, 0, 0, 0)


# -- the moon needs both copies of every penalty card ---------------------------------------------------

# 6 players. Seat 0 holds a 2C and both copies of 7C to AC: it wins every club trick it leads. Seat 1
# holds the other nine clubs (the other 2C, both 3C to 6C); seats 2 to 5 have no club.
SWEEP = "2C 7C 7C 8C 8C 9C 9C TC TC JC JC QC QC KC KC AC AC"
LOW = "2C 3C 3C 4C 4C 5C 5C 6C 6C"
NO_CLUBS = {s: "C" for s in (2, 3, 4, 5)}


def test_a_moon_takes_both_copies_of_every_penalty_card():
    r = rules(6, jd_bonus=-10)
    state = two_deck_start(r, {0: SWEEP, 1: LOW, 2: "JD", 3: "JD"}, kitty="2D 3D", voids=NO_CLUBS)
    # seat 0 leads 2C, seat 1's 2C cancels it: trick 1 (and the kitty) is carried; seat 0 leads 7C and wins
    # every trick from then on (nobody else has 7C to AC)
    state, events = play_out(state)
    assert of(events, TrickCancelled)[0].trick_no == 1 and of(events, KittyTaken) == [KittyTaken(0, 2)]
    assert {e.winner for e in of(events, TrickWon)} == {0}
    hs = scored(events)
    taken = state.taken_cards()[0]
    assert Counter(taken) == Counter({c: 2 for c in ALL_CARDS})
    assert sum(state.points) == 52 == state.points[0]
    assert hs.moon == Moon(0, "moon", "old") and hs.points == (-20, 52, 52, 52, 52, 52)  # both JD: -10 each


def test_one_copy_of_a_penalty_card_missed_is_no_moon():
    r = rules(6, jd_bonus=-10)
    # trick 1: seat 0 leads 2C, seat 1 wins with 3C; seat 2 throws 2H, seat 3 a JD. Seat 1 then leads a
    # club, seat 0 wins with 7C and every trick after: 51 of the 52 points, one copy of 2H missing.
    hands = {0: SWEEP, 1: LOW, 2: "2H", 3: "JD", 4: "4D", 5: "2S"}
    state = two_deck_start(r, hands, kitty="2D 3D", voids=NO_CLUBS)
    state, events = play_logged(state, "2C 3C 2H JD 4D 2S")
    state, more = play_out(state)
    events += more
    won = of(events, TrickWon)
    assert won[0].winner == 1 and {e.winner for e in won[1:]} == {0}
    hs = scored(events)
    took0 = Counter(state.taken_cards()[0])
    assert took0["2H"] == 1 and all(took0[c] == 2 for c in ALL_CARDS if card_value(r, c) and c != "2H")
    assert state.points[0] == 51 and state.points[1] == 1
    assert hs.moon is None
    jd = [Counter(state.taken_cards()[s])["JD"] for s in range(6)]
    assert jd[0] + jd[1] == 2 and jd[1] >= 1
    assert hs.points[0] == 51 - 10 * jd[0] and hs.points[1] == 1 - 10 * jd[1]
    assert hs.points[2:] == (0, 0, 0, 0)


def test_the_kitty_counts_for_the_moon():
    # as the sweep, but trick 1 goes to seat 1 (its 3C beats the 2C) with the kitty of both QS
    r = rules(6)
    hands = {0: SWEEP, 1: LOW}
    state = two_deck_start(r, hands, kitty="QS QS", voids=NO_CLUBS)
    state = play(state, "2C 3C")
    state, events = play_out(state)
    hs = scored(events)
    assert state.kitty_taker == 1 and state.points[1] == 26 + value(r, of(events, TrickWon)[0].cards[2:])
    assert hs.moon is None and sum(state.points) == 52


# -- a carried pile and the rest of the hand ------------------------------------------------------------


def test_with_sun_a_carried_pile_keeps_the_rest_of_the_hand_open():
    """``unplayed_can_change_score`` (the services play the rest of a hand automatically when it is False)
    must count a carried pile as tricks still to take: a seat that won every trick with a winner can
    still take every trick, a sun (RULES.md §3 ``sun``, §6.6), though no penalty card is left to play."""
    r = rules(6, sun=True)
    # Seat 0 leads AC AC KC KC QC QC JC and wins them: seats 2 to 5, without clubs, throw their seven
    # penalty cards each (every heart and both QS); seat 1 follows low. Trick 8: seat 0 leads 8C, seat 1's
    # 8C cancels it, nobody else has a club: carried with no points, and nothing scoring is left to play.
    hands = {0: "2C 6C 7C 7C 8C 9C 9C TC TC JC JC QC QC KC KC AC AC", 1: "2C 3C 3C 4C 4C 5C 5C 6C 8C",
             2: "2H 2H 3H 3H 4H 4H 5H", 3: "5H 6H 6H 7H 7H 8H 8H", 4: "9H 9H TH TH JH JH QH",
             5: "QH KH KH AH AH QS QS"}
    state = two_deck_start(r, hands, kitty="2D 3D", voids=NO_CLUBS)

    def follow(state):
        legal = state.legal_cards()
        twins = [c for c in legal if c in names(state.trick)]
        penalty = [c for c in legal if card_value(r, c) > 0]
        return (twins or penalty[-1:] or legal)[0]

    for lead in cards("AC AC KC KC QC QC JC 8C"):
        state = play(state, lead)
        while state.trick:
            state = play(state, follow(state))
    assert state.tricks_won == (7, 0, 0, 0, 0, 0) and state.tricks_played == 8 and state.carried_tricks == 1
    assert state.points[0] == 52 and state.to_move == 0
    # the rest decides whether seat 0 takes every trick: 6C (seat 1's 6C cancels it) and then 2C, a sun
    # (2M to each other seat); 2C first (seat 1's 6C wins it and the pile), only the moon (M each)
    scores = {}
    for first in ("6C", "2C"):
        s = play(state, first)
        while s.trick:
            s = play(s, follow(s))
        s, events = play_out(s, policy=lambda st: "2C" if st.to_move == 0 and "2C" in st.legal_cards()
                             else st.legal_cards()[0])
        scores[first] = scored(events)
    assert scores["6C"].moon == Moon(0, "sun", "old") and scores["6C"].points == (0,) + (104,) * 5
    assert scores["2C"].moon == Moon(0, "moon", "old") and scores["2C"].points == (0,) + (52,) * 5
    assert scores["2C"].tricks_won[0] < 17
    assert state.unplayed_can_change_score(), "a sun is still open: the rest of the hand is not to be auto-played"

