"""The strong player's search: the budget in card plays, sequential halving, the moon model of its
rollouts (an opponent on its way to a moon plays for it), and the pass search."""

from __future__ import annotations

import itertools
import random

from pbem.bots import bot_view, get_bot
from pbem.bots.heuristic import pass_cards_for, pass_ranking
from pbem.bots.strong import PASS_POOL, looks_like_shooting, shoot_card
from pbem.engine import CARD_NAMES, GameState, Rules, new_game, shuffled_deck
from pbem.engine.cards import CARD_INDEX, mask_of

from .positions import position

STANDARD = Rules.make("standard")


def _mask(text: str) -> int:
    return mask_of(text.split())


def _card(c: int) -> str:
    return CARD_NAMES[c]


def test_a_shooter_leads_a_sure_winner_else_the_top_of_its_longest_suit() -> None:
    t = STANDARD.table
    hand = _mask("AC 3C KD 5D 6D 9H")
    # AC is the highest club out: a sure winner.
    assert _card(shoot_card(t, hand, hand, (), 0)) == "AC"
    # With AC played, KD is the highest diamond out (AD played too): sure; 9H is not.
    played = _mask("AC AD")
    hand = _mask("3C KD 5D 6D 9H")
    assert _card(shoot_card(t, hand, hand, (), played)) == "KD"
    # No sure winner: the top of the longest suit.
    hand = _mask("3C 4C 5D 6D 7D 9H")
    assert _card(shoot_card(t, hand, hand, (), 0)) == "7D"


def test_a_shooter_follows_high_when_it_wins_low_when_it_cannot_and_discards_no_points() -> None:
    t = STANDARD.table
    trick = tuple(CARD_INDEX[c] for c in ("9C", "JC"))
    legal = _mask("3C TC QC")
    assert _card(shoot_card(t, legal | _mask("5H"), legal, trick, 0)) == "QC"
    legal = _mask("3C TC")
    assert _card(shoot_card(t, legal | _mask("5H"), legal, trick, 0)) == "3C"
    legal = _mask("4D 8D 5H QS")  # void in clubs: keep the points, give away a plain card
    assert _card(shoot_card(t, legal, legal, trick, 0)) == "4D"
    legal = _mask("5H QS")
    assert _card(shoot_card(t, legal, legal, trick, 0)) in ("5H", "QS")


def test_a_seat_looks_like_shooting_when_it_alone_has_taken_four_penalty_cards_or_the_queen() -> None:
    hands = {0: "2C 3C", 1: "4C 5C", 2: "6C 7C", 3: "8C 9C"}
    state = position(STANDARD, hands, taken={0: "TC JC QC KC"}, rest_taken_by=1)
    t = STANDARD.table
    assert looks_like_shooting(t, state, 1, 0)
    assert not looks_like_shooting(t, state, 0, 0)
    hearts = " ".join(f"{r}H" for r in "2345")
    shared = position(STANDARD, hands, taken={0: hearts}, rest_taken_by=1)
    assert not looks_like_shooting(t, shared, 1, 0)  # seat 0 has points too: no moon for seat 1

    def rest_to_seat_1(spades: str) -> GameState:
        return position(STANDARD, {0: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH", 1: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC",
                                   2: "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD", 3: spades}, rest_taken_by=1)

    # Seat 1's tricks hold KH and AH and no queen: two penalty cards are not enough.
    assert not looks_like_shooting(t, rest_to_seat_1("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS"), 1, 0)
    # KH, AH and the queen: three cards, but half the moon's points.
    assert looks_like_shooting(t, rest_to_seat_1("2S 3S 4S 5S 6S 7S 8S 9S TS JS AS"), 1, 0)


def test_halving_scores_every_legal_card_in_order_and_is_reproducible() -> None:
    # Seat 3 is void in clubs on the first trick: its eight cards without points are legal, so the
    # budget is spent in three rounds (8, 4 and 2 cards).
    hands = {3: "2D 5D 9D KD 3H 8H QH 4S 7S JS QS AS 6H"}
    state = position(STANDARD, hands, trick="2C 9C KC", leader=0)
    view = bot_view(state, 3)
    assert view.legal == _mask("2D 5D 9D KD 4S 7S JS AS")
    runs = [get_bot("strong", seed=4, playouts=60, time_limit=None).evaluate(view) for _ in range(2)]
    assert runs[0] == runs[1]
    scored = runs[0]
    assert sorted(_card(c) for c, _ in scored) == sorted(state.legal_cards())
    assert [s for _, s in scored] == sorted(s for _, s in scored)


def test_without_halving_or_the_moon_model_the_search_still_plays_legal_cards() -> None:
    hands = {3: "2D 5D 9D KD 3H 8H QH 4S 7S JS QS AS 6H"}
    state = position(STANDARD, hands, trick="2C 9C KC", leader=0)
    view = bot_view(state, 3)
    for options in ({"halving": False}, {"shooters": False}):
        bot = get_bot("strong", seed=1, playouts=30, time_limit=None, **options)
        assert bot.choose_play(view) in state.legal_cards()


def _pass_view(rules: Rules, direction: str, seat: int = 0, seed: int = 3):
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(seed)), direction)
    return state, bot_view(state, seat, ())


def test_the_pass_search_weighs_the_heuristics_pass_and_every_choice_of_its_most_urgent_cards() -> None:
    state, view = _pass_view(STANDARD, "left")
    bot = get_bot("strong", seed=2, playouts=40, time_limit=None)
    preferred = pass_cards_for(view)
    scored = bot.evaluate_passes(view, preferred)
    pool = set(pass_ranking(view.table, view.hand)[:PASS_POOL]) | set(preferred)
    assert sorted(p for p, _ in scored) == sorted(itertools.combinations(sorted(pool), 3))
    assert [s for _, s in scored] == sorted(s for _, s in scored)
    chosen = get_bot("strong", seed=2, playouts=40, time_limit=None).choose_pass(view)
    assert tuple(sorted(CARD_INDEX[c] for c in chosen)) == scored[0][0]
    assert set(chosen) <= set(state.hand(0))
    # The same seed, the same pass: duplicate deals and seeded games stay reproducible.
    assert get_bot("strong", seed=2, playouts=40, time_limit=None).choose_pass(view) == chosen


def test_the_pass_is_searched_in_every_direction_it_can_be_played_out() -> None:
    for direction in ("left", "right", "across"):
        state, view = _pass_view(STANDARD, direction, seat=2, seed=5)
        cards = get_bot("strong", seed=1, playouts=20, time_limit=None).choose_pass(view)
        assert len(cards) == 3 and set(cards) <= set(state.hand(2))
        state.pass_cards(2, cards)  # the engine takes it


def test_where_a_pass_cannot_be_played_out_strong_passes_as_the_heuristic() -> None:
    cases = [(Rules.make("standard", partnership="team"), "across"),
             (Rules.make("cancellation"), "left"),
             (Rules.make("standard", players=5, pass_count=4), "scatter")]
    for rules, direction in cases:
        _state, view = _pass_view(rules, direction)
        strong = get_bot("strong", seed=1, playouts=20, time_limit=None).choose_pass(view)
        assert strong == get_bot("heuristic", seed=1).choose_pass(view)
    _state, view = _pass_view(STANDARD, "left")
    off = get_bot("strong", seed=1, playouts=20, time_limit=None, pass_search=False).choose_pass(view)
    assert off == get_bot("heuristic", seed=1).choose_pass(view)


def test_rollouts_on_the_fast_playout_decide_exactly_as_rollouts_through_the_state(monkeypatch) -> None:
    # Where the rules are a Playout's, strong plays its rollouts on masks (pbem.engine.playout);
    # the cards chosen, and every card's and pass's score, are the same as through the state.
    rng = random.Random(12)
    views = []
    for rules in (STANDARD, Rules.make("standard", moon="new", jd_bonus=-10), Rules.make("black-maria")):
        state = new_game(rules).deal(shuffled_deck(rules, rng), "left")
        views.append(("pass", bot_view(state, 1, ())))
        for seat in range(rules.players):
            state = state.pass_cards(seat, rng.sample(state.hand(seat), rules.pass_count))
        for _ in range(rng.randrange(2, 30)):
            state = state.play(rng.choice(state.legal_cards()))
        views.append(("play", bot_view(state, state.to_move)))

    def decide(view_kind: str, view) -> object:
        bot = get_bot("strong", seed=5, playouts=40, time_limit=None)
        if view_kind == "pass":
            return bot.evaluate_passes(view, pass_cards_for(view))
        return bot.evaluate(view) if view.legal & (view.legal - 1) else bot.choose_play(view)

    fast = [decide(kind, view) for kind, view in views]
    monkeypatch.setattr("pbem.bots.strong.Playout.supports", staticmethod(lambda t: False))
    slow = [decide(kind, view) for kind, view in views]
    assert fast == slow
