"""The bots under RULES.md §6.3's passing variants (mix, pass_optional, dealer_calls_pass): whole games,
legal calls and declines, views that hold nothing a seat must not know (a decliner never sees the
cards forwarded through it; nobody sees the cards being mixed), and ``strong``'s worlds consistent
with what a seat knows of its pass after a mix or with decliners about."""

from __future__ import annotations

import random
from typing import Iterator

import pytest

from pbem.bots import BotView, bot_view, get_bot
from pbem.bots.heuristic import hand_is_safe
from pbem.bots.knowledge import infer, sample_world
from pbem.bots.match import call_pass, choose_passes, play_hand
from pbem.engine import CALL, MIX, GameState, Rules, new_game, seat_view, shuffled_deck, shuffled_mix
from pbem.engine.cards import mask_of

from tests.engine.helpers import deck_for

from .test_variants import _check_playable_world, _check_sound, _check_world, _everything_in

#: Every §6.3 configuration the bots must play (with the variants of §6.1/§6.2 they combine with).
CONFIGS = [
    ("standard", {"pass_optional": True}),
    ("standard", {"pass_optional": True, "pass_cycle": ["scatter"]}),
    ("standard", {"pass_cycle": ["left", "mix"]}),
    ("standard", {"pass_cycle": ["mix"], "players": 3}),
    ("kitty", {"pass_cycle": ["mix"]}),
    ("kitty", {"pass_cycle": ["mix"], "kitty_exchange": True}),
    ("partnership", {"pass_cycle": ["mix"], "pass_to_partner": True}),
    ("standard", {"dealer_calls_pass": True}),
    ("standard", {"dealer_calls_pass": True, "pass_optional": True}),
    ("kitty", {"dealer_calls_pass": True}),
    ("standard", {"dealer_calls_pass": True, "kitty": "first_trick", "players": 3}),
]


def _id(config) -> str:
    preset, options = config
    return preset + "".join(f" {k}={v}" for k, v in options.items())


def _bot(name: str, seed) -> object:
    return get_bot(name, seed=seed, **({"playouts": 12, "time_limit": None} if name == "strong" else {}))


# -- whole games ------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=_id)
@pytest.mark.parametrize("bot", ["random", "heuristic", "strong"])
def test_each_bot_plays_whole_games_of_every_passing_configuration(config, bot: str) -> None:
    preset, options = config
    rules = Rules.make(preset, end_after_hands=2 if bot == "strong" else 4, **options)
    n = rules.players
    seen = {"call": 0, "decline": 0, "mix": 0}
    for game in range(1 if bot == "strong" else 2):
        rng = random.Random(f"{_id(config)}:{game}")
        bots = [_bot(bot if s else "heuristic", f"{game}:{s}") for s in range(n)]
        state = new_game(rules)
        while not state.is_over:
            seen["call"] += state.phase == CALL
            state = call_pass(state, bots)  # the engine refuses a call that is not legal
            state = state.deal(shuffled_deck(rules, rng))
            seen["mix"] += state.pass_direction == "mix"
            if state.phase == "pass":
                seen["decline"] += sum(c is None for c in choose_passes(state, bots))
            state = play_hand(state, bots, rng)  # ... and any illegal pass, decline or card
        assert state.winners
    if rules.dealer_calls_pass:
        assert seen["call"]
    if "mix" in str(options.get("pass_cycle")):
        assert bool(seen["mix"]) != rules.pass_to_partner  # RULES.md §6.8: to the partner, a mix passes across
    if rules.pass_optional and bot == "random":
        assert seen["decline"]


# -- the dealer's call ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bot", ["random", "heuristic", "strong"])
def test_every_bot_calls_a_legal_pass_every_hand_of_the_cycle(bot: str) -> None:
    rules = Rules.make("standard", dealer_calls_pass=True)
    rng = random.Random(3)
    b = _bot(bot, 1)
    state = new_game(rules)
    calls = []
    for hand in range(4):  # left, right, across, hold: a hold is not a call
        assert state.phase == CALL
        dealer = state.next_dealer
        v = bot_view(state, dealer)
        assert v.call_choices == state.call_choices() and v.default_call == state.default_call()
        call = b.choose_call(v)
        assert call in state.call_choices()
        assert b.choose_call(seat_view(state, dealer)) in state.call_choices()  # from the engine's dict too
        calls.append(call)
        state = state.call_pass(dealer, call)
        assert state.pass_call == call
        state = state.deal(shuffled_deck(rules, rng))
        while not state.phase == CALL:
            state = state.play(state.legal_cards()[0]) if state.phase == "play" else state
            if state.phase == "pass":
                for s in range(4):
                    state = state.pass_cards(s, state.hand(s)[:3])
            if state.phase == MIX:
                state = state.mix(shuffled_mix(state, rng))
    if bot != "random":  # the cycle's direction, and mix for the hold hand
        assert calls == [(("left", 3),), (("right", 3),), (("across", 3),), (("mix", 3),)]


def test_only_the_dealer_is_offered_calls() -> None:
    state = new_game(Rules.make("standard", dealer_calls_pass=True))
    dealer = state.next_dealer
    for seat in range(4):
        v = bot_view(state, seat)
        assert bool(v.call_choices) == (seat == dealer)
    with pytest.raises(ValueError):
        get_bot("random").choose_call(bot_view(state, (dealer + 1) % 4))


def test_a_split_call_sends_the_first_cards_to_the_first_direction() -> None:
    rules = Rules.make("standard", dealer_calls_pass=True)
    state = new_game(rules).call_pass(3, (("left", 2), ("right", 1)))
    state = state.deal(deck_for(rules, {}))
    v = bot_view(state, 0)
    assert v.pass_direction == "split" and v.pass_call == (("left", 2), ("right", 1))
    assert v.pass_targets_of_a_pass(3) == (1, 1, 3)
    bots = [get_bot("heuristic") for _ in range(4)]
    chosen = choose_passes(state, bots)
    after = play_hand(state, bots)  # legal through the whole hand
    assert after.hand_no == 1
    passed = state
    for s in range(4):
        passed = passed.pass_cards(s, chosen[s])
    a, b, c = chosen[0]
    assert {a, b} <= set(passed.hand(1)) and c in passed.hand(3)
    v0 = bot_view(passed, 0)
    assert v0.pass_targets() == (1, 1, 3)
    k = infer(v0)
    assert mask_of([a, b]) & ~k.known[1] == 0 and mask_of([c]) & ~k.known[3] == 0


# -- declining ------------------------------------------------------------------------------------------

#: A hand with nothing to get rid of (QS well guarded, low hearts), and one with an ill-guarded QS.
SAFE = "2C 3C 4C 5C 2D 3D 4D 2S 3S 4S 5S QS 2H"
DANGEROUS = "2C 3C 4C 5C 2D 3D 4D 2S QS 9D 5H AH KH"


def _pass_state(rules: Rules, hand0: str) -> GameState:
    return new_game(rules).deal(deck_for(rules, {0: hand0}))


def test_the_heuristic_declines_a_safe_hand_and_passes_a_dangerous_one() -> None:
    rules = Rules.make("standard", pass_optional=True)
    t = rules.table
    assert hand_is_safe(t, mask_of(SAFE.split())) and not hand_is_safe(t, mask_of(DANGEROUS.split()))
    for name in ("heuristic", "strong"):
        bot = _bot(name, 1)
        assert bot.choose_decline(bot_view(_pass_state(rules, SAFE), 0)) is True
        assert bot.choose_decline(bot_view(_pass_state(rules, DANGEROUS), 0)) is False
        # Without pass_optional there is nothing to decline.
        plain = _pass_state(Rules.make("standard"), SAFE)
        assert bot_view(plain, 0).may_decline is False and bot.choose_decline(bot_view(plain, 0)) is False


def test_the_random_bot_declines_sometimes_and_never_on_a_mix_hand() -> None:
    rules = Rules.make("standard", pass_optional=True)
    state = _pass_state(rules, SAFE)
    bot = get_bot("random", seed=4)
    answers = [bot.choose_decline(bot_view(state, s % 4)) for s in range(80)]
    assert 0 < sum(answers) < 80
    mix = _pass_state(Rules.make("standard", pass_optional=True, pass_cycle=["mix"]), SAFE)
    v = bot_view(mix, 0)
    assert mix.pass_direction == "mix" and v.may_decline is False
    assert not any(bot.choose_decline(v) for _ in range(40))
    assert not seat_view(mix, 0)["may_decline"] and not BotView.from_seat_view(seat_view(mix, 0)).may_decline


def test_a_decliner_never_sees_the_cards_forwarded_through_it() -> None:
    rules = Rules.make("standard", pass_optional=True)
    state = _pass_state(rules, DANGEROUS)
    # Seats 1 and 2 decline: seat 0's pass to the left goes on through both of them, to seat 3.
    state = state.pass_cards(0, ["QS", "AH", "KH"]).decline_pass(1).decline_pass(2)
    before = state.hand_mask(1), state.hand_mask(2)
    state = state.pass_cards(3, state.hand(3)[:3])
    forwarded = mask_of(["QS", "AH", "KH"])
    assert state.hand_mask(3) & forwarded == forwarded
    for seat, hand in zip((1, 2), before):
        v = bot_view(state, seat)
        assert v.declined and v.received == 0 and v.hand == hand and v.passed_mask == 0
        assert not _everything_in(v) & forwarded
        k = infer(v)
        assert not any(m & forwarded for s, m in enumerate(k.known) if s != seat)
        assert not BotView.from_seat_view(seat_view(state, seat), rules).received & forwarded
    # The passer knows its cards are in another hand, not which one (who declined is not told).
    k0 = infer(bot_view(state, 0))
    assert not any(m & forwarded for m in k0.known[1:])
    assert all(k0.allowed[s] & forwarded == forwarded for s in (1, 2, 3))


def test_after_a_mix_a_seat_knows_only_what_it_got_back() -> None:
    rules = Rules.make("kitty", pass_cycle=["mix"])
    state = new_game(rules).deal(shuffled_deck(rules, random.Random(8)))
    passes = {s: state.hand(s)[:3] for s in range(4)}
    for s in range(4):
        state = state.pass_cards(s, passes[s])
        for seat in range(4):  # nobody sees another seat's pass while the cards wait
            others = mask_of([c for o in range(4) if o != seat for c in passes[o]])
            assert not _everything_in(bot_view(state, seat)) & others
    assert state.phase == MIX
    mixed = mask_of(state.cards_to_mix)
    state = state.mix(shuffled_mix(state, random.Random(1)))
    kitty = mask_of(state.kitty)
    for seat in range(4):
        v = bot_view(state, seat)
        got = v.received
        assert got == state.received[seat] and got.bit_count() == 3 and v.hand & got == got
        # Of the mixed cards this seat knows those it passed and those it got back, nothing else.
        unknown = mixed & ~mask_of(passes[seat]) & ~got
        assert not _everything_in(v) & unknown & ~v.hand
        assert not _everything_in(v) & kitty & ~mask_of(passes[seat])  # (its own passed cards it knows of)
        k = infer(v)
        assert k.known[seat] == v.hand
        own_gone = mask_of(passes[seat]) & ~v.hand
        assert not any(m & own_gone for s, m in enumerate(k.known) if s != seat)
        assert own_gone & ~k.pile_allowed == 0  # its own passed cards may be in the new kitty
        _check_sound(k, state)


# -- strong's worlds agree with what a seat knows of its pass -----------------------------------------------


def _decisions(rules: Rules, seed: int, bot: str = "heuristic") -> Iterator[tuple[GameState, list]]:
    """(state, finished tricks) at every card play of two hands, the passes made by ``bot``."""
    rng = random.Random(seed)
    bots = [get_bot(bot, seed=f"{seed}:{s}") for s in range(rules.players)]
    state = new_game(rules)
    for _ in range(2):
        state = call_pass(state, bots)
        state = state.deal(shuffled_deck(rules, rng))
        if state.phase == "pass":
            for s, cards in enumerate(choose_passes(state, bots)):
                state = state.decline_pass(s) if cards is None else state.pass_cards(s, cards)
        if state.phase == MIX:
            state = state.mix(shuffled_mix(state, rng))
        tricks: list = []
        while state.phase in ("play", "discard"):
            if state.phase == "discard":
                seat = state.kitty_taker
                state = state.discard_kitty(seat, bots[seat].choose_discard(bot_view(state, seat, tricks)))
                continue
            yield state, tricks
            state = state.play(bots[state.to_move].choose_play(bot_view(state, state.to_move, tricks)))
            if not state.trick:
                tricks = tricks + [(state.last_trick[0], state.last_trick[1])]
        if state.phase == "moon":
            state = state.choose_moon(state.shooter[0], "old")
        if state.is_over:
            return


@pytest.mark.parametrize("config", [c for c in CONFIGS if c[0] != "partnership"], ids=_id)
def test_knowledge_after_passing_variants_is_sound_and_worlds_agree(config) -> None:
    preset, options = config
    rules = Rules.make(preset, **options)
    rng = random.Random(2)
    worlds = 0
    for bot in ("heuristic", "random"):
        for state, tricks in _decisions(rules, 11, bot):
            seat = state.to_move
            v = bot_view(state, seat, tricks)
            k = infer(v)
            _check_sound(k, state)
            hands, pile = sample_world(k, rng)
            _check_world(k, hands, pile)
            if v.legal & (v.legal - 1) and worlds < 40:
                _check_playable_world(v, hands, pile)
                worlds += 1
    assert worlds > 5


def test_strong_plays_a_legal_card_after_a_mix_and_after_declines() -> None:
    for options in ({"pass_cycle": ["mix"]}, {"pass_optional": True}):
        rules = Rules.make("kitty", **options)
        bot = _bot("strong", 3)
        for state, tricks in _decisions(rules, 4):
            if state.tricks_played in (1, 6) and not state.trick:
                assert bot.choose_play(bot_view(state, state.to_move, tricks)) in state.legal_cards()


# -- pbem simulate and pbem bench variants --------------------------------------------------------------


def _sim(*args: str) -> str:
    from click.testing import CliRunner

    from pbem.cli import main

    result = CliRunner().invoke(main, ["simulate", "--no-progress", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("args", [
    ["--option", "pass_optional=true"],
    ["--option", "dealer_calls_pass=true"],
    ["--option", "pass_cycle=left mix"],
    ["--preset", "kitty", "--option", "pass_cycle=mix", "--option", "dealer_calls_pass=true"],
    ["--option", "pass_optional=true", "--option", "dealer_calls_pass=true"],
], ids=" ".join)
def test_simulate_runs_the_passing_variants(args: list[str]) -> None:
    out = _sim("--games", "2", "--bots", "heuristic,random,heuristic,random", "--seed", "3",
               "--option", "end_after_hands=4", *args)
    assert "player 0" in out and "win rate" in out
    for option in ("pass_optional=True", "dealer_calls_pass=True", "pass_cycle=left mix"):
        if option.replace("True", "true") in " ".join(args):
            assert option in out


def test_simulate_duplicate_deals_mix_the_same_way_at_every_seating(monkeypatch) -> None:
    import pbem.sim.runner as runner
    from pbem.sim.runner import SimConfig, play_unit

    mixes = []
    real_mix = runner.play_hand

    def recording(state, seated, rng=None):
        mixes.append(rng.random())
        return real_mix(state, seated, rng)

    monkeypatch.setattr(runner, "play_hand", recording)
    config = SimConfig(rules=Rules.make("standard", pass_cycle=["mix"]), bots=("heuristic", "random") * 2, units=1)
    play_unit(config, 0)
    assert len(mixes) == 4 and len(set(mixes)) == 1  # one shuffle's seed per deal, whoever sits where


def test_the_benchmark_has_the_passing_variants_and_plays_them_without_error() -> None:
    from pbem.bench.variants import CONFIGURATIONS, PASSING_CONFIGURATIONS, run

    names = {c.name for c in CONFIGURATIONS}
    assert {"pass_optional", "pass_cycle=left mix", "kitty pass_cycle=mix", "dealer_calls_pass",
            "dealer_calls_pass kitty"} <= names
    lines: list[str] = []
    results = run(games=2, seed="p", configurations=PASSING_CONFIGURATIONS, echo=lines.append)
    for r in results:
        assert r.games == 2 and r.errors == 0, (r.configuration.name, r.messages)


def test_decide_asks_the_method_each_phase_calls_for() -> None:
    from pbem.bots import decide
    from pbem.engine import CallPass, DeclinePass, MixCards, PassCards, PlayCard, apply

    rules = Rules.make("kitty", dealer_calls_pass=True, pass_optional=True)
    bot = get_bot("heuristic")
    state = new_game(rules)
    move = decide(bot, state, state.next_dealer)
    assert isinstance(move, CallPass) and move.call == (("left", 3),)
    with pytest.raises(ValueError):
        decide(bot, state.call_pass(3, (("mix", 3),)), 0)  # the deal is chance
    state = state.call_pass(3, move.call).deal(deck_for(rules, {0: "2C 3C 4C 5C 2D 3D 4D 2S 3S 4S 5S QS"}))
    assert isinstance(decide(bot, state, 0), DeclinePass)
    for s in range(4):
        move = decide(bot, state, s)
        assert isinstance(move, (DeclinePass, PassCards))
        state = apply(state, move)[0]
    assert isinstance(decide(bot, state, state.to_move), PlayCard)
    mix = new_game(rules).call_pass(3, (("mix", 3),)).deal(shuffled_deck(rules, random.Random(1)))
    for s in range(4):
        mix = apply(mix, decide(bot, mix, s))[0]  # no decline on a mix hand: every seat passes
    assert mix.phase == MIX
    with pytest.raises(ValueError):
        decide(bot, mix, 0)
    assert isinstance(MixCards(shuffled_mix(mix, random.Random(2))), MixCards)
