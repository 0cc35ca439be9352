"""Rules as data: presets (RULES.md §5), player counts and decks (§4), and the combinations that are
refused when a game is created (§3), each with its code and details."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pbem.engine import PRESETS, InvalidRules, Reason, Rules, new_game, seat_view

from . import reference as ref
from .helpers import ALL_CARDS, assert_refused, canon, deck_for, in_play, start, suit

STANDARD = Rules()

#: RULES.md §5, what each preset changes from standard, written out again from the table.
PRESET_CHANGES = {
    "standard": {},
    "classic": {"qs_breaks_hearts": True, "moon": "choice"},
    "pagat": {"no_pts_on_first_trick": False, "moon": "choice"},
    "omnibus": {"jd_bonus": -10, "moon": "choice"},
    "spot": {"heart_values": "spot", "qs_penalty": 25, "target": 500},
    "black-maria": {"players": 3, "removed_cards": ("2C",), "pass_cycle": ("right",),
                    "first_lead": "left_of_dealer", "must_break_hearts": False, "no_pts_on_first_trick": False,
                    "extra_penalties": (("KS", 10), ("AS", 7))},
    "original-1880": {"pass_count": 0, "qs_penalty": 0, "moon": "none", "first_lead": "left_of_dealer",
                      "must_break_hearts": False, "no_pts_on_first_trick": False},
    "dame-de-pique": {"pass_count": 0, "first_lead": "left_of_dealer", "no_pts_on_first_trick": False},
    "reverse": {"lowest_wins": False, "moon": "none"},
    "hartenjagen": {"removed_cards": tuple(r + s for s in "CDHS" for r in "23456"), "qs_penalty": 5,
                    "extra_penalties": (("JC", 2),)},
    # RULES.md §6
    "partnership": {"partnership": "team"},
    "partnership-individual": {"partnership": "individual"},
    "kitty": {"kitty": "penalty"},
    "turbo": {"turbo": True, "jd_bonus": -10},
    "turbo-nines": {"turbo": True, "jd_bonus": -10, "booster_nines": True},
    "dnf": {"jd_bonus": -10, "qs_penalty": 26, "extra_penalties": (("QC", 13), ("QD", 13), ("QH", 13)),
            "target": 300, "dealer_calls_pass": True, "moon": "win"},
    "cancellation": {"decks": 2, "players": 8, "first_lead": "left_of_dealer", "no_pts_on_first_trick": False,
                     "pass_cycle": ("left", "right")},
}


def test_every_preset_is_known():
    assert set(PRESETS) == set(PRESET_CHANGES)


@pytest.mark.parametrize("preset", sorted(PRESET_CHANGES))
def test_preset_differs_from_standard_exactly_as_rules_md_says(preset):
    rules = Rules.make(preset)
    changes = PRESET_CHANGES[preset]
    assert rules.preset == preset
    for field in dataclasses.fields(Rules):
        name = field.name
        if name == "preset":
            continue
        got = getattr(rules, name)
        if name in changes:
            want = changes[name]
            if name in ("removed_cards", "extra_penalties"):
                assert sorted(got) == sorted(want), name
            else:
                assert got == want, name
        else:
            assert got == getattr(STANDARD, name), name


@pytest.mark.parametrize("preset", sorted(PRESET_CHANGES))
def test_rules_round_trip_through_json(preset):
    rules = Rules.make(preset)
    again = Rules.from_dict(json.loads(json.dumps(rules.to_dict())))
    assert again == rules
    assert again.to_dict() == rules.to_dict()


def test_black_maria_with_four_players_removes_nothing():
    rules = Rules.make("black-maria", players=4)
    assert rules.removed_cards == ()
    assert ref.moon_total(rules) == 43


@pytest.mark.parametrize(("preset", "players"), [
    ("black-maria", 4), ("black-maria", 5), ("standard", 3), ("standard", 6), ("omnibus", 5), ("spot", 3)])
def test_a_new_player_count_gives_what_make_gives(preset, players):
    # The deck and pass cycle follow the count as Rules.make gives them for the preset, there and back.
    rules = Rules.make(preset)
    assert rules.with_options(players=players) == Rules.make(preset, players=players)
    assert Rules.make(preset, players=players).with_options(players=rules.players) == rules


def test_a_new_player_count_keeps_black_marias_pass_to_the_right():
    rules = Rules.make("black-maria").with_options(players=4)
    assert (rules.pass_cycle, rules.removed_cards) == (("right",), ())
    back = rules.with_options(players=3)
    assert (back.pass_cycle, back.removed_cards) == (("right",), ("2C",))


def test_a_new_player_count_keeps_an_explicit_deck_or_pass_cycle_or_refuses_it():
    assert Rules(pass_cycle=("left", "hold")).with_options(players=5).pass_cycle == ("left", "hold")
    assert Rules(players=3, removed_cards=["2S"]).with_options(players=4, removed_cards=[]).removed_cards == ()
    for make, code, details in [
        (lambda: Rules(pass_cycle=("left", "across")).with_options(players=3), "ACROSS_NEEDS_EVEN_PLAYERS",
         {"players": 3}),
        (lambda: Rules.make("hartenjagen").with_options(players=3), "DECK_DOES_NOT_DIVIDE",
         {"cards": 32, "players": 3}),
        (lambda: Rules().with_options(players=9), "BAD_PLAYERS", {"players": 9}),
    ]:
        with pytest.raises(InvalidRules) as info:
            make()
        assert (info.value.code, info.value.details) == (code, details)


def test_a_preset_with_overrides():
    rules = Rules.make("omnibus", target=50, moon="new")
    assert (rules.jd_bonus, rules.target, rules.moon) == (-10, 50, "new")


def test_options_by_their_rules_md_names_and_defaults():
    r = STANDARD
    assert (r.players, r.removed_cards, r.pass_cycle, r.pass_count) == (4, (), ("left", "right", "across", "hold"), 3)
    assert (r.first_lead, r.no_pts_on_first_trick, r.must_break_hearts, r.qs_breaks_hearts) == \
        ("two_of_clubs", True, True, False)
    assert (r.qs_lead_needs_broken_hearts, r.can_lead_hearts_instead_of_qs, r.qs_must_drop_when_safe) == \
        (False, False, False)
    assert (r.qs_penalty, r.heart_values, r.extra_penalties, r.jd_bonus, r.bonus_card) == (13, "one", (), 0, "JD")
    assert (r.moon, r.sun, r.avoid_all_tricks_bonus, r.target, r.end_after_hands, r.exact_target_reset) == \
        ("old", False, 0, 100, None, None)
    assert (r.tie, r.lowest_wins) == ("play_on", True)


def test_cards_in_options_are_read_canonically():
    rules = Rules(extra_penalties={"10c": 3, "k♠": 10}, bonus_card="j♦")
    assert dict(rules.extra_penalties) == {"TC": 3, "KS": 10}
    assert rules.bonus_card == "JD"


# -- §4: player counts and their decks ---------------------------------------------------------------

COUNTS = [  # players, removed, cards each, first lead
    (3, ["2D"], 17, "2C"),
    (4, [], 13, "2C"),
    (5, ["2D", "2C"], 10, "3C"),
    (6, ["2D", "3D", "3C", "4C"], 8, "2C"),
    (7, ["2D", "3D", "3C"], 7, "2C"),
]


@pytest.mark.parametrize(("players", "removed", "each", "lead"), COUNTS)
def test_player_counts_and_their_decks(players, removed, each, lead):
    rules = Rules(players=players)
    assert sorted(rules.removed_cards) == sorted(removed)
    assert ref.moon_total(rules) == 26
    deck = deck_for(rules, {})
    assert sorted(deck) == sorted(set(ALL_CARDS) - set(removed))
    state = new_game(rules).deal(deck, "hold")
    assert [len(state.hand(s)) for s in range(players)] == [each] * players
    holder = next(s for s in range(players) if lead in state.hand(s))
    assert state.to_move == holder
    assert state.legal_cards() == (lead,)
    assert_refused(state, lambda s: s.play(s.hand(holder)[-1]), Reason.MUST_LEAD_LOWEST_CLUB,
                   card=state.hand(holder)[-1], required=lead, legal=[lead])


def test_five_players_3c_leads():
    rules = Rules(players=5)
    state = start(rules, {2: "3C 4C 5C 6C 7C 8C 9C TC JC QC"})
    assert state.to_move == 2 and state.legal_cards() == ("3C",)
    state = state.play("3C")
    assert state.to_move == 3


def test_six_players_pass_across_three_seats():
    rules = Rules(players=6, pass_cycle=("across",))
    state = start(rules, {}, pass_direction=None)
    assert state.pass_direction == "across"
    passed = {s: state.hand(s)[:3] for s in range(6)}
    for s in range(6):
        state = state.pass_cards(s, passed[s])
    for s in range(6):
        assert seat_view(state, (s + 3) % 6)["received"] == canon(passed[s])


@pytest.mark.parametrize("players", [3, 5, 6, 7])
def test_left_and_right_with_other_counts(players):
    rules = Rules(players=players)
    state = start(rules, {}, pass_direction=None)
    assert state.pass_direction == "left"
    passed = {s: state.hand(s)[-2:] + state.hand(s)[:1] for s in range(players)}
    for s in reversed(range(players)):
        state = state.pass_cards(s, passed[s])
    for s in range(players):
        assert seat_view(state, (s + 1) % players)["received"] == canon(passed[s])


def test_three_players_may_use_left_right_hold():
    rules = Rules(players=3, pass_cycle=("left", "right", "hold"))
    assert rules.pass_cycle == ("left", "right", "hold")
    state = new_game(rules)
    directions = []
    for hand_no in (1, 2, 3):
        from .helpers import play_out

        state = state.deal(deck_for(rules, {}, hand_no))
        directions.append(state.pass_direction)
        for s in state.seats_to_pass():
            state = state.pass_cards(s, state.hand(s)[:3])
        state, _ = play_out(state)
    assert directions == ["left", "right", "hold"]


def test_removed_cards_option():
    rules = Rules(removed_cards=["2D", "3D", "4D", "5D"])
    assert len(in_play(rules)) == 48
    state = start(rules, {})
    assert all(len(state.hand(s)) == 12 for s in range(4))
    assert ref.moon_total(rules) == 26


def test_removed_hearts_lower_the_moon_total():
    rules = Rules(players=3, removed_cards=["2H"])
    assert ref.moon_total(rules) == 25
    from .helpers import play_sweep

    state, events = play_sweep(new_game(rules), 0)
    assert events[-1].points == (0, 25, 25)


# -- combinations refused when the game is created ---------------------------------------------------


@pytest.mark.parametrize(
    ("make", "code", "details"),
    [
        (lambda: Rules(players=5, removed_cards=[]), "DECK_DOES_NOT_DIVIDE", {"cards": 52, "players": 5}),
        (lambda: Rules.make("hartenjagen", players=5), "DECK_DOES_NOT_DIVIDE", {"cards": 32, "players": 5}),
        (lambda: Rules(players=3, removed_cards=[]), "DECK_DOES_NOT_DIVIDE", {"cards": 52, "players": 3}),
        (lambda: Rules(players=3, pass_cycle=["left", "across"]), "ACROSS_NEEDS_EVEN_PLAYERS", {"players": 3}),
        (lambda: Rules(players=5, pass_cycle=["across"]), "ACROSS_NEEDS_EVEN_PLAYERS", {"players": 5}),
        (lambda: Rules(players=7, pass_cycle=["across"]), "ACROSS_NEEDS_EVEN_PLAYERS", {"players": 7}),
        (lambda: Rules(sun=True, moon="none"), "SUN_NEEDS_MOON", {}),
        (lambda: Rules.make("reverse", sun=True), "SUN_NEEDS_MOON", {}),
        (lambda: Rules(players=3, pass_cycle=["scatter"]), "SCATTER_DOES_NOT_DIVIDE", {"pass_count": 3, "players": 3}),
        (lambda: Rules(pass_cycle=["scatter"], pass_count=2), "SCATTER_DOES_NOT_DIVIDE",
         {"pass_count": 2, "players": 4}),
        (lambda: Rules(players=2), "BAD_PLAYERS", {"players": 2}),
        (lambda: Rules(players=8), "BAD_PLAYERS", {"players": 8}),
        (lambda: Rules(pass_count=5), "BAD_PASS_COUNT", {"pass_count": 5}),
        (lambda: Rules(pass_count=-1), "BAD_PASS_COUNT", {"pass_count": -1}),
        (lambda: Rules(pass_cycle=[]), "EMPTY_PASS_CYCLE", {}),
        (lambda: Rules(pass_cycle=["left", "up"]), "BAD_CHOICE",
         {"option": "pass_cycle", "value": "up", "choices": ["left", "right", "across", "hold", "scatter", "mix"]}),
        (lambda: Rules(first_lead="any"), "BAD_CHOICE",
         {"option": "first_lead", "value": "any", "choices": ["two_of_clubs", "any_club", "left_of_dealer"]}),
        (lambda: Rules(heart_values="two"), "BAD_CHOICE",
         {"option": "heart_values", "value": "two", "choices": ["one", "spot", "spot_capped"]}),
        (lambda: Rules(moon="full"), "BAD_CHOICE",
         {"option": "moon", "value": "full", "choices": ["old", "new", "choice", "safety", "none", "win"]}),
        (lambda: Rules(tie="coin"), "BAD_CHOICE", {"option": "tie", "value": "coin", "choices": ["play_on", "share"]}),
        (lambda: Rules(jd_bonus=-7), "BAD_CHOICE", {"option": "jd_bonus", "value": -7, "choices": [0, -5, -10]}),
        (lambda: Rules(qs_penalty=-1), "NEGATIVE_PENALTY", {"option": "qs_penalty", "value": -1}),
        (lambda: Rules(extra_penalties={"KS": 0}), "BAD_EXTRA_PENALTY", {"card": "KS", "value": 0}),
        (lambda: Rules(extra_penalties={"KS": -3}), "BAD_EXTRA_PENALTY", {"card": "KS", "value": -3}),
        (lambda: Rules(avoid_all_tricks_bonus=5), "BONUS_MUST_NOT_BE_POSITIVE", {"value": 5}),
        (lambda: Rules(target=0), "BAD_TARGET", {"target": 0}),
        (lambda: Rules(end_after_hands=0), "BAD_END_AFTER_HANDS", {"value": 0}),
        (lambda: Rules(players=3, removed_cards=suit("C")), "NO_CLUB_TO_LEAD", {"first_lead": "two_of_clubs"}),
        (lambda: Rules(jd_bonus=-10, bonus_card="QS"), "BONUS_CARD_IS_PENALTY", {"card": "QS"}),
        (lambda: Rules.make("omnibus", bonus_card="AH"), "BONUS_CARD_IS_PENALTY", {"card": "AH"}),
        (lambda: Rules(jd_bonus=-10, removed_cards=["JD", "2D", "3D", "4D"]), "BONUS_CARD_REMOVED", {"card": "JD"}),
        (lambda: Rules(players=3, removed_cards=suit("H"), qs_penalty=0), "NO_PENALTY_CARDS", {}),
        (lambda: Rules(removed_cards=["ZZ"]), "BAD_CARD", {"option": "removed_cards", "card": "ZZ"}),
        (lambda: Rules(no_pts_on_first_trick="yes"), "NOT_A_BOOL", {"option": "no_pts_on_first_trick", "value": "yes"}),
        (lambda: Rules(target="100"), "NOT_AN_INT", {"option": "target", "value": "100"}),
        (lambda: Rules.make("bridge"), "UNKNOWN_PRESET", {"preset": "bridge", "presets": sorted(PRESETS),
                                                          "suggestion": None}),
        # A misspelt preset or option comes with the name it most likely misspells.
        (lambda: Rules.make("omnibsu"), "UNKNOWN_PRESET", {"preset": "omnibsu", "presets": sorted(PRESETS),
                                                           "suggestion": "omnibus"}),
        (lambda: Rules.make("standard", trumps="S"), "UNKNOWN_OPTION", {"options": ["trumps"], "suggestions": {}}),
        (lambda: Rules.make("standard", taget=50), "UNKNOWN_OPTION", {"options": ["taget"],
                                                                      "suggestions": {"taget": "target"}}),
    ],
)
def test_invalid_rules_are_refused_with_a_code_and_details(make, code, details):
    with pytest.raises(InvalidRules) as info:
        make()
    assert info.value.code == code
    assert info.value.details == details


def test_scatter_is_allowed_where_it_divides():
    assert Rules(pass_cycle=["scatter"]).pass_cycle == ("scatter",)
    assert Rules(players=3, pass_cycle=["scatter"], pass_count=4).pass_cycle == ("scatter",)
