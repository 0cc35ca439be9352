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

The commands live in one module for each set of imports they need (``new``, ``listing``, ``reading``,
``changes``), loaded only when run (:mod:`pbem.cli.lazy`), so that ``pbem game list`` loads neither
the bots nor Celery.
"""

from __future__ import annotations

import click

from pbem.cli.lazy import Lazy, LazyGroup

__all__ = ["game"]

COMMANDS = {
    "new": Lazy("pbem.cli.game.new:new", "Create a game and deal its first hand; players are mailed at once."),
    "list": Lazy("pbem.cli.game.listing:list_command", "The games, in id order: rules, players, status, phase "
                 "and hand, whom they wait for, and their last move."),
    "show": Lazy("pbem.cli.game.reading:show", "Print a game's status and state as JSON."),
    "check": Lazy("pbem.cli.game.reading:check", "Replay the move log and compare it with the cached snapshot."),
    "pause": Lazy("pbem.cli.game.changes:pause", "Pause a game: no moves, deadlines stopped; the players are told."),
    "resume": Lazy("pbem.cli.game.changes:resume",
                   "Resume a paused game; every seat it waits for gets a fresh deadline."),
    "abort": Lazy("pbem.cli.game.changes:abort",
                  "Call a game off; the players are told, with the scores at that point."),
    "extend": Lazy("pbem.cli.game.changes:extend", "Give a seat (or every seat the game waits for) more time."),
    "replace": Lazy("pbem.cli.game.changes:replace", "Offer a seat to a substitute (an invitation to ADDRESS; "
                    "the seat changes hands when accepted)."),
    "tick": Lazy("pbem.cli.game.changes:tick_command",
                 "Run the time-driven work once (reminders, deadline policies, vacations, digests)."),
}


@click.group(cls=LazyGroup, lazy=COMMANDS)
def game() -> None:
    """Create and inspect games."""
