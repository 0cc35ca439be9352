"""``pbem bench e2e --compare REV``: REV's whole mail path beside this checkout's, on one machine.

Each side is a whole ``pbem bench e2e`` run on a fresh cluster, as a subprocess with the same
arguments: REV's own benchmark from its venv (``rev_env``: this checkout's library versions, REV
installed without its dependencies), and this checkout's from the interpreter running this command
(the working tree's code, uncommitted changes included). The runs alternate, REV then HEAD, ``repeat``
times, so that a slow spell of a shared machine falls on both sides; every run's lines are printed
as they come, prefixed by side and run number. Then, for each figure below, the median of each
side's runs and their ratio HEAD/REV, and which of the speed goals (README "Benchmarks") the
ratios meet:

- *sustained*: the ``saturated at …: sustained N moves/s`` line of each mode (a run that never
  saturated stands in with its last step's rate, a lower bound, and says so);
- the idle lines' p50 and p90, and the CPU a move of pbem's processes (smtp + worker + pool + pg +
  redis: the printed ``pbem CPU``) of the idle lines and of each step, with each process kind's.

The figures are read from what each run prints (``parse_run``): REV's benchmark prints the same
lines as today's (cb2379d's and today's ``pbem.bench.e2e`` agree on every line read here).
"""

from __future__ import annotations

import math
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click

from pbem.bench import rev_env

__all__ = ["Cpu", "RunFigures", "command_line", "figures", "parse_run", "run", "summary"]

Echo = Callable[[str], None]

#: The process kinds whose CPU is pbem's (the benchmark's own and the rest of the machine's are not).
PBEM_KINDS = ("smtp", "wrk", "pool", "pg", "redis")
SUSTAINED_GOAL, IDLE_P50_GOAL, CPU_GOAL, CPU_STEP = 1.5, 1.0, 0.75, 50.0


# -- reading one run's output --------------------------------------------------------------------


@dataclass(frozen=True)
class Cpu:
    pbem: float  # ms a move, smtp + worker + pool + pg + redis (the line's "pbem CPU")
    kinds: Mapping[str, float]  # ms a move by the printed short name: smtp, wrk, pool, pg, redis, bench, rest


@dataclass
class RunFigures:
    idle: dict[str, tuple[float, float, Cpu]] = field(default_factory=dict)  # mode -> p50, p90 (ms), CPU
    steps: dict[str, dict[float, tuple[float, Cpu]]] = field(default_factory=dict)  # mode -> rate -> sust., CPU
    saturated: dict[str, float] = field(default_factory=dict)  # mode -> sustained moves/s


_NUMBER = r"(?:\d+(?:\.\d+)?|nan|inf)"
_SECTION = re.compile(r"^\[(?P<name>[^\]]+)\]")
_IDLE = re.compile(rf"^\s+(?P<mode>\w+)\s+\(.*?\): p50 (?P<p50>{_NUMBER}) ms, p90 (?P<p90>{_NUMBER}) ms, .*"
                   rf"pbem CPU (?P<cpu>{_NUMBER}) ms/move \((?P<kinds>[^:]+): (?P<values>[^)]*)\)\s*$")
_STEP_HEADER = re.compile(r"^\s+offered/s\s.*\|\s*CPU ms/move:(?P<kinds>.*)$")
_STEP_ROW = re.compile(rf"^\s+(?P<left>{_NUMBER}(?:\s+{_NUMBER}){{8}})\s+\|"  # the nine figures, then by kind
                       rf"\s+(?P<values>{_NUMBER}(?:\s+{_NUMBER})*)\s*$")
_SATURATED = re.compile(rf"^\s+saturated at an offered {_NUMBER}/s: sustained (?P<sustained>{_NUMBER}) moves/s")


def parse_run(text: str) -> RunFigures:
    """The figures one ``pbem bench e2e`` run printed (lines it does not know are passed over)."""
    run = RunFigures()
    section, kinds = "", [""]
    for line in text.splitlines():
        if heading := _SECTION.match(line):
            section, kinds = heading["name"], [""]
        elif section == "idle" or section.startswith("idle "):
            if idle := _IDLE.match(line):
                run.idle[idle["mode"]] = (float(idle["p50"]), float(idle["p90"]),
                                          _cpu(float(idle["cpu"]), idle["kinds"].split(), idle["values"].split()))
        elif section.startswith("steps: "):
            mode = section.removeprefix("steps: ").split()[0]
            if header := _STEP_HEADER.match(line):
                kinds = header["kinds"].split()
            elif row := _STEP_ROW.match(line):
                left = [float(v) for v in row["left"].split()]
                run.steps.setdefault(mode, {})[left[0]] = (left[2], _cpu(left[8], kinds, row["values"].split()))
            elif saturated := _SATURATED.match(line):
                run.saturated[mode] = float(saturated["sustained"])
    return run


def _cpu(pbem: float, kinds: Sequence[str], values: Sequence[str]) -> Cpu:
    return Cpu(pbem, dict(zip(kinds, (float(v) for v in values), strict=True)))


def figures(run: RunFigures) -> dict[str, float]:
    """One run's figures by name (the rows of the comparison): ``heavy sustained moves/s``,
    ``heavy idle p50 ms``, ``heavy idle CPU ms a move`` (and ``… CPU ms a move: pool`` for each
    kind), ``heavy 50/s CPU ms a move``..."""
    out: dict[str, float] = {}
    for mode, steps in run.steps.items():
        if steps:
            out[f"{mode} sustained moves/s"] = run.saturated.get(mode, steps[max(steps)][0])
    for mode, (p50, p90, cpu) in run.idle.items():
        out[f"{mode} idle p50 ms"], out[f"{mode} idle p90 ms"] = p50, p90
        out.update(_cpu_figures(f"{mode} idle", cpu))
    for mode, steps in run.steps.items():
        for rate, (_, cpu) in sorted(steps.items()):
            out.update(_cpu_figures(f"{mode} {rate:g}/s", cpu))
    return out


def _cpu_figures(name: str, cpu: Cpu) -> dict[str, float]:
    return {f"{name} CPU ms a move": cpu.pbem,
            **{f"{name} CPU ms a move: {kind}": cpu.kinds[kind] for kind in PBEM_KINDS if kind in cpu.kinds}}


# -- the comparison ------------------------------------------------------------------------------


def summary(rev_runs: Sequence[RunFigures], head_runs: Sequence[RunFigures]) -> list[str]:
    """The medians of each side's figures, their ratios HEAD/REV, and the goals met."""
    rev = _medians(figures(r) for r in rev_runs)
    head = _medians(figures(r) for r in head_runs)
    names = [n for n in rev if n in head]
    lines = [f"HEAD/REV, the medians of {len(rev_runs)} REV and {len(head_runs)} HEAD runs:",
             f"  {'':36} {'REV':>8} {'HEAD':>8} {'HEAD/REV':>8}"]
    for name in (n for n in names if ": " not in n):
        lines.append(f"  {name:36} {rev[name]:8.1f} {head[name]:8.1f} {_ratio(head[name], rev[name]):8.2f}")
        kinds = [n for n in names if n.startswith(name + ": ")]
        if kinds:
            lines.append("      by process, REV -> HEAD ms: " + ", ".join(
                f"{n.split(': ')[1]} {rev[n]:.1f} -> {head[n]:.1f}" for n in kinds))
    for side, runs in (("REV", rev_runs), ("HEAD", head_runs)):
        for number, one in enumerate(runs, 1):
            for mode in one.steps.keys() - one.saturated.keys():
                lines.append(f"  ({side} run {number} never saturated in {mode}: its last step's rate stands in "
                             f"for sustained, a lower bound; offer higher --rates)")
    lines.append("goals (the ratios of the medians, heavy):")
    lines.extend(_goals({n: _ratio(head[n], rev[n]) for n in names}))
    return lines


def _goals(ratio: Mapping[str, float]) -> list[str]:
    def judged(text: str, values: Sequence[float | None], met: Callable[[float], bool]) -> str:
        if any(v is None for v in values):
            return f"  {text}: not measured (needs --modes heavy, idle moves and a {CPU_STEP:g}/s step)"
        shown = ", ".join(f"{v:.2f}" for v in values if v is not None)
        return f"  {text}: {shown} - {'met' if all(met(v) for v in values if v is not None) else 'NOT met'}"

    return [
        judged(f"sustained >= {SUSTAINED_GOAL:.2f} x REV's", [ratio.get("heavy sustained moves/s")],
               lambda v: v >= SUSTAINED_GOAL),
        judged(f"idle p50 <= {IDLE_P50_GOAL:.2f} x REV's", [ratio.get("heavy idle p50 ms")],
               lambda v: v <= IDLE_P50_GOAL),
        judged(f"CPU a move <= {CPU_GOAL:.2f} x REV's (idle, {CPU_STEP:g}/s)",
               [ratio.get("heavy idle CPU ms a move"), ratio.get(f"heavy {CPU_STEP:g}/s CPU ms a move")],
               lambda v: v <= CPU_GOAL),
    ]


def _medians(runs: Iterable[Mapping[str, float]]) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for one in runs:
        for name, value in one.items():
            if not math.isnan(value):
                values.setdefault(name, []).append(value)
    return {name: statistics.median(v) for name, v in values.items()}


def _ratio(head: float, rev: float) -> float:
    return head / rev if rev else math.nan


# -- running the sides ---------------------------------------------------------------------------


def command_line(context: click.Context, leave_out: Iterable[str]) -> list[str]:
    """The options given on the command line (not defaulted) of ``context``'s command, as arguments
    again, but for the parameters named in ``leave_out``: what both sides' runs are given."""
    args: list[str] = []
    for param in context.command.params:
        if (param.name in leave_out or not isinstance(param, click.Option)
                or context.get_parameter_source(param.name) is click.core.ParameterSource.DEFAULT):
            continue
        value = context.params[param.name]
        if param.is_flag and param.secondary_opts:
            args.append(param.opts[0] if value else param.secondary_opts[0])
        elif param.is_flag:
            args.extend(param.opts[:1] if value else [])
        else:
            args.extend([param.opts[0], str(value)])
    return args


def run(rev: str, repeat: int, args: Sequence[str], echo: Echo = print, keep: bool = False) -> int:
    """Both sides' runs, alternating, then the summary; 1 if a run failed, else 0."""
    root = rev_env.checkout_root()
    commit = rev_env.resolve_commit(root, rev)
    installed = rev_env.install_rev(root, commit, echo, keep=keep)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    echo(f"REV:  {rev_env.describe(root, commit)}")
    echo(f"      {installed.note}")
    echo(f"HEAD: this checkout's working tree{' (with uncommitted changes)' if dirty else ''} at "
         f"{rev_env.describe(root, 'HEAD')}")
    echo(f"      {sys.executable}")
    echo(f"each run: pbem bench e2e {shlex.join(args)}")
    sides = {"REV": installed.python, "HEAD": Path(sys.executable)}
    runs: dict[str, list[RunFigures]] = {"REV": [], "HEAD": []}
    failed = 0
    for number in range(1, repeat + 1):
        for side, python in sides.items():
            code, text = _one_run(python, args, f"{side} {number}", echo)
            if code:
                echo(f"{side} run {number} exited {code}: left out of the medians")
                failed += 1
            else:
                runs[side].append(parse_run(text))
    echo("")
    for line in summary(runs["REV"], runs["HEAD"]):
        echo(line)
    return 1 if failed else 0


def _one_run(python: Path, args: Sequence[str], label: str, echo: Echo) -> tuple[int, str]:
    """One side's whole ``pbem bench e2e`` run, its lines echoed as they come; (exit code, output)."""
    lines: list[str] = []
    cwd = Path(tempfile.mkdtemp(prefix="pbem-compare-run-"))  # not a checkout: the side's own pbem is imported
    echo("")
    try:
        with subprocess.Popen([str(python), "-c", "from pbem.cli import main; main()", "bench", "e2e", *args],
                              cwd=cwd, env=rev_env.clean_environment(), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line)
                echo(f"{label:>7} | {line.rstrip()}")
        return process.returncode, "".join(lines)
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
