"""``queue QS AH 2C``, ``queue clear``, ``autopilot`` / ``autopilot off``: playing ahead by mail
(README, "Playing ahead"; the queue and the autopilot themselves: :mod:`pbem.services.playahead`).

Changing the queue or the autopilot is answered with a ``play_ahead`` mail that shows what is
queued now; when it is the player's turn, the queue or autopilot plays at once (the same turn
machinery as a move, so the others are told as usual).
"""

from __future__ import annotations

from typing import Any

from pbem.db.models import InboundStatus, OutboundMessage
from pbem.engine import PASS, PLAY
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd

from ..games import settle
from ..notify import has_person, send_to_seat
from ..playahead import store_queue
from ..requests import Outcome, SeatRequest, seat_command
from ..turns import begin_turn


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
def queue_command(request: SeatRequest) -> Outcome:
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
    store_queue(seat, state, keep)
    mails = _apply_now(request)
    return _confirm(request, mc.PlayAhead("queued", dropped=dropped), "QUEUED", mails, cards=keep)


@seat_command(cmd.Autopilot, needs_active=True)
def autopilot_command(request: SeatRequest) -> Outcome:
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
