"""Card notation (RULES.md §1), the small public helpers, JSON snapshots, the move log and the
per-seat view, on hand-built positions in every phase."""

from __future__ import annotations

import json
import random

import pytest

from pbem.engine import (
    ChooseMoon,
    Deal,
    GameState,
    PassCards,
    PlayCard,
    Rules,
    apply,
    canonical,
    card_points,
    deck_in_play,
    event_to_dict,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
    shuffled_deck,
    trick_winner,
)

from .helpers import ALL_CARDS, cards, deck_for, play, play_out, start, sweep_hands
from .test_play_rules import D1

# -- notation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "card"), [
    ("QS", "QS"), ("qs", "QS"), (" th ", "TH"), ("10H", "TH"), ("10h", "TH"), ("Q♠", "QS"), ("♠Q", "QS"),
    ("A♥", "AH"), ("2♣", "2C"), ("K♦", "KD"), ("S10", "TS"), ("h10", "TH"), ("♡J", "JH"),
])
def test_canonical_accepts_compact_notations(text, card):
    assert canonical(text) == card


@pytest.mark.parametrize("text", ["", "Q", "QQ", "1S", "11S", "queen of spades", "ZZ", "QSX"])
def test_canonical_refuses_anything_else(text):
    with pytest.raises(ValueError):
        canonical(text)


def test_every_canonical_card_reads_as_itself():
    assert [canonical(c) for c in ALL_CARDS] == list(ALL_CARDS)


# -- helpers of the public API ----------------------------------------------------------------------


def test_trick_winner_is_the_highest_card_of_the_led_suit():
    assert trick_winner(cards("5D AS 9D 2D"), 1, 4) == 3
    assert trick_winner(cards("5D AS 4D 2D"), 1, 4) == 1
    assert trick_winner(cards("2C 3C AH"), 2, 3) == 0


def test_card_points_and_deck_in_play():
    assert card_points(Rules(), cards("QS 2H AH JD")) == 15
    assert card_points(Rules.make("black-maria"), cards("KS AS QS")) == 30
    assert deck_in_play(Rules(players=5)) == tuple(c for c in ALL_CARDS if c not in ("2C", "2D"))


def test_shuffled_deck_is_drawn_from_the_given_random():
    rules = Rules(players=6)
    a = shuffled_deck(rules, random.Random(5))
    assert a == shuffled_deck(rules, random.Random(5))
    assert sorted(a) == sorted(deck_in_play(rules)) and a != deck_in_play(rules)


# -- snapshots in every phase -------------------------------------------------------------------------


def _phases():
    """A state in each phase: before the deal, passing (some seats passed), playing (mid-trick),
    waiting for a moon choice, between hands, over."""
    rules = Rules(moon="choice", target=26)
    fresh = new_game(rules)
    passing = fresh.deal(deck_for(rules, D1)).pass_cards(2, cards("8S QS AS")).pass_cards(0, cards("2C 8C 2D"))
    playing = play(start(rules, D1), "2C 9C AS TC 4C 8C")
    moon, _ = play_out(start(rules, sweep_hands(rules, 1)))
    between, _ = play_out(start(Rules(), D1))
    over = moon.choose_moon(1, "old")
    return {"deal": fresh, "pass": passing, "play": playing, "moon": moon, "between": between, "over": over}


@pytest.mark.parametrize("name", ["deal", "pass", "play", "moon", "between", "over"])
def test_a_snapshot_through_json_is_the_same_state_and_plays_on_the_same(name):
    state = _phases()[name]
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state
    assert again.phase == state.phase and again.seats_to_act() == state.seats_to_act()
    assert again.legal_cards() == state.legal_cards()
    for seat in range(4):
        assert seat_view(again, seat) == seat_view(state, seat)
    if name == "pass":
        a = again.pass_cards(1, cards("7D 8D 9D")).pass_cards(3, cards("4C 5C 6C"))
        b = state.pass_cards(1, cards("7D 8D 9D")).pass_cards(3, cards("4C 5C 6C"))
        assert a == b and a.phase == "play"
    if name == "play":
        assert play_out(again)[0] == play_out(state)[0]
    if name == "moon":
        assert again.choose_moon(1, "new") == state.choose_moon(1, "new")


def test_the_snapshot_of_a_fresh_game_differs_from_a_dealt_one():
    phases = _phases()
    assert phases["deal"] != phases["pass"]
    assert phases["play"] != play(phases["play"], "3C")


# -- the move log --------------------------------------------------------------------------------------


def test_a_logged_game_with_passes_and_a_moon_choice_replays_exactly():
    rules = Rules(moon="choice", target=60)
    state = new_game(rules)
    log = []

    def do(move):
        nonlocal state
        state, _ = apply(state, move)
        log.append(move)

    do(Deal(deck_for(rules, D1)))
    for seat in (3, 1, 0, 2):
        do(PassCards(seat, state.hand(seat)[:3]))
    while state.phase == "play":
        do(PlayCard(state.to_move, state.legal_cards()[-1]))
    do(Deal(deck_for(rules, sweep_hands(rules, 0), 2), "hold"))
    while state.phase == "play":
        do(PlayCard(state.to_move, state.legal_cards()[0]))
    assert state.phase == "moon"
    do(ChooseMoon(0, "new"))
    stored = json.dumps([move_to_dict(m) for m in log])
    moves = [move_from_dict(d) for d in json.loads(stored)]
    assert moves == log
    assert replay(rules, moves) == state
    assert replay(rules, moves[:20]) == replay(rules, log[:20])


def test_move_dicts():
    assert move_to_dict(PlayCard(2, "QS")) == {"type": "play", "seat": 2, "card": "QS"}
    assert move_to_dict(PassCards(1, ("2C", "3C", "4C"))) == {"type": "pass", "seat": 1, "cards": ["2C", "3C", "4C"]}
    assert move_to_dict(ChooseMoon(0, "old")) == {"type": "moon", "seat": 0, "choice": "old"}
    assert move_to_dict(Deal(("2C",), "hold")) == {"type": "deal", "deck": ["2C"], "pass_direction": "hold"}
    with pytest.raises(ValueError):
        move_from_dict({"type": "resign", "seat": 0})


def test_events_as_dicts_name_their_type():
    _, events = apply(start(Rules(), D1), PlayCard(0, "2C"))
    assert event_to_dict(events[0]) == {"type": "card_played", "seat": 0, "card": "2C", "trick_no": 1}


# -- the per-seat view ---------------------------------------------------------------------------------


def test_a_seat_sees_its_own_hand_and_pass_but_not_others():
    state = _phases()["pass"]
    view0 = seat_view(state, 0)
    assert view0["hand"] == cards("3D 4D 5D 6D 2H 3H 4H 2S 3S 4S")
    assert view0["passed"] == cards("2C 8C 2D")
    assert view0["received"] is None
    assert view0["waiting_for_pass"] == [1, 3]
    text = json.dumps(view0)
    for card in cards(D1[1]) + cards(D1[2]) + cards(D1[3]):
        assert f'"{card}"' not in text
    view1 = seat_view(state, 1)
    assert view1["passed"] is None
    for card in cards("2C 8C 2D 8S QS AS"):
        assert f'"{card}"' not in json.dumps(view1)


def test_the_table_is_public():
    state = _phases()["play"]
    view = seat_view(state, 1)
    assert view["trick"] == [[3, "4C"], [0, "8C"]]
    assert view["last_trick"] == {"leader": 0, "cards": [[0, "2C"], [1, "9C"], [2, "AS"], [3, "TC"]],
                                  "winner": 3, "points": 0}
    assert view["taken"][3] == ["2C", "9C", "TC", "AS"]
    assert view["legal"] == ["3C"] and view["to_move"] == 1
    assert seat_view(state, 2)["legal"] == []
