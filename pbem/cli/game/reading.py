"""``pbem game show|check``: one game's state, and whether its cached snapshot agrees with its move log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from pbem.cli.migrated import require_migrated
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.db.session import transaction
from pbem.services.app import Services
from pbem.services.gamestore import GameNotFound, load_game, snapshot_agrees

__all__ = ["check", "show"]


@contextmanager
def _reading_game(settings: Settings, game_id: int) -> Iterator[tuple[Any, Any]]:
    """``(session, game)`` for a command that only reads one game; clear errors for a missing game
    or an unmigrated database."""
    require_migrated(settings)
    with Services.from_settings(settings) as svc, transaction(svc.session_factory) as session:
        try:
            row = load_game(session, game_id, lock=False)
        except GameNotFound as error:
            raise click.ClickException(f"no game {game_id}") from error
        yield session, row


@click.command("show")
@click.argument("game_id", type=int)
@pass_settings
def show(settings: Settings, game_id: int) -> None:
    """Print a game's status and state as JSON."""
    with _reading_game(settings, game_id) as (_, row):
        click.echo(json.dumps({"id": row.id, "status": str(row.status), "title": row.title,
                               "seats": [{"seat": s.seat, "player": s.player.address if s.player else None,
                                          "bot": s.bot, "status": str(s.status)} for s in row.seats],
                               "state": row.snapshot}, indent=2))


@click.command("check")
@click.argument("game_id", type=int)
@pass_settings
def check(settings: Settings, game_id: int) -> None:
    """Replay the move log and compare it with the cached snapshot."""
    with _reading_game(settings, game_id) as (session, row):
        ok = snapshot_agrees(session, row)
    click.echo("snapshot agrees with the move log" if ok else "snapshot DIFFERS from the move log")
    if not ok:
        raise SystemExit(1)
