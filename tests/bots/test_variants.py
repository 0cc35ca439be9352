"""The bots under §6.1 partnership and §6.2 kitty (RULES.md): whole games of every configuration, the
kitty discard and the team moon choice, what a view may hold of the kitty, the worlds ``strong``
samples, and the partnership rules of thumb."""

from __future__ import annotations

import random
from typing import Iterator

import pytest

from pbem.bots import BotView, bot_view, get_bot
from pbem.bots.heuristic import choose_discard_cards, choose_partner_pass_cards
from pbem.bots.knowledge import Knowledge, infer, sample_world
from pbem.bots.match import play_hand
from pbem.bots.strong import _template, _world
from pbem.engine import DISCARD, MOON, GameState, Rules, new_game, seat_view, shuffled_deck
from pbem.engine.cards import CARD_INDEX, cards_of, mask_of

from tests.engine.helpers import deck_for

from .positions import position

#: Every configuration of §6.1 and §6.2 the bots must play (with moon=choice for the team slam).
CONFIGS = [
    ("partnership", {}),
    ("partnership", {"moon": "choice"}),
    ("partnership", {"pass_to_partner": True}),
    ("partnership-individual", {}),
    ("partnership-individual", {"partner_moon": "charged", "moon": "choice"}),
    ("kitty", {}),
    ("kitty", {"kitty_exchange": True, "moon": "choice"}),
    ("standard", {"kitty": "first_trick", "players": 3}),
    ("standard", {"kitty": "first_trick", "players": 3, "kitty_exchange": True}),
    ("standard", {"kitty": "first_trick", "players": 5}),
    ("standard", {"kitty": "first_trick", "players": 5, "kitty_exchange": True}),
    ("standard", {"kitty": "first_penalty", "players": 3}),
    ("standard", {"kitty": "first_penalty", "players": 3, "kitty_exchange": True}),
    ("standard", {"kitty": "first_penalty", "players": 5}),
    ("standard", {"kitty": "first_penalty", "players": 5, "kitty_exchange": True}),
]
KITTY_CONFIGS = [c for c in CONFIGS if "kitty" in c[1] or c[0] == "kitty"]


def _id(config) -> str:
    preset, options = config
    return preset + "".join(f" {k}={v}" for k, v in options.items())


def _bot(name: str, seed) -> object:
    return get_bot(name, seed=seed, **({"playouts": 12, "time_limit": None} if name == "strong" else {}))


def kitty_deck(rules: Rules, kitty: str, hands: dict[int, str]) -> tuple[str, ...]:
    """A deck for hand 1 whose kitty is ``kitty`` and whose seats hold ``hands`` (others filled up)."""
    n = rules.players
    t = rules.table
    k = kitty.split()
    assert len(k) == t.kitty_size
    given = {s: h.split() for s, h in hands.items()}
    used = set(k) | {c for h in given.values() for c in h}
    rest = [c for c in t.deck_cards if c not in used]
    full = []
    for s in range(n):
        h = given.get(s, [])
        need = t.hand_size - len(h)
        full.append(h + rest[:need])
        rest = rest[need:]
    assert not rest
    dealer = n - 1  # hand 1
    dealt: list[str] = [""] * (t.hand_size * n)
    for s, h in enumerate(full):
        for j, c in enumerate(h):
            dealt[(s - dealer - 1) % n + j * n] = c
    return tuple(k + dealt)


# -- whole games ---------------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=_id)
@pytest.mark.parametrize("bot", ["random", "heuristic", "strong"])
def test_each_bot_plays_whole_games_of_every_configuration(config, bot: str) -> None:
    preset, options = config
    rules = Rules.make(preset, end_after_hands=1 if bot == "strong" else 3, **options)
    n = rules.players
    decisions = {"discard": 0}
    for game in range(1 if bot == "strong" else 3):
        rng = random.Random(f"{_id(config)}:{game}")
        # The bot under test in every seat but one (a heuristic there, so it meets another player).
        bots = [_bot(bot if s else "heuristic", f"{game}:{s}") for s in range(n)]
        state = new_game(rules)
        while not state.is_over:
            before = state.deal(shuffled_deck(rules, rng))
            state = play_hand(before, bots)  # the engine refuses any illegal answer
            decisions["discard"] += bool(getattr(state, "discarded", ()))
        assert state.winners
        if rules.teams:
            assert len(state.winners) % 2 == 0  # a team wins
    if options.get("kitty_exchange") and bot != "strong":
        assert decisions["discard"]  # the discard decision was made along the way


# -- the kitty discard ------------------------------------------------------------------------------


def _discard_state(hand: str, kitty: str) -> GameState:
    """3 players, kitty=first_trick, kitty_exchange: seat 0 (every club) leads 2C and wins trick 1,
    then discards."""
    rules = Rules.make("standard", players=3, kitty="first_trick", kitty_exchange=True, pass_count=0)
    deck = kitty_deck(rules, kitty, {0: hand})
    state = new_game(rules).deal(deck)
    while state.phase == "play":
        state = state.play(state.legal_cards()[-1] if state.to_move == 0 else state.legal_cards()[0])
    return state


CLUBS_AND_DIAMONDS = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D 3D 4D 5D"


def test_every_bot_decides_a_legal_discard() -> None:
    state = _discard_state(CLUBS_AND_DIAMONDS, "AS")
    assert state.phase == DISCARD and state.seats_to_act() == (0,)
    v = bot_view(state, 0, [(state.last_trick[0], state.last_trick[1])])
    assert v.phase == "discard" and v.discard_count == 1 and v.kitty == (CARD_INDEX["AS"],)
    for name in ("random", "heuristic", "strong"):
        chosen = get_bot(name, seed=1).choose_discard(v)
        assert len(chosen) == 1 and set(chosen) <= set(state.hand(0))
        after = state.discard_kitty(0, chosen)
        assert after.phase == "play"


def test_the_heuristic_discards_dangerous_high_cards_and_keeps_low_ones() -> None:
    t = Rules.make("kitty", kitty_exchange=True).table
    hand = mask_of("AS KS 2S 3S 2C 3C 4C 5C 2D 3D 4D 9H 2H 3H 4H AD".split())
    chosen = set(cards_of(sum(1 << c for c in choose_discard_cards(t, hand, 4))))
    assert {"AS", "KS"} <= chosen  # they catch QS, which is out
    assert not chosen & {"2S", "3S", "2C", "3C", "2D", "2H", "3H"}  # the low cards are kept
    # A discarded penalty card is taken for sure: even an unguarded QS or AH stays in the hand…
    unguarded = mask_of("QS AH KH 2S 2C 3C 4C 5C 2D 3D 4D 2H 3H 4H AC 9D".split())
    assert not {cards_of(1 << c)[0] for c in choose_discard_cards(t, unguarded, 4)} & {"QS", "AH", "KH"}
    # … unless the hand has too few other cards: then the cheapest (the highest hearts, not QS).
    hearts = mask_of("QS AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H 2C 3C".split())
    assert set(cards_of(sum(1 << c for c in choose_discard_cards(t, hearts, 4)))) == {"2C", "3C", "AH", "KH"}
    low_hearts = mask_of("2H 3H 4H 5H 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC".split())
    assert not {cards_of(1 << c)[0] for c in choose_discard_cards(t, low_hearts, 4)} & {"2H", "3H", "4H", "5H"}


# -- the moon choice of a team -----------------------------------------------------------------------


def _at_moon(rules: Rules, shooter: int, taker_seats: tuple[int, ...], totals: list[int]) -> GameState:
    """A hand over: ``taker_seats`` took every card between them (every penalty card)."""
    n = rules.players
    every = list(rules.table.deck_cards)
    taken = [[] for _ in range(n)]
    for k, c in enumerate(every):
        taken[taker_seats[k % len(taker_seats)]].append(c)
    won = [0] * n
    for s in taker_seats:
        won[s] = rules.table.hand_size // len(taker_seats)
    won[taker_seats[0]] += rules.table.hand_size - sum(won)
    points = [sum(rules.table.values[CARD_INDEX[c]] for c in taken[s]) for s in range(n)]
    return GameState.at_moon_choice(rules, shooter=shooter, kind="moon", hand_no=3, dealer=2, pass_direction="hold",
                                    leader=shooter, tricks_played=rules.table.hand_size, hearts_broken=True,
                                    taken=taken, points=points, tricks_won=won, totals=totals)


def test_every_bot_answers_a_team_slam() -> None:
    rules = Rules.make("partnership", moon="choice")
    state = _at_moon(rules, 2, (0, 2), [60, 80, 60, 80])
    assert state.phase == MOON and state.seats_to_act() == (2,)
    v = bot_view(state, 2)
    assert v.shooter_kind == "moon" and v.partner == 0 and v.teams == ((0, 2), (1, 3))
    for name in ("random", "heuristic", "strong"):
        choice = get_bot(name, seed=3).choose_moon(v)
        assert choice in ("old", "new")
        state.choose_moon(2, choice)
    # Old gives the other team 26: 106 ends the game, and the slamming team wins.
    assert get_bot("heuristic").choose_moon(v) == "old"


def test_an_individual_moon_is_judged_on_the_partners_sums() -> None:
    # Seat 0 shot; its partner (seat 2) has 85. Scored old, the opponents get 26 each.
    totals = [60, 10, 85, 10]
    spared = _at_moon(Rules.make("partnership-individual", moon="choice"), 0, (0,), totals)
    charged = _at_moon(Rules.make("partnership-individual", moon="choice", partner_moon="charged"), 0, (0,), totals)
    bot = get_bot("heuristic")
    # charged: old would give the partner 26 too (111: the game ends, 171 against 72: lost): new.
    assert bot.choose_moon(bot_view(charged, 0)) == "new"
    # spared: old leaves the team 145 against 72 (a 73 gap); new, 119 against 20 (a 99 gap): old.
    assert bot.choose_moon(bot_view(spared, 0)) == "old"


# -- what a view holds of the kitty ----------------------------------------------------------------


def _decisions(rules: Rules, seed: int, bot: str = "random") -> Iterator[tuple[GameState, list]]:
    """(state, finished tricks) at every moment of two hands a seat may decide from."""
    rng = random.Random(seed)
    bots = [get_bot(bot, seed=f"{seed}:{s}") for s in range(rules.players)]
    state = new_game(rules)
    for _ in range(2):
        state = state.deal(shuffled_deck(rules, rng))
        yield state, []
        if state.phase == "pass":
            for seat in range(rules.players):
                state = state.pass_cards(seat, bots[seat].choose_pass(bot_view(state, seat)))
        tricks: list = []
        while state.phase in ("play", "discard"):
            yield state, tricks
            if state.phase == "discard":
                seat = state.kitty_taker
                state = state.discard_kitty(seat, bots[seat].choose_discard(bot_view(state, seat, tricks)))
                continue
            state = state.play(bots[state.to_move].choose_play(bot_view(state, state.to_move, tricks)))
            if not state.trick:
                tricks = tricks + [(state.last_trick[0], state.last_trick[1])]
        if state.phase == "moon":
            yield state, tricks
            state = state.choose_moon(state.shooter[0], "old")
        if state.is_over:
            return


def _hidden_from(state: GameState, seat: int) -> int:
    """The kitty cards ``seat`` must not know now: the kitty while it lies, and once another seat took
    it the cards face down in that seat's tricks (the kitty, or with kitty_exchange the discards)."""
    kitty = mask_of(state.kitty)
    taker = state.kitty_taker
    if taker is None:
        return kitty
    if taker == seat:
        return 0
    if state.rules.kitty_exchange:
        if state.phase == "discard":
            return kitty  # in the taker's hand
        return mask_of(state.discarded) if state.discarded else kitty
    return kitty


def _everything_in(v) -> int:
    seen = v.hand | v.legal | v.received | v.played | v.passed_mask | v.kitty_mask
    for _leader, cards in v.tricks:
        seen |= sum(1 << c for c in cards)
    for m in v.taken:
        seen |= m
    for c in v.discarded:
        seen |= 1 << c
    return seen


@pytest.mark.parametrize("config", KITTY_CONFIGS, ids=_id)
def test_a_seat_that_did_not_take_the_kitty_has_no_trace_of_it(config) -> None:
    preset, options = config
    rules = Rules.make(preset, **options)
    t = rules.table
    checked = before = 0
    for state, tricks in _decisions(rules, 5):
        for seat in range(rules.players):
            v = bot_view(state, seat, tricks)
            # (A card this seat passed to the taker it knows of, but not whether it was discarded.)
            hidden = _hidden_from(state, seat) & ~v.passed_mask
            if state.kitty_taker != seat:
                assert v.kitty == () and v.discarded == ()
                before += state.kitty_taker is None
            assert not _everything_in(v) & hidden, (seat, cards_of(hidden))
            # Nor the points of the hidden cards in the taker's points.
            taker = state.kitty_taker
            face_down = _hidden_from(state, seat)
            if face_down and taker is not None and state.phase != "discard":
                lost = sum(t.values[c] for c in range(52) if face_down >> c & 1)
                assert v.points[taker] == state.points[taker] - lost
            assert v.kitty_size == t.kitty_size and v.kitty_taker == state.kitty_taker
            checked += 1
    assert checked > 50 and before > 10


def test_the_taker_sees_the_kitty_and_its_discards() -> None:
    state = _discard_state(CLUBS_AND_DIAMONDS, "QS")
    assert bot_view(state, 0).kitty == (CARD_INDEX["QS"],)
    after = state.discard_kitty(0, ["AC"])
    v = bot_view(after, 0)
    assert v.discarded == (CARD_INDEX["AC"],) and v.taken[0] & (1 << CARD_INDEX["AC"])
    other = bot_view(after, 1)
    assert other.kitty == () and other.discarded == () and not other.taken[0] & (1 << CARD_INDEX["AC"])
    assert other.kitty_taker == 0 and other.kitty_trick == 1


# -- strong's worlds agree with the kitty knowledge ---------------------------------------------------


def _real_pile(state: GameState, seat: int) -> int:
    hidden = _hidden_from(state, seat)
    return 0 if state.phase == "discard" else hidden


@pytest.mark.parametrize("config", KITTY_CONFIGS, ids=_id)
def test_knowledge_with_a_kitty_is_sound_and_worlds_agree(config) -> None:
    preset, options = config
    rules = Rules.make(preset, **options)
    rng = random.Random(2)
    worlds = 0
    for state, tricks in _decisions(rules, 9, "heuristic"):
        if state.phase != "play":
            continue
        seat = state.to_move
        for view_tricks in (tricks, None):
            v = bot_view(state, seat, view_tricks)
            k = infer(v)
            _check_sound(k, state)
            hands, pile = sample_world(k, rng)
            _check_world(k, hands, pile)
            if view_tricks is not None and v.legal & (v.legal - 1):
                _check_playable_world(v, hands, pile)
                worlds += 1
    assert worlds > 5


def _check_sound(k: Knowledge, state: GameState) -> None:
    for s in range(state.players):
        real = state.hand_mask(s)
        assert k.counts[s] == real.bit_count()
        assert real & ~k.allowed[s] == 0, f"seat {s}: inference ruled out a card it holds"
        assert k.known[s] & ~real == 0
    pile = _real_pile(state, k.seat)
    assert k.pile == pile.bit_count()
    assert pile & ~k.pile_allowed == 0, "inference ruled out a card of the kitty"
    assert k.pile_known & ~pile == 0


def _check_world(k: Knowledge, hands: tuple[int, ...], pile: int) -> None:
    union = pile
    assert pile.bit_count() == k.pile and pile & ~k.pile_allowed == 0 and pile & k.pile_known == k.pile_known
    for s, h in enumerate(hands):
        assert h.bit_count() == k.counts[s]
        assert h & ~k.allowed[s] == 0 and h & k.known[s] == k.known[s]
        assert not union & h
        union |= h
    assert union & ~hands[k.seat] == k.unseen  # the unseen cards, every one in a hand or the pile


def _check_playable_world(v, hands: tuple[int, ...], pile: int) -> None:
    """The world strong builds is a real position: every card in play once, the kitty where it lies,
    the taker's points those of its tricks; and it plays out through the engine."""
    world = GameState.from_dict(_world(_template(v), v, hands, pile))
    t = v.table
    union = 0
    count = 0
    masks = list(world.hands) + list(world.taken) + [sum(1 << c for c in world.trick)]
    if world.kitty_taker is None:
        masks.append(mask_of(world.kitty))
    for m in masks:
        union |= m
        count += m.bit_count()
    assert union == t.deck_mask and count == t.deck_size
    for s in range(v.players):
        assert world.points[s] == sum(t.values[c] for c in range(52) if world.taken[s] >> c & 1)
    assert world.kitty_taker == v.kitty_taker
    while world.phase in ("play", "discard"):
        if world.phase == "discard":
            seat = world.kitty_taker
            world = world.discard_kitty(seat, world.hand(seat)[: world.discard_count])
        else:
            world = world.play(world.legal_cards()[0])


def test_a_first_lead_above_the_lowest_club_puts_the_lower_clubs_in_the_kitty() -> None:
    rules = Rules.make("standard", players=3, kitty="first_trick", pass_count=0)
    state = new_game(rules).deal(kitty_deck(rules, "2C", {0: "3C"}))
    state = state.play("3C")
    k = infer(bot_view(state, 1, []))
    assert k.pile == 1 and k.pile_known == 1 << CARD_INDEX["2C"]
    assert all(not a >> CARD_INDEX["2C"] & 1 for s, a in enumerate(k.allowed) if s != 1)


@pytest.mark.parametrize("options", [{}, {"kitty_exchange": True}], ids=["kitty", "kitty_exchange"])
def test_strong_plays_legally_with_the_kitty_lying_and_taken_from_a_view_or_the_engine_dict(options) -> None:
    rules = Rules.make("kitty", **options)
    bot = get_bot("strong", seed=1, playouts=12, time_limit=None)
    lying = taken = 0
    for k, (state, tricks) in enumerate(_decisions(rules, 3, "heuristic")):
        if k % 3 == 0 and state.phase == "play" and state.legal_mask() & (state.legal_mask() - 1):
            seat = state.to_move
            assert bot.choose_play(bot_view(state, seat, tricks)) in state.legal_cards()
            d = BotView.from_seat_view(seat_view(state, seat), rules)
            assert d.kitty_known and d.kitty_taker == state.kitty_taker
            assert bot.choose_play(d) in state.legal_cards()
            lying += state.kitty_taker is None
            taken += state.kitty_taker is not None
    assert lying and taken


# -- partnership rules of thumb ---------------------------------------------------------------------


def _void_discard_position(rules: Rules) -> GameState:
    # Seat 3 is last, void in diamonds: seat 1 (its partner with a partnership) is winning with AD.
    # Both sides have taken hearts (no slam in sight).
    hands = {0: "AC JC", 1: "KC TC", 2: "QC 9C", 3: "QS 2C 3C"}
    return position(rules, hands, taken={1: "2H 3H 4H 5H"}, trick="5D AD 3D", leader=0, rest_taken_by=0)


@pytest.mark.parametrize("bot", ["heuristic", "strong"])
def test_no_points_dumped_on_the_partners_trick(bot: str) -> None:
    options = {"playouts": 40, "time_limit": None} if bot == "strong" else {}
    standard = _void_discard_position(Rules.make("standard"))
    assert get_bot(bot, seed=1, **options).choose_play(bot_view(standard, 3)) == "QS"
    for preset in ("partnership", "partnership-individual"):
        state = _void_discard_position(Rules.make(preset))
        assert get_bot(bot, seed=1, **options).choose_play(bot_view(state, 3)) != "QS", preset


def test_last_on_the_partners_clean_trick_lets_the_partner_have_it() -> None:
    hands = {0: "AD", 1: "KD", 2: "QD", 3: "AC 3C"}
    standard = position(Rules.make("standard"), hands, trick="5C KC 2C", leader=0, rest_taken_by=0)
    assert get_bot("heuristic").choose_play(bot_view(standard, 3)) == "AC"  # sheds its ace
    team = position(Rules.make("partnership"), hands, trick="5C KC 2C", leader=0, rest_taken_by=0)
    assert get_bot("heuristic").choose_play(bot_view(team, 3)) == "3C"


def _moon_position(rules: Rules, point_takers: tuple[int, ...], trick: str, leader: int) -> GameState:
    """Ten tricks played; ``point_takers`` took QS and six hearts between them, nobody else a point;
    seat 3 (to play) holds KH 4H AC and can take the trick on the table with KH."""
    hands = {0: "JH AD KD", 1: "QH 2D", 2: "AH 3D", 3: "KH 4H AC"}
    points = "QS 3H 5H 6H 7H 8H TH".split()
    named = set(points) | set(trick.split()) | {c for h in hands.values() for c in h.split()}
    plain = [c for c in Rules.make("standard").table.deck_cards if c not in named]
    n_taken = [0, 0, 0, 0]
    taken: dict[int, list[str]] = {s: [] for s in range(4)}
    for k, c in enumerate(points):
        taken[point_takers[k % len(point_takers)]].append(c)
    for s in range(4):
        n_taken[s] = -len(taken[s]) % 4
    for s in range(4):
        while n_taken[s]:
            taken[s].append(plain.pop())
            n_taken[s] -= 1
    while plain:
        taken[0] += [plain.pop() for _ in range(4)]
    return position(rules, hands, taken={s: " ".join(c) for s, c in taken.items()}, trick=trick, leader=leader)


def test_the_partners_moon_is_not_spoiled() -> None:
    # Seat 1 took every point so far; it led 9H, seat 2 followed 2H.
    def card(rules: Rules) -> str:
        state = _moon_position(rules, (1,), "9H 2H", 1)
        assert set(state.legal_cards()) == {"KH", "4H"}
        return get_bot("heuristic").choose_play(bot_view(state, 3))

    assert card(Rules.make("standard")) == "KH"  # a would-be shooter: take the points away
    assert card(Rules.make("partnership-individual")) == "4H"  # the partner's moon
    assert card(Rules.make("partnership")) == "4H"  # the own team's slam


def test_the_other_teams_slam_is_spoiled() -> None:
    # Seats 0 and 2 (the other team, for seat 3) took every point between them; seat 2 led 9H.
    state = _moon_position(Rules.make("partnership"), (0, 2), "9H 2H", 1)
    assert get_bot("heuristic").choose_play(bot_view(state, 3)) == "4H"  # seat 1 (the partner) wins it
    state = _moon_position(Rules.make("partnership"), (0, 2), "2H 9H", 1)
    assert get_bot("heuristic").choose_play(bot_view(state, 3)) == "KH"  # seat 2 would win it


def test_the_pass_to_the_partner_voids_a_short_suit_first() -> None:
    rules = Rules.make("partnership", pass_to_partner=True)
    hand = "QS AS KH AH 2S 3S 2D 9D 2C 3C 4C 5C 6C"
    state = new_game(rules).deal(deck_for(rules, {0: hand}))
    assert state.pass_direction == "across"
    v = bot_view(state, 0)
    assert v.partner == 2 and set(v.pass_targets_of_a_pass(3)) == {2}
    chosen = get_bot("heuristic").choose_pass(v)
    # The usual pass would give QS, AS and AH; to the partner, a void in diamonds comes first.
    assert set(get_bot("heuristic").choose_pass(bot_view(new_game(Rules.make("standard")).deal(
        deck_for(Rules.make("standard"), {0: hand}), "across"), 0))) == {"QS", "AS", "AH"}
    assert set(chosen) == {"2D", "9D", "QS"}
    t = rules.table
    assert [c for c in choose_partner_pass_cards(t, mask_of(hand.split()), 3)] == [CARD_INDEX[c] for c in chosen]
