"""``pbem game pause|resume|abort|extend|replace GAME``: the operator's share of the creator's commands
(the README's "Playing by mail", under **Time**), and ``pbem game tick``, the time-driven work run once;
each queues the mails it wrote."""

from __future__ import annotations

from typing import Any

import click

from pbem.cli.migrated import require_migrated
from pbem.cli.queueing import queue_mails
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.creator import (CreatorRefused, abort_game, extend_deadline, find_seat, pause_game,
                                   replace_player, resume_game)
from pbem.services.gamestore import GameNotFound, load_game
from pbem.services.table import sorted_seats
from pbem.services.tick import tick

__all__ = ["abort", "extend", "pause", "replace", "resume", "tick_command"]


def _run_on_game(settings: Settings, game_id: int, action: Any) -> None:
    """Run ``action(session, svc, game, now)`` in one transaction on the locked game, queue its
    mails, and turn a refusal into a clear error."""
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        with transaction(svc.session_factory) as session:
            try:
                row = load_game(session, game_id)
                mails = action(session, svc, row, svc.clock.now())
            except GameNotFound as error:
                raise click.ClickException(f"no game {game_id}") from error
            except CreatorRefused as refused:
                raise click.ClickException(f"refused: {refused.code} {refused.details or ''}".strip()) from refused
            session.flush()
            ids = [m.id for m in mails]
            status = str(row.status)
    queue_mails(settings, ids)
    click.echo(f"game {game_id}: {status}; {len(ids)} mails queued")


def _seat(game_row: Any, text: str) -> Any:
    seat = find_seat(sorted_seats(game_row), text, first=0)
    if seat is None:
        raise CreatorRefused("NO_SUCH_SEAT", seat=text)
    return seat


def _game_command(name: str, action: Any, help_text: str) -> click.Command:
    """``pbem game NAME GAME``: ``action(session, svc, game, now)`` on the game, as its creator may by mail."""

    @click.command(name, help=help_text)
    @click.argument("game_id", type=int)
    @pass_settings
    def command(settings: Settings, game_id: int) -> None:
        _run_on_game(settings, game_id, action)

    return command


pause = _game_command("pause", pause_game, "Pause a game: no moves, deadlines stopped; the players are told.")
resume = _game_command("resume", resume_game, "Resume a paused game; every seat it waits for gets a fresh deadline.")
abort = _game_command("abort", abort_game, "Call a game off; the players are told, with the scores at that point.")


@click.command("extend")
@click.argument("game_id", type=int)
@click.option("--seat", default=None, help="the seat (number, 0 first, or address); default: every seat waited for")
@click.option("--hours", type=click.IntRange(1, 24 * 60), default=None,
              help="how much longer; default: the game's deadline hours")
@pass_settings
def extend(settings: Settings, game_id: int, seat: str | None, hours: int | None) -> None:
    """Give a seat (or every seat the game waits for) more time."""
    _run_on_game(settings, game_id, lambda session, svc, row, now: extend_deadline(
        session, svc, row, now, seat=_seat(row, seat) if seat is not None else None, hours=hours))


@click.command("replace")
@click.argument("game_id", type=int)
@click.argument("seat")
@click.argument("address")
@pass_settings
def replace(settings: Settings, game_id: int, seat: str, address: str) -> None:
    """Offer a seat to a substitute (an invitation to ADDRESS; the seat changes hands when accepted)."""
    _run_on_game(settings, game_id, lambda session, svc, row, now: replace_player(
        session, svc, row, now, seat=_seat(row, seat), address=address))


@click.command("tick")
@pass_settings
def tick_command(settings: Settings) -> None:
    """Run the time-driven work once (reminders, deadline policies, vacations, digests)."""
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        ids = tick(svc)
    queue_mails(settings, ids)
    click.echo(f"tick: {len(ids)} mails queued")
