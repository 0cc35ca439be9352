"""``pbem player export|forget ADDRESS``: a player's data sent to them, or erased (README,
"Operating pbem"; :mod:`pbem.services.privacy` says what is kept and why)."""

from __future__ import annotations

from typing import Any

import click

from pbem.cli.migrated import require_migrated
from pbem.cli.output import as_json, safe
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.services.app import Services
from pbem.services.privacy import ForgetRefused, export_player, forget_player

__all__ = ["player"]


@click.group()
def player() -> None:
    """A player's data: export it, or forget them."""


@player.command("export")
@click.argument("address")
@click.option("--output", "-o", type=click.File("w", encoding="ascii"), default="-", show_default=True,
              help="write the JSON here ('-': standard output)")
@pass_settings
def export_command(settings: Settings, address: str, output: Any) -> None:
    """Everything stored about ADDRESS, as JSON: the player, their games and moves, invitations,
    table talk, and the mails they sent and were sent."""
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        data = export_player(svc, address)
    if data is None:
        raise click.ClickException(f"nothing is stored about {safe(address)}")
    output.write(as_json(data) + "\n")


@player.command("forget")
@click.argument("address")
@click.option("--yes", is_flag=True, help="do not ask for confirmation")
@pass_settings
def forget_command(settings: Settings, address: str, yes: bool) -> None:
    """Erase what is stored about ADDRESS: the player's row keeps a placeholder address and no
    name, their mails and their games' mails lose their bytes, their table talk goes; finished
    games stay replayable. Refused while a game of theirs is in progress."""
    require_migrated(settings)
    if not yes:
        click.confirm(f"Erase everything stored about {safe(address)}? This cannot be undone", abort=True)
    with Services.from_settings(settings) as svc:
        try:
            forgotten = forget_player(svc, address)
        except ForgetRefused as refused:
            games = ", ".join(f"{game_id} ({status})" for game_id, status in refused.games)
            raise click.ClickException(
                f"{safe(refused.address)} still has games in progress: {games}. Abort them (`pbem game abort "
                f"GAME`) or give the seat to someone else (`pbem game replace GAME SEAT ADDRESS`), then forget "
                f"them once those games are over.") from refused
    if forgotten is None:
        raise click.ClickException(f"nothing is stored about {safe(address)}")
    games = ", ".join(map(str, forgotten.games)) or "none"
    click.echo(f"forgot {safe(forgotten.address)}: now {forgotten.placeholder}; games kept replayable: {games}; "
               f"{forgotten.mails_in} received and {forgotten.mails_out} sent mails emptied")
