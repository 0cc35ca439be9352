"""Dirty Nasty Filthy Hearts (RULES.md §6.7, §6.8) and ``moon=win`` from hand-built deals: the preset's
values (every queen a penalty card, QH a queen, M = 77), rule 5 with the queens, the dealer's call before
each deal, no moon for every heart and QS without every queen, and a shooter who wins the game at once
with that hand not added (with a sun, a team slam, the preset in team mode, the individual mode and
Turbo too).

Expected values are worked out here from the rules and the cards each seat took, not from the engine.
"""

from __future__ import annotations

import json
import random

import pytest

from pbem.engine import (
    CALL,
    OVER,
    PASS,
    PLAY,
    PRESETS,
    CallPass,
    ChargeCards,
    Deal,
    GameOver,
    GameState,
    HandScored,
    InvalidRules,
    Moon,
    PassCards,
    Reason,
    Rules,
    TrickWon,
    apply,
    new_game,
    shuffled_deck,
)

from .helpers import ALL_CARDS, assert_refused, cards, deck_for, in_play, play_logged, play_out, start, sweep_hands
from .test_partnership import TEAM_SWEEP

DNF = Rules.make("dnf")
QUEENS = {"QC": 13, "QD": 13, "QH": 13, "QS": 26}


def dnf_value(card: str) -> int:
    """RULES.md §6.7: the queens (QS 26, the others 13, QH as a queen), every other heart 1."""
    return QUEENS.get(card, 1 if card[1] == "H" else 0)


def full_hands(rules: Rules, hands) -> dict[int, list[str]]:
    """Every seat's hand as ``helpers.deck_for`` deals it (the cards not named filled in canonical order)."""
    size = len(in_play(rules)) // rules.players
    given = {s: cards(h) if isinstance(h, str) else list(h) for s, h in hands.items()}
    used = {c for h in given.values() for c in h}
    leftover = [c for c in in_play(rules) if c not in used]
    full = {}
    for seat in range(rules.players):
        h = given.get(seat, [])
        full[seat] = h + leftover[:size - len(h)]
        leftover = leftover[size - len(h):]
    return full


def called_hand(state: GameState, hands):
    """The dealer calls ``3 left``; the deal and the passes leave each seat holding ``hands`` (seat s
    receives the last three cards named for it from seat s − 1). The state in the play phase, and the
    events."""
    rules = state.rules
    after = full_hands(rules, hands)
    n = rules.players
    received = {s: after[s][-3:] for s in range(n)}
    before = {s: after[s][:-3] + received[(s + 1) % n] for s in range(n)}
    events: list = []
    state, more = apply(state, CallPass(state.next_dealer, (("left", 3),)))
    events += more
    state, more = apply(state, Deal(deck_for(rules, before, state.hand_no + 1)))
    events += more
    assert state.phase == PASS and state.pass_direction == "left"
    for seat in range(n):
        state, more = apply(state, PassCards(seat, tuple(received[(seat + 1) % n])))
        events += more
    assert state.phase == PLAY
    assert all(set(state.hand(s)) == set(after[s]) for s in range(n))
    return state, events


def scored(events) -> HandScored:
    found = [e for e in events if isinstance(e, HandScored)]
    assert len(found) == 1
    return found[0]


# Seat 1 has no club; seat 2 follows the opening club with QC; seat 3 has no club either.
QUEENS_DEAL = {
    0: "2C 3C 4C 5C 6C 7C 8C 2D 3D 4D 5D 6D 7D",
    1: "8D 9D TD JD QD KD AD 2H 3H 4H 5H 6H QH",
    2: "9C TC JC QC KC AC 2S 3S 4S 5S 6S 7S 8S",
    3: "9S TS JS QS KS AS 7H 8H 9H TH JH KH AH",
}


# -- the preset ---------------------------------------------------------------------------------------------


def test_the_preset_and_its_values():
    assert PRESETS["dnf"] == {
        "jd_bonus": -10, "qs_penalty": 26, "extra_penalties": {"QC": 13, "QD": 13, "QH": 13}, "target": 300,
        "first_lead": "two_of_clubs", "no_pts_on_first_trick": True, "dealer_calls_pass": True, "moon": "win"}
    assert DNF.moon == "win" and DNF.target == 300 and DNF.dealer_calls_pass and DNF.jd_bonus == -10
    assert DNF.extra_penalties == (("QC", 13), ("QD", 13), ("QH", 13))
    t = DNF.table
    assert t.values == tuple(dnf_value(c) for c in ALL_CARDS)
    assert t.moon_total == sum(map(dnf_value, ALL_CARDS)) == 77
    assert new_game(DNF).phase == CALL and new_game(DNF).next_dealer == 3


def test_moon_win_is_a_choice_of_the_moon_option():
    assert Rules.make("standard", moon="win").moon == "win"
    with pytest.raises(InvalidRules) as info:
        Rules.make("standard", moon="winner")
    assert info.value.code == "BAD_CHOICE" and "win" in info.value.details["choices"]
    assert info.value.details["choices"] == ["old", "new", "choice", "safety", "none", "win"]


def test_a_hand_after_the_call_the_queens_and_rule_5():
    state, events = called_hand(new_game(DNF), QUEENS_DEAL)
    assert [type(e).__name__ for e in events][:2] == ["PassCalled", "HandDealt"]
    assert state.to_move == 0 and state.legal_cards() == ("2C",)
    assert state.card_value("QH") == 13 and state.card_value("QC") == 13 and state.card_value("QS") == 26
    assert state.moon_total == 77
    state, played = play_logged(state, "2C")
    # seat 1 has no club: no penalty card on the first trick, the queens included (JD is a bonus, not one)
    legal = ["8D", "9D", "TD", "JD", "KD", "AD"]
    assert list(state.legal_cards()) == legal
    for card in ("QD", "QH", "2H"):
        assert_refused(state, card, Reason.NO_POINTS_ON_FIRST_TRICK, card=card, legal=legal)
    state, more = play_logged(state, "8D")
    played += more
    # following suit is never restricted: QC may follow the club
    assert "QC" in state.legal_cards()
    state, more = play_logged(state, "QC 9S")
    played += more
    assert [e for e in more if isinstance(e, TrickWon)] == [TrickWon(1, 0, ("2C", "8D", "QC", "9S"), 2, 13)]
    # QH counts 13, as a queen
    state, more = play_logged(state, "2S AS 2D QH")
    played += more
    assert [e.points for e in more if isinstance(e, TrickWon)] == [13]
    assert state.points == (0, 0, 13, 13)
    state, more = play_out(state)
    played += more
    hs = scored(played)
    taken: dict[int, list[str]] = {s: [] for s in range(4)}
    for e in played:
        if isinstance(e, TrickWon):
            taken[e.winner] += e.cards
    assert sum(state.points) == 77
    assert state.points == tuple(sum(map(dnf_value, taken[s])) for s in range(4))
    assert hs.moon is None  # seat 2 and seat 3 both took a queen
    assert hs.points == tuple(state.points[s] + (-10 if "JD" in taken[s] else 0) for s in range(4))
    assert state.phase == CALL and state.next_dealer == 0


# -- moon=win -------------------------------------------------------------------------------------------------


def test_a_shooter_wins_the_game_at_once_and_the_hand_is_not_added():
    rules = Rules.make("standard", moon="win")
    state, events = play_out(start(rules, sweep_hands(rules, 0)))
    moon = Moon(0, "moon", "win", False)
    hs = scored(events)
    assert hs == HandScored(1, (0, 0, 0, 0), (0, 0, 0, 0), moon, (13, 0, 0, 0))
    assert hs.moon.total == 26
    over = [e for e in events if isinstance(e, GameOver)]
    assert over == [GameOver((0,), (0, 1, 2, 3), (0, 0, 0, 0))]
    assert state.phase == OVER and state.winners == (0,) and state.totals == (0, 0, 0, 0)
    assert state.history == (((0, 0, 0, 0), (0, 0, 0, 0), moon),)
    assert_refused(state, lambda s: apply(s, Deal(shuffled_deck(rules, random.Random(1)))), Reason.GAME_OVER)
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state and again.winners == (0,) and again.ranking() == (0, 1, 2, 3)


def test_a_sun_with_moon_win_wins_too():
    rules = Rules.make("standard", moon="win", sun=True)
    state, events = play_out(start(rules, sweep_hands(rules, 1)))
    hs = scored(events)
    assert hs.moon == Moon(1, "sun", "win", False) and hs.moon.total == 52 and hs.points == (0, 0, 0, 0)
    assert state.winners == (1,) and state.ranking()[0] == 1


def test_a_team_slam_with_moon_win_wins_for_both_partners():
    rules = Rules.make("partnership", moon="win")
    state, events = play_out(start(rules, TEAM_SWEEP))
    hs = scored(events)
    assert hs.moon == Moon(2, "moon", "win", True) and hs.points == (0, 0, 0, 0) and hs.team_points == (0, 0)
    over = [e for e in events if isinstance(e, GameOver)][0]
    # seat 2 won the team's latest trick; the winners are named in seat order, as at every team end
    assert over == GameOver((0, 2), (0, 2, 1, 3), (0, 0, 0, 0), (0, 0)) and state.winners == (0, 2)


def test_individual_mode_with_moon_win_the_shooter_alone_wins():
    rules = Rules.make("partnership-individual", moon="win")
    state, events = play_out(start(rules, sweep_hands(rules, 3)))
    hs = scored(events)
    assert hs.moon == Moon(3, "moon", "win", False) and state.winners == (3,) and state.ranking()[0] == 3


def test_turbo_with_moon_win_scores_nothing_and_ends_the_game():
    rules = Rules.make("turbo", moon="win")
    state = start(rules, sweep_hands(rules, 0))
    for seat in state.seats_to_charge():
        state, _ = apply(state, ChargeCards(seat, state.charge_choices(seat)))
    assert state.moon_total == 52
    state, events = play_out(state)
    hs = scored(events)
    assert hs.moon == Moon(0, "moon", "win", False) and hs.moon.total == 52 and hs.points == (0, 0, 0, 0)
    assert state.phase == OVER and state.winners == (0,)


def test_dnf_the_winner_goes_first_whatever_the_totals():
    # hand 1: a dealt hand without a moon; hand 2: the seat with the worst total takes every card
    for seed in range(50):
        state = new_game(DNF)
        state, _ = apply(state, CallPass(3, (("left", 3),)))
        state, _ = apply(state, Deal(shuffled_deck(DNF, random.Random(seed))))
        for seat in range(4):
            state, _ = apply(state, PassCards(seat, state.hand(seat)[:3]))
        state, events = play_out(state)
        totals = state.totals
        if scored(events).moon is None and list(totals).count(max(totals)) == 1:
            break
    else:
        raise AssertionError("no hand without a moon in 50 seeds")
    assert state.phase == CALL and state.hand_no == 1
    worst = totals.index(max(totals))
    assert max(totals) > min(totals)
    state, events = called_hand(state, sweep_hands(DNF, worst))
    state, more = play_out(state)
    hs = scored(more)
    assert hs.moon == Moon(worst, "moon", "win", False) and hs.moon.total == 77
    assert hs.points == (0, 0, 0, 0) and hs.totals == totals == state.totals
    over = [e for e in more if isinstance(e, GameOver)]
    others = sorted((s for s in range(4) if s != worst), key=lambda s: (totals[s], s))
    assert over == [GameOver((worst,), (worst, *others), totals)]
    assert state.winners == (worst,) and state.ranking() == (worst, *others)


# Seat 0 holds every club but QC, and AS; seat 1's only club is QC, so it takes the opening trick and
# leads 2S into seat 0's AS; seat 0 then leads its clubs and takes every other card.
ALL_BUT_QC = {
    0: "2C 3C 4C 5C 6C 7C 8C 9C TC JC KC AC AS",
    1: "QC 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD 2S",
    2: "KD 2H 3S 4S 5S 6S 7S 8S 9S TS JS QS KS",
    3: "AD 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
}


def test_every_heart_and_qs_without_every_queen_is_no_moon():
    # RULES.md §6.7: the penalty cards are the hearts and the four queens; seat 1 took QC
    state, events = called_hand(new_game(DNF), ALL_BUT_QC)
    state, more = play_logged(state, "2C QC KD AD 2S")
    events += more
    assert [e for e in more if isinstance(e, TrickWon)][0] == TrickWon(1, 0, ("2C", "QC", "KD", "AD"), 1, 13)
    state, more = play_out(state)
    events += more
    taken: dict[int, list[str]] = {s: [] for s in range(4)}
    for e in events:
        if isinstance(e, TrickWon):
            taken[e.winner] += e.cards
    hearts = {c for c in ALL_CARDS if c[1] == "H"}
    assert hearts | {"QS", "QD", "JD"} <= set(taken[0]) and taken[1] == cards("2C QC KD AD")
    hs = scored(events)
    assert hs.moon is None and state.phase == CALL and not state.winners
    assert hs.points == (77 - 13 - 10, 13, 0, 0) and hs.totals == hs.points


def test_dnf_in_team_mode_a_slam_wins_for_both_partners_whatever_the_team_totals():
    rules = Rules.make("dnf", partnership="team")
    for seed in range(50):
        state = new_game(rules)
        state, _ = apply(state, CallPass(3, (("across", 3),)))
        state, _ = apply(state, Deal(shuffled_deck(rules, random.Random(seed))))
        for seat in range(4):
            state, _ = apply(state, PassCards(seat, state.hand(seat)[-3:]))
        state, events = play_out(state)
        teams = state.team_totals
        if scored(events).moon is None and teams[0] != teams[1]:
            break
    else:
        raise AssertionError("no hand without a slam in 50 seeds")
    worse = teams.index(max(teams))  # the team with the higher (worse) total
    shooter = worse + 2  # its second seat
    totals = state.totals
    state, _ = called_hand(state, sweep_hands(rules, shooter))
    state, more = play_out(state)
    hs = scored(more)
    assert hs.moon == Moon(shooter, "moon", "win", True) and hs.moon.total == 77
    assert hs.points == (0, 0, 0, 0) and hs.team_points == (0, 0)
    assert hs.totals == totals == state.totals and hs.team_totals == teams
    partners = (worse, worse + 2)
    others = (1 - worse, 3 - worse)
    assert [e for e in more if isinstance(e, GameOver)] == [GameOver(partners, partners + others, totals, teams)]
    assert state.phase == OVER and state.winners == partners
