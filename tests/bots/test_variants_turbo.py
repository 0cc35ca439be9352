"""The bots under RULES.md §6.4 Turbo, §6.5 Booster Nines and §6.7 Dirty Nasty Filthy: whole games, the
charge decision of each bot, what a view holds of the charges, ``strong``'s worlds (a charged card not
yet played is always in its charger's hand; what the charged-card rule and a boost round reveal) and
its evaluation (the 10 of clubs' multiplier, charged values, a ``moon=win`` shoot as the game)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Iterator

import pytest

from pbem.bots import BotView, bot_view, decide, get_bot
from pbem.bots.heuristic import _moon_outcome, choose_charge_cards
from pbem.bots.knowledge import infer, sample_world
from pbem.bots.view import SeenTrick
from pbem.engine import (
    CALL,
    CHARGE,
    DEAL,
    MIX,
    OVER,
    PLAY,
    ChargeCards,
    ChargesRevealed,
    Deal,
    GameState,
    Moon,
    Rules,
    TrickBoosted,
    apply,
    new_game,
    seat_view,
    shuffled_deck,
    shuffled_mix,
)
from pbem.engine.cards import CARD_INDEX, CARD_NAMES, cards_of, mask_of

from tests.engine.helpers import deck_for

from .positions import position
from .test_variants import _check_playable_world, _check_sound, _check_world

#: The configurations of §6.4, §6.5 and §6.7 the bots must play.
CONFIGS = [
    ("turbo", {}),
    ("turbo-nines", {}),
    ("dnf", {}),
    ("turbo", {"charge_limit": 1}),
    ("standard", {"booster_nines": True}),
]


def _id(config) -> str:
    preset, options = config
    return preset + "".join(f" {k}={v}" for k, v in options.items())


def _bot(name: str, seed) -> object:
    return get_bot(name, seed=seed, **({"playouts": 12, "time_limit": None} if name == "strong" else {}))


def _game(rules: Rules, bots, seed, seen: Counter | None = None,
          check=None) -> Iterator[tuple[GameState, list[SeenTrick]]]:
    """A whole game between ``bots``, every decision through ``decide`` and ``apply`` (the engine
    refuses an illegal one); yields (state, finished tricks) before each decision of the play phase
    and counts in ``seen`` the charges decided, the cards charged, the boosts and the winning moons."""
    seen = Counter() if seen is None else seen
    rng = random.Random(f"{seed}:deck")
    state = new_game(rules)
    tricks: list[SeenTrick] = []
    while state.phase != OVER:
        phase = state.phase
        if phase == DEAL:
            state, _ = apply(state, Deal(shuffled_deck(rules, rng)))
            tricks = []
            continue
        if phase == MIX:
            state = state.mix(shuffled_mix(state, rng))
            continue
        seat = state.next_dealer if phase == CALL else state.seats_to_act()[0]
        if phase == PLAY:
            yield state, tricks
        move = decide(bots[seat], state, seat, tricks)
        if phase == CHARGE:
            seen["charge decisions"] += 1
            assert len(move.cards) <= rules.charge_limit
            assert set(move.cards) <= set(state.charge_choices(seat))
        state, events = apply(state, move)
        for e in events:
            if isinstance(e, ChargesRevealed):
                seen["charged"] += sum(len(c) for c in e.charges)
            elif isinstance(e, TrickBoosted):
                seen["boosts"] += 1
            elif isinstance(e, Moon) and e.scoring == "win":
                seen["won by a moon"] += 1
        if phase == PLAY and not state.trick:
            tricks = tricks + [(state.last_trick[0], tuple(state.last_trick[1]))]
    assert state.winners


def _charge(state: GameState, seat: int, cards) -> GameState:
    return apply(state, ChargeCards(seat, tuple(cards)))[0]


# -- whole games ------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=_id)
@pytest.mark.parametrize("bot", ["random", "heuristic", "strong"])
def test_each_bot_plays_whole_games_of_every_turbo_configuration(config, bot: str) -> None:
    preset, options = config
    rules = Rules.make(preset, end_after_hands=1 if bot == "strong" else 3, **options)
    seen: Counter = Counter()
    for game in range(1 if bot == "strong" else 2):
        # The bot under test in every seat but one (a heuristic there, so it meets another player).
        bots = [_bot(bot if s else "heuristic", f"{game}:{s}") for s in range(rules.players)]
        for _ in _game(rules, bots, f"{_id(config)}:{game}", seen):
            pass
    if rules.turbo:
        assert seen["charge decisions"]
        if bot == "random":
            assert seen["charged"]
    else:
        assert not seen["charge decisions"]
    if rules.booster_nines:
        assert seen["boosts"]


@pytest.mark.parametrize("bot", ["heuristic", "strong"])
def test_strong_and_heuristic_play_legally_from_the_engines_seat_view(bot: str) -> None:
    rules = Rules.make("turbo-nines", end_after_hands=1)
    b = _bot(bot, 1)
    boost_rounds = held_back = 0
    for k, (state, tricks) in enumerate(_game(rules, [_bot("random", s) for s in range(4)], "dict")):
        seat = state.to_move
        d = seat_view(state, seat)
        v = BotView.from_seat_view(d, rules)
        assert v.charged == mask_of(state.charged_cards) and v.boost_round == state.boost_round
        assert bot_view(state, seat, tricks).charges == v.charges
        assert b.choose_play(v) in state.legal_cards()
        boost_rounds += state.boost_round
        held_back += bool(mask_of(state.charged_cards) & state.hand_mask(seat) & ~state.legal_mask())
    assert boost_rounds and held_back


# -- the charge decision ------------------------------------------------------------------------------


def _charge_state(rules: Rules, hand0: str) -> GameState:
    """A hold hand (no pass): the charge phase right after the deal, seat 0 holding ``hand0``."""
    state = new_game(rules).deal(deck_for(rules, {0: hand0}), "hold")
    assert state.phase == CHARGE
    return state


#: Every chargeable card, QS with four lower spades, JD with AD and KD, TC over three lower clubs, AH
#: with no low heart.
EVERY = "AH QS 2S 3S 4S 5S JD AD KD TC 2C 3C 4C"


def test_the_random_bot_charges_any_set_within_the_limit_each_as_likely() -> None:
    for limit in (4, 1):
        rules = Rules.make("turbo", charge_limit=limit)
        state = _charge_state(rules, EVERY)
        v = bot_view(state, 0)
        assert cards_of(v.charge_choices) == ("TC", "JD", "AH", "QS") and v.charge_limit == limit
        bot = get_bot("random", seed=limit)
        counts = Counter(frozenset(bot.choose_charge(v)) for _ in range(3200))
        choices = ("TC", "JD", "AH", "QS")
        sets = {frozenset(c) for k in range(limit + 1) for c in itertools.combinations(choices, k)}
        assert set(counts) == sets  # none, and every set of at most ``limit`` cards
        mean = 3200 / len(sets)
        assert all(0.75 * mean < c < 1.25 * mean for c in counts.values()), counts
        # The engine takes every one of them; from the engine's seat_view dict too.
        for chosen in sets:
            _charge(state, 0, tuple(chosen))
        assert len(bot.choose_charge(seat_view(state, 0))) <= limit


@pytest.mark.parametrize("name", ["heuristic", "strong"])
def test_the_heuristic_charge(name: str) -> None:
    def charge(hand: str, limit: int = 4, **options) -> set[str]:
        rules = Rules.make("turbo", charge_limit=limit, **options)
        return set(_bot(name, 1).choose_charge(bot_view(_charge_state(rules, hand), 0)))

    assert charge(EVERY) == {"QS", "JD", "TC"}  # not AH without low hearts to duck with
    assert charge("AH 2H 5H 2C 3C 4C 5C 6C 7C 8C 9C 2D 3D") == {"AH"}
    assert charge("AH 2H 7H 2C 3C 4C 5C 6C 7C 8C 9C 2D 3D") == set()
    assert charge(EVERY, limit=1) == {"QS"}
    assert charge("QS JD AD KD 2S 3S 4S 5S 6S 7S 8S 9S TS", limit=2) == {"QS", "JD"}
    # QS with three lower spades, JD with one higher diamond, TC with a higher club: in doubt, nothing.
    assert charge("AH QS 2S 3S 4S JD AD 2D TC JC 2C 3C 4C") == set()
    assert charge("TC 2C 3C 4C 5H 6H 7H 8H 9H 2D 3D 4D 5D") == {"TC"}
    assert charge("TC 2C 3C AC 5H 6H 7H 8H 9H 2D 3D 4D 5D") == set()
    # A bonus card moved (bonus_card=TD): TD with three of its four higher diamonds, not with two.
    assert charge("TD QD KD AD 2C 3C 4C 5C 6C 7C 8C 9C 2H", bonus_card="TD") == {"TD"}
    assert charge("TD QD KD 2C 3C 4C 5C 6C 7C 8C 9C 2H 3H", bonus_card="TD") == set()
    # Without a chargeable card a seat is never asked; the heuristic's rule on masks agrees.
    t = Rules.make("turbo").table
    assert choose_charge_cards(t, mask_of(EVERY.split()), 0, 4) == []


def test_a_seat_sees_only_its_own_charge_until_every_seat_has_decided() -> None:
    rules = Rules.make("turbo")
    state = new_game(rules).deal(deck_for(rules, {0: "QS TC 2S 3S 4S 5S 2C 3C 4C 2D 3D 4D 5D", 1: "AH JD"}),
                                 "hold")
    waiting = state.seats_to_charge()
    assert waiting == (0, 1)
    state = _charge(state, 0, ("QS", "TC"))
    other = [s for s in waiting if s != 0][0]
    v = bot_view(state, other)
    assert v.phase == CHARGE and v.charges[0] is None and not v.charged and not v.charges_revealed
    assert v.table is rules.table  # nothing charged is known yet
    mine = bot_view(state, 0)
    assert mine.charges[0] == mask_of(["QS", "TC"]) and mine.charge_choices == 0
    d = BotView.from_seat_view(seat_view(state, other), rules)
    assert d.charges[0] is None and not d.charged
    for s in state.seats_to_charge():
        state = _charge(state, s, ())
    assert state.phase == PLAY
    v = bot_view(state, other)
    assert v.charges_revealed and v.charged == mask_of(["QS", "TC"]) and v.charges[0] == v.charged
    assert v.table.values[CARD_INDEX["QS"]] == 26 and v.table.moon_total == 39  # the charged values


# -- strong's worlds ----------------------------------------------------------------------------------

#: Knowledge checked over games with charges and boosts (random players charge and boost the most).
KNOWLEDGE_CONFIGS = CONFIGS + [
    ("turbo-nines", {"moon": "choice"}),
    ("turbo", {"bonus_card": "TD"}),
    ("partnership", {"turbo": True, "jd_bonus": -10, "booster_nines": True}),
]


@pytest.mark.parametrize("config", KNOWLEDGE_CONFIGS, ids=_id)
def test_knowledge_is_sound_and_worlds_keep_every_charged_card_with_its_charger(config) -> None:
    preset, options = config
    rules = Rules.make(preset, end_after_hands=2, **options)
    rng = random.Random(_id(config))
    checked = charged_unplayed = worlds = 0
    for k, (state, tricks) in enumerate(_game(rules, [_bot("random", s) for s in range(4)], _id(config))):
        seat = state.to_move
        for view_tricks in (tricks, None):
            v = bot_view(state, seat, view_tricks)
            know = infer(v)
            _check_sound(know, state)  # never rules out a card a seat holds
            hands, pile = sample_world(know, rng)
            _check_world(know, hands, pile)
            for s, charge in enumerate(v.charges):
                if s != seat and charge:
                    unplayed = mask_of(state.charges[s]) & state.hand_mask(s)
                    assert hands[s] & unplayed == unplayed, "a world without the charger's charged card"
                    charged_unplayed += bool(unplayed)
            if view_tricks is not None and k % 4 == 0 and v.legal & (v.legal - 1):
                _check_playable_world(v, hands, pile)
                worlds += 1
            checked += 1
    assert checked > 100 and worlds > 5
    if rules.turbo:
        assert charged_unplayed > 20


def test_a_world_where_the_charger_lacks_its_charged_card_is_never_sampled() -> None:
    # Seat 1 charged QS and still holds it: every world seat 3 imagines puts QS there, none elsewhere.
    rules = Rules.make("turbo")
    hands = {0: "5C 6C", 1: "QS 9D", 2: "JH 4S", 3: "KH AS"}
    state = position(rules, hands, trick="", leader=3, rest_taken_by=0, charges={1: "QS"}, suits_led="CDH")
    v = bot_view(state, 3)
    assert v.charged == mask_of(["QS"]) and v.charges[1] == v.charged
    know = infer(v)
    assert know.known[1] & mask_of(["QS"])
    rng = random.Random(5)
    for _ in range(300):
        hands_, _pile = sample_world(know, rng)
        assert hands_[1] >> CARD_INDEX["QS"] & 1
        assert not any(h >> CARD_INDEX["QS"] & 1 for s, h in enumerate(hands_) if s != 1)


def _first_club_trick(charge_tc: bool) -> GameState:
    """Seat 0 leads 2C; seat 1 (TC and diamonds; it charged TC, or nothing) follows with TC."""
    rules = Rules.make("turbo")
    state = new_game(rules).deal(deck_for(rules, {0: "2C 3C 4C 5C 6C 7C", 1: "TC 2D 3D 4D 5D 6D"}), "hold")
    for s in state.seats_to_charge():
        state = _charge(state, s, ("TC",) if s == 1 and charge_tc else ())
    return state.play("2C").play("TC")


def test_a_charged_card_played_to_the_first_trick_of_its_suit_was_its_holders_only_one() -> None:
    clubs = mask_of([c for c in CARD_NAMES if c[1] == "C"])
    state = _first_club_trick(charge_tc=True)
    know = infer(bot_view(state, 2, []))
    assert not know.allowed[1] & clubs  # it could not have played TC there with another club
    _check_sound(know, state)
    # Not charged, the same card says nothing of seat 1's other clubs.
    assert infer(bot_view(_first_club_trick(charge_tc=False), 2, [])).allowed[1] & clubs


def test_a_seat_that_does_not_follow_in_a_boost_round_is_void_and_every_hand_two_cards_shorter() -> None:
    rules = Rules.make("standard", booster_nines=True)
    deal = {0: "2C 3C", 1: "9C TC", 2: "4C 2D", 3: "5C 6C"}
    state = new_game(rules).deal(deck_for(rules, deal), "hold")
    for card in ("2C", "9C", "4C", "5C"):  # 9C follows clubs in the first round: the trick boosts
        state = state.play(card)
    v = bot_view(state, 3, [])
    assert v.trick_boosted and v.boost_round and state.to_move == 0
    for card in ("3C", "TC", "2D"):  # seat 2 has no club left for the second round
        state = state.play(card)
    v = bot_view(state, 3, [])
    know = infer(v)
    assert know.counts == tuple(len(state.hand(s)) for s in range(4)) == (11, 11, 11, 12)
    clubs = mask_of([c for c in CARD_NAMES if c[1] == "C"])
    assert not know.allowed[2] & clubs and know.allowed[0] & clubs
    _check_sound(know, state)
    state = state.play("6C")
    assert not state.trick and len(state.last_trick[1]) == 8
    know = infer(bot_view(state, 3, [(state.last_trick[0], tuple(state.last_trick[1]))]))
    assert know.counts == (11, 11, 11, 11) and not know.allowed[2] & clubs


def test_worlds_agree_with_a_boost_round_in_progress() -> None:
    rules = Rules.make("turbo-nines", end_after_hands=2)
    rng = random.Random(3)
    checked = 0
    for state, tricks in _game(rules, [_bot("random", s) for s in range(4)], "boost"):
        if not state.boost_round:
            continue
        seat = state.to_move
        v = bot_view(state, seat, tricks)
        assert v.boost_round and len(v.trick) >= 4
        know = infer(v)
        assert know.counts == tuple(len(state.hand(s)) for s in range(4))
        _check_sound(know, state)
        hands, pile = sample_world(know, rng)
        _check_world(know, hands, pile)
        _check_playable_world(v, hands, pile)
        checked += 1
    assert checked > 3


# -- strong's evaluation --------------------------------------------------------------------------------


def _scores(state: GameState, seat: int) -> dict[str, float]:
    bot = get_bot("strong", seed=1, playouts=16, time_limit=None)
    return {CARD_NAMES[c]: s for c, s in bot.evaluate(bot_view(state, seat))}


def test_strong_counts_the_ten_of_clubs_multiplier_the_heuristic_does_not() -> None:
    # Seat 3, last on TC 3C 4C with AC 2C, has taken 4 points: AC takes TC (its score x2, x4 if TC was
    # charged) and the last trick; 2C leaves TC to seat 0.
    hands = {0: "5D", 1: "6D", 2: "7D", 3: "AC 2C"}
    for charges, factor in (({}, 2), ({0: "TC"}, 4)):
        state = position(Rules.make("turbo"), hands, taken={3: "2H 3H 4H 5H"}, trick="TC 3C 4C", leader=0,
                         rest_taken_by=0, charges=charges, suits_led="C")
        assert get_bot("heuristic").choose_play(bot_view(state, 3)) == "AC"  # a clean trick, last: it sheds AC
        assert _scores(state, 3) == {"AC": 4 * factor, "2C": 4}
        assert _bot("strong", 1).choose_play(bot_view(state, 3)) == "2C"


def test_strong_scores_with_charged_values() -> None:
    # Seat 3 takes the trick with QS in it either way; charged, QS counts 26 (the hearts taken count 1).
    hands = {0: "5D", 1: "6D", 2: "7D", 3: "AS KS"}
    for charges, qs in (({}, 13), ({0: "QS"}, 26)):
        state = position(Rules.make("turbo"), hands, trick="QS 3S 4S", leader=0, rest_taken_by=0, charges=charges,
                         suits_led="S")
        assert set(_scores(state, 3).values()) == {qs}


def test_a_moon_that_wins_the_game_is_scored_as_the_game_not_as_a_hand() -> None:
    # dnf: seat 0 has taken every penalty card but 9H (on the table, led by seat 0) and seat 3's KH and
    # 4H; the three unseen cards are of three suits, so seat 0 takes the last trick whatever it leads.
    # If seat 3 ducks with 4H, seat 0 takes every penalty card and wins the game at once.
    hands = {0: "5C", 1: "4D", 2: "5S", 3: "KH 4H"}

    def at(rules: Rules, rest: int) -> GameState:
        return position(rules, hands, trick="9H 2D 3D", leader=0, rest_taken_by=rest)

    dnf = Rules.make("dnf")
    assert _scores(at(Rules.make("dnf", moon="new"), 0), 3) == {"KH": 3, "4H": 0}  # a normal new moon: 0
    assert _scores(at(dnf, 0), 3) == {"KH": 3, "4H": dnf.target}  # a moon that wins: the game lost
    assert _bot("strong", 1).choose_play(bot_view(at(dnf, 0), 3)) == "KH"
    # Seat 3 itself has taken every other penalty card: KH takes 9H, then 4H the last trick: the game won.
    assert _scores(at(dnf, 3), 3) == {"KH": -dnf.target, "4H": 64}  # 77 less three hearts, JD -10


def test_the_moon_choice_is_weighed_with_the_charged_values_and_the_multiplier() -> None:
    # moon=choice: seat 3 has taken every card but the last trick's (QS charged, TC among them) and
    # takes that one too; the heuristic's old/new comparison is the engine's own scoring of each.
    rules = Rules.make("turbo", moon="choice")
    hands = {0: "2C", 1: "3C", 2: "4C", 3: "AC"}
    state = position(rules, hands, leader=0, rest_taken_by=3, charges={3: "QS"}, suits_led="CDHS",
                     totals=[60, 70, 80, 50])
    for card in ("2C", "3C", "4C", "AC"):
        state = state.play(card)
    assert state.phase == "moon" and state.shooter == (3, "moon") and state.moon_total == 39
    v = bot_view(state, 3)
    for scoring in ("old", "new"):
        assert _moon_outcome(v, scoring).totals == state.choose_moon(3, scoring).totals
    assert state.choose_moon(3, "new").totals[3] == 50 - 2 * (39 + 10)  # (-M, JD -10) x2: seat 3 took TC
    assert get_bot("heuristic").choose_moon(v) in ("old", "new")
