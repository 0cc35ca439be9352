"""What the operator asks of the games from the command line (``pbem game new``), in the services' terms.

The command line is a front: it reads the arguments and prints the answer. The rules a preset and its
options make (read as a new-game mail's are, by :mod:`.game_options`: ``--option removed_cards=2D 2C``,
``--option "extra_penalties=KS 10, AS 7"``, or JSON values), the computer players (``--bots "2 heuristic,
1 random"``, ``--bot strong``), and the new game created and dealt in one transaction, are here, so
the front never meets the engine; a refusal is an :class:`OperatorRefused` with the code and details,
and the sentence a player would read, in English (:func:`explain`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.db.session import transaction
from pbem.engine import IllegalMove, Rules
from pbem.mail.render import MailRenderer
from pbem.resources import templates_dir

from . import game_options
from .app import Services
from .deadlines import BadTiming, Timing, timing_from_options
from .games import SeatSpec, create_game, start_game

__all__ = ["NewGame", "OperatorRefused", "explain", "make_rules", "make_timing", "seat_bots", "start_new_game"]


class OperatorRefused(Exception):
    """A request refused: what was refused (``rules``, ``bots``, ``timing``, ``deck``), the code and
    its details; its text says why in English, as a player's mail would (:func:`explain`), or the
    engine's code for a deck."""

    def __init__(self, what: str, code: str, details: Mapping[str, Any]) -> None:
        self.what = what
        self.code = code
        self.details = details
        reason = f"{code} {details}" if what == "deck" else explain(code, details)
        super().__init__(f"{what} refused: {reason}")


@functools.lru_cache(maxsize=1)
def _renderer() -> MailRenderer:
    return MailRenderer(templates_dir())


def explain(code: str, details: Mapping[str, Any], language: str = "en") -> str:
    """The sentence a new-game mail's refusal gives for a rules, bots or timing ``code`` (the
    ``rules_problem`` phrase of the mail templates), on one line."""
    phrases = _renderer().environment(language, False).globals["p"]
    if code == "BAD_OPTION":
        text = phrases.reason(code, details, ())
    else:
        text = phrases.rules_problem(code, details)
    return " ".join(str(text).split())


def make_rules(preset: str, options: Mapping[str, Any]) -> Rules:
    """The preset's rules with the options over it, names and values as :mod:`.game_options` reads
    them; :class:`OperatorRefused` (``rules``) when they cannot be read or cannot work together."""
    if "preset" in options or "rules" in options:  # the preset is named once, by --preset
        raise OperatorRefused("rules", "PRESET_AS_OPTION", {"option": "preset"})
    try:
        return game_options.make_rules(preset, options)
    except game_options.OptionRefused as error:
        raise OperatorRefused("rules", error.code, error.details) from error


def seat_bots(names: Sequence[str], count: str | int, default: str) -> tuple[str, ...]:
    """The computer players of ``--bot NAME`` (each a bot's name or strength: ``strong``, ``easy``)
    then of ``--bots`` (``3``, ``3 strong``, ``2 heuristic, 1 random``); :class:`OperatorRefused`
    (``bots``) for a strength there is none of."""
    try:
        return (tuple(game_options.bot_kind(name, default) for name in names)
                + game_options.read_bots(count, default))
    except game_options.OptionRefused as error:
        raise OperatorRefused("bots", error.code, error.details) from error


def make_timing(options: Mapping[str, Any]) -> Timing:
    """The timing of ``--deadline``, ``--weekends``…; :class:`OperatorRefused` (``timing``)."""
    try:
        return timing_from_options(options)
    except BadTiming as error:
        raise OperatorRefused("timing", error.code, {"value": error.text}) from error


@dataclass(frozen=True)
class NewGame:
    """A started game: its id and the outbox rows of its first mails (to queue once committed)."""

    game_id: int
    mail_ids: list[int]


def start_new_game(svc: Services, *, rules: Rules, seats: Sequence[SeatSpec], timing: Timing,
                   seed: str | None, title: str, first_deck: Sequence[str] | None) -> NewGame:
    """Create a game with these seats (people joined at once: the operator vouches for them), its
    timing, and deal its first hand (``first_deck`` when given), in one transaction.
    :class:`OperatorRefused` (``deck``) when the deck is not one the rules can deal."""
    with transaction(svc.session_factory) as session:
        game_row = create_game(session, svc, rules=rules, seats=seats, seed=seed, title=title)
        timing.apply(game_row)
        try:
            mails = start_game(session, svc, game_row, first_deck=first_deck)
        except IllegalMove as error:
            raise OperatorRefused("deck", error.code, error.details) from error
        started = NewGame(game_id=game_row.id, mail_ids=[m.id for m in mails])
    return started
