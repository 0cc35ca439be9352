"""Playing ahead (issue 4 §5): queued cards and the autopilot, so simple moves need no mail.

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
``seats.autopilot_hand`` (the hand it covers). :func:`card_ahead` is what the turn automation
(``turns.run_automation``) asks when a person is to play; every card it returns is logged like
any move, counts as the seat's decision (older reply addresses become stale), and is told in the
player's next turn mail ("played for you, as you asked").

Changing the queue or the autopilot is answered with a ``play_ahead`` mail that shows what is
queued now; when it is the player's turn, the queue or autopilot plays at once (the same turn
machinery as a move, so the others are told as usual).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from pbem.db.models import InboundStatus, OutboundMessage, Seat
from pbem.engine import OVER, PASS, PLAY, GameState
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd

from .games import settle
from .inbound import Outcome, SeatRequest, seat_command
from .notify import has_person, send_to_seat
from .turns import Turn, _bot_move, begin_turn


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


def _store_queue(seat: Seat, state: GameState, cards: list[str]) -> None:
    seat.queued = {"hand": state.hand_no, "cards": list(cards)} if cards else None


def card_ahead(session: Session, turn: Turn, seat: int, default_bot: str) -> str | None:
    """The card to play now for ``seat`` (a person, to play): the autopilot's choice, or the
    queue's first card when it is legal; None when the person must be asked."""
    row = turn.seat_row(seat)
    state = turn.state
    if autopilot_on(row, state):
        move = _bot_move(session, turn, seat, default_bot)
        return str(move.card)  # type: ignore[attr-defined]
    queue = queued_cards(row, state)
    if queue != list((row.queued or {}).get("cards", ())):
        _store_queue(row, state, queue)  # cards played by hand or passed away leave the queue
    if queue and queue[0] in state.legal_cards():
        _store_queue(row, state, queue[1:])
        return queue[0]
    return None


def _apply_now(request: SeatRequest) -> list[OutboundMessage]:
    """When the seat is to play, let the queue or the autopilot play at once (a whole turn)."""
    state = request.state
    if state.phase != PLAY or state.to_move != request.seat.seat:
        return []
    turn = begin_turn(request.game, request.seats, state, request.now, request.row.id)
    mails = settle(request.session, request.svc, turn)
    request.state = turn.state
    return mails


def _confirm(request: SeatRequest, detail: Any, code: str, mails: list[OutboundMessage], **more: Any) -> Outcome:
    seat = request.seat
    if has_person(seat):
        mails = mails + send_to_seat(request.session, request.svc, request.game, request.seats, request.state, seat,
                                     [detail], inbound_id=request.row.id, now=request.now)
    return Outcome(InboundStatus.DONE, code, {**request.base, **more}, mails)


@seat_command(cmd.Queue, needs_active=True)
def _queue(request: SeatRequest) -> Outcome:
    command: cmd.Queue = request.command
    state, seat = request.state, request.seat
    if command.clear:
        seat.queued = None
        return _confirm(request, mc.PlayAhead("cleared"), "QUEUE_CLEARED", [])
    if not command.cards:
        return request.reject("QUEUE_EMPTY")
    held = set(state.hand(seat.seat)) if state.phase in (PASS, PLAY) else set()
    cards = list(dict.fromkeys(command.cards))
    keep = [card for card in cards if card in held]
    dropped = tuple(card for card in cards if card not in held)
    if not keep:
        return request.reject("QUEUE_NOT_HELD", cards=list(dropped))
    _store_queue(seat, state, keep)
    mails = _apply_now(request)
    return _confirm(request, mc.PlayAhead("queued", dropped=dropped), "QUEUED", mails, cards=keep)


@seat_command(cmd.Autopilot, needs_active=True)
def _autopilot(request: SeatRequest) -> Outcome:
    command: cmd.Autopilot = request.command
    state, seat = request.state, request.seat
    if not command.on:
        seat.autopilot_hand = None
        return _confirm(request, mc.PlayAhead("autopilot_off"), "AUTOPILOT_OFF", [])
    if state.phase not in (PASS, PLAY) or not state.hand(seat.seat):
        return request.reject("AUTOPILOT_NOT_NOW")
    seat.autopilot_hand = state.hand_no
    mails = _apply_now(request)
    return _confirm(request, mc.PlayAhead("autopilot_on"), "AUTOPILOT_ON", mails, hand=state.hand_no)
