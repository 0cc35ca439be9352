"""The card play path's shortcuts give the same values as the long way (moves, events, shuffles)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random

import pytest

from pbem.engine import (
    CARD_NAMES,
    CardPlayed,
    HandScored,
    IllegalMove,
    PlayCard,
    Rules,
    TrickWon,
    apply,
    deck_in_play,
    event_to_dict,
    new_game,
    shuffled_deck,
)
from pbem.engine import events as ev


def test_play_card_is_the_same_value_however_made() -> None:
    move = PlayCard(1, "QS")
    assert move == PlayCard(seat=1, card="QS") and move.seat == 1 and move.card == "QS"
    assert repr(move) == "PlayCard(seat=1, card='QS')"
    assert hash(move) == hash(PlayCard(1, "QS"))
    assert pickle.loads(pickle.dumps(move)) == move
    assert copy.deepcopy(move) == move and copy.copy(move) == move
    assert dataclasses.replace(move, seat=2) == PlayCard(2, "QS")
    assert dataclasses.astuple(move) == (1, "QS")
    with pytest.raises(dataclasses.FrozenInstanceError):
        move.seat = 2  # type: ignore[misc]


def test_play_card_keeps_odd_values_as_given() -> None:
    assert PlayCard(True, "QS").seat is True  # not the interned seat 1
    assert PlayCard(1, ["QS"]).card == ["QS"]  # type: ignore[arg-type]
    assert PlayCard(99, "ZZ").card == "ZZ"

    class Sub(PlayCard):
        pass

    assert type(Sub(1, "QS")) is Sub


def test_a_refused_odd_play_card_still_refused() -> None:
    state = new_game(Rules()).deal(deck_in_play(Rules()), "hold")
    with pytest.raises(IllegalMove):
        apply(state, PlayCard(state.to_move, ["2C"]))  # type: ignore[arg-type]
    with pytest.raises(IllegalMove):
        apply(state, PlayCard((state.to_move + 1) % 4, "2C"))


def test_event_makers_equal_the_constructors() -> None:
    assert ev.card_played(2, "QS", CARD_NAMES.index("QS"), 5) == CardPlayed(2, "QS", 5)
    won = ev.trick_won(3, 1, ("2C", "3C", "4C", "5C"), 0, 0, True)
    assert won == TrickWon(3, 1, ("2C", "3C", "4C", "5C"), 0, 0, True)
    assert vars(won) == vars(TrickWon(3, 1, ("2C", "3C", "4C", "5C"), 0, 0, True))
    assert event_to_dict(won) == event_to_dict(TrickWon(3, 1, ("2C", "3C", "4C", "5C"), 0, 0, True))
    scored = ev.hand_scored(1, (0, 26, 0, 0), (0, 26, 0, 0), None, (3, 4, 3, 3))
    assert vars(scored) == vars(HandScored(1, (0, 26, 0, 0), (0, 26, 0, 0), None, (3, 4, 3, 3)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        won.winner = 2  # type: ignore[misc]


@pytest.mark.parametrize("preset", ["standard", "cancellation", "hartenjagen", "kitty"])
def test_shuffled_deck_is_random_shuffle(preset: str) -> None:
    rules = Rules.make(preset)
    a, b = random.Random(11), random.Random(11)
    for _ in range(30):
        cards = list(deck_in_play(rules))
        b.shuffle(cards)
        assert shuffled_deck(rules, a) == tuple(cards)
    assert a.random() == b.random()


def test_shuffled_deck_with_another_generator() -> None:
    class Mine(random.Random):
        pass

    rules = Rules()
    cards = list(deck_in_play(rules))
    random.Random(5).shuffle(cards)
    assert shuffled_deck(rules, Mine(5)) == tuple(cards)
