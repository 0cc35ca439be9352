"""``pbem simulate``: bots against bots on duplicate deals, with confidence intervals.

Examples::

    pbem simulate --deals 2000 --bots heuristic,random,random,random
    pbem simulate --deals 2000 --compare heuristic:random --bots random,random,random
    pbem simulate --deals 2000 --compare strong:heuristic --playouts 200 --workers 2
    pbem simulate --games 200 --bots strong,heuristic,heuristic,heuristic --preset omnibus
    pbem simulate --deals 500 --bots heuristic,heuristic,heuristic --option players=3 --option moon=new
    pbem simulate --games 100 --bots heuristic,random,heuristic,random --preset partnership
    pbem simulate --deals 500 --bots heuristic,random,random --option kitty=first_trick --option players=3
    pbem simulate --games 100 --bots heuristic,random,heuristic,random --option pass_optional=true
    pbem simulate --games 100 --bots heuristic,random,heuristic,random --option dealer_calls_pass=true
    pbem simulate --deals 500 --bots heuristic,random,heuristic,random --option pass_cycle="left mix"
    pbem simulate --games 100 --bots strong,heuristic,heuristic,heuristic --preset turbo-nines --playouts 200
    pbem simulate --deals 500 --bots heuristic,random,heuristic,random --preset turbo --option charge_limit=1
    pbem simulate --games 100 --bots heuristic,random,heuristic,random --preset dnf
    pbem simulate --deals 500 --bots heuristic,random,heuristic,random --option booster_nines=true
    pbem simulate --deals 200 --compare heuristic:random --preset cancellation --option players=6
    pbem simulate --deals 20 --compare strong:heuristic --preset cancellation --option players=10 --playouts 300
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterator

import click
from tqdm import tqdm

from pbem.sim.runner import PRESET_NAMES, STRONG_PLAYOUTS, BadRules, Report, SimConfig, UnitResult, make_rules
from pbem.sim.runner import simulate as run_simulation


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` -> (key, value). Values: JSON (``3``, ``true``, ``["left","right"]``), or
    ``none``, ``true``/``false``, ``KS:10,AS:7`` (a map), ``left,right`` (a list), or a word."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise click.BadParameter(f"{text!r}: write key=value")
    raw = raw.strip()
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        pass
    low = raw.lower()
    if low in ("none", "null"):
        return key, None
    if low in ("true", "yes", "on"):
        return key, True
    if low in ("false", "no", "off"):
        return key, False
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    if parts and all(":" in p for p in parts):
        return key, {k.strip(): int(v) for k, v in (p.split(":", 1) for p in parts)}
    if len(parts) > 1:
        return key, parts
    return key, raw


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else ()


@click.command()
@click.option("--deals", type=click.IntRange(min=1), help="Play this many deals (hands) [default 100].")
@click.option("--games", type=click.IntRange(min=1), help="Play this many whole games instead of deals.")
@click.option("--bots", "bots_text", metavar="A,B,C,D",
              help="One bot per seat (with --compare: the other seats; default: B in each).")
@click.option("--compare", "compare_text", metavar="A:B",
              help="Paired comparison: every deal with A in a seat, and with B in that same seat.")
@click.option("--preset", type=click.Choice(PRESET_NAMES), default="standard", show_default=True)
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="A rules option (repeatable).")
@click.option("--seed", default="1", show_default=True, help="Seed of the deals and of the bots' decisions.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Processes to use.")
@click.option("--playouts", type=click.IntRange(min=1), default=STRONG_PLAYOUTS, show_default=True,
              help="strong: card playouts per decision.")
@click.option("--move-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="strong: also stop searching after this many seconds (results then depend on speed).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
def simulate(deals: int | None, games: int | None, bots_text: str | None, compare_text: str | None,
             preset: str, options: tuple[str, ...], seed: str, workers: int, playouts: int,
             move_time: float | None, progress: bool) -> None:
    """Bots play duplicate deals (every deal replayed with the seats rotated); prints mean points
    per hand with 95% confidence intervals, win rates (games), moons, and paired differences."""
    if deals and games:
        raise click.UsageError("give --deals or --games, not both")
    overrides = dict(parse_option(o) for o in options)
    try:
        rules = make_rules(preset, overrides)
    except BadRules as error:
        raise click.UsageError(f"rules: {error}") from error
    compare = None
    if compare_text:
        a, sep, b = compare_text.partition(":")
        if not sep or not a or not b:
            raise click.BadParameter("write A:B", param_hint="--compare")
        compare = (a.strip(), b.strip())
    bots = _names(bots_text)
    if compare and not bots:
        bots = (compare[1],) * (rules.players - 1)
    if not bots:
        raise click.UsageError("name the bots: --bots A,B,C,D (or --compare A:B)")
    try:
        config = SimConfig(
            rules=rules, bots=bots, compare=compare, units=games or deals or 100, games=bool(games),
            seed=seed, bot_options={"strong": {"playouts": playouts, "time_limit": move_time}})
    except ValueError as error:
        raise click.UsageError(str(error)) from error

    def bar(stream: Iterator[UnitResult]) -> Iterator[UnitResult]:
        return iter(tqdm(stream, total=config.units, unit="game" if games else "deal", file=sys.stderr,
                         disable=not progress))

    report = run_simulation(config, workers=workers, progress=bar)
    click.echo(format_report(report, preset, overrides, playouts, move_time, workers))


def format_report(report: Report, preset: str, overrides: dict[str, Any], playouts: int,
                  move_time: float | None, workers: int) -> str:
    c = report.config
    n = c.rules.players
    unit = "games" if c.games else "deals"
    seatings = len(c.seatings())
    rules = preset + "".join(f" {k}={v}" for k, v in overrides.items())
    lines = [
        f"{c.units} {unit} x {seatings} seatings (duplicate), {report.hands} hands; rules: {rules}; "
        f"{n} players; seed {c.seed}; workers {workers}",
    ]
    if "strong" in (*c.bots, *(c.compare or ())):
        guard = f", stop after {move_time} s" if move_time else ""
        lines.append(f"strong: {playouts} playouts per decision{guard}")
    lines.append("")
    if report.comparison is None:
        lines.append(f"{'':10} {'bot':10} {'points per hand (95% CI)':42} {'moons':>6}"
                     + (f"  {'win rate (95% CI)'}" if c.games else ""))
        for p in report.players:
            row = f"{p.label:10} {p.bot:10} {str(p.points_per_hand):42} {p.moons:6d}"
            if p.win_rate is not None:
                row += f"  {p.win_rate}"
            lines.append(row)
        if report.teams:
            mode = c.rules.partnership
            lines.append("")
            lines.append("teams (players 0+2 and 1+3 always sit opposite); points per hand: "
                         + ("the team's hand score" if mode == "team" else "the partners' sum")
                         + (" (a player's line above is its team's score)" if mode == "team" else ""))
            for team in report.teams:
                row = f"{team.label:10} {'+'.join(team.bots):21} {str(team.points_per_hand):42} {team.moons:6d}"
                if team.win_rate is not None:
                    row += f"  {team.win_rate}"
                lines.append(row)
    else:
        cmp = report.comparison
        lines.append(f"{cmp.a} against {cmp.b}, in every seat in turn; other seats: {', '.join(c.bots)}")
        if c.rules.teams:
            lines.append("  (points: " + ("the team's hand score" if c.rules.partnership == "team"
                                          else "the partners' sum") + "; a win is the team's)")
        lines.append(f"  {cmp.a:10} points per hand {cmp.a_points}   moons {cmp.a_moons}")
        lines.append(f"  {cmp.b:10} points per hand {cmp.b_points}   moons {cmp.b_moons}")
        d = cmp.difference
        if d.n < 2:
            verdict = "too few for an interval"
        elif d.excludes_zero():
            verdict = f"{cmp.a} takes {'fewer' if d.high < 0 else 'more'} points than {cmp.b}"
        else:
            verdict = "no significant difference"
        lines.append(f"  paired difference {cmp.a} - {cmp.b} per hand: {d}  (n={d.n} {unit}; {verdict})")
        if cmp.win_difference is not None:
            lines.append(f"  win rate {cmp.a} {cmp.a_wins}; {cmp.b} {cmp.b_wins}; difference {cmp.win_difference}")
    if report.unfinished_games:
        lines.append(f"({report.unfinished_games} games stopped unfinished after {c.max_hands} hands)")
    if report.timings:
        lines.append("")
        lines.append("decision time per card chosen among two or more legal cards (wall clock; CPU):")
        for name, t in sorted(report.timings.items()):
            if t.count:
                lines.append(f"  {name:10} mean {t.mean * 1000:9.3f} ms   max {t.longest * 1000:9.3f} ms;   "
                             f"CPU mean {t.cpu_mean * 1000:9.3f} ms   max {t.cpu_longest * 1000:9.3f} ms   "
                             f"({t.count} decisions)")
    return "\n".join(lines)
