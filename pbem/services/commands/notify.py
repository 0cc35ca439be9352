"""``notify <level>`` (``notify digest everywhere``): how much news of a game a player gets by mail."""

from __future__ import annotations

from pbem.db.models import InboundStatus
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd

from ..digest import choose_level
from ..notify import send_to_seat
from ..requests import Outcome, SeatRequest, seat_command


@seat_command(cmd.Notify)
def notify_command(request: SeatRequest) -> Outcome:
    command: cmd.Notify = request.command
    if command.level is None:
        return request.reject("NOTIFY_CHOICE")
    choose_level(request.session, request.owner, request.seat, command.level, request.now,
                 everywhere=command.everywhere)
    detail = mc.NotifyChanged(command.level, everywhere=command.everywhere)  # type: ignore[arg-type]
    mails = send_to_seat(request.session, request.svc, request.game, request.seats, request.state, request.seat,
                         [detail], inbound_id=request.row.id, now=request.now)
    return Outcome(InboundStatus.DONE, "NOTIFY_SET", {**request.base, "level": command.level,
                                                      "everywhere": command.everywhere}, mails)
