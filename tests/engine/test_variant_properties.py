"""Property tests over random playouts of the §6 variants landed so far: Partnership Hearts (both
modes, RULES.md §6.1), every kitty form with and without ``kitty_exchange`` (§6.2) and the passing
variants (§6.3: ``mix`` with and without a kitty, ``pass_optional``, ``dealer_calls_pass``), Turbo
(§6.4, with ``charge_limit``, a moon choice, a partnership), Booster Nines (§6.5, with a kitty, 3 players)
and Dirty Nasty Filthy Hearts (§6.7, ``moon=win``; with Turbo and Booster Nines too).

Each example plays a game (up to ``MAX_HANDS`` hands, a low target so that games end) from decks and
choices drawn from a seeded ``random.Random``; a third of the deals are stacked so that one seat (or
one team) holds the top cards and slams more often. At every step:

- cards are conserved: hands + trick + taken + passes in flight (a mix's too) + the kitty on the table
  = the 52; once the passes are exchanged (forwarded through decliners, split, mixed) every hand holds
  a hand's worth, and a decliner holds just what it was dealt;
- the penalty values taken (the kitty's included, charged values once the charges are revealed) add
  up, at each hand's end, to the moon total M (before the moon rule, the bonus card and the 10 of
  clubs' factor); during the hand ``points`` are the values of ``taken``; with Turbo the card values,
  M, each trick's points and each seat's are worked out here from the rules' values and the charges
  (QS doubled, every heart doubled with AH), and a hand score is the points (or the moon rule with that
  M, nothing at all under ``moon=win``) plus the bonus card's charged bonus, times 2 or 4 for the 10 of
  clubs' taker (its team's, in team mode);
- the legal set of every decision is never empty: the dealer has calls (its default among them or
  ``hold``), each seat to pass holds enough cards (or may decline), a mix has its cards, each seat to
  charge holds a chargeable card, the seat to play has a legal card, the kitty's taker has cards to
  discard, the shooter has choices;
- Turbo: a charged card is legal on the first trick of its suit (or leading it) only as its holder's
  only card of that suit or when every legal card is such a card; ``suits_led`` are the suits that led
  the finished tricks; Booster Nines: a trick has 2n cards exactly when a nine of the led suit was among
  its first n and every hand held two cards or more when it started; each trick goes to the highest
  card of the led suit; during the charge phase no seat's view shows another seat's charge, nor names
  a card that seat does not hold or passed;
- ``GameState.from_dict(state.to_dict())`` through JSON equals the state;
- no seat's view shows another seat's hand, the kitty before that seat took it, or the cards to mix
  (but its own pass);
- replaying the move log (through its JSON form) gives exactly the incremental state.

Two decks (Cancellation Hearts, §6.6, §6.8: 6 to 10 players) have a section of their own at the end, on
the named card lists (a card held twice named twice): the 104 cards conserved with their copies (hands,
trick, the carried pile, taken, the kitty on the table, passes in flight), every legal set non-empty and
naming each card once, every trick resolved as ``reference.two_deck_winner`` works it out (cancelled and
carried, the pile and its points to the next winner, the last trick with no winner to the winner of the
trick before it, the kitty to the first trick's winner), the points taken adding up to M = 52 and the hand
scores worked out again (a moon takes both copies of every penalty card; the bonus counts per copy), the
views, the snapshot and the replay. Deals are stacked into *twins* (two seats holding the same cards) and
play prefers a twin of a card on the table, so that whole tricks cancel.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.engine import (
    CallPass,
    CardPlayed,
    KittyTaken,
    TrickCancelled,
    ChargeCards,
    HandScored,
    TrickWon,
    chargeable_cards,
    trick_winner,
    ChooseMoon,
    Deal,
    DeclinePass,
    DiscardKitty,
    MixCards,
    GameState,
    PassCards,
    PlayCard,
    Rules,
    apply,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
    shuffled_deck,
    shuffled_mix,
)
from pbem.engine.cards import FULL_DECK, cards_of

from . import reference
from .helpers import ALL_CARDS, deck_for, two_deck_deck
from .test_kitty import kitty_deck

MAX_HANDS = 3
EXAMPLES = max(3, settings().max_examples // 10)

CONFIGS = {
    "team": ("partnership", {}),
    "team-choice-sun": ("partnership", {"moon": "choice", "sun": True}),
    "team-safety-omnibus": ("partnership", {"moon": "safety", "jd_bonus": -10, "avoid_all_tricks_bonus": -5}),
    "team-pass-to-partner-share": ("partnership", {"pass_to_partner": True, "tie": "share"}),
    "individual-spared": ("partnership-individual", {}),
    "individual-charged-choice": ("partnership-individual", {"partner_moon": "charged", "moon": "choice"}),
    "individual-pass-to-partner-safety": ("partnership-individual", {"pass_to_partner": True, "moon": "safety"}),
    "kitty-penalty": ("kitty", {}),
    "kitty-penalty-exchange": ("kitty", {"kitty_exchange": True, "moon": "choice"}),
    "kitty-penalty-team": ("kitty", {"partnership": "team", "kitty_exchange": True}),
    "kitty-first-trick-3": ("standard", {"players": 3, "kitty": "first_trick"}),
    "kitty-first-trick-3-exchange": ("standard", {"players": 3, "kitty": "first_trick", "kitty_exchange": True}),
    "kitty-first-trick-5": ("standard", {"players": 5, "kitty": "first_trick", "first_lead": "any_club"}),
    "kitty-first-trick-5-exchange": ("standard", {"players": 5, "kitty": "first_trick", "kitty_exchange": True}),
    "kitty-first-penalty-3": ("standard", {"players": 3, "kitty": "first_penalty", "moon": "new"}),
    "kitty-first-penalty-3-exchange": ("standard", {"players": 3, "kitty": "first_penalty", "kitty_exchange": True,
                                                    "sun": True}),
    "kitty-first-penalty-5": ("standard", {"players": 5, "kitty": "first_penalty"}),
    "kitty-first-penalty-5-exchange": ("standard", {"players": 5, "kitty": "first_penalty", "kitty_exchange": True,
                                                    "moon": "safety"}),
}
#: RULES.md §6.3: these deal by their pass cycle (or the dealer's call), which the cycles vary.
PASSING = {
    "mix": ("standard", {"pass_cycle": "mix left scatter"}),
    "mix-3": ("standard", {"players": 3, "pass_cycle": "mix right"}),
    "mix-kitty": ("kitty", {"pass_cycle": "mix right", "kitty_exchange": True}),
    "mix-kitty-5": ("standard", {"players": 5, "kitty": "first_penalty", "pass_cycle": "mix"}),
    "mix-kitty-3": ("standard", {"players": 3, "kitty": "first_trick", "pass_cycle": "left mix", "moon": "choice"}),
    "optional": ("standard", {"pass_optional": True, "pass_cycle": "left scatter across"}),
    "optional-3-scatter": ("standard", {"players": 3, "pass_count": 4, "pass_optional": True,
                                        "pass_cycle": "scatter mix right"}),
    "optional-mix-kitty": ("kitty", {"pass_optional": True, "pass_cycle": "right mix", "kitty_exchange": True}),
    "optional-partner": ("partnership", {"pass_to_partner": True, "pass_optional": True, "pass_cycle": "mix left"}),
    "calls": ("standard", {"dealer_calls_pass": True}),
    "calls-optional-kitty": ("kitty", {"dealer_calls_pass": True, "pass_optional": True, "moon": "choice"}),
    "calls-3-hold": ("standard", {"players": 3, "dealer_calls_pass": True, "pass_optional": True,
                                  "pass_cycle": "hold mix"}),
    "calls-5-kitty": ("standard", {"players": 5, "kitty": "first_trick", "dealer_calls_pass": True,
                                   "pass_count": 2}),
}
CONFIGS.update(PASSING)
#: RULES.md §6.4, §6.5, §6.7.
TURBO_NINES_DNF = {
    "turbo": ("turbo", {}),
    "turbo-limit-1-choice": ("turbo", {"charge_limit": 1, "moon": "choice", "pass_cycle": "left hold"}),
    "turbo-team-new": ("turbo", {"partnership": "team", "moon": "new"}),
    "turbo-nines": ("turbo-nines", {}),
    "turbo-nines-sun-safety": ("turbo-nines", {"sun": True, "moon": "safety", "bonus_card": "TD"}),
    "nines": ("standard", {"booster_nines": True}),
    "nines-kitty-exchange": ("kitty", {"booster_nines": True, "kitty_exchange": True}),
    "nines-3-sun": ("standard", {"players": 3, "booster_nines": True, "sun": True}),
    "dnf": ("dnf", {}),
    "dnf-turbo-nines": ("dnf", {"turbo": True, "booster_nines": True, "sun": True}),
}
CONFIGS.update(TURBO_NINES_DNF)


def mask(cs) -> int:
    m = 0
    for c in cs:
        m |= 1 << ALL_CARDS.index(c)
    return m


def a_deck(rules: Rules, rng: random.Random, hand_no: int) -> tuple[str, ...]:
    deck = shuffled_deck(rules, rng)
    if rng.random() < 2 / 3:
        return deck
    # stacked: one seat (or both partners) gets the top cards
    t = rules.table
    n = rules.players
    kitty = deck[:t.kitty_size]
    rest = sorted(deck[t.kitty_size:], key=lambda c: -"23456789TJQKA".index(c[0]))
    seat = rng.randrange(n)
    seats = [seat, (seat + 2) % 4] if rules.teams and rng.random() < 0.5 else [seat]
    order = seats + [s for s in range(n) if s not in seats]
    hands = {s: " ".join(rest[k * t.hand_size:(k + 1) * t.hand_size]) for k, s in enumerate(order)}
    if t.kitty_size:
        return kitty_deck(rules, " ".join(kitty), hands, hand_no)
    return deck_for(rules, {s: h.split() for s, h in hands.items()}, hand_no)


def check_state(state: GameState) -> None:
    t = state.t
    n = t.players
    seen = 0
    total = 0
    parts = list(state.hands) + list(state.taken)
    parts.append(sum(1 << c for c in state.trick))
    if state.phase in ("pass", "mix"):
        for seat, chosen in enumerate(state.passes):
            if chosen is not None:
                parts.append(sum(1 << c for c in chosen))
    if state.kitty_taker is None:
        parts.append(mask(state.kitty))
    for m in parts:
        assert not seen & m, "a card is in two places"
        seen |= m
        total += m.bit_count()
    if state.phase in ("pass", "mix", "charge", "play", "discard", "moon"):
        assert seen == t.deck_mask and total == t.deck_size, "cards not conserved"
        if state.rules.kitty != "none":
            assert seen == FULL_DECK and total == 52, "a kitty's cards are in play"
    if state.phase == "play" and state.tricks_played == 0 and not state.trick:
        # the passes are exchanged: every hand a hand's worth; a decliner's as dealt, nothing received
        assert all(len(state.hand(s)) == t.hand_size for s in range(n))
        dealt_cards = state.deck[t.kitty_size:]
        for seat in state.declined:
            assert state.received[seat] == 0
            assert set(state.hand(seat)) == set(dealt_cards[(seat - state.dealer - 1) % n::n])
    for seat in range(n):
        assert state.points[seat] == sum(t.values[i] for i in range(52) if state.taken[seat] >> i & 1)
    if state.rules.turbo:
        check_charged_values(state)
    # every decision has a legal choice
    if state.phase == "call":
        choices = state.call_choices()
        assert choices and state.seats_to_act() == (state.next_dealer,)
        assert state.default_call() in choices or state.default_call() == (("hold", 0),)
        assert all(sum(c for _, c in call) == t.pass_count for call in choices)
    elif state.phase == "pass":
        assert state.seats_to_pass()
        for seat in state.seats_to_pass():
            assert len(state.hand(seat)) >= t.pass_count
        assert state.may_decline == (rules_of(state).pass_optional and state.pass_direction != "mix")
    elif state.phase == "mix":
        assert state.seats_to_act() == ()
        assert len(state.cards_to_mix) == n * t.pass_count + t.kitty_size
    elif state.phase == "charge":
        assert state.seats_to_charge() and state.seats_to_act() == state.seats_to_charge()
        assert state.legal_cards() == () and state.to_move == -1 and not state.trick
        chargeable = set(chargeable_cards(state.rules))
        for seat in range(n):
            choices = state.charge_choices(seat)
            if seat in state.seats_to_charge():
                assert state.charges[seat] is None
                assert choices and set(choices) == set(state.hand(seat)) & chargeable
            else:
                assert choices == () and state.charges[seat] is not None
                assert set(state.charges[seat]) <= chargeable and len(state.charges[seat]) <= t.charge_limit
    elif state.phase == "play":
        legal = state.legal_cards()
        assert legal and set(legal) <= set(state.hand(state.to_move))
        if state.rules.turbo:
            check_charged_rule(state, legal)
        assert len(state.trick) < (2 if state.rules.booster_nines else 1) * n
        assert state.trick_boosted or not state.boost_round
    elif state.phase == "discard":
        assert state.seats_to_act() == (state.kitty_taker,)
        assert len(state.discard_choices()) >= state.discard_count == t.kitty_size
    elif state.phase == "moon":
        assert state.moon_choices() and state.seats_to_act() == (state.shooter[0],)
    # views
    for seat in range(n):
        view = seat_view(state, seat)
        others = [c for s in range(n) if s != seat for c in state.hand(s)]
        assert not set(others) & set(view["hand"])
        if state.phase == "mix":
            own = {ALL_CARDS[c] for c in state.passes[seat]}
            text = json.dumps(view)
            assert not [c for c in state.cards_to_mix if c not in own and c in text]
        if state.phase == "charge":
            assert all(c is None for s, c in enumerate(view["charges"]) if s != seat)
            # nothing is played yet: every card the view names is one the seat holds or passed
            own = set(state.hand(seat)) | {ALL_CARDS[c] for c in state.passes[seat] or ()}
            assert set(CARD_TEXT.findall(json.dumps(view))) <= own
            assert view["to_act"] == ([seat] if seat in state.seats_to_charge() else [])
            assert view["charges"][seat] == (None if state.charges[seat] is None else list(state.charges[seat]))
        if state.kitty and state.kitty_taker != seat and state.phase not in ("deal", "call", "over"):
            assert view["kitty"] == []
            hidden = set(cards_of(state.face_down_mask()))
            assert not hidden & {c for taken in view["taken"] for c in taken}
    # the snapshot
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state


def rules_of(state: GameState) -> Rules:
    return state.rules


def check_charged_rule(state: GameState, legal) -> None:
    """RULES.md §6.4, worked out from the charges, the suits led and the hand: a charged card that is not
    its holder's only card of its suit is held back from leading, or following, the first trick of its
    suit, unless every legal card is held back so."""
    assert state.charges_revealed
    charged = set(state.charged_cards)
    assert charged == {c for cs in state.charges for c in cs}
    hand = state.hand(state.to_move)
    led = state.led_suit

    def held_back(card: str) -> bool:
        return (card in charged and card[1] not in state.suits_led and (led is None or card[1] == led)
                and sum(c[1] == card[1] for c in hand) > 1)

    if any(held_back(c) for c in legal):
        assert all(held_back(c) for c in legal), (legal, charged, state.suits_led)


#: A card's name as the JSON of a view writes it.
CARD_TEXT = re.compile(r'"([2-9TJQKA][CDHS])"')


def charged_values(state: GameState) -> dict[str, int]:
    """RULES.md §6.4, worked out from the rules' own values and the charges once revealed (before, the
    rules' values): a charged QS doubles, a charged AH doubles every heart (QH as a queen too)."""
    base = state.rules.table.values
    values = {c: base[i] for i, c in enumerate(ALL_CARDS)}
    charged = set(state.charged_cards) if state.charges_revealed else set()
    if "QS" in charged:
        values["QS"] *= 2
    if "AH" in charged:
        for c in ALL_CARDS:
            if c[1] == "H":
                values[c] *= 2
    return values


def check_charged_values(state: GameState) -> None:
    """The hand's card values, M and the points taken are the charged ones (RULES.md §6.4)."""
    values = charged_values(state)
    assert all(state.card_value(c) == v for c, v in values.items())
    in_play = [c for i, c in enumerate(ALL_CARDS) if state.t.deck_mask >> i & 1]
    assert state.moon_total == sum(values[c] for c in in_play)
    for seat in range(state.players):
        assert state.points[seat] == sum(values[c] for c in cards_of(state.taken[seat]))


def expected_turbo_points(state: GameState, hs: HandScored) -> tuple[int, ...] | None:
    """RULES.md §6.4, §6.7, §6.8: the hand score from the charged values, in the order of §6.4: the
    points (or the moon rule with M = the charged values in play, 2M for a sun; moon=win: nothing at
    all), then the bonus card's bonus (doubled when charged), then the 10 of clubs' factor. None
    where this does not work it out (individual mode, avoid_all_tricks_bonus)."""
    rules = state.rules
    n = rules.players
    if rules.partnership == "individual" or rules.avoid_all_tricks_bonus:
        return None
    moon = hs.moon
    if moon is not None and moon.scoring == "win":
        return (0,) * n
    values = charged_values(state)
    m = sum(values[c] for i, c in enumerate(ALL_CARDS) if state.t.deck_mask >> i & 1)
    if moon is not None:
        m *= 2 if moon.kind == "sun" else 1
        assert moon.total == m
    charged = set(state.charged_cards)
    took = [set(cards_of(state.taken[s])) for s in range(n)]
    bonus = [rules.jd_bonus * (2 if rules.bonus_card in charged else 1) if rules.jd_bonus and
             rules.bonus_card in took[s] else 0 for s in range(n)]
    if rules.partnership == "team":
        side = None if moon is None else moon.seat % 2
        team = []
        for k in (0, 1):
            if moon is None:
                score = state.points[k] + state.points[k + 2]
            elif moon.scoring == "new":
                score = -m if k == side else 0
            else:
                score = 0 if k == side else m
            team.append(score + bonus[k] + bonus[k + 2])
        points = [team[s % 2] for s in range(n)]
    elif moon is None:
        points = [state.points[s] + bonus[s] for s in range(n)]
    elif moon.scoring == "new":
        points = [(-m if s == moon.seat else 0) + bonus[s] for s in range(n)]
    else:
        points = [(0 if s == moon.seat else m) + bonus[s] for s in range(n)]
    factors = [(4 if "TC" in charged else 2) if "TC" in took[s] else 1 for s in range(n)]
    if rules.partnership == "team":
        factors = [max(factors[s], factors[(s + 2) % 4]) for s in range(n)]
    return tuple(p * f for p, f in zip(points, factors))


def check_hand_scored(state: GameState, hs: HandScored) -> None:
    """RULES.md §6.4: without a moon, a seat's hand score is its points plus the bonus card's bonus
    (doubled when charged), then times 2 for the 10 of clubs' taker, 4 if it was charged; with one,
    the moon rule first (see ``expected_turbo_points``)."""
    rules = state.rules
    n = rules.players
    charged = set(state.charged_cards)
    assert hs.charged == state.charges
    took = [lambda card, s=s: state.taken[s] >> ALL_CARDS.index(card) & 1 for s in range(n)]
    factors = tuple((4 if "TC" in charged else 2) if took[s]("TC") else 1 for s in range(n))
    if rules.partnership == "team":
        factors = tuple(max(factors[s], factors[(s + 2) % 4]) for s in range(n))
    assert hs.multiplier == factors
    expected_points = expected_turbo_points(state, hs)
    if expected_points is not None:
        assert hs.points == expected_points, (hs, state.charges)
    if hs.moon is not None or rules.partnership != "none" or rules.avoid_all_tricks_bonus:
        return
    bonus = rules.jd_bonus * (2 if rules.bonus_card in charged else 1)
    expected = tuple((state.points[s] + (bonus if rules.jd_bonus and took[s](rules.bonus_card) else 0)) * factors[s]
                     for s in range(n))
    assert hs.points == expected


def playout(rules: Rules, seed: int) -> None:
    rng = random.Random(seed)
    state = new_game(rules)
    moves: list = []
    t = rules.table
    n = rules.players
    led = ""  # the suits that led this hand's finished tricks
    start_size = 0  # the cards each seat held when the trick on the table started

    def do(move) -> None:
        nonlocal state, led
        state, events = apply(state, move)
        moves.append(move)
        for e in events:
            if isinstance(e, TrickWon):
                assert e.winner == trick_winner(e.cards, e.leader, n)
                nine = "9" + e.cards[0][1]
                boosted = rules.booster_nines and nine in e.cards[:n] and start_size >= 2
                assert e.boosted == boosted and len(e.cards) == (2 * n if boosted else n)
                if rules.turbo:  # the trick's points are its cards' charged values
                    values = charged_values(state)
                    assert e.points == sum(values[c] for c in e.cards)
                led += e.cards[0][1]
            elif isinstance(e, HandScored) and rules.turbo:
                check_hand_scored(state, e)
            elif isinstance(e, HandScored):
                assert e.multiplier == () and e.charged == ()
        if rules.turbo and state.phase in ("play", "discard", "moon"):
            assert state.suits_led == "".join(x for x in "CDHS" if x in led)
        check_state(state)

    passing = rules.pass_optional or rules.dealer_calls_pass or "mix" in rules.pass_cycle
    while state.phase in ("deal", "call") and state.hand_no < MAX_HANDS:
        if state.phase == "call":
            call = state.default_call() if rng.random() < 0.25 else rng.choice(state.call_choices())
            do(CallPass(state.next_dealer, call))
        if passing:
            direction = None  # the cycle's, or the call's
        else:
            direction = rng.choice(["left", "right", "across", "hold"] if rules.players == 4 else ["left", "right"])
        led = ""
        do(Deal(a_deck(rules, rng, state.hand_no + 1), direction))
        if rules.pass_to_partner:
            assert state.pass_direction in ("across", "hold")
        for seat in rng.sample(range(rules.players), rules.players) if state.phase == "pass" else ():
            if state.may_decline and rng.random() < 0.4:
                do(DeclinePass(seat))
            else:
                do(PassCards(seat, tuple(rng.sample(state.hand(seat), t.pass_count))))
        while state.phase in ("mix", "charge", "play", "discard", "moon"):
            if state.phase == "mix":
                do(MixCards(shuffled_mix(state, rng)))
            elif state.phase == "charge":
                seat = rng.choice(state.seats_to_charge())
                choices = state.charge_choices(seat)
                count = rng.randint(0, min(len(choices), state.charge_limit))
                do(ChargeCards(seat, tuple(rng.sample(choices, count))))
            elif state.phase == "play":
                if not state.trick:
                    start_size = len(state.hand(state.to_move))
                do(PlayCard(state.to_move, rng.choice(state.legal_cards())))
            elif state.phase == "discard":
                taker = state.kitty_taker
                do(DiscardKitty(taker, tuple(rng.sample(state.discard_choices(), state.discard_count))))
            else:
                do(ChooseMoon(state.shooter[0], rng.choice(state.moon_choices())))
            if state.phase in ("deal", "call", "over"):
                # the hand is scored: the penalty values taken (kitty included, charged values) made M
                assert not any(state.hands) and sum(state.points) == state.moon_total
                assert state.tricks_played == t.hand_size or rules.booster_nines
                break
    logged = [move_from_dict(json.loads(json.dumps(move_to_dict(m)))) for m in moves]
    assert replay(rules, logged) == state


@pytest.mark.parametrize("config", sorted(CONFIGS))
@settings(max_examples=EXAMPLES, deadline=None)  # a whole game per example; no timing asserted
@given(seed=st.integers(0, 2**32 - 1))
def test_variant_playouts(config, seed):
    preset, options = CONFIGS[config]
    rules = Rules.make(preset, **options)
    rules = rules.with_options(target=max(1, rules.table.moon_total))
    playout(rules, seed)


# -- two decks: Cancellation Hearts (RULES.md §6.6, §6.8) ----------------------------------------------

#: Two decks break the one-bit-per-card masks that ``check_state`` reads: these playouts have their own
#: checks, on the named card lists (a card held, taken or in the kitty twice named twice).
TWO_DECKS = {
    "cancellation": ("cancellation", {}),
    "cancellation-6-across-new": ("cancellation", {"players": 6, "pass_cycle": "left right across", "moon": "new"}),
    "cancellation-7-omnibus": ("cancellation", {"players": 7, "jd_bonus": -10}),
    "cancellation-9-safety-avoid": ("cancellation", {"players": 9, "moon": "safety", "avoid_all_tricks_bonus": -5}),
    "cancellation-10-sun-choice": ("cancellation", {"players": 10, "sun": True, "moon": "choice"}),
    "cancellation-8-no-break-qs": ("cancellation", {"must_break_hearts": False, "qs_breaks_hearts": True,
                                                    "pass_cycle": "right hold", "jd_bonus": -5}),
}
TWO_DECK_EXAMPLES = max(3, settings().max_examples // 20)
TWO_DECK_HANDS = 2


def two_deck_a_deck(rules: Rules, rng: random.Random, hand_no: int) -> tuple[str, ...]:
    """A shuffled deck a third of the time; else stacked: *twins* (seats 0 and 1, 2 and 3, … hold the same
    cards, so that identical cards meet in tricks and whole tricks cancel) or one seat holding both
    copies of the top cards (moons)."""
    n = rules.players
    t = rules.table
    roll = rng.random()
    if roll < 1 / 3:
        return shuffled_deck(rules, rng)
    distinct = list(ALL_CARDS)
    rng.shuffle(distinct)
    if roll < 2 / 3:
        # twins: the kitty (even with an even count) is pairs too; an odd count's last seat gets what is left
        pairs = n // 2
        kitty_pairs = t.kitty_size // 2
        kitty = [c for c in distinct[:kitty_pairs] for _ in (0, 1)]
        rest = distinct[kitty_pairs:]
        hands: dict[int, list[str]] = {}
        for p in range(pairs):
            common = rest[:t.hand_size]
            rest = rest[t.hand_size:]
            hands[2 * p] = list(common)
            hands[2 * p + 1] = list(common)
        # what is left (an odd count: the last seat's hand and the rest of the kitty) the helper fills
        return two_deck_deck(rules, hands, kitty, hand_no)
    seat = rng.randrange(n)
    top = sorted(ALL_CARDS, key=lambda c: -"23456789TJQKA".index(c[0]))
    mine = [c for c in top for _ in (0, 1)][:t.hand_size]
    return two_deck_deck(rules, {seat: mine}, (), hand_no)


def check_two_deck_state(state: GameState, trick_cards: list[str], full: bool) -> None:
    """Cards conserved (hands + trick + carried + taken + kitty on the table + passes in flight = the 104,
    each twice), legal cards never empty and each named once, points the values taken; with ``full``
    (between tricks: the checks cost more than the moves) every seat's view and the snapshot too."""
    t = state.t
    n = t.players
    rules = state.rules
    all_taken = state.taken_cards()
    hands = [state.hand(seat) for seat in range(n)]
    if state.phase in ("pass", "play", "moon"):
        everything = Counter()
        for seat in range(n):
            everything.update(hands[seat])
            everything.update(all_taken[seat])
            if state.phase == "pass" and state.passes[seat] is not None:
                everything.update(ALL_CARDS[c] for c in state.passes[seat])
        everything.update(ALL_CARDS[c] for c in state.trick)
        everything.update(state.carried)
        if state.kitty_taker is None:
            everything.update(state.kitty)
        assert everything == Counter({c: 2 for c in ALL_CARDS}), "cards not conserved"
        assert [ALL_CARDS[c] for c in state.trick] == trick_cards
        assert len(state.carried) == n * state.carried_tricks
        assert sum(state.tricks_won) + state.carried_tricks == state.tricks_played
    points = state.points
    for seat in range(n):
        assert points[seat] == sum(reference.card_value(rules, c) for c in all_taken[seat])
    if state.phase == "pass":
        for seat in state.seats_to_pass():
            assert len(hands[seat]) == t.hand_size >= t.pass_count
    elif state.phase == "play":
        legal = state.legal_cards()
        assert legal and len(set(legal)) == len(legal) and set(legal) <= set(hands[state.to_move])
        played = len(state.trick)
        for seat in range(n):
            in_trick = (seat - state.leader) % n < played
            assert len(hands[seat]) == t.hand_size - state.tricks_played - in_trick
    elif state.phase == "moon":
        assert state.moon_choices() and state.seats_to_act() == (state.shooter[0],)
    if not full:
        return
    for seat in range(n):
        assert state.hand_mask(seat) == mask(set(hands[seat]))
        assert state.doubles(seat) == mask(c for c, m in Counter(hands[seat]).items() if m == 2)
    taker = state.kitty_taker
    for seat in range(n):
        view = seat_view(state, seat)
        assert view["hand"] == list(hands[seat]) and view["decks"] == 2
        assert view["carried"] == list(state.carried)
        if t.kitty_size and state.phase not in ("deal", "over"):
            if taker is None or taker != seat:
                assert view["kitty"] == []
            if taker is not None and taker != seat:
                assert Counter(view["taken"][taker]) == Counter(all_taken[taker]) - Counter(state.kitty)
                assert view["points_taken"][taker] == (state.points[taker]
                                                       - sum(reference.card_value(rules, c) for c in state.kitty))
            elif taker == seat:
                assert view["kitty"] == list(state.kitty)
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state


def two_deck_playout(rules: Rules, seed: int) -> None:
    rng = random.Random(seed)
    state = new_game(rules)
    moves: list = []
    t = rules.table
    n = rules.players
    values = {c: reference.card_value(rules, c) for c in ALL_CARDS}
    trick: list[str] = []
    carried: list[str] = []  # the reference's own pile of cancelled tricks
    carried_tricks = 0
    last_winner = -1
    first_winner = -1  # the kitty's taker: the winner of the hand's first trick with a winner

    def do(move) -> None:
        nonlocal state, trick, carried, carried_tricks, last_winner, first_winner
        before = state
        state, events = apply(state, move)
        moves.append(move)
        for e in events:
            if isinstance(e, CardPlayed):
                if e.trick_no == 1 and not trick:  # first_lead=left_of_dealer: any card, hearts too
                    assert e.seat == (before.dealer + 1) % n
                trick.append(e.card)
            elif isinstance(e, (TrickWon, TrickCancelled)):
                assert tuple(trick) == e.cards and len(trick) == n
                leader = before.leader
                assert e.leader == leader
                winner = reference.two_deck_winner(trick, leader, n)
                assert trick_winner(trick, leader, n) == winner
                last = e.trick_no == t.hand_size
                points = sum(values[c] for c in trick)
                if winner is None and not last:  # RULES.md §6.6: the trick stays on the table
                    assert e == TrickCancelled(e.trick_no, leader, tuple(trick), points)
                    carried += trick
                    carried_tricks += 1
                    assert state.to_move == leader and state.carried == tuple(carried)
                    assert state.last_trick[2] == -1
                else:
                    assert isinstance(e, TrickWon)
                    expected = winner if winner is not None else (last_winner if last_winner >= 0 else leader)
                    assert (e.winner, e.cancelled, e.carried) == (expected, winner is None, tuple(carried))
                    assert e.points == points + sum(values[c] for c in carried)
                    assert state.tricks_won[expected] == before.tricks_won[expected] + 1 + carried_tricks
                    assert state.last_carried == tuple(carried) and state.last_trick_cancelled == (winner is None)
                    if first_winner < 0:
                        first_winner = expected
                        # RULES.md §6.6: the leftovers go to the first trick's winner (with any carried pile)
                        kitty = [x for x in events if isinstance(x, KittyTaken)]
                        assert kitty == ([KittyTaken(expected, e.trick_no)] if t.kitty_size else [])
                    carried, carried_tricks, last_winner = [], 0, expected
                trick = []
            elif isinstance(e, HandScored):
                check_two_deck_score(state, e)
        if t.kitty_size and state.phase == "play":
            assert state.kitty_taker == (None if first_winner < 0 else first_winner)
        check_two_deck_state(state, trick, not trick)

    while state.phase == "deal" and state.hand_no < TWO_DECK_HANDS:
        direction = rng.choice(["left", "right", "hold"] + (["across"] if n == 6 else []))
        if rules.pass_count == 0:
            direction = "hold"
        trick, carried, carried_tricks, last_winner, first_winner = [], [], 0, -1, -1
        do(Deal(two_deck_a_deck(rules, rng, state.hand_no + 1), direction))
        for seat in rng.sample(range(n), n) if state.phase == "pass" else ():
            do(PassCards(seat, tuple(rng.sample(state.hand(seat), t.pass_count))))
        while state.phase in ("play", "moon"):
            if state.phase == "moon":
                do(ChooseMoon(state.shooter[0], rng.choice(state.moon_choices())))
                continue
            legal = state.legal_cards()
            # play a twin of a card on the table more often than chance would, so that cards cancel
            twins = [c for c in legal if c in trick]
            card = rng.choice(twins) if twins and rng.random() < 0.6 else rng.choice(legal)
            do(PlayCard(state.to_move, card))
        if state.phase in ("deal", "over"):
            assert sum(state.points) == state.moon_total == 52
            assert state.tricks_played == t.hand_size and sum(state.tricks_won) == t.hand_size
            assert state.carried == ()
    logged = [move_from_dict(json.loads(json.dumps(move_to_dict(m)))) for m in moves]
    assert replay(rules, logged) == state


def check_two_deck_score(state: GameState, hs: HandScored) -> None:
    """RULES.md §6.6 with §2 rules 7 and 8: each copy taken counts; a moon is both copies of every
    penalty card (M = 52); the bonus card scores per copy; a sun is every trick (carried ones included)."""
    rules = state.rules
    taken = state.taken_cards()
    assert sum(state.points) == 52 == state.moon_total
    assert hs.tricks_won == state.tricks_won
    who = reference.two_deck_shooter(rules, taken, state.tricks_won)
    if who is None:
        assert hs.moon is None
        assert list(hs.points) == reference.two_deck_hand_points(rules, taken, state.tricks_won, None)
        if not rules.jd_bonus and not rules.avoid_all_tricks_bonus:
            assert sum(hs.points) == 52
        return
    assert hs.moon is not None and (hs.moon.seat, hs.moon.kind) == who
    assert hs.moon.total == 52 * (2 if who[1] == "sun" else 1)
    if rules.moon in ("old", "new"):
        assert hs.moon.scoring == rules.moon
    assert list(hs.points) == reference.two_deck_hand_points(rules, taken, state.tricks_won,
                                                             (who[0], who[1], hs.moon.scoring))


@pytest.mark.parametrize("config", sorted(TWO_DECKS))
@settings(max_examples=TWO_DECK_EXAMPLES, deadline=None)  # a whole game per example; no timing asserted
@given(seed=st.integers(0, 2**32 - 1))
def test_two_deck_playouts(config, seed):
    preset, options = TWO_DECKS[config]
    rules = Rules.make(preset, **options)
    two_deck_playout(rules.with_options(target=1000), seed)


def test_two_deck_playouts_cancel_tricks():
    """The stacked deals and the twin-seeking play do make whole tricks cancel, the last one too."""
    rules = Rules.make("cancellation", players=6)
    seen = Counter()
    for seed in range(12):
        rng = random.Random(seed)
        state = new_game(rules)
        state, events = apply(state, Deal(two_deck_a_deck(rules, rng, 1), "hold"))
        while state.phase == "play":
            legal = state.legal_cards()
            on_table = [ALL_CARDS[c] for c in state.trick]
            twins = [c for c in legal if c in on_table]
            state, evs = apply(state, PlayCard(state.to_move, rng.choice(twins) if twins else rng.choice(legal)))
            events += evs
        seen["cancelled"] += sum(isinstance(e, TrickCancelled) for e in events)
        seen["last"] += sum(isinstance(e, TrickWon) and e.cancelled for e in events)
    assert seen["cancelled"] and seen["last"]
