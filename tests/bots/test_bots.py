"""The registry, the random player, the strong player, and whole games between bots under every preset."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pbem.bots import BOTS, bot_view, get_bot
from pbem.bots.match import call_pass, play_hand
from pbem.engine import CARD_NAMES, PRESETS, Rules, new_game, shuffled_deck

from .positions import position

STANDARD = Rules.make("standard")


def test_registry() -> None:
    assert set(BOTS) == {"random", "heuristic", "strong"}
    for name in BOTS:
        assert get_bot(name, seed="game-7:12").name == name
    with pytest.raises(ValueError, match="unknown bot"):
        get_bot("clever")
    with pytest.raises(TypeError):
        get_bot("heuristic", playouts=3)


def test_random_plays_each_legal_card_about_equally_often() -> None:
    state = position(STANDARD, {1: "3C 8C TC KC"}, trick="2C", leader=0)
    bot = get_bot("random", seed=3)
    counts = Counter(bot.choose_play(bot_view(state, 1)) for _ in range(4000))
    assert set(counts) == {"3C", "8C", "TC", "KC"}
    assert all(850 < c < 1150 for c in counts.values()), counts


def test_random_passes_are_random_cards_of_the_hand() -> None:
    state = new_game(STANDARD).deal(shuffled_deck(STANDARD, random.Random(1)), "left")
    bot = get_bot("random", seed=1)
    passes = {tuple(sorted(bot.choose_pass(bot_view(state, 0)))) for _ in range(30)}
    assert len(passes) > 20
    assert all(set(p) <= set(state.hand(0)) and len(p) == 3 for p in passes)


def test_strong_does_not_take_the_queen_of_spades() -> None:
    # Seat 3 is last to play on 9S QS 3S, holding KS and 2S: KS takes QS, 2S does not.
    hands = {0: "AC", 1: "KC", 2: "QC", 3: "KS 2S"}
    state = position(STANDARD, hands, trick="9S QS 3S", leader=0, rest_taken_by=0)
    bot = get_bot("strong", seed=1, playouts=40, time_limit=None)
    assert bot.choose_play(bot_view(state, 3)) == "2S"


def test_strong_takes_the_queen_of_spades_when_the_highest_total_wins() -> None:
    rules = Rules.make("reverse")
    hands = {0: "AC", 1: "KC", 2: "QC", 3: "KS 2S"}
    state = position(rules, hands, trick="9S QS 3S", leader=0, rest_taken_by=0)
    bot = get_bot("strong", seed=1, playouts=40, time_limit=None)
    assert bot.choose_play(bot_view(state, 3)) == "KS"


def test_strong_is_reproducible_with_a_playout_budget() -> None:
    state = new_game(STANDARD).deal(shuffled_deck(STANDARD, random.Random(9)), "hold")
    choices = []
    for _ in range(2):
        bots = [get_bot("strong", seed=f"s{s}", playouts=60, time_limit=None) for s in range(4)]
        end = play_hand(state, bots)
        choices.append((end.taken, end.history))
    assert choices[0] == choices[1]


def test_strong_evaluates_every_legal_card() -> None:
    state = position(STANDARD, {2: "3C 8C TC KC"}, trick="2C 9C", leader=0)
    bot = get_bot("strong", seed=2, playouts=80, time_limit=None)
    scored = bot.evaluate(bot_view(state, 2))
    assert sorted(CARD_NAMES[c] for c, _ in scored) == ["3C", "8C", "KC", "TC"]
    assert [s for _, s in scored] == sorted(s for _, s in scored)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_game_between_all_three_bots_under_every_preset(preset: str) -> None:
    rules = Rules.make(preset, end_after_hands=2)
    rng = random.Random(preset)
    names = (["strong"] + ["heuristic", "random"] * 5)[: rules.players]  # up to ten (two decks, RULES.md §6.6)
    bots = [get_bot(name, seed=s, **({"playouts": 20, "time_limit": None} if name == "strong" else {}))
            for s, name in enumerate(names)]
    state = new_game(rules)
    while not state.is_over:
        state = call_pass(state, bots)  # dnf: the dealer calls the pass (RULES.md §6.7)
        state = play_hand(state.deal(shuffled_deck(rules, rng)), bots)
    # A tie for the lowest total plays on; under moon=win (dnf) a shoot ends the game at once.
    assert (state.hand_no >= 2 or rules.moon == "win") and state.winners


@pytest.mark.parametrize("players", [3, 5, 6, 7])
def test_heuristic_games_for_every_player_count(players: int) -> None:
    rules = Rules.make("standard", players=players, target=60)
    rng = random.Random(players)
    bots = [get_bot("heuristic") for _ in range(players)]
    state = new_game(rules)
    while not state.is_over:
        state = play_hand(state.deal(shuffled_deck(rules, rng)), bots)
    assert max(state.totals) >= 60
