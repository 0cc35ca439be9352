"""``pbem game …``: games from the command line (the operator's tools).

``pbem game new`` creates and starts a game with the players given (they are seated at once: the
operator vouches for them), a preset, option overrides, bots, and optionally a seed (every deal
reproducible) or an explicit deck for the first deal (duplicate games: the same deals at several
tables). ``pbem game show`` prints a game's state; ``pbem game check`` replays the move log and
compares it with the cached snapshot.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import click

from pbem.cli import pass_settings
from pbem.config import Settings

log = logging.getLogger("pbem.cli")


def parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``key=value`` pairs; values are JSON when they parse as JSON (numbers, true, lists…)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise click.BadParameter(f"expected key=value, got {pair!r}", param_hint="--option")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value.strip()
    return options


def queue_mails(settings: Settings, ids: list[int]) -> None:
    """Queue the outbox rows for sending; if the broker is down the sweep sends them later."""
    if not ids:
        return
    from workers.app import make_celery
    from workers.queueing import queue_outbound

    try:
        queue_outbound(make_celery(settings), ids)
    except Exception as error:  # the rows are committed: the periodic sweep will send them
        log.warning("could not queue %d mails now (%s); the sweep will send them", len(ids), error)


@click.group()
def game() -> None:
    """Create and inspect games."""


@game.command("new")
@click.option("--player", "players", multiple=True, metavar="ADDRESS[=NAME]",
              help="a person, in seat order (repeat)")
@click.option("--bot", "bots", multiple=True, metavar="NAME", help="a computer player after the people (repeat)")
@click.option("--bots", "bot_count", type=int, default=0, help="this many computer players (the default bot)")
@click.option("--preset", default="standard", show_default=True)
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="a rules option (repeat)")
@click.option("--seed", default=None, help="seed of every deal (reproducible and duplicate games)")
@click.option("--deck", default=None, help="the first deal's deck, cards space separated, in deal order")
@click.option("--title", default="", help="shown in the mails' subject")
@pass_settings
def new(settings: Settings, players: tuple[str, ...], bots: tuple[str, ...], bot_count: int, preset: str,
        options: tuple[str, ...], seed: str | None, deck: str | None, title: str) -> None:
    """Create a game and deal its first hand; players are mailed at once."""
    from pbem.db.session import transaction
    from pbem.engine import InvalidRules, Rules

    from .app import Services
    from .games import SeatSpec, create_game, start_game

    try:
        rules = Rules.make(preset, **parse_options(options))
    except InvalidRules as error:
        raise click.ClickException(f"rules refused: {error.code} {error.details}") from error
    specs = []
    for text in players:
        address, _, name = text.partition("=")
        specs.append(SeatSpec(address=address.strip(), name=name.strip() or None))
    specs += [SeatSpec(bot=b) for b in bots]
    specs += [SeatSpec(bot=settings.bot_name) for _ in range(bot_count)]
    if len(specs) != rules.players:
        raise click.ClickException(f"{rules.players} players needed, {len(specs)} given")
    svc = Services.from_settings(settings)
    try:
        with transaction(svc.session_factory) as session:
            game_row = create_game(session, svc, rules=rules, seats=specs, seed=seed, title=title)
            try:
                mails = start_game(session, svc, game_row, first_deck=deck.split() if deck else None)
            except Exception as error:
                from pbem.engine import IllegalMove

                if isinstance(error, IllegalMove):
                    raise click.ClickException(f"deck refused: {error.code} {error.details}") from error
                raise
            ids = [m.id for m in mails]
            game_id = game_row.id
    finally:
        svc.close()
    queue_mails(settings, ids)
    click.echo(f"game {game_id} started ({preset}); {len(ids)} mails queued")


@game.command("show")
@click.argument("game_id", type=int)
@pass_settings
def show(settings: Settings, game_id: int) -> None:
    """Print a game's status and state as JSON."""
    from pbem.db.session import transaction

    from .app import Services
    from .gamestore import load_game

    svc = Services.from_settings(settings)
    try:
        with transaction(svc.session_factory) as session:
            row = load_game(session, game_id, lock=False)
            click.echo(json.dumps({"id": row.id, "status": str(row.status), "title": row.title,
                                   "seats": [{"seat": s.seat, "player": s.player.address if s.player else None,
                                              "bot": s.bot, "status": str(s.status)} for s in row.seats],
                                   "state": row.snapshot}, indent=2))
    finally:
        svc.close()


@game.command("check")
@click.argument("game_id", type=int)
@pass_settings
def check(settings: Settings, game_id: int) -> None:
    """Replay the move log and compare it with the cached snapshot."""
    from pbem.db.session import transaction

    from .app import Services
    from .gamestore import load_game, snapshot_agrees

    svc = Services.from_settings(settings)
    try:
        with transaction(svc.session_factory) as session:
            ok = snapshot_agrees(session, load_game(session, game_id, lock=False))
    finally:
        svc.close()
    click.echo("snapshot agrees with the move log" if ok else "snapshot DIFFERS from the move log")
    if not ok:
        raise SystemExit(1)
