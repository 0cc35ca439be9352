"""The mutable playout a bot's rollouts use (pbem.engine.playout) plays exactly as the state does:
the same legal cards before every card, the same trick winners and points taken, the same hand
scores (moons included), over random hands of every rule set it supports; and it says which it does
not support."""

from __future__ import annotations

import random

import pytest

from pbem.engine import PRESETS, Rules, new_game, shuffled_deck
from pbem.engine.cards import CARD_INDEX, CARD_NAMES, indices_of
from pbem.engine.playout import Playout

#: Rule sets whose card play a Playout covers: presets and single options over the standard game.
SUPPORTED = [
    Rules.make("standard"),
    Rules.make("standard", moon="new"),
    Rules.make("standard", moon="none"),
    Rules.make("standard", players=3),
    Rules.make("standard", players=5),
    Rules.make("standard", players=6),
    Rules.make("standard", jd_bonus=-10),
    Rules.make("standard", qs_breaks_hearts=True),
    Rules.make("standard", qs_lead_needs_broken_hearts=True),
    Rules.make("standard", can_lead_hearts_instead_of_qs=True, qs_lead_needs_broken_hearts=True),
    Rules.make("standard", qs_must_drop_when_safe=True),
    Rules.make("standard", first_lead="any_club"),
    Rules.make("standard", first_lead="left_of_dealer", no_pts_on_first_trick=False),
    Rules.make("standard", must_break_hearts=False),
    Rules.make("black-maria"),
    Rules.make("dame-de-pique"),
    Rules.make("reverse", moon="old"),
    Rules.make("hartenjagen"),
    Rules.make("spot"),
    Rules.make("original-1880"),
]


def _play_both(rules: Rules, rng: random.Random, style: str) -> tuple[int, int]:
    """One random hand through a GameState and a Playout side by side; the counts of cards and
    tricks compared."""
    state = new_game(rules).deal(shuffled_deck(rules, rng), pass_direction="hold")
    p = Playout(state)
    cards = tricks = 0
    while state.phase == "play":
        assert p.legal() == state.legal_mask()
        assert p.to_move == state.to_move and p.trick == state.trick and not p.over
        legal = indices_of(state.legal_mask())
        if style == "shooter" and state.to_move == 0:
            c = legal[-1]  # seat 0 takes what it can: moons come up
        else:
            c = rng.choice(legal)
        before = state.tricks_played
        state = state.play(CARD_NAMES[c])
        ended = p.play(c)
        cards += 1
        assert ended == (state.tricks_played > before or state.phase != "play")
        if ended:
            tricks += 1
            assert p.taken == list(state.taken) and p.points == list(state.points)
            assert p.leader == state.leader or state.phase != "play"
            assert p.hearts_broken == state.hearts_broken or state.phase != "play"
    assert p.over
    assert p.hand_points() == state.history[-1][0]
    return cards, tricks


@pytest.mark.parametrize("rules", SUPPORTED, ids=lambda r: f"{r.preset}-{r.players}-{r.moon}")
def test_a_playout_plays_and_scores_as_the_state_does(rules: Rules) -> None:
    assert Playout.supports(rules.table)
    rng = random.Random(f"playout-{rules}")
    for deal in range(60):
        style = "shooter" if deal % 2 else "uniform"
        cards, tricks = _play_both(rules, rng, style)
        assert tricks == rules.table.hand_size and cards == tricks * rules.players


def test_moons_come_up_and_score_alike() -> None:
    rules = Rules.make("standard")
    rng = random.Random(3)
    seen = 0
    for _ in range(400):
        state = new_game(rules).deal(shuffled_deck(rules, rng), pass_direction="hold")
        p = Playout(state)
        while state.phase == "play":
            legal = indices_of(state.legal_mask())
            c = legal[-1] if state.to_move == 0 else legal[0]
            state = state.play(CARD_NAMES[c])
            p.play(c)
        scores = p.hand_points()
        assert scores == state.history[-1][0]
        seen += scores.count(26) == 3
    assert seen >= 3


def test_a_playout_starts_from_a_hand_in_progress() -> None:
    rules = Rules.make("standard")
    rng = random.Random(9)
    for _ in range(40):
        state = new_game(rules).deal(shuffled_deck(rules, rng), pass_direction="hold")
        for _ in range(rng.randrange(1, 45)):
            state = state.play(rng.choice(state.legal_cards()))
        p = Playout(state)
        assert p.played == sum(m for m in state.taken) | sum(1 << c for c in state.trick)
        while state.phase == "play":
            c = CARD_INDEX[rng.choice(state.legal_cards())]
            assert p.legal() == state.legal_mask()
            state = state.play(CARD_NAMES[c])
            p.play(c)
        assert p.hand_points() == state.history[-1][0]


@pytest.mark.parametrize("preset", ["omnibus", "kitty", "partnership", "partnership-individual", "turbo",
                                    "turbo-nines", "dnf", "cancellation", "classic"])
def test_rules_a_playout_does_not_cover_are_refused(preset: str) -> None:
    # Each of these has an option a Playout leaves to the state: a bonus for avoiding tricks, a
    # kitty, partners, Turbo, Booster Nines, moon=win/choice/safety, two decks.
    assert preset in PRESETS
    assert not Playout.supports(Rules.make(preset).table)


def test_the_rollout_benchmark_plays_whole_hands_both_ways() -> None:
    from pbem.bench.playout_speed import playout_loop, run

    for fast in (True, False):
        hands, cpu = playout_loop(0.01, seed=1, fast=fast)
        assert hands >= 8 and cpu > 0
    lines: list[str] = []
    result = run(rounds=1, seconds=0.01, echo=lines.append)
    assert result["playout_hands_per_s"] > 0 and result["state_hands_per_s"] > 0
    assert "hands/s of CPU on the Playout" in lines[0]
