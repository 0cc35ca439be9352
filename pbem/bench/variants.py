"""``pbem bench variants``: whole bot games of every §6 configuration, counted and timed.

Each configuration (RULES.md §6.1 partnership, §6.2 kitty, §6.3 passing variants, §6.4 Turbo with
§6.5 Booster Nines, §6.7 Dirty Nasty Filthy, §6.6 Cancellation with 6, 8 and 10 players, and
``standard`` beside them) plays
``games`` whole games between cheap bots (``random`` and ``heuristic``; a seat's bot drawn per game
from the seed, or ``--bots`` cycled over the seats) to the end the rules say (``target``, or
``end_after_hands``; under ``moon=win`` a shoot ends it). Every decision (a Turbo charge too) goes
through the engine as a move (``apply``, its move-log
form read back first, as the server stores it), so a bot's illegal answer, a move the log cannot
carry, or an engine error is an *error* of that configuration; so is a hand whose cards are not
conserved (every card in play, the kitty's included, in exactly one seat's tricks; with two decks
each card twice, the carried tricks' cards included) or a game not
over after ``max_hands`` hands. The printout: per configuration, games played, errors (0 expected),
moves, seconds (CPU of this process) and games per second.

    pbem bench variants                  # 1,000 games of each configuration
    pbem bench variants --games 20 --bots heuristic,random
    pbem bench variants --only turbo --only dnf --only booster   # only the configurations so named
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from pbem.bots import decide, get_bot
from pbem.bots.view import SeenTrick
from pbem.engine import (
    CALL,
    DEAL,
    MIX,
    OVER,
    PASS,
    PLAY,
    Deal,
    GameState,
    MixCards,
    Move,
    Rules,
    apply,
    move_from_dict,
    move_to_dict,
    new_game,
    shuffled_deck,
    shuffled_mix,
)

#: The cheap bots a seat is drawn from when ``--bots`` is not given.
CHEAP_BOTS = ("random", "heuristic")


@dataclass(frozen=True)
class Configuration:
    name: str
    preset: str
    options: tuple[tuple[str, Any], ...] = ()

    def rules(self) -> Rules:
        return Rules.make(self.preset, **dict(self.options))


def _kitty(form: str, players: int, exchange: bool) -> Configuration:
    name = f"kitty={form} players={players}" + (" kitty_exchange" if exchange else "")
    options: tuple[tuple[str, Any], ...] = (("kitty", form), ("players", players))
    if exchange:
        options += (("kitty_exchange", True),)
    return Configuration(name, "standard", options)


#: RULES.md §6.3's passing variants: declining (with a scatter too), mix (with the kitty in it too),
#: the dealer's call (with declining, and with a kitty).
PASSING_CONFIGURATIONS: tuple[Configuration, ...] = (
    Configuration("pass_optional", "standard", (("pass_optional", True),)),
    Configuration("pass_optional pass_cycle=scatter", "standard",
                  (("pass_optional", True), ("pass_cycle", ("scatter",)))),
    Configuration("pass_cycle=left mix", "standard", (("pass_cycle", ("left", "mix")),)),
    Configuration("kitty pass_cycle=mix", "kitty", (("pass_cycle", ("mix",)),)),
    Configuration("dealer_calls_pass", "standard", (("dealer_calls_pass", True),)),
    Configuration("dealer_calls_pass pass_optional", "standard",
                  (("dealer_calls_pass", True), ("pass_optional", True))),
    Configuration("dealer_calls_pass kitty", "kitty", (("dealer_calls_pass", True),)),
    Configuration("dealer_calls_pass players=3 kitty=first_trick", "standard",
                  (("dealer_calls_pass", True), ("kitty", "first_trick"), ("players", 3))),
)

#: RULES.md §6.4 Turbo (with the seeds' one-card charge), §6.5 Booster Nines with Turbo and without,
#: §6.7 Dirty Nasty Filthy (dealer's call, moon=win).
TURBO_CONFIGURATIONS: tuple[Configuration, ...] = (
    Configuration("turbo", "turbo"),
    Configuration("turbo-nines", "turbo-nines"),
    Configuration("dnf", "dnf"),
    Configuration("turbo charge_limit=1", "turbo", (("charge_limit", 1),)),
    Configuration("booster_nines", "standard", (("booster_nines", True),)),
)

#: RULES.md §6.6 Cancellation: two decks, with the fewest players, the preset's count and the most.
CANCELLATION_CONFIGURATIONS: tuple[Configuration, ...] = tuple(
    Configuration(f"cancellation players={n}", "cancellation", (("players", n),)) for n in (6, 8, 10))

#: Every configuration the benchmark plays (the issue's list for §6.1 to §6.7, and ``standard``).
CONFIGURATIONS: tuple[Configuration, ...] = (
    Configuration("standard", "standard"),
    Configuration("partnership", "partnership"),
    Configuration("partnership-individual", "partnership-individual"),
    Configuration("partnership pass_to_partner", "partnership", (("pass_to_partner", True),)),
    Configuration("partnership-individual partner_moon=charged", "partnership-individual",
                  (("partner_moon", "charged"),)),
    Configuration("kitty", "kitty"),
    Configuration("kitty kitty_exchange", "kitty", (("kitty_exchange", True),)),
    *(_kitty(form, players, exchange)
      for form in ("first_trick", "first_penalty") for players in (3, 5) for exchange in (False, True)),
    *PASSING_CONFIGURATIONS,
    *TURBO_CONFIGURATIONS,
    *CANCELLATION_CONFIGURATIONS,
)


@dataclass
class Result:
    configuration: Configuration
    games: int = 0
    errors: int = 0
    moves: int = 0
    hands: int = 0
    seconds: float = 0.0
    messages: list[str] = field(default_factory=list)  # the first few errors

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds else 0.0


class GameError(Exception):
    """A game that broke a rule of the benchmark (cards not conserved, no end)."""


def _step(state: GameState, move: Move) -> GameState:
    """Apply ``move`` as the server would: through its move-log form, with events."""
    move = move_from_dict(move_to_dict(move))
    state, _events = apply(state, move)
    return state


def _check_conserved(state: GameState) -> None:
    """Every card in play is in exactly one seat's tricks at the end of a hand (the kitty included;
    with two decks, RULES.md §6.6, each card twice: nothing is left carried on the table)."""
    if state.decks == 2:
        copies: dict[str, int] = {}
        for cards in state.taken_cards():
            for c in cards:
                copies[c] = copies.get(c, 0) + 1
        expected = state.rules.table.deck_cards
        if sum(copies.values()) != len(expected) or any(copies.get(c, 0) != 2 for c in expected) or state.carried:
            raise GameError(f"hand {state.hand_no}: the tricks hold {sum(copies.values())} cards, "
                            f"{len(expected)} are in play (each twice)")
        return
    union = 0
    count = 0
    for m in state.taken:
        union |= m
        count += m.bit_count()
    deck = state.rules.table.deck_mask
    if union != deck or count != deck.bit_count():
        raise GameError(f"hand {state.hand_no}: the tricks hold {count} cards, {deck.bit_count()} are in play")


def play_game(rules: Rules, lineup: Sequence[str], seed: str, max_hands: int = 500) -> tuple[int, int]:
    """One whole game between the named bots; (moves applied, hands played). Raises on any error."""
    n = rules.players
    bots = [get_bot(name, seed=f"{seed}:bot:{s}") for s, name in enumerate(lineup)]
    deck_rng = random.Random(f"{seed}:deck")
    state = new_game(rules)
    moves = 0
    mix_rng = random.Random(f"{seed}:mix")
    while state.phase != OVER:
        if state.hand_no >= max_hands:
            raise GameError(f"not over after {max_hands} hands")
        if state.phase == CALL:  # dealer_calls_pass: the coming hand's dealer calls (RULES.md §6.3)
            state = _step(state, decide(bots[state.next_dealer], state, state.next_dealer))
            moves += 1
        state = _step(state, Deal(shuffled_deck(rules, deck_rng)))
        moves += 1
        if state.phase == PASS:  # simultaneous: every seat decides from the deal (a decline too)
            for move in [decide(bots[s], state, s) for s in range(n)]:
                state = _step(state, move)
                moves += 1
        tricks: list[SeenTrick] = []
        while state.phase not in (CALL, DEAL, OVER):
            phase = state.phase
            if phase == MIX:  # chance, drawn outside the engine as a deck is
                state = _step(state, MixCards(shuffled_mix(state, mix_rng)))
            else:
                seat = state.seats_to_act()[0]
                state = _step(state, decide(bots[seat], state, seat, tricks))
                if phase == PLAY and not state.trick:
                    tricks.append((state.last_trick[0], state.last_trick[1]))
            moves += 1
        _check_conserved(state)
    return moves, state.hand_no


def lineup_for(rules: Rules, bots: Sequence[str] | None, rng: random.Random) -> list[str]:
    """The bots by seat: ``bots`` cycled over the seats, or a cheap bot drawn for each seat."""
    if bots:
        return [bots[s % len(bots)] for s in range(rules.players)]
    return [rng.choice(CHEAP_BOTS) for _ in range(rules.players)]


def run_configuration(configuration: Configuration, games: int, seed: str = "1",
                      bots: Sequence[str] | None = None, max_hands: int = 500) -> Result:
    """Play ``games`` games of one configuration; errors are counted (the first five kept)."""
    result = Result(configuration)
    rules = configuration.rules()
    rng = random.Random(f"{seed}:{configuration.name}:lineups")
    start = time.process_time()
    for g in range(games):
        lineup = lineup_for(rules, bots, rng)
        try:
            moves, hands = play_game(rules, lineup, f"{seed}:{configuration.name}:{g}", max_hands)
        except Exception as error:  # an error of the configuration, counted and reported
            result.errors += 1
            if len(result.messages) < 5:
                result.messages.append(f"game {g} ({','.join(lineup)}): {type(error).__name__}: {error}")
        else:
            result.moves += moves
            result.hands += hands
        result.games += 1
    result.seconds = time.process_time() - start
    return result


def run(games: int = 1000, seed: str = "1", bots: Sequence[str] | None = None,
        configurations: Iterable[Configuration] = CONFIGURATIONS, echo: Callable[[str], None] = print,
        progress: Callable[[Iterable[Configuration]], Iterable[Configuration]] | None = None) -> list[Result]:
    """Every configuration in turn; prints a line for each and a total. Returns the results."""
    configurations = list(configurations)
    who = ",".join(bots) if bots else "random/heuristic drawn per seat"
    echo(f"{games} whole games per configuration; bots: {who}; seed {seed}; seconds: CPU of this process")
    echo(f"{'configuration':46} {'games':>6} {'errors':>6} {'hands':>7} {'moves':>9} {'seconds':>8} {'games/s':>8}")
    results = []
    stream: Iterable[Configuration] = progress(configurations) if progress else configurations
    for configuration in stream:
        r = run_configuration(configuration, games, seed, bots)
        results.append(r)
        echo(f"{configuration.name:46} {r.games:6d} {r.errors:6d} {r.hands:7d} {r.moves:9d} {r.seconds:8.1f} "
             f"{r.games_per_second:8.1f}")
        for message in r.messages:
            echo(f"    error: {message}")
    total = Result(Configuration("total", "standard"))
    for r in results:
        total.games += r.games
        total.errors += r.errors
        total.hands += r.hands
        total.moves += r.moves
        total.seconds += r.seconds
    echo(f"{'total':46} {total.games:6d} {total.errors:6d} {total.hands:7d} {total.moves:9d} {total.seconds:8.1f} "
         f"{total.games_per_second:8.1f}")
    return results
