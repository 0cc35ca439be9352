"""The engine's module docs (pbem/engine/__init__.py) drive a whole hand of each variant as written."""

from __future__ import annotations

import random
import re

import pbem.engine as engine
from pbem.engine import (
    CALL,
    DEAL,
    ChargesRevealed,
    HandScored,
    KittyDiscarded,
    KittyTaken,
    Moon,
    PassCalled,
    PassesExchanged,
    TrickBoosted,
    TrickCancelled,
    TrickWon,
)

from .helpers import deck_for
from .test_partnership import TEAM_SWEEP  # a deal where team 0 takes every trick


def blocks() -> list[str]:
    """The indented code blocks that follow a ``::`` in the module docstring."""
    found = re.findall(r"::\n\n((?:    .*\n|\n)+)", engine.__doc__)
    assert len(found) >= 5, "the module docs lost their examples"
    return ["\n".join(line[4:] for line in block.splitlines()) for block in found]


def run_examples() -> dict:
    namespace: dict = {"random": random}
    namespace.update({name: getattr(engine, name) for name in engine.__all__})
    namespace["apply"] = engine.apply
    for block in blocks()[1:]:  # the first is the short tour, the README's business
        exec(compile(block, "pbem/engine/__init__.py", "exec"), namespace)  # noqa: S102
    return namespace


def test_the_module_docs_play_turbo_booster_nines_and_dnf():
    ns = run_examples()
    play_hand = ns["play_hand"]
    for seed in range(6):
        rules = engine.Rules.make("turbo-nines")
        state, events = play_hand(engine.new_game(rules), random.Random(seed))
        shown = [e for e in events if isinstance(e, ChargesRevealed)]
        assert len(shown) == 1 and shown[0].charges == state.charges
        hs = [e for e in events if isinstance(e, HandScored)][0]
        assert sorted(hs.multiplier)[:3] == [1, 1, 1] and max(hs.multiplier) in (2, 4)
        tricks = [e for e in events if isinstance(e, TrickWon)]
        boosted = [e for e in events if isinstance(e, TrickBoosted)]
        assert len(boosted) == sum(t.boosted for t in tricks)
        assert sum(len(t.cards) for t in tricks) == 52 and len(tricks) == 13 - len(boosted)
    state, events = play_hand(engine.new_game(engine.Rules.make("dnf")), random.Random(7))
    assert any(isinstance(e, PassCalled) for e in events) and state.t.moon_total == 77


def test_the_module_docs_loop_plays_turbo_with_every_other_variant():
    play_hand = run_examples()["play_hand"]
    for preset, options in (("turbo", {"charge_limit": 1}), ("turbo", {"partnership": "team", "moon": "choice"}),
                            ("turbo-nines", {"kitty": "penalty", "kitty_exchange": True}),
                            ("turbo", {"pass_cycle": "mix", "pass_optional": True}),
                            ("dnf", {"turbo": True, "booster_nines": True}),
                            ("standard", {"players": 3, "booster_nines": True, "kitty": "first_trick"})):
        rules = engine.Rules.make(preset, **options)
        for seed in range(4):
            state, events = play_hand(engine.new_game(rules), random.Random(seed))
            assert state.phase in (DEAL, CALL, engine.OVER) and not any(state.hands)
            assert sum(state.points) == state.moon_total  # the charged values, before the moon and the factor
            shown = [e for e in events if isinstance(e, ChargesRevealed)]
            assert len(shown) == (1 if rules.turbo else 0)
            if rules.turbo:
                assert all(len(c) <= rules.charge_limit for c in shown[0].charges)
                assert state.charged_cards == tuple(c for c in engine.chargeable_cards(rules)
                                                    if any(c in cs for cs in shown[0].charges))
            tricks = [e for e in events if isinstance(e, TrickWon)]
            assert sum(len(t.cards) for t in tricks) == rules.table.deck_size - rules.table.kitty_size


def test_the_module_docs_play_a_hand_of_each_variant():
    ns = run_examples()
    play_hand = ns["play_hand"]
    # partnership, team mode, with pass_to_partner: as the docs say
    state, events = play_hand(engine.new_game(engine.Rules.make("partnership", moon="choice", pass_to_partner=True)),
                              random.Random(1))
    assert state.phase == DEAL and state.pass_direction == "across"
    hs = [e for e in events if isinstance(e, HandScored)][0]
    assert state.team_totals == hs.team_totals == hs.team_points and state.totals[0] == state.totals[2]
    # individual mode
    state, events = play_hand(engine.new_game(engine.Rules.make("partnership-individual")), random.Random(3))
    assert len(state.team_totals) == 2 and state.team_totals[0] == state.totals[0] + state.totals[2]
    # every kitty form, with and without the exchange
    for preset, options in (("kitty", {}), ("kitty", {"kitty_exchange": True}),
                            ("standard", {"players": 3, "kitty": "first_trick", "kitty_exchange": True}),
                            ("standard", {"players": 5, "kitty": "first_penalty"})):
        rules = engine.Rules.make(preset, **options)
        state, events = play_hand(engine.new_game(rules), random.Random(2))
        taken = [e for e in events if isinstance(e, KittyTaken)]
        assert len(taken) == 1 and state.kitty_taker == taken[0].seat
        assert any(isinstance(e, KittyDiscarded) for e in events) == (
            rules.kitty_exchange and taken[0].trick_no < rules.table.hand_size)
        assert sum(state.points) == rules.table.moon_total
    # a moon choice through the loop (a team slam under moon=choice): the loop answers it
    rules = engine.Rules.make("partnership", moon="choice", pass_count=0)

    class Fixed(random.Random):
        def shuffle(self, x):  # the sweep's deck instead of a shuffle
            x[:] = deck_for(rules, TEAM_SWEEP)

    state, events = play_hand(engine.new_game(rules), Fixed(0))
    hs = [e for e in events if isinstance(e, HandScored)][0]
    assert hs.moon is not None and hs.moon.team and isinstance(hs.moon, Moon)


def test_the_module_docs_play_a_hand_of_each_passing_variant():
    play_hand = run_examples()["play_hand"]
    # a mix hand with the kitty: every card conserved, a new kitty dealt from the mixed cards
    rules = engine.Rules.make("kitty", pass_cycle="mix", pass_optional=True)
    state, events = play_hand(engine.new_game(rules), random.Random(4))
    mixed = [e for e in events if isinstance(e, PassesExchanged)]
    assert len(mixed) == 1 and mixed[0].pass_direction == "mix" and sum(map(len, mixed[0].received)) == 12
    assert sum(state.points) == rules.table.moon_total and state.phase == DEAL
    # the dealer's call, with declining allowed: several seeds, so that declines and every kind of call occur
    rules = engine.Rules.make("standard", dealer_calls_pass=True, pass_optional=True)
    kinds = set()
    for seed in range(40):
        state, events = play_hand(engine.new_game(rules), random.Random(seed))
        called = [e for e in events if isinstance(e, PassCalled)]
        assert len(called) == 1 and called[0].seat == 3 and state.pass_call == called[0].call
        assert state.phase == CALL and state.next_dealer == 0 and sum(state.points) == rules.table.moon_total
        kinds.add(state.pass_direction)
        kinds.update("declined" for e in events if isinstance(e, PassesExchanged) and () in e.received)
    assert {"split", "mix", "declined"} <= kinds


def test_the_documented_example_variables_are_what_the_comments_say():
    ns = run_examples()
    assert ns["rules"].dealer_calls_pass and ns["state"].phase == CALL and ns["state"].next_dealer == 0
    assert isinstance(ns["taken"], KittyTaken) and isinstance(ns["called"], PassCalled)
    assert ns["mixed"].pass_direction == "mix"
    # the turbo-nines hand: seat 3 took the 10 of clubs, which seat 0 charged
    assert ns["scored"].multiplier == (1, 1, 1, 4) and "TC" in ns["shown"][0]
    assert ns["scored"].charged == ns["shown"]
    assert engine.new_game(ns["rules"]).call_choices()[:2] == ((("left", 3),), (("left", 2), ("right", 1)))


def test_the_module_docs_play_cancellation():
    ns = run_examples()
    cancelled, carried = ns["cancelled"], ns["carried"]
    assert isinstance(cancelled, TrickCancelled) and carried.trick_no == cancelled.trick_no + 1
    assert carried.carried == cancelled.cards
    assert sum(map(len, ns["played"].taken_cards())) == 104 and ns["six"].table.moon_total == 52

