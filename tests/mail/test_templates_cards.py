"""Cards for human eyes: symbols, order, colours (pure functions)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from pbem.mail.cards_display import (
    card_html,
    card_text,
    group_by_suit,
    is_red,
    sort_cards,
)

DECK = [r + s for s in "CDHS" for r in "23456789TJQKA"]


def test_card_text() -> None:
    assert card_text("QS") == "Q♠"
    assert card_text("TH") == "10♥"
    assert card_text("2C") == "2♣"
    assert card_text("AD") == "A♦"


@pytest.mark.parametrize("bad", ["", "Q", "1S", "QX", "qs", "10H", "QSS"])
def test_non_canonical_cards_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        card_text(bad)


def test_red_suits_are_red_in_html() -> None:
    assert "#c0182b" in card_html("QH") and "#c0182b" in card_html("2D")
    assert "#c0182b" not in card_html("QS") and "#c0182b" not in card_html("2C")
    assert is_red("H") and is_red("TD") and not is_red("S") and not is_red("AC")
    assert "<script" not in card_html("QS") and card_html("QS").count("<span") == 1


def test_hand_order_alternates_colours_low_to_high() -> None:
    assert sort_cards(["AS", "2C", "TH", "3S", "KD", "QH"]) == ["3S", "AS", "TH", "QH", "2C", "KD"]


@given(st.lists(st.sampled_from(DECK), unique=True))
def test_grouping_keeps_every_card_once(cards: list[str]) -> None:
    groups = group_by_suit(cards)
    assert [suit for suit, _ in groups] == ["S", "H", "C", "D"]
    flat = [card for _, group in groups for card in group]
    assert sorted(flat) == sorted(cards)
    for suit, group in groups:
        assert all(card[1] == suit for card in group)
        ranks = ["23456789TJQKA".index(card[0]) for card in group]
        assert ranks == sorted(ranks)
