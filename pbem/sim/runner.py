"""Duplicate simulation: bots play the same deals from every seat, so luck cancels out.

A *unit* is one deal (``games=False``) or one whole game (``games=True``, the decks of its hands
drawn from the unit's seed). Each unit is played at several *seatings*:

- a plain run (``bots`` names one bot per seat): ``n`` seatings, the line-up rotated one seat each
  time, so every bot plays every seat's cards;
- a comparison (``compare=(A, B)``, ``bots`` names the ``n - 1`` other seats): for every seat ``s``,
  once with A in ``s`` and once with B in ``s``, the other seats holding the same bots with the same
  decision seeds. The paired difference A − B per unit (averaged over the seats) measures whether A
  takes fewer points than the bot it replaces.

With a partnership (RULES.md §6.1: seats 0+2 and 1+3) the rotations keep partners together (bots
``j`` and ``j + 2`` always sit opposite), so the report adds a line per team: its points per hand
(team mode: the team's hand score; individual mode: the partners' sum) and its win rate. A seat is
judged with its partner: a paired comparison measures the team's points (team mode: the team's hand
score; individual mode: the partners' sum), and a win is the team's.

Everything is derived from ``seed``, deal by deal, so a run is reproducible and its units can be
played in any order by any number of worker processes.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from pbem.bots import BOTS, Bot, get_bot
from pbem.bots.match import call_pass, play_hand
from pbem.bots.strong import DEFAULT_PLAYOUTS
from pbem.engine import OVER, InvalidRules, Rules, new_game, shuffled_deck
from pbem.engine.rules import PRESETS

from .stats import Estimate, estimate

PRESET_NAMES: tuple[str, ...] = tuple(sorted(PRESETS))
"""The rules presets a run starts from (``pbem simulate --preset``)."""

STRONG_PLAYOUTS: int = DEFAULT_PLAYOUTS
"""The strong bot's card playouts per decision when a run does not say."""


class BadRules(ValueError):
    """Rules a run cannot play: the preset refuses the options, or an option is unknown (the text is
    the engine's reason)."""


def make_rules(preset: str, options: Mapping[str, Any]) -> Rules:
    """The preset's rules with the options over it; :class:`BadRules` when they cannot be made."""
    try:
        return Rules.make(preset, **options)
    except (InvalidRules, TypeError) as error:
        raise BadRules(str(error)) from error


@dataclass(frozen=True)
class SimConfig:
    rules: Rules
    bots: tuple[str, ...]
    compare: tuple[str, str] | None = None
    units: int = 100
    games: bool = False
    seed: int | str = 0
    #: Constructor options by bot name, e.g. ``{"strong": {"playouts": 200, "time_limit": None}}``.
    bot_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: A game that has not ended after this many hands is stopped (and counted as such).
    max_hands: int = 500

    def __post_init__(self) -> None:
        n = self.rules.players
        names = list(self.bots) + list(self.compare or ())
        unknown = sorted({b for b in names if b not in BOTS})
        if unknown:
            raise ValueError(f"unknown bot(s): {', '.join(unknown)}; known: {', '.join(sorted(BOTS))}")
        want = n - 1 if self.compare else n
        if len(self.bots) != want:
            what = "the other seats" if self.compare else "every seat"
            raise ValueError(f"{n} players: give {want} bots for {what}, not {len(self.bots)}")
        if self.units < 1:
            raise ValueError("play at least one deal or game")

    def seatings(self) -> list["Seating"]:
        """The line-ups one unit is played at (see the module docstring)."""
        n = self.rules.players
        out = []
        if self.compare is None:
            for r in range(n):
                out.append(Seating(r, -1, tuple(self.bots[(s - r) % n] for s in range(n))))
            return out
        for s in range(n):
            for variant, name in enumerate(self.compare):
                lineup = [""] * n
                lineup[s] = name
                for j, other in enumerate(self.bots):
                    lineup[(s + 1 + j) % n] = other
                out.append(Seating(s, variant, tuple(lineup)))
        return out


@dataclass(frozen=True)
class Seating:
    key: int  # rotation (plain run) or the compared seat (comparison); it keys the decision seeds
    variant: int  # -1 in a plain run; 0 for A, 1 for B in a comparison
    lineup: tuple[str, ...]  # bot name by seat


@dataclass
class Timing:
    """Decision times of one bot for cards chosen among two or more legal ones: wall-clock, and the
    CPU time of the deciding process (what the decision costs on a machine busy with other work)."""

    count: int = 0
    total: float = 0.0
    longest: float = 0.0
    cpu_total: float = 0.0
    cpu_longest: float = 0.0

    def add(self, seconds: float, cpu: float) -> None:
        self.count += 1
        self.total += seconds
        self.longest = max(self.longest, seconds)
        self.cpu_total += cpu
        self.cpu_longest = max(self.cpu_longest, cpu)

    def merge(self, other: "Timing") -> None:
        self.count += other.count
        self.total += other.total
        self.longest = max(self.longest, other.longest)
        self.cpu_total += other.cpu_total
        self.cpu_longest = max(self.cpu_longest, other.cpu_longest)

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    @property
    def cpu_mean(self) -> float:
        return self.cpu_total / self.count if self.count else 0.0


@dataclass(frozen=True)
class SeatingResult:
    points: tuple[int, ...]  # total hand points by seat
    hands: int
    moons: tuple[int, ...]  # moons (and suns) shot, by seat
    wins: tuple[float, ...]  # games mode: 1 for a sole winner, 1/k for k joint winners
    finished: bool  # games mode: the game ended before ``max_hands``


@dataclass
class UnitResult:
    unit: int
    seatings: list[SeatingResult]
    timings: dict[str, Timing]


class _TimedBot:
    """Measures a bot's card decisions (those with a choice) without changing them."""

    def __init__(self, bot: Bot, timing: Timing) -> None:
        self.bot = bot
        self.name = bot.name
        self.timing = timing

    def choose_pass(self, view: Any) -> list[str]:
        return self.bot.choose_pass(view)

    def choose_moon(self, view: Any) -> str:
        return self.bot.choose_moon(view)

    def choose_discard(self, view: Any) -> list[str]:
        return self.bot.choose_discard(view)

    def choose_call(self, view: Any) -> tuple[tuple[str, int], ...]:
        return self.bot.choose_call(view)

    def choose_decline(self, view: Any) -> bool:
        return self.bot.choose_decline(view)

    def choose_charge(self, view: Any) -> list[str]:
        return self.bot.choose_charge(view)

    def choose_play(self, view: Any) -> str:
        if not view.legal & (view.legal - 1):
            return self.bot.choose_play(view)
        start, cpu = time.perf_counter(), time.process_time()
        card = self.bot.choose_play(view)
        self.timing.add(time.perf_counter() - start, time.process_time() - cpu)
        return card


def play_unit(config: SimConfig, unit: int) -> UnitResult:
    """Play one deal or game at every seating."""
    rules = config.rules
    n = rules.players
    timings: dict[str, Timing] = {}
    results = []
    for seating in config.seatings():
        bots = []
        for seat, name in enumerate(seating.lineup):
            bot = get_bot(name, seed=f"{config.seed}:bot:{unit}:{seating.key}:{seat}",
                          **dict(config.bot_options.get(name, {})))
            bots.append(_TimedBot(bot, timings.setdefault(name, Timing())))
        state = new_game(rules)
        hands = 0
        while True:
            deck_rng = random.Random(f"{config.seed}:deck:{unit}:{hands}")
            mix_rng = random.Random(f"{config.seed}:mix:{unit}:{hands}")
            if rules.dealer_calls_pass:  # RULES.md §6.3: the dealer's call sets the hand's pass
                state = call_pass(state, bots)
                direction = None
            else:
                direction = rules.table.pass_direction(unit + 1 if not config.games else hands + 1)
            state = play_hand(state.deal(shuffled_deck(rules, deck_rng), direction), bots, mix_rng)
            hands += 1
            if not config.games or state.phase == OVER or hands >= config.max_hands:
                break
        points = [0] * n
        moons = [0] * n
        for hand_points, _totals, moon in state.history:
            for s in range(n):
                points[s] += hand_points[s]
            if moon is not None:
                moons[moon.seat] += 1
        wins = [0.0] * n
        teams = rules.teams
        if teams:  # a win is the team's (RULES.md §6.1)
            won = [team for team in teams if set(team) & set(state.winners)]
            for team in won:
                for s in team:
                    wins[s] = 1 / len(won)
        else:
            for s in state.winners:
                wins[s] = 1 / len(state.winners)
        results.append(SeatingResult(tuple(points), hands, tuple(moons), tuple(wins), state.phase == OVER))
    return UnitResult(unit, results, timings)


def _play_job(job: tuple[SimConfig, int]) -> UnitResult:
    return play_unit(*job)


def run_units(config: SimConfig, workers: int = 1) -> Iterator[UnitResult]:
    """Every unit's result, in unit order (``workers`` > 1: in that many processes)."""
    jobs = ((config, u) for u in range(config.units))
    if workers <= 1:
        for job in jobs:
            yield _play_job(job)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        yield from pool.imap(_play_job, jobs, chunksize=1)


# -- the report -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerLine:
    label: str
    bot: str
    points_per_hand: Estimate
    win_rate: Estimate | None
    moons: int


@dataclass(frozen=True)
class TeamLine:
    label: str
    bots: tuple[str, str]  # the partners' bots (players j and j + 2)
    points_per_hand: Estimate  # team mode: the team's hand score; individual mode: the partners' sum
    win_rate: Estimate | None
    moons: int  # moons (team mode: slams) shot by either partner


def judged_points(rules: Rules, points: tuple[int, ...], seat: int) -> int:
    """What a seat's result is judged on (RULES.md §6.1): its points, or with a partnership its
    team's (team mode: the team's score, which each partner holds; individual mode: the partners' sum)."""
    if not rules.teams or rules.partnership == "team":
        return points[seat]
    return points[seat] + points[(seat + 2) % rules.players]


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    a_points: Estimate
    b_points: Estimate
    difference: Estimate  # A − B, paired by unit
    a_wins: Estimate | None
    b_wins: Estimate | None
    win_difference: Estimate | None
    a_moons: int
    b_moons: int


@dataclass(frozen=True)
class Report:
    config: SimConfig
    players: list[PlayerLine]
    comparison: Comparison | None
    timings: dict[str, Timing]
    hands: int
    unfinished_games: int
    teams: list[TeamLine] = field(default_factory=list)


def summarise(config: SimConfig, results: list[UnitResult]) -> Report:
    """Per-unit figures, then means and 95% intervals over the units (the independent samples)."""
    n = config.rules.players
    seatings = config.seatings()
    timings: dict[str, Timing] = {}
    hands = 0
    unfinished = 0
    for r in results:
        for name, t in r.timings.items():
            timings.setdefault(name, Timing()).merge(t)
        hands += sum(s.hands for s in r.seatings)
        unfinished += sum(1 for s in r.seatings if config.games and not s.finished)
    games = config.games
    if config.compare is None:
        players = []
        for j, name in enumerate(config.bots):
            pph, wins, moons = [], [], 0
            for r in results:
                per_hand, won = [], []
                for seating, res in zip(seatings, r.seatings):
                    seat = (j + seating.key) % n
                    per_hand.append(res.points[seat] / res.hands)
                    won.append(res.wins[seat])
                    moons += res.moons[seat]
                pph.append(sum(per_hand) / len(per_hand))
                wins.append(sum(won) / len(won))
            players.append(PlayerLine(f"player {j}", name, estimate(pph), estimate(wins) if games else None, moons))
        return Report(config, players, None, timings, hands, unfinished, _team_lines(config, results))

    a_pph, b_pph, diff, a_win, b_win, win_diff = [], [], [], [], [], []
    moons = [0, 0]
    for r in results:
        per = {0: ([], []), 1: ([], [])}
        for seating, res in zip(seatings, r.seatings):
            s = seating.key
            per[seating.variant][0].append(judged_points(config.rules, res.points, s) / res.hands)
            per[seating.variant][1].append(res.wins[s])
            moons[seating.variant] += res.moons[s]
        a = sum(per[0][0]) / n
        b = sum(per[1][0]) / n
        a_pph.append(a)
        b_pph.append(b)
        diff.append(a - b)
        wa, wb = sum(per[0][1]) / n, sum(per[1][1]) / n
        a_win.append(wa)
        b_win.append(wb)
        win_diff.append(wa - wb)
    a_name, b_name = config.compare
    comparison = Comparison(
        a_name, b_name, estimate(a_pph), estimate(b_pph), estimate(diff),
        estimate(a_win) if games else None, estimate(b_win) if games else None,
        estimate(win_diff) if games else None, moons[0], moons[1])
    return Report(config, [], comparison, timings, hands, unfinished)


def _team_lines(config: SimConfig, results: list[UnitResult]) -> list[TeamLine]:
    """With a partnership, one line per team: players j and j + 2 (always partners, see above)."""
    rules = config.rules
    if not rules.teams or config.compare is not None:
        return []
    n = rules.players
    seatings = config.seatings()
    lines = []
    for j in (0, 1):
        pph, wins, moons = [], [], 0
        for r in results:
            per_hand, won = [], []
            for seating, res in zip(seatings, r.seatings):
                seat = (j + seating.key) % n
                partner = (seat + 2) % n
                per_hand.append(judged_points(rules, res.points, seat) / res.hands)
                won.append(res.wins[seat])
                moons += res.moons[seat] + res.moons[partner]
            pph.append(sum(per_hand) / len(per_hand))
            wins.append(sum(won) / len(won))
        lines.append(TeamLine(f"team {j}", (config.bots[j], config.bots[j + 2]), estimate(pph),
                              estimate(wins) if config.games else None, moons))
    return lines


def simulate(config: SimConfig, workers: int = 1,
             progress: Callable[[Iterator[UnitResult]], Iterator[UnitResult]] | None = None) -> Report:
    """Play every unit and summarise. ``progress`` wraps the stream of results (a progress bar)."""
    stream = run_units(config, workers)
    if progress is not None:
        stream = progress(stream)
    return summarise(config, list(stream))
