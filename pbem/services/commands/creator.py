"""The game creator's commands by mail: ``pause``, ``resume``, ``abort``, ``extend``, ``replace``
(what they do, and the same on the command line: :mod:`pbem.services.creator`)."""

from __future__ import annotations

from pbem.db.models import InboundStatus
from pbem.mail.reading import commands as cmd

from ..creator import (
    CreatorRefused,
    abort_game,
    extend_deadline,
    parse_extend,
    parse_replace,
    pause_game,
    replace_player,
    resume_game,
)
from ..requests import Outcome, SeatRequest, seat_command
from ..table import sorted_seats


@seat_command(cmd.Pause, cmd.Resume, cmd.Abort, cmd.Extend, cmd.Replace)
def creator_command(request: SeatRequest) -> Outcome:
    """The creator's commands, from the creator's own seat; anyone else is refused."""
    game, command, owner = request.game, request.command, request.owner
    if game.creator_id is None or game.creator_id != owner.id:
        return request.reject("NOT_THE_CREATOR")
    session, svc, now, inbound_id = request.session, request.svc, request.now, request.row.id
    seats = sorted_seats(game)
    try:
        if isinstance(command, cmd.Pause):
            code, mails = "GAME_PAUSED", pause_game(session, svc, game, now, by=owner, inbound_id=inbound_id)
        elif isinstance(command, cmd.Resume):
            code, mails = "GAME_RESUMED", resume_game(session, svc, game, now, by=owner, inbound_id=inbound_id)
        elif isinstance(command, cmd.Abort):
            code, mails = "GAME_ABORTED", abort_game(session, svc, game, now, by=owner, inbound_id=inbound_id)
        elif isinstance(command, cmd.Extend):
            seat, hours = parse_extend(command.text, seats)
            code, mails = "DEADLINE_EXTENDED", extend_deadline(session, svc, game, now, seat=seat, hours=hours,
                                                               by=owner, inbound_id=inbound_id)
        else:
            seat, address = parse_replace(command.text, seats)
            code, mails = "SUBSTITUTE_INVITED", replace_player(session, svc, game, now, seat=seat, address=address,
                                                               by=owner, inbound_id=inbound_id)
    except CreatorRefused as refused:
        return request.reject(refused.code, **refused.details)
    session.flush()
    return Outcome(InboundStatus.DONE, code, request.base, mails)
