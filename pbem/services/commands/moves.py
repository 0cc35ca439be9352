"""Playing a card, passing cards, the kitty discard, the moon choice, resigning (confirmed): the moves a seat's mail makes.

A move must answer the seat's current decision (the reply address names it): a late reply, to a
decision already made, is refused even when the card would be legal now (README, "Playing by mail").
"""

from __future__ import annotations

from typing import Any

from pbem.db.models import InboundStatus
from pbem.engine import (
    CallPass,
    ChargeCards,
    ChooseMoon,
    DeclinePass,
    DiscardKitty,
    IllegalMove,
    PassCards,
    PlayCard,
    move_to_dict,
)
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd

from ..games import resign, settle
from ..requests import Outcome, SeatRequest, seat_command
from ..turns import apply_move, begin_turn


@seat_command(cmd.Resign, needs_active=True)
def resign_command(request: SeatRequest) -> Outcome:
    """``resign`` only says what resigning means and asks for ``resign confirm``: resigning cannot
    be undone, so only the confirmation acts (README, "Playing by mail")."""
    if not request.command.confirmed:
        return request.answer(mc.ResignAsked(), "RESIGN_ASKED")
    mails = resign(request.session, request.svc, request.game, request.seat, inbound_id=request.row.id,
                   state=request.state)
    return Outcome(InboundStatus.DONE, "RESIGNED", request.base, mails)


@seat_command(cmd.Play, cmd.Pass, cmd.Discard, cmd.CallPass, cmd.NoPass, cmd.Charge, cmd.MoonChoice, needs_active=True)
def move_command(request: SeatRequest) -> Outcome:
    seat, token = request.seat, request.token
    move = engine_move(request.command, seat.seat)
    if token.decision != seat.decisions:
        return request.reject("STALE_TURN", decision=token.decision, current=seat.decisions)
    turn = begin_turn(request.game, request.seats, request.state, request.now, request.row.id)
    try:
        apply_move(request.session, turn, move)
    except IllegalMove as error:
        # (a refused call is quoted by its sentence, BAD_CALL, in the reader's words)
        attempted = getattr(move, "card", None) or " ".join(getattr(move, "cards", ()) or ())
        return request.answer(mc.MoveRejected(error.code, error.details, attempted=attempted), error.code,
                              InboundStatus.REJECTED)
    mails = settle(request.session, request.svc, turn)
    return Outcome(InboundStatus.DONE, "MOVE_APPLIED", {**request.base, "move": move_to_dict(move)}, mails)


def engine_move(command: cmd.Command, seat: int) -> Any:
    """The engine's move for a mail's move command (None for any other command)."""
    if isinstance(command, cmd.Play):
        return PlayCard(seat, command.card)
    if isinstance(command, cmd.Pass):
        return PassCards(seat, tuple(command.cards))
    if isinstance(command, cmd.MoonChoice):
        return ChooseMoon(seat, command.choice)
    if isinstance(command, cmd.Discard):  # kitty_exchange (RULES.md §6.2)
        return DiscardKitty(seat, tuple(command.cards))
    if isinstance(command, cmd.CallPass):  # dealer_calls_pass (RULES.md §6.3)
        return CallPass(seat, tuple(command.call))
    if isinstance(command, cmd.NoPass):  # pass_optional (RULES.md §6.3)
        return DeclinePass(seat)
    if isinstance(command, cmd.Charge):  # Turbo (RULES.md §6.4); () charges nothing
        return ChargeCards(seat, tuple(command.cards))
    return None
