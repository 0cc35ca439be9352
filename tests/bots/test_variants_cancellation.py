"""The bots under RULES.md §6.6 Cancellation (two decks, 6 to 10 players): whole games of every bot at 6,
8 and 10 players, play from the engine's seat view and from a move log (as a stand-in for an absent
player), what a view holds with two decks (copies, the carried pile, the hidden kitty), ``strong``'s
worlds (each unseen copy dealt once, voids, passed cards, the kitty unseen until taken) and their
playouts, the heuristic's cancellation rules on hand-built positions, and reproducible seeded runs."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Iterator

import pytest
from click.testing import CliRunner

from pbem.bots import BotView, bot_view, decide, get_bot
from pbem.bots.heuristic import choose_pass_cards2
from pbem.bots.knowledge import Knowledge, infer, sample_two_deck_world
from pbem.bots.strong import _template, _world2
from pbem.bots.view import SeenTrick
from pbem.bench.variants import CANCELLATION_CONFIGURATIONS, CONFIGURATIONS, run
from pbem.cli import main
from pbem.engine import (
    DEAL,
    OVER,
    PASS,
    PLAY,
    Deal,
    GameState,
    KittyTaken,
    PassCards,
    Rules,
    TrickCancelled,
    TrickWon,
    apply,
    move_to_dict,
    new_game,
    seat_view,
    shuffled_deck,
)
from pbem.engine.cards import CARD_INDEX, CARD_NAMES
from pbem.sim.runner import SimConfig, simulate

PLAYERS = (6, 8, 10)


def _bot(name: str, seed) -> object:
    return get_bot(name, seed=seed, **({"playouts": 12, "time_limit": None} if name == "strong" else {}))


def _game(rules: Rules, bots, seed, seen: Counter | None = None,
          moves: list | None = None) -> Iterator[tuple[GameState, list[SeenTrick]]]:
    """A whole game between ``bots``, every decision through ``decide`` and ``apply`` (the engine
    refuses an illegal one); yields (state, finished tricks) before each play and counts in ``seen``
    the cancelled tricks, the tricks that took a carried pile, the last tricks with no winner, the
    kitties taken and the hands dealt a card twice."""
    seen = Counter() if seen is None else seen
    rng = random.Random(f"{seed}:deck")
    state = new_game(rules)
    tricks: list[SeenTrick] = []
    while state.phase != OVER:
        phase = state.phase
        if phase == DEAL:
            move = Deal(shuffled_deck(rules, rng))
            state, _ = apply(state, move)
            if moves is not None:
                moves.append(move)
            tricks = []
            seen["doubles dealt"] += sum(bool(state.doubles(s)) for s in range(rules.players))
            continue
        seat = state.seats_to_act()[0]
        if phase == PLAY:
            yield state, tricks
        move = decide(bots[seat], state, seat, tricks)
        state, events = apply(state, move)
        if moves is not None:
            moves.append(move)
        for e in events:
            if isinstance(e, TrickCancelled):
                seen["cancelled"] += 1
            elif isinstance(e, TrickWon) and e.carried:
                seen["last without a winner" if e.cancelled else "carried won"] += 1
            elif isinstance(e, KittyTaken):
                seen["kitty"] += 1
        if phase == PLAY and not state.trick:
            tricks = tricks + [(state.last_trick[0], tuple(state.last_trick[1]))]
    assert state.winners


def _copies(names) -> tuple[int, int]:
    once = twice = 0
    for c in names:
        bit = 1 << CARD_INDEX[c]
        twice |= once & bit
        once |= bit
    return once, twice


# -- whole games ------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("bot", ["random", "heuristic", "strong"])
def test_each_bot_plays_whole_cancellation_games(bot: str, players: int) -> None:
    rules = Rules.make("cancellation", players=players, end_after_hands=1 if bot == "strong" else 3)
    seen: Counter = Counter()
    for game in range(1 if bot == "strong" else 2):
        # The bot under test in every seat but one (a heuristic there, so it meets another player).
        bots = [_bot(bot if s else "heuristic", f"{game}:{s}") for s in range(players)]
        for state, _tricks in _game(rules, bots, f"{bot}:{players}:{game}", seen):
            assert len(state.legal_cards()) == len(set(state.legal_cards()))
    assert seen["doubles dealt"]
    assert bool(seen["kitty"]) == (players != 8)  # 104 % players leftovers, to the first trick's winner


@pytest.mark.parametrize("bot", ["random", "heuristic", "strong"])
def test_bots_play_through_a_cancelled_trick_and_a_last_trick_without_a_winner(bot: str) -> None:
    # Two cards each, a club and a heart, paired seat by seat: whatever is led, every card of the led
    # suit is cancelled; the trick is carried, and the last one (cancelled too) goes to seat 3, who won
    # the trick before them (RULES.md §6.6).
    rules = Rules.make("cancellation", players=6)
    hands = {0: "2C 5H", 1: "2C 5H", 2: "3C 6H", 3: "3C 6H", 4: "4C 7H", 5: "4C 7H"}
    state = _position(rules, hands, trick="", leader=3, rest_taken_by=3)
    bots = [_bot(bot, s) for s in range(6)]
    seen: Counter = Counter()
    while state.phase == PLAY:
        seat = state.to_move
        v = bot_view(state, seat)  # a late position: the view holds the last trick only
        if state.carried:
            assert v.carried_tricks == 1 and len(v.carried) == 6 and v.carried_value in (0, 3)  # clubs or hearts
            know = infer(v)
            _check_sound(know, state)
            _check_world(know, *sample_two_deck_world(know, random.Random(seat)))
            _check_playable_world(v, GameState.from_dict(_world2(_template(v), v,
                                                                 *sample_two_deck_world(know, random.Random(1)))))
        state, events = apply(state, decide(bots[seat], state, seat))
        for e in events:
            if isinstance(e, TrickCancelled):
                seen["cancelled"] += 1
            elif isinstance(e, TrickWon):
                seen["won"] += 1
                assert e.winner == 3 and e.cancelled and len(e.carried) == 6 and e.points == 6
    assert seen == Counter({"cancelled": 1, "won": 1})


@pytest.mark.parametrize("bot", ["random", "heuristic", "strong"])
def test_bots_stand_in_for_absent_players_from_the_move_log_or_the_seat_view(bot: str) -> None:
    # The server asks a bot for an absent player's move with the hand's tricks from the move log
    # (decide); a view may also come from the engine's seat_view dict or from the moves replayed.
    rules = Rules.make("cancellation", players=6, end_after_hands=1)
    b = _bot(bot, 1)
    moves: list = []
    checked = 0
    for k, (state, tricks) in enumerate(_game(rules, [_bot("random", s) for s in range(6)], "stand-in",
                                              moves=moves)):
        if k % 3:
            continue
        seat = state.to_move
        legal = state.legal_cards()
        move = decide(b, state, seat, tricks)
        assert move.seat == seat and move.card in legal
        assert apply(state, move)[0]  # the engine takes it
        d = BotView.from_seat_view(seat_view(state, seat), rules)
        assert b.choose_play(d) in legal
        replayed = BotView.from_moves(rules, moves, seat)
        assert replayed == bot_view(state, seat, tricks)
        assert (d.hand, d.doubles, d.taken, d.taken2, d.carried, d.points) == (
            replayed.hand, replayed.doubles, replayed.taken, replayed.taken2, replayed.carried, replayed.points)
        checked += 1
    assert checked > 10


def test_the_pass_and_its_copies() -> None:
    rules = Rules.make("cancellation", players=8)
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(4)), "left")
    assert state.phase == PASS
    for name in ("random", "heuristic", "strong"):
        for s in range(8):
            move = decide(_bot(name, s), state, s)
            assert isinstance(move, PassCards) and len(move.cards) == 3
            apply(state, move)  # the engine takes it (a card named twice only when held twice)
    # The heuristic passes both copies of an ill-guarded QS, and a card held once only once.
    t = rules.table
    hand = _copies("QS QS AH 2C 3C 4C 5C 6D 7D 8D 9D TD JD".split())
    assert sorted(CARD_NAMES[c] for c in choose_pass_cards2(t, hand[0], hand[1], 3)) == ["AH", "QS", "QS"]
    hand = _copies("QS 2S 3S 4S 2S AH 2C 3C 4C 6D 7D 8D 9D".split())  # QS guarded by four low spades
    chosen = [CARD_NAMES[c] for c in choose_pass_cards2(t, hand[0], hand[1], 3)]
    assert "QS" not in chosen and chosen.count("AH") == 1


# -- the view ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYERS)
def test_a_view_counts_every_copy(players: int) -> None:
    rules = Rules.make("cancellation", players=players, end_after_hands=1)
    checked = 0
    for state, tricks in _game(rules, [_bot("random", s) for s in range(players)], f"view:{players}"):
        for seat in range(players):
            v = bot_view(state, seat, tricks)
            assert v.decks == 2 and v.hand == state.hand_mask(seat) and v.doubles == state.doubles(seat)
            assert v.hand_count == len(state.hand(seat))
            assert v.carried == tuple(CARD_INDEX[c] for c in state.carried)
            assert v.carried_tricks == state.carried_tricks
            # Every copy is in this seat's hand, played (taken, on the trick, carried), or unseen.
            played = sum(2 if v.played2 >> c & 1 else 1 for c in range(52) if v.played >> c & 1)
            unseen = v.unseen.bit_count() + v.unseen2.bit_count()
            assert v.hand_count + played + unseen == 104
            taker = state.kitty_taker
            hidden = len(state.kitty) if taker is not None and taker != seat else 0
            assert sum(len(v.taken_cards(s)) for s in range(players)) == (
                sum(len(c) for c in state.taken_cards()) - hidden)
            assert [v.cards_held(s) for s in range(players)] == [len(state.hand(s)) for s in range(players)]
            if sum(state.tricks_won):
                assert v.last_winner == state.to_dict()["last_winner"]
            checked += 1
    assert checked


def test_the_kitty_stays_hidden_from_every_seat_but_its_taker() -> None:
    rules = Rules.make("cancellation", players=6, end_after_hands=1)
    for state, tricks in _game(rules, [_bot("heuristic", s) for s in range(6)], "kitty"):
        if state.kitty_taker is None:
            continue
        taker = state.kitty_taker
        kitty = Counter(state.kitty)
        mine = bot_view(state, taker, tricks)
        assert Counter(CARD_NAMES[c] for c in mine.kitty) == kitty
        assert Counter(mine.taken_cards(taker)) == Counter(state.taken_cards()[taker])
        for seat in range(6):
            if seat != taker:
                v = bot_view(state, seat, tricks)
                assert v.kitty == () and Counter(v.taken_cards(taker)) + kitty == Counter(state.taken_cards()[taker])
                assert v.points == state.public_points()
                assert infer(v).pile == 2
        break
    else:
        raise AssertionError("nobody took the kitty")


# -- strong's worlds --------------------------------------------------------------------------------


def _check_sound(k: Knowledge, state: GameState) -> None:
    """Inference never rules out a card a seat holds, nor claims one (or a second copy) it lacks."""
    for s in range(state.players):
        real, real2 = state.hand_mask(s), state.doubles(s)
        assert k.counts[s] == len(state.hand(s))
        assert real & ~k.allowed[s] == 0, f"seat {s}: inference ruled out a card it holds"
        assert k.known[s] & ~real == 0 and k.known2[s] & ~real2 == 0
    taker = state.kitty_taker
    assert k.pile == (0 if taker == k.seat else len(state.kitty))


def _check_world(k: Knowledge, hands, doubles, pile: int, pile2: int) -> None:
    """A sampled world deals each unseen copy once: as many copies of each card as are unseen, every
    seat its count, within what it may hold, with what it surely holds."""
    copies: Counter = Counter()
    for s, (h, h2) in enumerate(zip(hands, doubles)):
        assert h2 & ~h == 0
        assert h.bit_count() + h2.bit_count() == k.counts[s]
        assert h & ~k.allowed[s] == 0, f"seat {s} got a card it cannot hold"
        assert h & k.known[s] == k.known[s] and h2 & k.known2[s] == k.known2[s]
        if s != k.seat:
            for c in range(52):
                copies[c] += (h >> c & 1) + (h2 >> c & 1)
    assert pile2 & ~pile == 0 and pile.bit_count() + pile2.bit_count() == k.pile
    for c in range(52):
        copies[c] += (pile >> c & 1) + (pile2 >> c & 1)
    for c in range(52):
        assert copies[c] == (k.unseen >> c & 1) + (k.unseen2 >> c & 1), CARD_NAMES[c]


def _check_playable_world(v: BotView, world: GameState) -> None:
    """The world strong builds is a real position: each card twice among the hands, the tricks taken,
    the trick on the table, the carried cards and a kitty still lying; the points those of the tricks;
    and it plays out through the engine."""
    count: Counter = Counter()
    for s in range(v.players):
        count.update(world.hand(s))
    for names in world.taken_cards():
        count.update(names)
    count.update(CARD_NAMES[c] for c in world.trick)
    count.update(world.carried)
    if world.kitty_taker is None:
        count.update(world.kitty)
    assert set(count.values()) == {2} and len(count) == 52
    values = v.table.values
    for s, names in enumerate(world.taken_cards()):
        assert world.points[s] == sum(values[CARD_INDEX[c]] for c in names)
    assert world.carried_tricks == v.carried_tricks
    while world.phase == PLAY:
        world = world.play(world.legal_cards()[0])


@pytest.mark.parametrize("players", PLAYERS)
def test_knowledge_is_sound_and_worlds_deal_every_unseen_copy(players: int) -> None:
    rules = Rules.make("cancellation", players=players, end_after_hands=2)
    rng = random.Random(players)
    checked = worlds = 0
    for k, (state, tricks) in enumerate(_game(rules, [_bot("random", s) for s in range(players)],
                                              f"worlds:{players}")):
        seat = state.to_move
        for view_tricks in (tricks, None):
            v = bot_view(state, seat, view_tricks)
            know = infer(v)
            _check_sound(know, state)
            hands, doubles, pile, pile2 = sample_two_deck_world(know, rng)
            _check_world(know, hands, doubles, pile, pile2)
            if view_tricks is not None and k % 5 == 0:
                _check_playable_world(v, GameState.from_dict(_world2(_template(v), v, hands, doubles, pile, pile2)))
                worlds += 1
            checked += 1
    assert checked > 100 and worlds > 10


def _deal_for(rules: Rules, hands: dict[int, list[str]], kitty: list[str] | None = None) -> tuple[str, ...]:
    """A deck for hand 1 whose seats hold ``hands`` (filled up from the other copies) and kitty ``kitty``."""
    n = rules.players
    t = rules.table
    rest = list(t.deck_cards)
    k = list(kitty or [])
    for c in k + [c for h in hands.values() for c in h]:
        rest.remove(c)
    k += rest[:t.kitty_size - len(k)]
    rest = rest[t.kitty_size - len(kitty or []):]
    full = {}
    for s in range(n):
        h = list(hands.get(s, []))
        need = t.hand_size - len(h)
        full[s], rest = h + rest[:need], rest[need:]
    dealer = n - 1
    dealt = [""] * (t.hand_size * n)
    for s, h in full.items():
        for j, c in enumerate(h):
            dealt[(s - dealer - 1) % n + j * n] = c
    return tuple(k + dealt)


def test_both_copies_passed_stay_with_the_receiver_in_every_world_until_played() -> None:
    rules = Rules.make("cancellation", players=6)
    state = new_game(rules).deal(_deal_for(rules, {0: ["QS", "QS", "AH"]}), "left")
    assert state.hand(0)[-3:] == ("AH", "QS", "QS") or "QS" in state.hand(0)
    for s in range(6):
        cards = ("QS", "QS", "AH") if s == 0 else state.hand(s)[:3]
        state = apply(state, PassCards(s, tuple(cards)))[0]
    assert state.phase == PLAY and state.hand(1).count("QS") == 2
    know = infer(bot_view(state, 0, []))
    qs = 1 << CARD_INDEX["QS"]
    assert know.known[1] & qs and know.known2[1] & qs and not know.unseen2 & ~know.unseen
    rng = random.Random(1)
    for _ in range(200):
        hands, doubles, pile, _pile2 = sample_two_deck_world(know, rng)
        assert hands[1] & qs and doubles[1] & qs  # both copies at the receiver, none elsewhere
        assert not any(h & qs for s, h in enumerate(hands) if s != 1) and not pile & qs


def test_a_seat_that_did_not_follow_is_void_in_every_world() -> None:
    rules = Rules.make("cancellation", players=8, end_after_hands=1)
    rng = random.Random(6)
    voids = 0
    for state, tricks in _game(rules, [_bot("random", s) for s in range(8)], "voids"):
        seat = state.to_move
        know = infer(bot_view(state, seat, tricks))
        for leader, cards in tricks:
            led = CARD_NAMES[cards[0]][1]
            for k, c in enumerate(cards):
                s = (leader + k) % 8
                if CARD_NAMES[c][1] != led and s != seat:
                    suit = sum(1 << CARD_INDEX[x] for x in CARD_NAMES if x[1] == led)
                    assert not know.allowed[s] & suit
                    hands, _doubles, _pile, _pile2 = sample_two_deck_world(know, rng)
                    assert not hands[s] & suit
                    voids += 1
    assert voids > 20


def test_one_copy_passed_pins_one_copy_to_the_receiver() -> None:
    rules = Rules.make("cancellation", players=6)
    state = new_game(rules).deal(_deal_for(rules, {0: ["AH", "KH", "2C"]}), "left")
    assert state.hand(0).count("AH") == 1
    for s in range(6):
        cards = ("AH", "KH", "2C") if s == 0 else state.hand(s)[:3]
        state = apply(state, PassCards(s, tuple(cards)))[0]
    know = infer(bot_view(state, 0, []))
    ah = 1 << CARD_INDEX["AH"]
    assert know.known[1] & ah and know.unseen & ah
    rng = random.Random(2)
    elsewhere = 0
    for _ in range(200):
        hands, doubles, pile, pile2 = sample_two_deck_world(know, rng)
        _check_world(know, hands, doubles, pile, pile2)
        assert hands[1] & ah  # the AH seat 0 passed is at seat 1; the other copy anywhere
        elsewhere += any(h & ah for s, h in enumerate(hands) if s != 1) or bool(pile & ah)
    assert elsewhere  # the other copy may be elsewhere (or at seat 1 too)


# -- the heuristic's cancellation rules -----------------------------------------------------------


def _position(rules: Rules, hands: dict[int, str], trick: str, leader: int, rest_taken_by: int,
              carried: str = "", hearts_to: int | None = None) -> GameState:
    """A two-deck play position: ``hands`` (every copy named), ``trick`` on the table led by ``leader``,
    ``carried`` cancelled cards lying on the table (one trick), every other copy in ``rest_taken_by``'s
    tricks, the kitty among them (``hearts_to``: the hearts among them in that seat's tricks instead,
    so that no seat looks like shooting the moon)."""
    n = rules.players
    t = rules.table
    held = {s: h.split() for s, h in hands.items()}
    on_table = trick.split()
    lying = carried.split()
    rest = list(t.deck_cards)
    for c in [c for h in held.values() for c in h] + on_table + lying:
        rest.remove(c)
    rest.sort(key=CARD_INDEX.__getitem__)
    played = t.hand_size - max(len(h) for h in held.values())
    values = t.values
    taken = {s: [] for s in range(n)}
    for c in rest:
        taken[hearts_to if hearts_to is not None and c[1] == "H" else rest_taken_by].append(c)
    d = new_game(rules).to_dict()
    d.update({
        "phase": PLAY, "hand_no": 1, "dealer": n - 1, "pass_direction": "hold",
        "hands": [sorted(held[s], key=CARD_INDEX.__getitem__) for s in range(n)],
        "trick": on_table, "leader": leader, "to_move": (leader + len(on_table)) % n,
        "tricks_played": played, "hearts_broken": True,
        "taken": [taken[s] for s in range(n)],
        "points": [sum(values[CARD_INDEX[c]] for c in taken[s]) for s in range(n)],
        "tricks_won": [(played - (1 if lying else 0) - (hearts_to is not None)) if s == rest_taken_by
                       else 1 if s == hearts_to else 0 for s in range(n)],
        "last_trick": None, "kitty": rest[:t.kitty_size], "kitty_taker": rest_taken_by if t.kitty_size else None,
        "kitty_trick": 1 if t.kitty_size else 0,
        "carried": lying, "carried_tricks": 1 if lying else 0, "last_winner": rest_taken_by,
    })
    return GameState.from_dict(d)


RULES8 = Rules.make("cancellation", players=8)


def test_last_to_play_the_heuristic_cancels_the_winning_card_with_its_twin() -> None:
    # Seat 7, last, holds KH and 4H; KH (seat 6) is winning with QH under it: KH cancels KH, QH (seat 1)
    # wins.
    state = _position(RULES8, {0: "2C", 1: "2D", 2: "4D", 3: "6D", 4: "8D", 5: "TD", 6: "QD", 7: "KH 4H"},
                      trick="5H QH 6H 7H 8H 9H KH", leader=0, rest_taken_by=0)
    assert state.to_move == 7
    # 4H ducks too, but KH sheds the higher card and cancels the winner: both take nothing.
    assert get_bot("heuristic").choose_play(bot_view(state, 7)) == "KH"
    after = state.play("KH")
    assert after.last_trick[2] == 1  # QH's seat takes it


def test_last_to_play_the_heuristic_lets_a_trick_be_carried_rather_than_take_its_points() -> None:
    # Hearts led, every heart but the leader's 2H cancelled: seat 7, last, would take 8 points with AH;
    # with 2H (the twin of the only heart left) every heart cancels and the trick is carried.
    state = _position(RULES8, {0: "2C", 1: "2D", 2: "4D", 3: "6D", 4: "8D", 5: "TD", 6: "QD", 7: "2H AH"},
                      trick="2H 3H 3H 4H 4H 5H 5H", leader=0, rest_taken_by=0, hearts_to=1)
    assert get_bot("heuristic").choose_play(bot_view(state, 7)) == "2H"
    assert state.play("2H").carried


def test_the_carried_points_count_with_the_trick_being_played() -> None:
    # A clean club trick but QS QS lie carried on the table: last, seat 7 does not take it with AC.
    state = _position(RULES8, {0: "2D", 1: "2H", 2: "4D", 3: "6D", 4: "8D", 5: "TD", 6: "QD", 7: "AC 4C"},
                      trick="5C 6C 7C 8C 9C TC JC", leader=0, rest_taken_by=0, carried="QS QS 2S 2S 3S 3S 4S 4S")
    v = bot_view(state, 7)
    assert v.carried_value == 26 and v.carried_tricks == 1
    assert get_bot("heuristic").choose_play(v) == "4C"
    # Without the carried pile the clean trick is taken with the ace (shedding it).
    clean = _position(RULES8, {0: "2D", 1: "2H", 2: "4D", 3: "6D", 4: "8D", 5: "TD", 6: "QD", 7: "AC 4C"},
                      trick="5C 6C 7C 8C 9C TC JC", leader=0, rest_taken_by=0)
    assert get_bot("heuristic").choose_play(bot_view(clean, 7)) == "AC"


def test_strong_weighs_the_carried_pile_and_cancellation_in_its_playouts() -> None:
    state = _position(RULES8, {0: "2D", 1: "2H", 2: "4D", 3: "6D", 4: "8D", 5: "TD", 6: "QD", 7: "AC 4C"},
                      trick="5C 6C 7C 8C 9C TC JC", leader=0, rest_taken_by=0, carried="QS QS 2S 2S 3S 3S 4S 4S")
    bot = get_bot("strong", seed=1, playouts=40, time_limit=None)
    scores = dict(bot.evaluate(bot_view(state, 7)))
    assert scores[CARD_INDEX["AC"]] >= 26 and bot.choose_play(bot_view(state, 7)) == "4C"


# -- reproducible runs, simulate and the benchmark ------------------------------------------------


def test_strong_is_deterministic_for_a_seed() -> None:
    rules = Rules.make("cancellation", players=10, end_after_hands=1)
    picks = []
    for state, tricks in _game(rules, [_bot("heuristic", s) for s in range(10)], "det"):
        if len(state.legal_cards()) > 2 and len(picks) < 6:
            v = bot_view(state, state.to_move, tricks)
            a = get_bot("strong", seed=3, playouts=30, time_limit=None)
            b = get_bot("strong", seed=3, playouts=30, time_limit=None)
            assert a.evaluate(v) == b.evaluate(v)
            picks.append(a.choose_play(v))
    assert len(picks) == 6


def test_a_seeded_duplicate_run_is_reproducible() -> None:
    rules = Rules.make("cancellation", players=6)
    config = SimConfig(rules=rules, bots=("strong", "heuristic", "random", "heuristic", "random", "heuristic"),
                       units=1, seed=5, bot_options={"strong": {"playouts": 8, "time_limit": None}})
    one, two = simulate(config), simulate(config)
    assert [p.points_per_hand for p in one.players] == [p.points_per_hand for p in two.players]
    assert one.hands == two.hands == 6


def sim(*args: str) -> str:
    result = CliRunner().invoke(main, ["simulate", "--no-progress", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("players", [6, 10])
def test_simulate_runs_cancellation(players: int) -> None:
    bots = ",".join(["strong", "heuristic", "random"] * 4)
    bots = ",".join(bots.split(",")[:players])
    out = sim("--deals", "1", "--bots", bots, "--preset", "cancellation", "--option", f"players={players}",
              "--playouts", "6", "--seed", "3")
    assert f"1 deals x {players} seatings" in out
    assert re.search(r"player 0\s+strong\s+-?\d+\.\d+", out), out


def test_the_benchmark_plays_cancellation_with_6_8_and_10_players() -> None:
    names = {c.name for c in CONFIGURATIONS}
    assert {"cancellation players=6", "cancellation players=8", "cancellation players=10"} <= names
    lines: list[str] = []
    results = run(games=2, seed="c", configurations=CANCELLATION_CONFIGURATIONS, echo=lines.append)
    for r in results:
        assert r.games == 2 and r.errors == 0, (r.configuration.name, r.messages)
        assert r.configuration.rules().players in (6, 8, 10) and r.hands >= 2
    assert re.search(r"total\s+6\s+0\s", lines[-1]), lines[-1]


def test_every_bot_move_of_a_cancellation_game_has_a_move_log_form() -> None:
    rules = Rules.make("cancellation", players=7, end_after_hands=1)
    moves: list = []
    for _ in _game(rules, [_bot("heuristic", s) for s in range(7)], "log", moves=moves):
        pass
    assert all(move_to_dict(m) for m in moves)
    assert len({type(m).__name__ for m in moves}) == 3  # Deal, PassCards, PlayCard
