"""How much CPU the command line costs to start: ``pbem bench cli``.

Each command runs as a fresh process, ``runs`` times after one unmeasured run (which leaves the
bytecode caches warm, as an operator's second command finds them: the processes keep theirs in the
benchmark's temporary directory, ``PYTHONPYCACHEPREFIX``, even where ``PYTHONDONTWRITEBYTECODE`` is
set, so that compiling pbem's sources is not counted); a figure is the process's CPU
time, user plus system, read from ``resource.getrusage(RUSAGE_CHILDREN)`` before and after it (the
commands run one at a time, so the difference is that one child's). CPU rather than wall time: a
busy machine stretches the wall clock far more than the CPU a process uses.

The read-only commands run against an SQLite database in a temporary directory, migrated first by
``pbem db upgrade`` (an empty database: what they cost is what they import and set up, not the rows).
The goals are the README's ("Benchmarks"): ``pbem --help`` below 0.3 s, a read-only command below
0.8 s.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

Echo = Callable[[str], None]

#: The command line as the ``pbem`` script runs it (``[project.scripts]`` in pyproject.toml).
PBEM = (sys.executable, "-c", "from pbem.cli import main; main()")

#: (what is run, the goal in CPU seconds)
COMMANDS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("--help",), 0.3),
    (("game", "list"), 0.8),
    (("mail", "list"), 0.8),
)


@dataclass(frozen=True)
class Start:
    args: tuple[str, ...]
    goal: float
    cpu: tuple[float, ...]  # seconds of CPU, user + system, one per run

    @property
    def median(self) -> float:
        return statistics.median(self.cpu)


def child_cpu(args: Sequence[str], env: dict[str, str], cwd: Path) -> float:
    """Run ``pbem ARGS`` to its end; the CPU seconds (user + system) it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([*PBEM, *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"pbem {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def environment(directory: Path) -> dict[str, str]:
    """This process's environment without its ``PBEM_*`` settings, on an SQLite file in ``directory``,
    with bytecode caches written and read in ``directory``."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("PBEM_") and key != "PYTHONDONTWRITEBYTECODE"}
    return env | {"PBEM_DATA_DIR": str(directory), "PBEM_DATABASE_URL": f"sqlite:///{directory / 'pbem.db'}",
                  "PYTHONPYCACHEPREFIX": str(directory / "pycache")}


def measure(runs: int, directory: Path) -> list[Start]:
    env = environment(directory)
    child_cpu(("db", "upgrade"), env, directory)
    starts = []
    for args, goal in COMMANDS:
        child_cpu(args, env, directory)
        starts.append(Start(args, goal, tuple(child_cpu(args, env, directory) for _ in range(runs))))
    return starts


def report(starts: Sequence[Start], runs: int, echo: Echo) -> None:
    echo(f"pbem CLI start: CPU of a fresh process (user + sys), median of {runs} runs after one unmeasured; "
         "SQLite, migrated, empty")
    echo(f"{'command':18} {'median':>8} {'min':>7} {'max':>7} {'goal':>7}")
    for start in starts:
        name = "pbem " + " ".join(start.args)
        verdict = "met" if start.median < start.goal else "MISSED"
        echo(f"{name:18} {start.median:7.3f}s {min(start.cpu):6.3f}s {max(start.cpu):6.3f}s  < {start.goal:.1f}s "
             f"{verdict}")


def run(runs: int = 5, echo: Echo = print) -> list[Start]:
    with tempfile.TemporaryDirectory(prefix="pbem-bench-cli-") as directory:
        starts = measure(runs, Path(directory))
    report(starts, runs, echo)
    return starts
