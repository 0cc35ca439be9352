"""Print the bot-strength figures (README, "Computer players"), by running ``pbem simulate`` three times.

1. ``heuristic`` against three ``random`` players, paired against ``random`` in that seat;
2. ``strong`` against three ``heuristic`` players, paired against ``heuristic`` in that seat (a
   smaller search budget, both cores: the run is long);
3. ``strong``'s decision time with its default budget, on one core.

    python -m pbem.bench.bots_figures                          # 2000 deals, as reported
    python -m pbem.bench.bots_figures --deals 100 --timing-deals 2   # a quick look
"""

from __future__ import annotations

import argparse

from click.testing import CliRunner

from pbem.bots.strong import DEFAULT_PLAYOUTS, DEFAULT_TIME_LIMIT
from pbem.cli import main


def simulate(*args: str) -> None:
    print("$ pbem simulate " + " ".join(args), flush=True)
    result = CliRunner().invoke(main, ["simulate", *args], catch_exceptions=False)
    print(result.output, flush=True)
    if result.exit_code:
        raise SystemExit(result.exit_code)


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--strength-playouts", type=int, default=200)
    parser.add_argument("--timing-deals", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", default="1")
    a = parser.parse_args()
    common = ["--no-progress", "--seed", a.seed]
    simulate("--deals", str(a.deals), "--compare", "heuristic:random", "--bots", "random,random,random",
             "--workers", str(a.workers), *common)
    simulate("--deals", str(a.deals), "--compare", "strong:heuristic", "--playouts", str(a.strength_playouts),
             "--workers", str(a.workers), *common)
    simulate("--deals", str(a.timing_deals), "--bots", "strong,heuristic,heuristic,heuristic",
             "--playouts", str(DEFAULT_PLAYOUTS), "--move-time", str(DEFAULT_TIME_LIMIT), "--workers", "1",
             *common)


if __name__ == "__main__":
    run()
