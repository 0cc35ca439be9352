"""Inference is sound (it never rules out where a card really is) and samples agree with it."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pbem.bots import bot_view, get_bot
from pbem.bots.knowledge import Knowledge, infer, sample_hands
from pbem.engine import Rules, new_game, shuffled_deck
from pbem.engine.cards import CLUBS_MASK, HEARTS_MASK, QS_BIT, SUIT_MASK, mask_of

from tests.engine.helpers import deck_for

from .positions import position

STANDARD = Rules.make("standard")

VARIANTS = [
    ("standard", {}),
    ("standard", {"qs_must_drop_when_safe": True}),
    ("standard", {"qs_lead_needs_broken_hearts": True, "can_lead_hearts_instead_of_qs": True}),
    ("standard", {"can_lead_hearts_instead_of_qs": True, "pass_cycle": ["scatter"]}),
    ("classic", {}),
    ("pagat", {}),
    ("black-maria", {}),
    ("original-1880", {}),
    ("hartenjagen", {}),
    ("standard", {"players": 3}),
    ("standard", {"players": 5}),
    ("standard", {"players": 7, "first_lead": "any_club"}),
]


def _decisions(rules: Rules, seed: int, bot: str):
    """(state, finished tricks) before every card played in two hands between ``bot`` players."""
    rng = random.Random(seed)
    bots = [get_bot(bot, seed=f"{seed}:{s}") for s in range(rules.players)]
    state = new_game(rules)
    for _ in range(2):
        state = state.deal(shuffled_deck(rules, rng))
        if state.phase == "pass":
            for seat in range(rules.players):
                state = state.pass_cards(seat, bots[seat].choose_pass(bot_view(state, seat)))
        tricks: list = []
        while state.phase == "play":
            yield state, tricks
            state = state.play(bots[state.to_move].choose_play(bot_view(state, state.to_move, tricks)))
            if not state.trick:
                tricks = tricks + [(state.last_trick[0], state.last_trick[1])]
        if state.phase == "moon":
            state = state.choose_moon(state.shooter[0], "old")
        if state.is_over:
            return


def _check_sound(k: Knowledge, state) -> None:
    for s in range(state.players):
        real = state.hand_mask(s)
        assert k.counts[s] == real.bit_count()
        assert real & ~k.allowed[s] == 0, f"seat {s}: inference ruled out a card it holds"
        assert k.known[s] & ~real == 0, f"seat {s}: a 'known' card it does not hold"


def _check_sample(k: Knowledge, hands: tuple[int, ...]) -> None:
    union = 0
    for s, h in enumerate(hands):
        assert h.bit_count() == k.counts[s]
        assert h & ~k.allowed[s] == 0
        assert h & k.known[s] == k.known[s]
        assert not union & h
        union |= h
    others = union & ~hands[k.seat]
    assert others == k.unseen


@pytest.mark.parametrize("preset,options", VARIANTS, ids=lambda x: str(x))
@pytest.mark.parametrize("bot", ["random", "heuristic"])
def test_inference_is_sound_and_samples_agree(preset: str, options: dict, bot: str) -> None:
    rules = Rules.make(preset, **options)
    rng = random.Random(3)
    narrowed = 0
    for state, tricks in _decisions(rules, 7, bot):
        seat = state.to_move
        for view_tricks in (tricks, None):  # with the full history, and with the last trick only
            k = infer(bot_view(state, seat, view_tricks))
            _check_sound(k, state)
            _check_sample(k, sample_hands(k, rng))
            narrowed += sum(1 for s in range(rules.players) if s != seat and k.allowed[s] != k.unseen)
    assert narrowed > 0  # some inference happened (voids at least)


def test_a_seat_that_did_not_follow_suit_is_void_in_it() -> None:
    # Trick 1: seat 0 leads 2C, seat 2 discards a diamond.
    hands = {0: "2C 3C 4C AH", 1: "5C 6C", 2: "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD", 3: "7C"}
    state = new_game(STANDARD).deal(deck_for(STANDARD, hands), "hold")
    tricks = []
    for card in ("2C", "5C", "2D", "7C"):
        state = state.play(card)
    tricks.append((state.last_trick[0], state.last_trick[1]))
    k = infer(bot_view(state, 3, tricks))
    assert k.allowed[2] & CLUBS_MASK == 0
    rng = random.Random(1)
    for _ in range(50):
        assert sample_hands(k, rng)[2] & CLUBS_MASK == 0


def test_passed_cards_are_known_to_be_with_the_receiver() -> None:
    state = new_game(STANDARD).deal(deck_for(STANDARD, {0: "QS AS KS 2C 3C 4C 5C 6C 2D 3D 4D 5D 6D"}), "left")
    state = state.pass_cards(0, ["QS", "AS", "KS"])
    for seat in (1, 2, 3):
        state = state.pass_cards(seat, state.hand(seat)[-3:])
    k = infer(bot_view(state, 0, []))
    assert k.known[1] == mask_of(["QS", "AS", "KS"])
    rng = random.Random(2)
    for _ in range(20):
        assert sample_hands(k, rng)[1] & k.known[1] == k.known[1]


def test_first_trick_penalty_discard_means_only_penalty_cards() -> None:
    # Seat 1 has no clubs and only hearts and QS: on trick 1 it may (must) discard a penalty card.
    hearts_and_queen = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH QS"
    state = new_game(STANDARD).deal(deck_for(STANDARD, {0: "2C", 1: hearts_and_queen}), "hold")
    state = state.play("2C").play("QS")
    k = infer(bot_view(state, 2, []))
    assert k.allowed[1] & ~(HEARTS_MASK | QS_BIT) == 0


def test_hearts_led_before_broken_means_only_hearts() -> None:
    rules = STANDARD
    state = position(rules, {1: "2H 3H 4H 5H 6H 7H 8H 9H TH"}, taken={0: "2C 3C 4C 5C 6C 7C 8C 9C 2D 3D 4D 5D 6D 7D 8D 9D"},
                     leader=1, hearts_broken=False)
    state = state.play("2H")
    k = infer(bot_view(state, 2, None))
    assert k.allowed[1] & ~HEARTS_MASK == 0


def test_the_matching_finds_a_deal_when_the_greedy_draw_is_not_used() -> None:
    rng = random.Random(4)
    state = position(STANDARD, {}, trick="", leader=0)
    k = infer(bot_view(state, 0))
    tight = replace(k, allowed=(k.allowed[0], k.unseen & ~SUIT_MASK[0], k.unseen, k.unseen & ~SUIT_MASK[1]))
    for _ in range(20):
        _check_sample(tight, sample_hands(tight, rng, tries=0))


def test_contradictory_knowledge_still_gives_a_deal_of_the_right_sizes() -> None:
    state = position(STANDARD, {}, trick="", leader=0)
    k = infer(bot_view(state, 0))
    impossible = replace(k, allowed=(k.allowed[0], 0, 0, k.unseen))
    hands = sample_hands(impossible, random.Random(1))
    assert [h.bit_count() for h in hands] == list(k.counts)
    assert hands[1] | hands[2] | hands[3] == k.unseen
