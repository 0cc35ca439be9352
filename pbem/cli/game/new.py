"""``pbem game new``: create a game with the players, rules, bots and deadlines given, and start it."""

from __future__ import annotations

import json
from typing import Any

import click

from pbem.cli.migrated import require_migrated
from pbem.cli.queueing import queue_mails
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.mail.reading.clean import MAX_NAME_CHARS, clean_display_name, is_mail_address
from pbem.services.app import Services
from pbem.services.games import SeatSpec
from pbem.services.operator import OperatorRefused, make_rules, make_timing, seat_bots, start_new_game

__all__ = ["new", "parse_options", "player_argument"]


def parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``key=value`` pairs; values are JSON when they parse as JSON (numbers, true, lists…), else
    text the services read as a new-game mail's (``removed_cards=2D 2C``, ``extra_penalties=KS 10,
    AS 7``, ``moon=new``, ``sun=yes``: ``pbem.services.game_options``)."""
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


def player_argument(text: str) -> tuple[str, str | None]:
    """``ADDRESS[=NAME]`` of ``--player`` as (lower-case address, name or None).

    The address must be one plain address (``local@domain``, RFC 5321 lengths) and the name what a
    received mail's display name is cleaned to (:func:`pbem.mail.reading.clean.clean_display_name`:
    no line breaks or other control characters, at most 100 characters); anything else is refused
    here, since the operator can retype it, rather than cleaned.
    """
    address, _, name = text.partition("=")
    address = address.strip().lower()
    if not is_mail_address(address):
        raise click.BadParameter(f"not a mail address: {address!r}", param_hint="--player")
    name = name.strip()
    cleaned = clean_display_name(name)
    if cleaned.changed:
        raise click.BadParameter(
            f"the name {name!r} has a line break or another control character, or is longer than "
            f"{MAX_NAME_CHARS} characters", param_hint="--player")
    return address, cleaned.text or None


@click.command("new")
@click.option("--player", "players", multiple=True, metavar="ADDRESS[=NAME]",
              help="a person, in seat order (repeat)")
@click.option("--bot", "bots", multiple=True, metavar="NAME",
              help="a computer player after the people (repeat): random, heuristic, strong (or easy, medium, hard)")
@click.option("--bots", "bot_count", default="0", metavar="N [STRENGTH][, …]",
              help="this many computer players after those: 3 (the default bot), '3 strong', '2 heuristic, 1 random'")
@click.option("--preset", default="standard", show_default=True)
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="a rules option (repeat): target=50, 'removed_cards=2D 2C', 'extra_penalties=KS 10, AS 7'")
@click.option("--seed", default=None, help="seed of every deal (reproducible and duplicate games)")
@click.option("--deck", default=None, help="the first deal's deck, cards space separated, in deal order")
@click.option("--title", default="", help="shown in the mails' subject")
@click.option("--deadline", default="72", show_default=True, help="time a seat has to decide: 48, 36h, 2d")
@click.option("--weekends", type=click.Choice(["count", "skip"]), default="count", show_default=True,
              help="whether Saturdays and Sundays (UTC) count towards a deadline")
@click.option("--grace", default="12", show_default=True,
              help="time after a deadline (and its reminder) before the policy applies; 0: at the deadline")
@click.option("--reminder", default="24", show_default=True, help="a reminder this long before a deadline (0: none)")
@click.option("--policy", type=click.Choice(["bot", "pause", "substitute"]), default="bot", show_default=True,
              help="after deadline + grace: a bot plays for the absent player, the game pauses, or a bot "
                   "plays until a substitute is found")
@pass_settings
def new(settings: Settings, players: tuple[str, ...], bots: tuple[str, ...], bot_count: str, preset: str,
        options: tuple[str, ...], seed: str | None, deck: str | None, title: str, deadline: str, weekends: str,
        grace: str, reminder: str, policy: str) -> None:
    """Create a game and deal its first hand; players are mailed at once."""
    try:
        rules = make_rules(preset, parse_options(options))
        timing = make_timing({"deadline": deadline, "weekends": weekends, "grace": grace,
                              "reminder": reminder, "policy": policy})
        computer_players = seat_bots(bots, bot_count, settings.bot_name)
    except OperatorRefused as error:
        raise click.ClickException(str(error)) from error
    specs = []
    for text in players:
        address, name = player_argument(text)
        if any(spec.address == address for spec in specs):
            raise click.BadParameter(f"{address} is given twice", param_hint="--player")
        specs.append(SeatSpec(address=address, name=name))
    specs += [SeatSpec(bot=b) for b in computer_players]
    if len(specs) != rules.players:
        raise click.ClickException(f"{rules.players} players needed, {len(specs)} given")
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        try:
            started = start_new_game(svc, rules=rules, seats=specs, timing=timing, seed=seed, title=title,
                                     first_deck=deck.split() if deck else None)
        except OperatorRefused as error:
            raise click.ClickException(str(error)) from error
    queue_mails(settings, started.mail_ids)
    click.echo(f"game {started.game_id} started ({rules.preset}); {len(started.mail_ids)} mails queued")
