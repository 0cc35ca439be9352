"""Property tests over random playouts, for every preset and player count and some option mixes.

Each example plays a game (up to ``MAX_HANDS`` hands) from decks and choices drawn from a seeded
``random.Random``. Beside the engine runs a *shadow*: the same game worked out again from RULES.md
by :mod:`tests.engine.reference` and plain sets, so every step checks the engine against the
text, not against itself:

- cards are conserved (hands + trick + taken + passes in flight = the cards in play);
- while the hand is on, the legal set is never empty and equals rule 10's; every legal card
  applies; every other card in hand is refused with the reason the rules give; a card not held is
  refused as such; a refused move leaves the state unchanged;
- trick winners and points, hearts broken, hand points (moons, bonus, avoid bonus), totals and the
  end of the game follow the rules;
- when ``unplayed_can_change_score()`` says no, playing the rest two different ways scores the same;
- ``GameState.from_dict(state.to_dict())`` (through JSON) equals the state and plays on the same;
- ``seat_view`` never shows a seat another seat's hand or passed cards;
- replaying the move log (through its JSON form) gives exactly the incremental state.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.engine import (
    PRESETS,
    CardPlayed,
    ChooseMoon,
    Deal,
    GameOver,
    GameState,
    HandDealt,
    HandScored,
    HeartsBroken,
    IllegalMove,
    InvalidRules,
    Moon,
    MoonChoiceNeeded,
    PassCards,
    PassesExchanged,
    PlayCard,
    Rules,
    TrickWon,
    apply,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
)

from . import reference as ref
from .helpers import ALL_CARDS, canon, deck_for, in_play, sweep_hands

MAX_HANDS = 3
#: Examples per parametrised case: a tenth of the profile's count (ci: 5, dev: 10), at least 3.
EXAMPLES = max(3, settings().max_examples // 10)
CARD_SET = frozenset(ALL_CARDS)


def _preset_cases() -> list[Any]:
    cases = []
    for preset in sorted(PRESETS):
        if {"partnership", "kitty", "turbo", "dealer_calls_pass", "decks"} & set(PRESETS[preset]):
            continue  # the §6 variants' shadow is in test_variant_properties.py
        for players in range(3, 8):
            try:
                Rules.make(preset, players=players)
            except InvalidRules:
                continue
            cases.append(pytest.param(preset, {"players": players}, id=f"{preset}-{players}p"))
    return cases


OPTION_MIXES = {
    "qs-drop": {"qs_must_drop_when_safe": True, "moon": "new"},
    "qs-lead-rules": {"qs_lead_needs_broken_hearts": True, "can_lead_hearts_instead_of_qs": True},
    "hearts-instead-of-qs": {"can_lead_hearts_instead_of_qs": True, "qs_breaks_hearts": True},
    "any-club": {"first_lead": "any_club", "pass_cycle": ["scatter"], "avoid_all_tricks_bonus": -5},
    "sun-safety": {"sun": True, "moon": "safety", "tie": "share", "target": 40},
    "sun-choice": {"sun": True, "moon": "choice", "players": 3, "pass_cycle": ["scatter"], "pass_count": 4},
    "spot-capped-td": {"heart_values": "spot_capped", "jd_bonus": -5, "bonus_card": "TD", "lowest_wins": False},
    "reset": {"exact_target_reset": 0, "target": 26, "pass_count": 1, "players": 6, "pass_cycle": ["across", "left"]},
    "end-after": {"end_after_hands": 2, "pass_count": 2, "players": 5, "moon": "new"},
    "left-of-dealer-strict": {"first_lead": "left_of_dealer", "players": 7, "pass_count": 4,
                              "extra_penalties": {"KS": 10, "AS": 7}},
}


def _target(rules: Rules) -> int:
    """A low target so that games end (and rule 9 is exercised) within a few hands."""
    return max(1, ref.moon_total(rules))


class Shadow:
    """The game worked out again with plain sets from RULES.md (via ``reference``)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.n = rules.players
        self.in_play = set(in_play(rules))
        self.hand_no = 0
        self.totals = [0] * self.n
        self.over = False
        self.winners: tuple[int, ...] = ()

    # -- the deal and the pass ------------------------------------------------------------------

    def deal(self, deck: tuple[str, ...], override: str | None = None) -> None:
        r, n = self.rules, self.n
        self.hand_no += 1
        self.dealer = (self.hand_no - 2) % n
        self.hands = [set() for _ in range(n)]
        for p, card in enumerate(deck):
            self.hands[(self.dealer + 1 + p) % n].add(card)
        cycle = r.pass_cycle
        self.direction = override or ("hold" if r.pass_count == 0 else cycle[(self.hand_no - 1) % len(cycle)])
        self.passes: dict[int, list[str]] = {}
        self.received = [set() for _ in range(n)]
        self.exchanged = self.direction == "hold"
        self.trick: list[tuple[int, str]] = []
        self.taken = [set() for _ in range(n)]
        self.won = [0] * n
        self.broken = False
        self.tricks_played = 0
        self.moon_pending: tuple[int, str] | None = None
        if self.exchanged:
            self._start_play()

    def pass_cards(self, seat: int, chosen: list[str]) -> None:
        self.passes[seat] = list(chosen)
        self.hands[seat] -= set(chosen)
        if len(self.passes) == self.n:
            n = self.n
            for s, ch in self.passes.items():
                if self.direction == "scatter":
                    k = len(ch) // (n - 1)
                    for j in range(n - 1):
                        self.received[(s + 1 + j) % n] |= set(ch[j * k:(j + 1) * k])
                else:
                    step = {"left": 1, "right": n - 1, "across": n // 2}[self.direction]
                    self.received[(s + step) % n] |= set(ch)
            for s in range(n):
                self.hands[s] |= self.received[s]
            self.exchanged = True
            self._start_play()

    def _start_play(self) -> None:
        if self.rules.first_lead == "left_of_dealer":
            self.to_move = (self.dealer + 1) % self.n
        else:
            low = ref.lowest_club(self.rules)
            self.to_move = next(s for s in range(self.n) if low in self.hands[s])

    # -- play -------------------------------------------------------------------------------------

    def legal(self) -> set[str]:
        return ref.legal_cards(self.rules, self.hands[self.to_move], [c for _, c in self.trick],
                               self.tricks_played == 0, self.broken)

    def play(self, card: str) -> tuple[int, int] | None:
        """Play ``card``; returns (winner, points) when it completes a trick."""
        seat = self.to_move
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        if card[1] == "H" or (card == "QS" and self.rules.qs_breaks_hearts):
            self.broken = True
        if len(self.trick) < self.n:
            self.to_move = (seat + 1) % self.n
            return None
        cards = [c for _, c in self.trick]
        winner = ref.trick_winner(cards, self.trick[0][0], self.n)
        points = sum(ref.card_value(self.rules, c) for c in cards)
        self.taken[winner] |= set(cards)
        self.won[winner] += 1
        self.trick = []
        self.tricks_played += 1
        self.to_move = winner
        return winner, points

    @property
    def hand_over(self) -> bool:
        return self.tricks_played == len(self.in_play) // self.n

    def score(self, choice: str | None) -> list[int]:
        """Rule 9 for the hand just finished; ``choice`` answers moon=choice. Returns the points."""
        r = self.rules
        who = ref.shooter(r, self.taken, self.won)
        moon = None
        if who is not None:
            scoring = {"old": "old", "new": "new", "choice": choice, "safety": "safety"}[r.moon]
            if scoring == "safety":
                scoring = ref.safety_scoring(r, self.taken, self.won, who, self.totals, self.hand_no)
            moon = (who[0], who[1], scoring)
        points = ref.hand_points(r, self.taken, self.won, moon)
        self.totals = ref.add_totals(r, self.totals, points)
        won = ref.winners(r, self.totals, self.hand_no)
        self.last_moon = moon
        if won is not None:
            self.over, self.winners = True, won
        return points


# -- checks ------------------------------------------------------------------------------------------


CARD_TOKEN = re.compile(r'"([2-9TJQKA][CDHS])"')


def check_views(state: GameState, sh: Shadow) -> None:
    for v in range(sh.n):
        text = json.dumps(seat_view(state, v))
        view = json.loads(text)
        assert view["hand"] == canon(sh.hands[v])
        hidden = set()
        for u in range(sh.n):
            if u != v:
                hidden |= sh.hands[u]
                if not sh.exchanged:
                    hidden |= set(sh.passes.get(u, ()))
        hidden -= set(sh.passes.get(v, ()))  # a seat knows the cards it passed
        leaked = set(CARD_TOKEN.findall(text)) & hidden
        assert not leaked, f"seat {v} sees {sorted(leaked)}"
        if v != state.to_move:
            assert view["legal"] == []


def check_conservation(state: GameState, sh: Shadow, d: dict) -> None:
    """``d`` is ``state.to_dict()``."""
    held = [c for s in range(sh.n) for c in state.hand(s)]
    table = [c for _, c in state.trick_cards()]
    taken = [c for cards in d["taken"] for c in cards]
    flight = [] if sh.exchanged else [c for p in d["passes"] if p for c in p]
    everything = held + table + taken + flight
    assert len(everything) == len(set(everything)) == len(sh.in_play)
    assert set(everything) == sh.in_play


def check_same(state: GameState, sh: Shadow, d: dict) -> None:
    for s in range(sh.n):
        assert set(state.hand(s)) == sh.hands[s], f"seat {s}"
    assert list(state.trick_cards()) == [tuple(x) for x in sh.trick]
    assert state.hearts_broken == sh.broken
    assert list(state.tricks_won) == sh.won
    assert [set(t) for t in d["taken"]] == sh.taken
    assert list(state.totals) == sh.totals
    if state.phase == "play":
        assert state.to_move == sh.to_move


def check_round_trip(state: GameState, d: dict | None = None) -> GameState:
    """``d``, when given, is ``state.to_dict()``."""
    data = json.loads(json.dumps(d if d is not None else state.to_dict()))
    again = GameState.from_dict(data)
    assert again == state
    assert again.legal_cards() == state.legal_cards()
    return again


def check_every_card(state: GameState, sh: Shadow, before: dict) -> None:
    """Every legal card applies; every other card held is refused with the rules' reason; the state
    is unchanged by the refusals."""
    legal = set(state.legal_cards())
    assert legal, "no legal card while the hand is on"
    assert legal == sh.legal()
    legal_list = canon(legal)
    seat = state.to_move
    trick = [c for _, c in sh.trick]
    for card in sh.hands[seat]:
        if card in legal:
            after = state.play(card)
            assert card not in after.hand(seat)
            continue
        with pytest.raises(IllegalMove) as info:
            state.play(card)
        expected = ref.refusal_reason(sh.rules, sh.hands[seat], trick, sh.tricks_played == 0, card, legal)
        assert info.value.code == expected, (card, info.value)
        assert info.value.details["card"] == card
        assert info.value.details["legal"] == legal_list
        if expected == "MUST_FOLLOW_SUIT":
            led = trick[0][1]
            assert info.value.details["led_suit"] == led
            assert info.value.details["held"] == canon(c for c in sh.hands[seat] if c[1] == led)
    others = sorted(sh.in_play - sh.hands[seat])
    if others:
        with pytest.raises(IllegalMove) as info:
            state.play(others[0])
        assert info.value.code == "CARD_NOT_IN_HAND"
    assert state.to_dict() == before


def settle_scores(state: GameState, policy) -> tuple[int, ...]:
    """Play the rest of the hand with ``policy`` (moon answered ``old``); the hand's points."""
    while state.phase == "play":
        state = state.play(policy(state))
    if state.phase == "moon":
        state = state.choose_moon(state.shooter[0], "old")
    return state.history[-1][0]


def stacked_deck(rules: Rules, hand_no: int, deck: list[str], rng: random.Random) -> tuple[list[str], int]:
    """A deck where one seat holds every club and the top spades (or, when the clubs do not fit in
    a hand, the highest cards), so that playing high it often takes every penalty card or trick.
    Returns the deck and that seat (the leader when the player left of the dealer leads)."""
    n = rules.players
    size = len(deck) // n
    if rules.first_lead == "left_of_dealer":
        seat = (hand_no - 1) % n  # left of hand ``hand_no``'s dealer
    else:
        seat = rng.randrange(n)
    if sum(c[1] == "C" for c in deck) <= size:
        mine = sweep_hands(rules, seat)[seat]
    else:
        mine = sorted(deck, key=lambda c: -ref.rank(c))[:size]
    rest = [c for c in deck if c not in set(mine)]
    hands = {seat: mine}
    for k, s in enumerate(s for s in range(n) if s != seat):
        hands[s] = rest[k * size:(k + 1) * size]
    return list(deck_for(rules, hands, hand_no)), seat


# -- the playout ---------------------------------------------------------------------------------------


def playout(rules: Rules, seed: int) -> None:
    rng = random.Random(seed)
    state = new_game(rules)
    sh = Shadow(rules)
    moves: list = []

    def do(move) -> tuple:
        nonlocal state
        state, events = apply(state, move)
        moves.append(move)
        return events

    while not sh.over and sh.hand_no < MAX_HANDS:
        # Deal: usually shuffled; sometimes stacked so that one seat can sweep (moons, suns).
        deck = list(in_play(rules))
        rng.shuffle(deck)
        greedy = override = None
        if rng.random() < 0.3:
            deck, greedy = stacked_deck(rules, sh.hand_no + 1, deck, rng)
            if rng.random() < 0.5:
                override = "hold"  # keep the stacked hand as dealt
        events = do(Deal(tuple(deck), override))
        sh.deal(tuple(deck), override)
        assert events[0] == HandDealt(sh.hand_no, sh.dealer, sh.direction)
        assert state.phase == ("play" if sh.exchanged else "pass")
        check_same(state, sh, state.to_dict())

        # Passes, in a random order.
        order = list(range(sh.n))
        rng.shuffle(order)
        for seat in order if not sh.exchanged else []:
            d = state.to_dict()
            check_conservation(state, sh, d)
            check_views(state, sh)
            if rng.random() < 0.5:
                state = check_round_trip(state, d)
            hand = sorted(sh.hands[seat])
            chosen = rng.sample(hand, rules.pass_count)
            if greedy == seat:  # keep the sweeping cards
                chosen = sorted(hand, key=lambda c: (c[1] in "CS", ref.rank(c)))[: rules.pass_count]
            events = do(PassCards(seat, tuple(chosen)))
            sh.pass_cards(seat, chosen)
            d = state.to_dict()
            if sh.exchanged:
                ex = [e for e in events if isinstance(e, PassesExchanged)]
                assert ex == [PassesExchanged(sh.direction, tuple(tuple(canon(r)) for r in sh.received))]
            else:
                with pytest.raises(IllegalMove) as info:
                    state.pass_cards(seat, chosen)
                assert info.value.code == "ALREADY_PASSED"
            check_same(state, sh, d)

        # Play the hand.
        certain_points = None
        hearts_events = 0
        while not sh.hand_over:
            d = state.to_dict()
            check_conservation(state, sh, d)
            check_same(state, sh, d)
            check_every_card(state, sh, d)
            check_views(state, sh)
            only = state.only_legal_card()
            legal = canon(sh.legal())
            assert only == (legal[0] if len(legal) == 1 else None)
            if certain_points is None and not state.unplayed_can_change_score():
                low = settle_scores(state, lambda s: s.legal_cards()[0])
                high = settle_scores(state, lambda s: s.legal_cards()[-1])
                assert low == high, "the rest of the hand changed a score"
                certain_points = low
            if rng.random() < 0.5:
                state = check_round_trip(state, d)
            card = max(legal, key=ref.rank) if greedy == state.to_move else rng.choice(legal)
            seat, trick_no = state.to_move, sh.tricks_played + 1
            events = do(PlayCard(seat, card))
            done = sh.play(card)
            assert events[0] == CardPlayed(seat, card, trick_no)
            hearts_events += sum(isinstance(e, HeartsBroken) for e in events)
            if done is not None:
                won = [e for e in events if isinstance(e, TrickWon)]
                assert len(won) == 1 and (won[0].winner, won[0].points) == done
        assert hearts_events == (1 if sh.broken else 0)

        # Score: answer a moon choice if asked.
        choice = None
        if state.phase == "moon":
            assert isinstance(events[-1], MoonChoiceNeeded)
            who = state.shooter[0]
            assert events[-1] == MoonChoiceNeeded(*ref.shooter(rules, sh.taken, sh.won))
            wrong = (who + 1) % sh.n
            with pytest.raises(IllegalMove) as info:
                state.choose_moon(wrong, "old")
            assert info.value.code == "NOT_THE_SHOOTER"
            state = check_round_trip(state)
            answer = rng.choice(["old", "new", "safety"])
            events = do(ChooseMoon(who, answer))
            choice = answer
            if answer == "safety":
                choice = ref.safety_scoring(rules, sh.taken, sh.won, ref.shooter(rules, sh.taken, sh.won),
                                            sh.totals, sh.hand_no)
        points = sh.score(choice)
        hs = [e for e in events if isinstance(e, HandScored)]
        assert len(hs) == 1
        assert list(hs[0].points) == points
        assert list(hs[0].totals) == sh.totals
        expected_moon = None if sh.last_moon is None else Moon(*sh.last_moon)
        assert hs[0].moon == expected_moon
        if certain_points is not None and sh.last_moon is None:
            assert list(certain_points) == points
        # Points add up to the moon total, or the moon outcome, plus the bonus adjustments.
        m = ref.moon_total(rules)
        bonus = rules.jd_bonus if rules.jd_bonus and rules.bonus_card in sh.in_play else 0
        if sh.last_moon is None:
            total = m + rules.avoid_all_tricks_bonus * sh.won.count(0)
        else:
            mm = m * (2 if sh.last_moon[1] == "sun" else 1)
            total = -mm if sh.last_moon[2] == "new" else mm * (sh.n - 1)
        assert sum(points) == total + bonus
        over = [e for e in events if isinstance(e, GameOver)]
        if sh.over:
            assert state.phase == "over" and state.winners == sh.winners
            assert over and over[0].winners == sh.winners and list(over[0].totals) == sh.totals
        else:
            assert state.phase == "deal" and not over
        check_conservation_after_hand(state, sh)
        check_views(state, sh)
        state = check_round_trip(state)
        assert replay(rules, moves) == state


    # The move log, through JSON, replays to the same state.
    log = json.loads(json.dumps([move_to_dict(m) for m in moves]))
    assert [move_from_dict(d) for d in log] == moves
    assert replay(rules, (move_from_dict(d) for d in log)) == state


def check_conservation_after_hand(state: GameState, sh: Shadow) -> None:
    taken = [c for cards in state.to_dict()["taken"] for c in cards]
    assert sorted(taken) == sorted(sh.in_play)
    assert all(not state.hand(s) for s in range(sh.n))


@pytest.mark.parametrize(("preset", "options"), _preset_cases())
@settings(max_examples=EXAMPLES, deadline=None)  # a whole game per example; no timing asserted
@given(seed=st.integers(0, 2**32 - 1))
def test_playouts_every_preset_and_player_count(preset, options, seed):
    rules = Rules.make(preset, **options)
    rules = rules.with_options(target=_target(rules)) if rules.end_after_hands is None else rules
    playout(rules, seed)


@pytest.mark.parametrize("mix", sorted(OPTION_MIXES))
@settings(max_examples=EXAMPLES, deadline=None)  # a whole game per example; no timing asserted
@given(seed=st.integers(0, 2**32 - 1))
def test_playouts_option_mixes(mix, seed):
    options = dict(OPTION_MIXES[mix])
    rules = Rules.make("standard", **options)
    if "target" not in options and rules.end_after_hands is None:
        rules = rules.with_options(target=_target(rules))
    playout(rules, seed)
