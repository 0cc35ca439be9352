"""What the operator asks of the games from the command line (``pbem game new``), in the services' terms.

The command line is a front: it reads the arguments and prints the answer. The rules a preset and its
options make, and the new game created and dealt in one transaction, are here, so the front never
meets the engine; a refusal is an :class:`OperatorRefused` with the engine's code and details.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pbem.db.session import transaction
from pbem.engine import IllegalMove, InvalidRules, Rules

from .app import Services
from .deadlines import Timing
from .games import SeatSpec, create_game, start_game

__all__ = ["NewGame", "OperatorRefused", "make_rules", "start_new_game"]


class OperatorRefused(Exception):
    """A request refused: what was refused (``rules``, ``deck``), the engine's code and its details."""

    def __init__(self, what: str, code: str, details: Mapping[str, Any]) -> None:
        self.what = what
        self.code = code
        self.details = details
        super().__init__(f"{what} refused: {code} {details}")


def make_rules(preset: str, options: Mapping[str, Any]) -> Rules:
    """The preset's rules with the options over it; :class:`OperatorRefused` (``rules``) when they
    cannot work together."""
    if "preset" in options:  # the preset is named once, by --preset
        raise OperatorRefused("rules", "PRESET_AS_OPTION", {"option": "preset"})
    try:
        return Rules.make(preset, **options)
    except InvalidRules as error:
        raise OperatorRefused("rules", error.code, error.details) from error


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
