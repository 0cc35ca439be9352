"""``pbem game …``: games from the command line (the operator's tools).

``pbem game new`` creates and starts a game with the players given (they are seated at once: the
operator vouches for them), a preset, option overrides and bots written as in a new-game mail
(``--option "removed_cards=2D 2C"``, ``--option "extra_penalties=KS 10, AS 7"``, ``--bots "2 heuristic,
1 random"``, ``--bot strong``; a refusal is printed as the sentence a player would read), the time a seat has to decide and what
happens when it does not (``--deadline``, ``--weekends``, ``--grace``, ``--reminder``, ``--policy``),
and optionally a seed (every deal reproducible) or an explicit deck for the first deal (duplicate
games: the same deals at several tables). ``pbem game show`` prints a game's state; ``pbem game
check`` replays the move log and compares it with the cached snapshot; ``pbem game list`` lists the
games (by status, player, idle time: :mod:`pbem.services.operator_games`).

The operator may also do what a game's creator does by mail (the README's "Playing by mail", under
**Time**): ``pbem game pause|resume|abort GAME``, ``pbem game extend GAME [--seat S] [--hours H]``,
``pbem game replace GAME SEAT ADDRESS`` (a seat is its number in ``pbem game show``, 0 first, or its
player's address); and ``pbem game tick`` runs the time-driven work once, as the ``pbem.tick`` task
does every minute.  The commands call the services and queue the mails they wrote through
``workers.queueing``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import click
from kombu.exceptions import KombuError

from pbem.cli.output import ago, as_json, table, when
from pbem.cli.settings import pass_settings
from pbem.config import Settings
from pbem.db import migrate
from pbem.db.session import transaction
from pbem.mail.reading.clean import MAX_NAME_CHARS, clean_display_name, is_mail_address
from pbem.services.app import Services
from pbem.services.creator import (CreatorRefused, abort_game, extend_deadline, find_seat, pause_game,
                                   replace_player, resume_game)
from pbem.services.deadlines import duration_hours
from pbem.services.gamestore import GameNotFound, load_game, snapshot_agrees
from pbem.services.games import SeatSpec
from pbem.services.operator import OperatorRefused, make_rules, make_timing, seat_bots, start_new_game
from pbem.services.operator_games import GAME_STATUSES, list_games
from pbem.services.table import sorted_seats
from pbem.services.tick import tick
from workers import make_celery
from workers.queueing import queue_outbound

log = logging.getLogger("pbem.cli")


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


def queue_mails(settings: Settings, ids: list[int]) -> None:
    """Queue the outbox rows for sending; if the broker is down the sweep sends them later."""
    if not ids:
        return
    try:
        queue_outbound(make_celery(settings), ids)
    except (KombuError, OSError) as error:  # the rows are committed: the periodic sweep will send them
        log.warning("could not queue %d mails now (%s); the sweep will send them", len(ids), error)


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


def require_migrated(settings: Settings) -> None:
    """A clear error when the configured database is not migrated (a wrong directory or variable
    would otherwise quietly create an empty SQLite file and fail with a SQL error)."""
    if migrate.current(settings.database_url) != migrate.head():
        raise click.ClickException(
            f"the database {settings.database_url} is not migrated: run `pbem db upgrade`, or point "
            f"PBEM_DATABASE_URL / PBEM_DATA_DIR at the server's database (working directory: {os.getcwd()})")


@click.group()
def game() -> None:
    """Create and inspect games."""


@game.command("new")
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


@game.command("show")
@click.argument("game_id", type=int)
@pass_settings
def show(settings: Settings, game_id: int) -> None:
    """Print a game's status and state as JSON."""
    with _reading_game(settings, game_id) as (_, row):
        click.echo(json.dumps({"id": row.id, "status": str(row.status), "title": row.title,
                               "seats": [{"seat": s.seat, "player": s.player.address if s.player else None,
                                          "bot": s.bot, "status": str(s.status)} for s in row.seats],
                               "state": row.snapshot}, indent=2))


def _idle(text: str | None) -> timedelta | None:
    if text is None:
        return None
    hours = duration_hours(text)
    if hours is None:
        raise click.BadParameter(f"{text!r}: a duration such as 12h, 2d, 1w (a bare number is hours)",
                                 param_hint="--idle")
    return timedelta(hours=hours)


@game.command("list")
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
    with Services.from_settings(settings) as svc:
        rows = list_games(svc, statuses=statuses, player=player, idle=idle_for, limit=limit)
    if as_json_output:
        click.echo(as_json([r.as_json() for r in rows]))
        return
    if not rows:
        click.echo("no game")
        return
    click.echo(table(["ID", "RULES", "PLAYERS", "STATUS", "HAND", "WAITING FOR", "LAST MOVE (UTC)", "IDLE"], [
        [str(r.id), r.preset, ", ".join(r.players), r.status + (f"/{r.phase}" if r.phase else ""),
         str(r.hand or "-"), ", ".join(r.waiting_for) or "-", when(r.last_move), ago(r.idle)] for r in rows],
        widest=60))


@game.command("check")
@click.argument("game_id", type=int)
@pass_settings
def check(settings: Settings, game_id: int) -> None:
    """Replay the move log and compare it with the cached snapshot."""
    with _reading_game(settings, game_id) as (session, row):
        ok = snapshot_agrees(session, row)
    click.echo("snapshot agrees with the move log" if ok else "snapshot DIFFERS from the move log")
    if not ok:
        raise SystemExit(1)


# -- the operator's share of the creator's commands (the README's "Playing by mail", Time) ----------


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


@game.command("pause")
@click.argument("game_id", type=int)
@pass_settings
def pause(settings: Settings, game_id: int) -> None:
    """Pause a game: no moves, deadlines stopped; the players are told."""
    _run_on_game(settings, game_id, lambda session, svc, row, now: pause_game(session, svc, row, now))


@game.command("resume")
@click.argument("game_id", type=int)
@pass_settings
def resume(settings: Settings, game_id: int) -> None:
    """Resume a paused game; every seat it waits for gets a fresh deadline."""
    _run_on_game(settings, game_id, lambda session, svc, row, now: resume_game(session, svc, row, now))


@game.command("abort")
@click.argument("game_id", type=int)
@pass_settings
def abort(settings: Settings, game_id: int) -> None:
    """Call a game off; the players are told, with the scores at that point."""
    _run_on_game(settings, game_id, lambda session, svc, row, now: abort_game(session, svc, row, now))


@game.command("extend")
@click.argument("game_id", type=int)
@click.option("--seat", default=None, help="the seat (number, 0 first, or address); default: every seat waited for")
@click.option("--hours", type=click.IntRange(1, 24 * 60), default=None,
              help="how much longer; default: the game's deadline hours")
@pass_settings
def extend(settings: Settings, game_id: int, seat: str | None, hours: int | None) -> None:
    """Give a seat (or every seat the game waits for) more time."""
    _run_on_game(settings, game_id, lambda session, svc, row, now: extend_deadline(
        session, svc, row, now, seat=_seat(row, seat) if seat is not None else None, hours=hours))


@game.command("replace")
@click.argument("game_id", type=int)
@click.argument("seat")
@click.argument("address")
@pass_settings
def replace(settings: Settings, game_id: int, seat: str, address: str) -> None:
    """Offer a seat to a substitute (an invitation to ADDRESS; the seat changes hands when accepted)."""
    _run_on_game(settings, game_id, lambda session, svc, row, now: replace_player(
        session, svc, row, now, seat=_seat(row, seat), address=address))


@game.command("tick")
@pass_settings
def tick_command(settings: Settings) -> None:
    """Run the time-driven work once (reminders, deadline policies, vacations, digests)."""
    require_migrated(settings)
    with Services.from_settings(settings) as svc:
        ids = tick(svc)
    queue_mails(settings, ids)
    click.echo(f"tick: {len(ids)} mails queued")
