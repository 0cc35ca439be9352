"""Playing ahead (README, "Playing ahead"): queued cards and the autopilot, so simple moves need no mail.

The grammar (one command per reply, any of English, Portuguese or Romanian; see ``help``):

``queue QS AH 2C``
    The cards to play, in this order. On each of the player's turns in the play, the *first*
    queued card is played at once if it is legal; if it is not (say a spade is queued but clubs
    were led), it **waits**: nothing is skipped or reordered, the player is asked to play as
    usual, and the mail says which card waits. A card the player plays themselves (or passes
    away) leaves the queue. A new ``queue`` replaces the old one; cards not in the hand are left
    out (and said so). The queue belongs to the hand it was made in: it ends with that hand.
``queue clear``
    Empty the queue.
``autopilot`` / ``autopilot off``
    A computer player (the server's default bot) plays the player's cards for the rest of this
    hand; passing and a moon choice stay the player's. It ends by itself when the hand ends.

The queue is ``seats.queued = {"hand": <hand number>, "cards": [...]}``; the autopilot is
``seats.autopilot_hand`` (the hand it covers). ``turns.card_ahead`` is what the turn automation
(``turns.run_automation``) asks when a person is to play; every card it returns is logged like
any move, counts as the seat's decision (older reply addresses become stale), and is told in the
player's next turn mail ("played for you, as you asked").

The commands that change them are :mod:`pbem.services.commands.playahead`.
"""

from __future__ import annotations

from pbem.db.models import Seat
from pbem.engine import OVER, GameState


def queued_cards(seat: Seat, state: GameState) -> list[str]:
    """The seat's queue as it stands: this hand's, and only cards the seat still holds."""
    queue = seat.queued or {}
    if queue.get("hand") != state.hand_no or state.phase == OVER:
        return []
    held = set(state.hand(seat.seat))
    return [card for card in queue.get("cards", ()) if card in held]


def autopilot_on(seat: Seat, state: GameState) -> bool:
    return seat.autopilot_hand is not None and seat.autopilot_hand == state.hand_no and state.phase != OVER


def ahead_view(seat: Seat, state: GameState) -> tuple[tuple[str, ...], bool]:
    """(queued cards, autopilot on) for the seat's mails."""
    return tuple(queued_cards(seat, state)), autopilot_on(seat, state)


def store_queue(seat: Seat, state: GameState, cards: list[str]) -> None:
    seat.queued = {"hand": state.hand_no, "cards": list(cards)} if cards else None
