"""``pbem bench``: benchmarks that print figures."""

from __future__ import annotations

import click


@click.group()
def bench() -> None:
    """Measure speed (figures are printed, never asserted)."""


@bench.command("engine")
@click.option("--rounds", default=5, show_default=True, help="alternating rounds of each engine")
@click.option("--seconds", default=2.0, show_default=True, help="length of one round")
def engine(rounds: int, seconds: float) -> None:
    """Complete random hands per second: pbem's engine beside OpenSpiel's C++ Hearts."""
    from .engine_speed import run

    run(rounds=rounds, seconds=seconds, echo=click.echo)
