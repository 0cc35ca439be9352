"""``pbem game list``: the games, by status, player and idle time (:mod:`pbem.services.operator_games`)."""

from __future__ import annotations

from datetime import timedelta

import click

from pbem.cli.migrated import require_migrated
from pbem.cli.output import ago, listing, when
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.services.database import Database
from pbem.services.durations import duration_hours
from pbem.services.operator_games import GAME_STATUSES, list_games

__all__ = ["list_command"]


def _idle(text: str | None) -> timedelta | None:
    if text is None:
        return None
    hours = duration_hours(text)
    if hours is None:
        raise click.BadParameter(f"{text!r}: a duration such as 12h, 2d, 1w (a bare number is hours)",
                                 param_hint="--idle")
    return timedelta(hours=hours)


@click.command("list")
@click.option("--status", "statuses", multiple=True, type=click.Choice(GAME_STATUSES),
              help="only games with this status (repeat)")
@click.option("--player", default=None, metavar="ADDRESS", help="only games with this address at a seat")
@click.option("--idle", default=None, metavar="DURATION",
              help="only games with no move for at least this long: 12h, 2d, 1w")
@click.option("--limit", type=click.IntRange(1, 100_000), default=100, show_default=True)
@click.option("--json", "as_json_output", is_flag=True, help="JSON instead of a table")
@pass_settings
def list_command(settings: Settings, statuses: tuple[str, ...], player: str | None, idle: str | None, limit: int,
                 as_json_output: bool) -> None:
    """The games, in id order: rules, players, status, phase and hand, whom they wait for, and
    their last move."""
    idle_for = _idle(idle)
    require_migrated(settings)
    with Database.from_settings(settings) as svc:
        rows = list_games(svc, statuses=statuses, player=player, idle=idle_for, limit=limit)
    click.echo(listing(
        rows, as_json_output=as_json_output, nothing="no game",
        headers=["ID", "RULES", "PLAYERS", "STATUS", "HAND", "WAITING FOR", "LAST MOVE (UTC)", "IDLE"],
        cells=lambda r: [str(r.id), r.preset, ", ".join(r.players), r.status + (f"/{r.phase}" if r.phase else ""),
                         str(r.hand or "-"), ", ".join(r.waiting_for) or "-", when(r.last_move), ago(r.idle)],
        widest=60))
