"""A bot's view holds what its seat may know, and nothing of the other seats' hidden cards."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pbem.bots import BotView, bot_view, get_bot
from pbem.engine import Deal, PassCards, PlayCard, Rules, apply, new_game, seat_view, shuffled_deck

from .positions import position

STANDARD = Rules.make("standard")


def test_the_view_does_not_depend_on_other_seats_hidden_cards() -> None:
    hands = {0: "2D 5D 9D JD 3H 8H KH 4S 6S 9S QS",
             1: "3D 4D 6D 7D 2H 4H 5H 6H 7H 9H TH",
             2: "8D TD QD KD AD JH QH AH 2S 3S 5S"}
    swapped = {0: hands[0], 1: hands[2], 2: hands[1]}
    a = position(STANDARD, hands, taken={3: "2C 3C 4C 5C 6C 7C 8C 9C"}, trick="TC", leader=3)
    b = position(STANDARD, swapped, taken={3: "2C 3C 4C 5C 6C 7C 8C 9C"}, trick="TC", leader=3)
    assert a.hand_mask(1) != b.hand_mask(1)
    assert bot_view(a, 0) == bot_view(b, 0)
    # … while the seat's own cards are in it.
    assert bot_view(a, 1) != bot_view(b, 1)


def _random_game(rules: Rules, seed: int):
    """Yield (state, finished tricks) at every decision of a random game, passes included."""
    rng = random.Random(seed)
    bots = [get_bot("random", seed=f"{seed}:{s}") for s in range(rules.players)]
    state = new_game(rules)
    while not state.is_over and state.hand_no < 3:
        state = state.deal(shuffled_deck(rules, rng))
        tricks: list = []
        while state.phase == "pass":
            seat = state.seats_to_pass()[0]
            yield state, tricks
            state = state.pass_cards(seat, bots[seat].choose_pass(bot_view(state, seat)))
        while state.phase == "play":
            yield state, tricks
            state = state.play(bots[state.to_move].choose_play(bot_view(state, state.to_move, tricks)))
            if not state.trick:
                tricks = tricks + [(state.last_trick[0], state.last_trick[1])]
        if state.phase == "moon":
            state = state.choose_moon(state.shooter[0], "old")


@pytest.mark.parametrize("preset,options", [("standard", {}), ("black-maria", {}), ("omnibus", {}),
                                            ("standard", {"players": 6}), ("standard", {"pass_cycle": ["scatter"]})])
def test_no_hidden_card_reaches_a_view(preset: str, options: dict) -> None:
    rules = Rules.make(preset, **options)
    checked = 0
    for state, tricks in _random_game(rules, 11):
        for seat in range(rules.players):
            v = bot_view(state, seat, tricks)
            hidden = 0
            for other in range(rules.players):
                if other != seat:
                    hidden |= state.hand_mask(other)
            hidden &= ~v.passed_mask  # the seat knows where the cards it passed went
            seen = v.hand | v.legal | v.received | v.played | v.passed_mask
            for _leader, cards in v.tricks:
                seen |= sum(1 << c for c in cards)
            assert v.hand == state.hand_mask(seat)
            assert not seen & hidden
            checked += 1
    assert checked > 100


def test_from_moves_rebuilds_the_view_from_a_move_log() -> None:
    rules = STANDARD
    rng = random.Random(5)
    bots = [get_bot("heuristic") for _ in range(4)]
    state = new_game(rules)
    moves: list = []
    tricks: list = []

    def do(move) -> None:
        nonlocal state
        state, _ = apply(state, move)
        moves.append(move)

    do(Deal(shuffled_deck(rules, rng)))
    for seat in range(4):
        do(PassCards(seat, tuple(bots[seat].choose_pass(bot_view(state, seat)))))
    for _ in range(23):
        seat = state.to_move
        do(PlayCard(seat, bots[seat].choose_play(bot_view(state, seat, tricks))))
        if not state.trick:
            tricks.append((state.last_trick[0], state.last_trick[1]))
    for seat in range(4):
        rebuilt = BotView.from_moves(rules, moves, seat)
        assert rebuilt == bot_view(state, seat, tricks)
        assert rebuilt.tricks_complete and len(rebuilt.tricks) == 5


def test_a_view_from_the_engine_seat_view_dict_agrees() -> None:
    rules = Rules.make("omnibus")
    state = position(rules, {0: "2D 5D 9D JD 3H 8H KH 4S 6S 9S QS"}, taken={3: "2C 3C 4C 5C 6C 7C 8C 9C"},
                     trick="TC", leader=3)
    d = seat_view(state, 0)
    a = BotView.from_seat_view(d, rules)
    b = bot_view(state, 0)
    assert a == replace(b, tricks=a.tricks, tricks_complete=a.tricks_complete)
    # A bot decides from the dict as well.
    assert get_bot("heuristic").choose_play(d) in state.legal_cards()
    assert get_bot("strong", seed=1, playouts=40).choose_play(d) in state.legal_cards()


def test_the_engine_view_dict_without_rules_assumes_standard_rules() -> None:
    state = position(STANDARD, {0: "2D 5D 9D JD 3H 8H KH 4S 6S 9S QS"}, taken={3: "2C 3C 4C 5C 6C 7C 8C 9C"},
                     trick="TC", leader=3)
    v = BotView.from_seat_view(seat_view(state, 0))
    assert v.rules == STANDARD and v.rules_assumed


def test_strong_stays_legal_from_a_bare_dict_under_other_rules() -> None:
    # Black Maria lets hearts be led before they are broken; standard rules would refuse 2H.
    rules = Rules.make("black-maria")
    state = position(rules, {0: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"}, leader=0, hearts_broken=False)
    assert "2H" in state.legal_cards()
    card = get_bot("strong", seed=1, playouts=30).choose_play(seat_view(state, 0))
    assert card in state.legal_cards()


@pytest.mark.parametrize("direction,targets", [("left", (1, 1, 1)), ("right", (3, 3, 3)), ("across", (2, 2, 2)),
                                               ("scatter", (1, 2, 3))])
def test_pass_targets(direction: str, targets: tuple[int, ...]) -> None:
    state = new_game(STANDARD).deal(shuffled_deck(STANDARD, random.Random(1)), direction)
    hand = state.hand(0)
    state = state.pass_cards(0, hand[:3])
    for seat in (1, 2, 3):
        state = state.pass_cards(seat, state.hand(seat)[:3])
    assert bot_view(state, 0).pass_targets() == targets
