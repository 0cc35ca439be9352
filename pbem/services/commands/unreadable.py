"""A seat's mail the reader could not read, or read two ways: answered with what was wrong."""

from __future__ import annotations

from pbem.db.models import InboundStatus
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd

from ..requests import Outcome, SeatRequest, reader_details, seat_command


@seat_command(cmd.Unreadable, cmd.Ambiguous)
def unreadable_command(request: SeatRequest) -> Outcome:
    command = request.command
    return request.answer(mc.RequestRejected(command.reason, reader_details(command.details)), command.reason,
                          InboundStatus.REJECTED)
