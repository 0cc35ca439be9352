"""The engine against OpenSpiel's ``hearts``, hand by hand: the same deal, pass and plays in both, and
at every step the two must agree (README, "The engine, for bot authors"; RULES.md §2 and §3).

For each hand both engines get the same four hands, the same pass direction and passed cards, and
the same plays, each chosen from pbem's legal set. The test asserts:

- after the deal, and again after the pass, that OpenSpiel's hands (``to_struct().hands``) are the
  hands pbem holds, and that both are in the pass phase, or both in play, together;
- before every pass, that OpenSpiel's legal actions are the passing seat's hand;
- before every play, that the seat to move is the same and the legal sets are equal;
- after every trick, that its winner (OpenSpiel's next player) is pbem's ``TrickWon.winner`` and
  that each seat's running points are OpenSpiel's ``points(seat)``; the last trick has no next
  player, so its winner is checked through the scores;
- at the end, that pbem's ``HandScored.points`` are OpenSpiel's returns mapped as below.

**The mapping of OpenSpiel's 8 game parameters** (``pyspiel.load_game("hearts").get_parameters()``,
OpenSpiel's default in brackets) to pbem's options (docs/rules.md), on pbem's ``standard`` rules
otherwise (4 players, queen of spades 13, hearts 1 each, ``moon`` ``old``: OpenSpiel's fixed rules):

- ``pass_cards`` [true]: OpenSpiel draws the pass direction (no pass, left, across, right) at its
  first chance node; pbem gets that hand's direction as its ``pass_cycle`` (``hold`` for no pass).
  With false OpenSpiel's only direction is no pass: ``pass_cycle`` ``[hold]``. Both count seats
  clockwise, and left is the next seat (OpenSpiel's ``(player + direction) % 4``).
- ``no_pts_on_first_trick`` [true]: ``no_pts_on_first_trick`` (OpenSpiel keeps hearts and the queen
  of spades off the first trick; pbem every card worth points, the same cards: the jack of
  diamonds' bonus is not a penalty).
- ``can_lead_any_club`` [false]: ``first_lead`` ``any_club`` (false: ``two_of_clubs``).
- ``can_lead_hearts_instead_of_qs`` [false]: ``can_lead_hearts_instead_of_qs``.
- ``avoid_all_tricks_bonus`` [false]: ``avoid_all_tricks_bonus`` −5 (false: 0).
- ``qs_breaks_hearts`` [true]: ``qs_breaks_hearts`` (pbem's default is false).
- ``must_break_hearts`` [true]: ``must_break_hearts``.
- ``jd_bonus`` [false]: ``jd_bonus`` −10 with ``bonus_card`` ``JD`` (false: 0).

Every one of the 256 combinations has its pbem rules, so none is left out: the test plays every
combination, and in a second set OpenSpiel's defaults and each single parameter flipped from them.
What OpenSpiel cannot express (other player counts, ``moon`` other than ``old``, other card values,
``left_of_dealer``, ``qs_lead_needs_broken_hearts``, ``qs_must_drop_when_safe``, the RULES.md §6
variants) is not compared here.

**Scores.** OpenSpiel adds each trick's points to its winner (a heart 1, the queen 13, and −10 for
the jack of diamonds with ``jd_bonus``: that is ``points(seat)`` during the hand). At the end, if one
seat won every trick that held a penalty card (every heart and the queen) it has shot the moon:
it gets −26 and every other seat +26, that is the old moon (the shooter 0, the others 26) with the
jack's −10 still counted for whoever took it, as pbem scores ``moon`` ``old`` with a ``jd_bonus``
("moon or not"). Without a moon, ``avoid_all_tricks_bonus`` gives −5 to each seat that won no trick,
as pbem does "only in a hand where no moon or sun is scored". Its returns are then ``26 − points``;
so pbem's hand score of seat s is ``26 − returns()[s]``.

Every play is chosen from pbem's legal set (sorted, so that the hands depend on the rules only, not
on the order the engine lists them in), in one of three styles, a third of the hands each: uniformly
at random; one seat shooting the moon (it passes its lowest cards and plays its highest legal card,
the others pass their highest, play their lowest and throw their penalty cards to a trick it is
winning), so that moons, with and without the jack and the avoid-all-tricks bonus, are scored often;
and every seat keeping its penalty cards while it can, so that hearts stay unbroken late and leaders
are left with the queen of spades and hearts. Half the deals are uniform, half lumpy (each seat
drawing the suits with weights of its own), so that voids, and the first-trick and breaking rules
they bring into play, are frequent. Everything is seeded: 3 hands of each of the 256 combinations
and 24 of each of the 9 single flips, 984 hands. A last test maps each parameter wrongly in turn
and checks that these hands catch it.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pyspiel
import pytest

from pbem.engine import RANKS, SUITS, HandScored, PlayCard, Rules, TrickWon, apply, new_game

#: OpenSpiel hearts' parameters and their defaults.
DEFAULTS: dict[str, bool] = {
    "pass_cards": True,
    "no_pts_on_first_trick": True,
    "can_lead_any_club": False,
    "can_lead_hearts_instead_of_qs": False,
    "avoid_all_tricks_bonus": False,
    "qs_breaks_hearts": True,
    "must_break_hearts": True,
    "jd_bonus": False,
}
PARAMS = tuple(DEFAULTS)
#: OpenSpiel's pass direction (its first chance outcome) as pbem names it.
DIRECTION = {0: "hold", 1: "left", 2: "across", 3: "right"}
#: OpenSpiel's returns are 26 minus the points taken.
TOTAL = 26
ALL_CARDS = tuple(r + s for s in SUITS for r in RANKS)
PENALTY = frozenset({"QS"} | {r + "H" for r in RANKS})

#: Every combination of the 8 parameters, each played this many hands.
HANDS_PER_COMBINATION = 3
#: OpenSpiel's defaults, and each parameter flipped alone from them, each this many hands.
HANDS_PER_FLIP = 24

#: How the seats play a hand (by its seed): at random; one seat shooting the moon, helped by the others;
#: every seat keeping its penalty cards while it can (hearts stay unbroken late).
STYLES = ("random", "shoot", "hoard")

COMBINATIONS = [dict(zip(PARAMS, bits)) for bits in itertools.product((False, True), repeat=len(PARAMS))]
FLIPS = [("defaults", dict(DEFAULTS))] + [(f"{name}={not DEFAULTS[name]}", {**DEFAULTS, name: not DEFAULTS[name]})
                                           for name in PARAMS]


class Disagreement(AssertionError):
    """pbem and OpenSpiel differ (the message says where)."""


def check(same: bool, what: str, **details: Any) -> None:
    if not same:
        raise Disagreement(f"{what}: " + ", ".join(f"{k}={v!r}" for k, v in details.items()))


def action(card: str) -> int:
    """OpenSpiel's action of a card: rank * 4 + suit, ranks 2 … A, suits C D H S."""
    return RANKS.index(card[0]) * 4 + SUITS.index(card[1])


def card_of(act: int) -> str:
    return RANKS[act // 4] + SUITS[act % 4]


def rank(card: str) -> int:
    return RANKS.index(card[0])


def pbem_rules(params: dict[str, bool], direction: str) -> Rules:
    """pbem's rules for OpenSpiel's parameters (the module docstring), this hand passing ``direction``."""
    return Rules(
        pass_cycle=(direction if params["pass_cards"] else "hold",),
        no_pts_on_first_trick=params["no_pts_on_first_trick"],
        first_lead="any_club" if params["can_lead_any_club"] else "two_of_clubs",
        can_lead_hearts_instead_of_qs=params["can_lead_hearts_instead_of_qs"],
        avoid_all_tricks_bonus=-5 if params["avoid_all_tricks_bonus"] else 0,
        qs_breaks_hearts=params["qs_breaks_hearts"],
        must_break_hearts=params["must_break_hearts"],
        jd_bonus=-10 if params["jd_bonus"] else 0,
    )


_GAMES: dict[tuple[bool, ...], Any] = {}


def openspiel_game(params: dict[str, bool]) -> Any:
    key = tuple(params[name] for name in PARAMS)
    if key not in _GAMES:
        _GAMES[key] = pyspiel.load_game("hearts", dict(params))
    return _GAMES[key]


def draw_hands(rng: random.Random, lumpy: bool) -> list[list[str]]:
    """Four hands of 13; ``lumpy``: each card goes to a seat with weights by seat and suit (voids)."""
    deck = list(ALL_CARDS)
    rng.shuffle(deck)
    if not lumpy:
        return [deck[seat::4] for seat in range(4)]
    weights = [[rng.random() ** 3 + 0.01 for _ in SUITS] for _ in range(4)]
    hands: list[list[str]] = [[] for _ in range(4)]
    for card in deck:
        open_seats = [seat for seat in range(4) if len(hands[seat]) < 13]
        seat = rng.choices(open_seats, [weights[s][SUITS.index(card[1])] for s in open_seats])[0]
        hands[seat].append(card)
    return hands


def pbem_deck(rules: Rules, hands: list[list[str]]) -> tuple[str, ...]:
    """The deck that pbem deals as ``hands``: which seat gets each position is found by dealing a probe."""
    probe = new_game(rules).deal(ALL_CARDS)
    seat_at = [next(seat for seat in range(4) if card in probe.hand(seat)) for card in ALL_CARDS]
    left = [list(hand) for hand in hands]
    return tuple(left[seat].pop() for seat in seat_at)


def shooting_play(legal: list[str], seat: int, shooter: int, trick: list[tuple[int, str]]) -> str:
    """A play that helps ``shooter`` take every penalty card (``legal`` sorted by rank)."""
    if seat == shooter:
        return legal[-1]
    if not trick or any(card[1] == trick[0][1][1] for card in legal):
        return legal[0]
    led = trick[0][1][1]
    winning = max((c for c in trick if c[1][1] == led), key=lambda c: rank(c[1]))[0]
    shooter_to_come = shooter not in [s for s, _ in trick]
    penalty = [c for c in legal if c in PENALTY]
    safe = [c for c in legal if c not in PENALTY]
    if winning == shooter or shooter_to_come:
        return (penalty or legal)[-1]
    return (safe or legal)[-1]


def play_hand(params: dict[str, bool], seed: int, wrong: str | None = None) -> HandScored:
    """One hand in both engines, checking every step (the module docstring); pbem's score of it.

    ``wrong`` names a parameter mapped to pbem inverted: the check that the hands catch it."""
    rng = random.Random(seed)
    lumpy, style = seed % 2 == 1, STYLES[seed // 2 % len(STYLES)]
    shooting = style == "shoot"
    mapped = dict(params)
    if wrong:
        mapped[wrong] = not mapped[wrong]
    game = openspiel_game(params)
    theirs = game.new_initial_state()
    # The pass direction, a chance node: its legal actions (with pass_cards false, no pass alone;
    # chance_outcomes() lists all four directions whatever pass_cards says).
    theirs.apply_action(rng.choice(theirs.legal_actions()))
    direction = DIRECTION[theirs.history()[0]]
    rules = pbem_rules(mapped, direction)

    hands = draw_hands(rng, lumpy)
    for k in range(13):
        for seat in range(4):
            theirs.apply_action(action(hands[seat][k]))
    ours = new_game(rules).deal(pbem_deck(rules, hands))
    dealt = [sorted(hand) for hand in hands]
    check([sorted(hand) for hand in theirs.to_struct().hands] == dealt, "OpenSpiel's deal")
    check([sorted(ours.hand(s)) for s in range(4)] == dealt, "pbem's deal")
    shooter = seat_to_shoot(hands)
    passing = direction != "hold"
    check((ours.phase == "pass") == passing and theirs.to_struct().phase == ("Pass" if passing else "Play"),
          "phase after the deal", pbem=ours.phase, openspiel=theirs.to_struct().phase, direction=direction)

    if passing:
        for seat in range(4):
            hand = sorted(ours.hand(seat), key=action)
            check(theirs.current_player() == seat and theirs.legal_actions() == [action(c) for c in hand],
                  "the passing seat's hand", seat=seat)
            chosen = (sorted(hand, key=rank)[:3] if seat == shooter
                      else sorted(hand, key=rank)[-3:]) if shooting else rng.sample(hand, 3)
            ours = ours.pass_cards(seat, chosen)
            for card in chosen:
                theirs.apply_action(action(card))
        check(ours.phase == "play" and theirs.to_struct().phase == "Play", "phase after the pass")
        check([sorted(theirs.to_struct().hands[s]) for s in range(4)] == [sorted(ours.hand(s)) for s in range(4)],
              "hands after the pass", direction=direction)

    points = [0] * 4
    trick: list[tuple[int, str]] = []
    scored = None
    while ours.phase == "play":
        seat = ours.to_move
        legal = sorted(ours.legal_cards(), key=action)
        check(theirs.current_player() == seat, "the seat to move", pbem=seat, openspiel=theirs.current_player(),
              trick=trick)
        check(sorted(theirs.legal_actions()) == [action(c) for c in legal], "the legal cards", seat=seat,
              pbem=legal, openspiel=[card_of(a) for a in theirs.legal_actions()], trick=trick,
              hand=ours.hand(seat))
        by_rank = sorted(legal, key=lambda c: (rank(c), c[1]))
        if style == "shoot":
            card = shooting_play(by_rank, seat, shooter, trick)
        elif style == "hoard":
            card = rng.choice([c for c in legal if c not in PENALTY] or legal)
        else:
            card = rng.choice(legal)
        ours, events = apply(ours, PlayCard(seat, card))
        theirs.apply_action(action(card))
        trick.append((seat, card))
        for event in events:
            if isinstance(event, TrickWon):
                points[event.winner] += event.points + (rules.jd_bonus if rules.bonus_card in event.cards else 0)
                if not theirs.is_terminal():
                    check(theirs.current_player() == event.winner, "the trick's winner", trick=trick,
                          pbem=event.winner, openspiel=theirs.current_player())
                    check([theirs.points(s) for s in range(4)] == points, "the points taken", trick=trick,
                          pbem=points, openspiel=[theirs.points(s) for s in range(4)])
                trick = []
            elif isinstance(event, HandScored):
                scored = event
    check(theirs.is_terminal() and scored is not None, "the hand's end")
    expected = [TOTAL - r for r in theirs.returns()]
    check(list(scored.points) == expected, "the hand's scores", pbem=scored.points, openspiel=expected,
          moon=scored.moon, tricks_won=scored.tricks_won)
    return scored


def seat_to_shoot(hands: list[list[str]]) -> int:
    """The seat with the highest cards (the sum of their ranks)."""
    return max(range(4), key=lambda seat: sum(rank(c) for c in hands[seat]))


def suite() -> list[tuple[dict[str, bool], int]]:
    """Every hand of the two tests below, as (OpenSpiel's parameters, seed)."""
    return ([(params, seed) for params, seeds in zip(COMBINATIONS, combination_seeds()) for seed in seeds]
            + [(params, seed) for (_, params), seeds in zip(FLIPS, flip_seeds()) for seed in seeds])


def combination_seeds() -> list[range]:
    """The seeds of each combination's hands: consecutive over the combinations, so that every deal and
    play style comes round evenly."""
    n = HANDS_PER_COMBINATION
    return [range(n * i, n * (i + 1)) for i in range(len(COMBINATIONS))]


def flip_seeds() -> list[range]:
    n = HANDS_PER_FLIP
    return [range(100_000 + n * i, 100_000 + n * (i + 1)) for i in range(len(FLIPS))]


def test_openspiel_hearts_has_the_eight_parameters_mapped_here():
    assert pyspiel.load_game("hearts").get_parameters() == DEFAULTS


def test_every_combination_of_the_eight_parameters_agrees():
    seen: Counter[str] = Counter()
    for params, seeds in zip(COMBINATIONS, combination_seeds()):
        for seed in seeds:
            scored = play_hand(params, seed)
            seen["hands"] += 1
            if scored.moon:
                seen["moon"] += 1
                seen["moon with jd_bonus"] += params["jd_bonus"]
                seen["moon with avoid_all_tricks_bonus"] += params["avoid_all_tricks_bonus"] and 0 in scored.tricks_won
            elif params["avoid_all_tricks_bonus"] and 0 in scored.tricks_won:
                seen["avoid_all_tricks_bonus scored"] += 1
    assert seen["hands"] == 256 * HANDS_PER_COMBINATION
    # The scoring rules met, not merely allowed: each of these happens in the seeded hands.
    for what in ("moon", "moon with jd_bonus", "moon with avoid_all_tricks_bonus", "avoid_all_tricks_bonus scored"):
        assert seen[what] >= 5, (what, seen)


@pytest.mark.parametrize("params", [p for _, p in FLIPS], ids=[name for name, _ in FLIPS])
def test_openspiel_defaults_and_each_parameter_flipped_alone_agree(params):
    i = next(k for k, (_, p) in enumerate(FLIPS) if p == params)
    for seed in flip_seeds()[i]:
        play_hand(params, seed)


@pytest.mark.parametrize("wrong", PARAMS)
def test_a_parameter_mapped_wrongly_is_caught(wrong):
    """With one parameter's pbem option inverted, some hand of the two tests above disagrees."""
    with pytest.raises(Disagreement):
        for params, seed in suite():
            play_hand(params, seed, wrong=wrong)
