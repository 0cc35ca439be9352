"""The kitty (RULES.md §6.2, §6.8) from hand-built deals: who takes it and when, its cards counted for
the scores and the moon, 2C in the kitty, a heart in the kitty not breaking hearts, ``kitty_exchange``
with its DISCARD phase and refusals, what other seats are shown, and the snapshot of the new state.

Expected values are worked out here from the rules and the events, not from the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import pytest

from pbem.engine import (
    DISCARD,
    PRESETS,
    Deal,
    DiscardKitty,
    GameState,
    HandScored,
    HeartsBroken,
    InvalidRules,
    KittyDiscarded,
    KittyTaken,
    Moon,
    PlayCard,
    Reason,
    Rules,
    TrickWon,
    apply,
    deck_in_play,
    move_from_dict,
    move_to_dict,
    new_game,
    replay,
    seat_view,
)

from pbem.engine.cards import cards_of

from .helpers import ALL_CARDS, assert_refused, cards, dealer_of, play_logged, play_out

VALUES_STANDARD = {c: (1 if c[1] == "H" else 13 if c == "QS" else 0) for c in ALL_CARDS}


def kitty_deck(rules: Rules, kitty: str, hands: Mapping[int, str], hand_no: int = 1) -> tuple[str, ...]:
    """A deck whose first cards are ``kitty`` and whose deal gives each named seat those cards (the
    rest filled with the leftover cards in canonical order, seat by seat), RULES.md §6.2."""
    n = rules.players
    k = len(cards(kitty))
    pool = [c for c in ALL_CARDS if c not in set(cards(kitty))]
    size = len(pool) // n
    given = {s: cards(h) for s, h in hands.items()}
    used = {c for h in given.values() for c in h}
    leftover = [c for c in pool if c not in used]
    full = []
    for seat in range(n):
        h = given.get(seat, [])
        need = size - len(h)
        full.append(h + leftover[:need])
        leftover = leftover[need:]
    assert not leftover and k == {"penalty": 4}.get(rules.kitty, 52 % n)
    dealer = dealer_of(hand_no, n)
    rest: list[str | None] = [None] * len(pool)
    for seat, h in enumerate(full):
        for j, card in enumerate(h):
            rest[(seat - dealer - 1) % n + j * n] = card
    return tuple(cards(kitty)) + tuple(rest)  # type: ignore[arg-type]


def kitty_start(rules: Rules, kitty: str, hands: Mapping[int, str]) -> GameState:
    state = new_game(rules).deal(kitty_deck(rules, kitty, hands), "hold")
    assert state.kitty == tuple(sorted(cards(kitty), key=ALL_CARDS.index))
    return state


def scored(events) -> HandScored:
    found = [e for e in events if isinstance(e, HandScored)]
    assert len(found) == 1
    return found[0]


def value(cs: Iterable[str]) -> int:
    return sum(VALUES_STANDARD[c] for c in cs)


def trick_points(events) -> list[int]:
    points = [0, 0, 0, 0, 0]
    for e in events:
        if isinstance(e, TrickWon):
            points[e.winner] += e.points
    return points


# -- rules and refusals ------------------------------------------------------------------------------------


def test_preset_and_forms():
    assert PRESETS["kitty"] == {"kitty": "penalty"}
    r = Rules.make("kitty")
    assert (r.table.kitty_size, r.table.hand_size, r.removed_cards) == (4, 12, ())
    assert len(deck_in_play(r)) == 52 and r.table.moon_total == 26
    for players, form, size, each in ((3, "first_trick", 1, 17), (5, "first_trick", 2, 10),
                                      (3, "first_penalty", 1, 17), (5, "first_penalty", 2, 10)):
        r = Rules.make("standard", players=players, kitty=form)
        assert (r.table.kitty_size, r.table.hand_size, r.removed_cards) == (size, each, ())
        assert len(deck_in_play(r)) == 52
    # changing the count of rules with §4's removed cards to a kitty: the kitty replaces them
    assert Rules(players=3).with_options(kitty="first_trick").removed_cards == ()
    assert Rules().table.kitty_size == 0


@pytest.mark.parametrize(("options", "code", "details"), [
    ({"kitty": "penalty", "players": 3}, "KITTY_NEEDS_PLAYERS", {"kitty": "penalty", "players": 3, "allowed": [4]}),
    ({"kitty": "first_trick"}, "KITTY_NEEDS_PLAYERS", {"kitty": "first_trick", "players": 4, "allowed": [3, 5]}),
    ({"kitty": "first_penalty", "players": 6}, "KITTY_NEEDS_PLAYERS",
     {"kitty": "first_penalty", "players": 6, "allowed": [3, 5]}),
    ({"kitty": "penalty", "removed_cards": ["2D", "3D", "4D", "5D"]}, "KITTY_WITH_REMOVED_CARDS", {"kitty": "penalty"}),
    ({"kitty_exchange": True}, "KITTY_EXCHANGE_NEEDS_KITTY", {}),
    ({"kitty": "all"}, "BAD_CHOICE",
     {"option": "kitty", "value": "all", "choices": ["none", "penalty", "first_trick", "first_penalty"]}),
    ({"kitty": "penalty", "kitty_exchange": 1}, "NOT_A_BOOL", {"option": "kitty_exchange", "value": 1}),
])
def test_refusals(options, code, details):
    with pytest.raises(InvalidRules) as info:
        Rules.make("standard", **options)
    assert info.value.code == code and info.value.details == details


def test_a_deck_must_hold_every_card_the_kitty_included():
    rules = Rules.make("kitty")
    deck = list(kitty_deck(rules, "2H 3H 4H 5H", {}))
    deck[1] = deck[0]  # 2H twice in the kitty, one card missing
    with pytest.raises(Exception) as info:
        new_game(rules).deal(deck, "hold")
    assert getattr(info.value, "reason", None) == Reason.BAD_DECK


# -- penalty: the first trick with a penalty card ----------------------------------------------------------

# Seat 3 wins trick 1 (clubs, no points) and trick 2, in which seat 0 (out of clubs) throws QS.
PENALTY_HANDS = {0: "2C QS 3H 4H 2S 3S 4S 5S 6S 7S 8S 9S", 1: "3C 4C 2D 3D 4D 5D 6D 7D 8D 9D TD JD",
                 2: "5C 6C QD KD AD 5H 6H 7H 8H 9H TH TS", 3: "AC KC 7C 8C 9C TC JC QC JH QH KH AH"}
PENALTY_KITTY = "2H JS KS AS"  # 1 point lies in the kitty


def test_penalty_kitty_goes_to_the_winner_of_the_first_trick_with_a_penalty_card():
    rules = Rules.make("kitty")
    state = kitty_start(rules, PENALTY_KITTY, PENALTY_HANDS)
    assert state.to_move == 0 and state.hand(0)[0] == "2C"
    state, events = play_logged(state, "2C 3C 5C AC")
    assert state.kitty_taker is None and not any(isinstance(e, KittyTaken) for e in events)
    state, events = play_logged(state, "KC QS 4C 6C")
    assert isinstance(events[-2], TrickWon) and events[-2].winner == 3 and events[-2].points == 13
    assert events[-1] == KittyTaken(3, 2)
    assert state.kitty_taker == 3 and state.kitty_trick == 2
    assert not set(PENALTY_KITTY.split()) & set(state.hand(3))
    assert {"2H", "JS", "KS", "AS"} <= set(ALL_CARDS[i] for i in range(52) if state.taken[3] >> i & 1)
    assert state.points[3] == 13 + 1
    assert not state.hearts_broken  # the kitty's 2H broke nothing
    assert state.to_move == 3 and "AH" in state.hand(3)
    assert_refused(state, "AH", Reason.HEARTS_NOT_BROKEN, card="AH", legal=list(state.legal_cards()))
    # the others are not shown the kitty, in the taken cards or the points
    for seat in (0, 1, 2):
        view = seat_view(state, seat)
        assert view["kitty"] == [] and view["kitty_taker"] == 3 and view["kitty_trick"] == 2
        assert not {"2H", "JS", "KS", "AS"} & set(view["taken"][3]) and view["points_taken"][3] == 13
    mine = seat_view(state, 3)
    assert mine["kitty"] == ["2H", "JS", "KS", "AS"] and mine["points_taken"][3] == 14
    # the hand scores count the kitty
    state, events = play_out(state)
    hs = scored(events)
    taken = trick_points(events)
    taken[3] += 13 + 1  # trick 2's QS, and the kitty
    assert sum(taken) == 26
    if max(taken) == 26:
        assert hs.moon == Moon(taken.index(26), "moon", "old")
    else:
        assert hs.moon is None and list(hs.points) == taken[:4]


def test_kitty_cards_count_for_the_moon_the_shooter_takes_them_too():
    rules = Rules.make("kitty")
    # seat 0 holds every club but the 2C... : seat 3 leads 2C, seat 0 wins every trick, takes every card
    kitty = "2H 3H 4H QS"
    hands = {0: "3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", 3: "2C"}
    state = kitty_start(rules, kitty, hands)
    state, events = play_out(state)
    assert next(e for e in events if isinstance(e, KittyTaken)).seat == 0
    hs = scored(events)
    assert hs.moon == Moon(0, "moon", "old") and hs.points == (0, 26, 26, 26)


def test_no_moon_for_a_player_who_took_every_dealt_penalty_card_but_not_the_kitty():
    rules = Rules.make("standard", players=3, kitty="first_trick")
    # The kitty is one heart. Seat 1 wins trick 1 (clubs, no points) and takes the kitty; seat 0 then
    # takes every other penalty card (its diamonds win every lead): 25 of the 26, no moon.
    kitty = "AH"
    hands = {0: "2C 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD JS KS AS",
             1: "3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2S 3S 4S 6S 7S",
             2: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 5S 8S 9S TS QS"}
    state = kitty_start(rules, kitty, hands)
    state, events = play_logged(state, "2C AC 5S")
    assert events[-2].winner == 1 and events[-1] == KittyTaken(1, 1)
    assert not state.hearts_broken  # the kitty's AH broke nothing
    state, events = play_logged(state, "2S 8S AS")
    state, events = play_out(state)
    hs = scored(events)
    assert hs.points == (25, 1, 0) and hs.moon is None


# -- first_trick / first_penalty with 3 and 5 players ----------------------------------------------------


@pytest.mark.parametrize(("players", "form", "kitty"), [(3, "first_trick", "KH"), (5, "first_trick", "KH QS"),
                                                       (3, "first_penalty", "KH"), (5, "first_penalty", "KH QS")])
def test_first_trick_and_first_penalty_forms(players, form, kitty):
    rules = Rules.make("standard", players=players, kitty=form)
    state = new_game(rules).deal(kitty_deck(rules, kitty, {}), "hold")
    assert all(len(state.hand(s)) == rules.table.hand_size for s in range(players))
    state, events = play_out(state)
    tricks = [e for e in events if isinstance(e, TrickWon)]
    taken = [e for e in events if isinstance(e, KittyTaken)]
    assert len(taken) == 1
    if form == "first_trick":
        want = tricks[0]
    else:
        want = next((t for t in tricks if t.points > 0), tricks[-1])
    assert taken[0] == KittyTaken(want.winner, want.trick_no)
    assert events[events.index(taken[0]) - 1] == want  # right after that trick
    hs = scored(events)
    points = trick_points(events)
    points[want.winner] += value(kitty.split())
    assert list(hs.points) == points[:players] or hs.moon is not None
    assert sum(hs.points) == 26 or hs.moon is not None


# -- 2C in the kitty -----------------------------------------------------------------------------------------


def test_2c_in_the_kitty_the_lowest_club_dealt_leads():
    rules = Rules.make("kitty")
    state = kitty_start(rules, "2C 2D 3D 4D", {2: "3C 5C 6C"})
    assert state.to_move == 2 and state.legal_cards() == ("3C",)
    assert_refused(state, "5C", Reason.MUST_LEAD_LOWEST_CLUB, card="5C", required="3C", legal=["3C"])
    state = kitty_start(rules, "2C 3C 2D 3D", {1: "4C 9C KC"})
    assert state.to_move == 1 and state.legal_cards() == ("4C",)


def test_2c_in_the_kitty_any_club():
    rules = Rules.make("kitty", first_lead="any_club")
    state = kitty_start(rules, "2C 2D 3D 4D", {2: "3C 5C 6C"})
    assert state.to_move == 2 and state.legal_cards() == ("3C", "5C", "6C")


# -- a heart in the kitty --------------------------------------------------------------------------------------


def test_a_heart_in_the_kitty_does_not_break_hearts():
    rules = Rules.make("standard", players=3, kitty="first_trick")
    hands = {0: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2H 3H 4H 5H 6H",
             1: "AC 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD 2S 3S 4S"}
    state = kitty_start(rules, "AH", hands)
    state, events = play_logged(state, "2C AC")
    third = state.legal_cards()
    state, events = play_logged(state, third[0])
    assert KittyTaken(1, 1) in events and not any(isinstance(e, HeartsBroken) for e in events)
    assert state.kitty_taker == 1 and not state.hearts_broken
    # seat 1 leads: holding diamonds and spades, no heart; seat 0 still may not lead a heart later
    assert state.to_move == 1


# -- kitty_exchange ------------------------------------------------------------------------------------------------


def exchange_state():
    rules = Rules.make("kitty", kitty_exchange=True)
    state = kitty_start(rules, PENALTY_KITTY, PENALTY_HANDS)
    state, _ = play_logged(state, "2C 3C 5C AC")
    state, events = play_logged(state, "KC QS 4C 6C")
    return state, events


def test_exchange_the_taker_adds_the_kitty_to_the_hand_and_must_discard():
    state, events = exchange_state()
    assert events[-1] == KittyTaken(3, 2)
    assert state.phase == DISCARD and state.seats_to_act() == (3,) and state.to_move == -1
    assert state.discard_count == 4
    assert {"2H", "JS", "KS", "AS"} <= set(state.hand(3)) and len(state.hand(3)) == 14
    assert state.discard_choices() == state.hand(3)
    assert state.points[3] == 13  # the kitty is in the hand, not yet in the tricks
    assert state.face_down_mask() == 0 and state.public_points() == state.points
    assert state.legal_cards() == ()
    assert_refused(state, "QC", Reason.WRONG_PHASE, phase="discard", expected="play")
    assert_refused(state, lambda s: s.discard_kitty(0, ["2S", "3S", "4S", "5S"]), Reason.NOT_THE_KITTY_TAKER,
                   seat=0, taker=3)
    assert_refused(state, lambda s: s.discard_kitty(3, ["QS"]), Reason.WRONG_DISCARD_COUNT, expected=4, given=1)
    assert_refused(state, lambda s: s.discard_kitty(3, ["JS", "JS", "KS", "AS"]), Reason.DUPLICATE_CARD, card="JS")
    assert_refused(state, lambda s: s.discard_kitty(3, ["JS", "2S", "KS", "3S"]), Reason.CARD_NOT_IN_HAND,
                   card="2S", cards=["2S", "3S"])
    assert_refused(state, lambda s: s.discard_kitty(3, ["JS", "XX", "KS", "AS"]), Reason.UNKNOWN_CARD, text="XX")
    # the taker's view shows the legal discard; another seat's does not
    assert seat_view(state, 3)["discard_legal"] == list(state.hand(3))
    assert seat_view(state, 0)["discard_legal"] == [] and seat_view(state, 0)["kitty"] == []


def test_exchange_discard_goes_face_down_to_the_tricks_and_the_taker_leads():
    state, _ = exchange_state()
    state, events = apply(state, DiscardKitty(3, ("QC", "JH", "QH", "AS")))
    assert events == (KittyDiscarded(3),)
    assert state.phase == "play" and state.to_move == 3 and state.leader == 3
    assert set(state.discarded) == {"QC", "JH", "QH", "AS"} and state.kitty_discards == state.discarded
    assert not {"QC", "JH", "QH", "AS"} & set(state.hand(3)) and {"2H", "JS", "KS"} <= set(state.hand(3))
    assert state.points[3] == 13 + 2  # trick 2's QS and the two discarded hearts
    assert not state.hearts_broken  # discarded hearts do not break hearts
    assert {"KH", "AH"} <= set(state.hand(3)) and not any(c[1] == "H" for c in state.legal_cards())
    assert_refused(state, "KH", Reason.HEARTS_NOT_BROKEN, card="KH", legal=list(state.legal_cards()))
    for seat in (0, 1, 2):
        view = seat_view(state, seat)
        assert view["discarded"] == [] and view["points_taken"][3] == 13
        assert not {"QC", "JH", "QH", "AS"} & set(view["taken"][3])
    assert seat_view(state, 3)["discarded"] == ["QC", "JH", "QH", "AS"]
    assert_refused(state, lambda s: s.discard_kitty(3, ["JS", "2H", "KS", "9C"]), Reason.WRONG_PHASE,
                   phase="play", expected="discard")
    state, events = play_out(state)
    hs = scored(events)
    points = trick_points(events)
    points[3] += 13 + 2  # trick 2's QS and the discards' two hearts, taken before these events
    assert sum(points) == 26
    assert list(hs.points) == points[:4] or (hs.moon is not None and max(points) == 26)


def test_exchange_the_deadline_default_discards_the_kitty_itself():
    state, _ = exchange_state()
    after = state.discard_kitty(3, state.kitty)
    assert after.phase == "play" and set(after.discarded) == set(PENALTY_KITTY.split())
    assert after.points[3] == 13 + 1


@pytest.mark.parametrize("exchange", [False, True])
def test_no_penalty_card_taken_the_last_tricks_winner_takes_the_kitty_into_the_tricks(exchange):
    """RULES.md §6.8. (With §3's values 13 hearts are penalty cards, so some is always taken before the
    last trick; the state is built as if none had been: one trick left, the kitty still on the table.)"""
    rules = Rules.make("standard", players=3, kitty="first_penalty", kitty_exchange=exchange)
    d = new_game(rules).to_dict()
    d.update(phase="play", hand_no=1, dealer=2, pass_direction="hold", hands=[["2D"], ["3D"], ["AD"]],
             leader=0, to_move=0, tricks_played=16, tricks_won=[16, 0, 0], kitty=["QS"], kitty_taker=None,
             taken=[[c for c in ALL_CARDS if c not in ("2D", "3D", "AD", "QS")], [], []],
             points=[13, 0, 0])
    state = GameState.from_dict(d)
    state, events = play_logged(state, "2D 3D AD")
    assert events[-3].winner == 2 and events[-3].points == 0
    assert KittyTaken(2, 17) in events and state.kitty_taker == 2 and state.kitty_trick == 17
    assert state.phase != DISCARD and not any(isinstance(e, KittyDiscarded) for e in events)
    assert cards_of(state.face_down_mask()) == ("QS",)  # face down in the tricks, exchange or not
    assert state.public_points() == (13, 0, 0) and state.points == (13, 0, 13)
    assert scored(events).points == (13, 0, 13)


# -- snapshots and the move log ------------------------------------------------------------------------------


def test_snapshot_round_trip_mid_hand_and_in_the_discard_phase():
    state, _ = exchange_state()
    again = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state and again.phase == DISCARD and again.kitty_taker == 3 and again.kitty_trick == 2
    after = again.discard_kitty(3, ["QC", "JH", "QH", "AS"])
    assert GameState.from_dict(json.loads(json.dumps(after.to_dict()))) == after
    assert after == state.discard_kitty(3, ["QC", "JH", "QH", "AS"])


def test_move_log_replays_the_kitty_and_the_discard():
    rules = Rules.make("kitty", kitty_exchange=True)
    deck = kitty_deck(rules, PENALTY_KITTY, PENALTY_HANDS)
    moves = [Deal(deck, "hold")] + [PlayCard(s, c) for s, c in ((0, "2C"), (1, "3C"), (2, "5C"), (3, "AC"),
                                                                (3, "KC"), (0, "QS"), (1, "4C"), (2, "6C"))]
    moves.append(DiscardKitty(3, ("QC", "JH", "QH", "AS")))
    assert move_to_dict(moves[-1]) == {"type": "discard", "seat": 3, "cards": ["QC", "JH", "QH", "AS"]}
    logged = [move_from_dict(json.loads(json.dumps(move_to_dict(m)))) for m in moves]
    assert logged == moves
    state = new_game(rules)
    for m in moves:
        state, _ = apply(state, m)
    assert replay(rules, logged) == state
