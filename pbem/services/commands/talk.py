"""A reply of nothing but table talk (``say …``): recorded on arrival (:mod:`pbem.services.talk`)."""

from __future__ import annotations

from pbem.db.models import GameStatus, InboundStatus, SeatStatus
from pbem.mail.reading import commands as cmd

from ..requests import Outcome, SeatRequest, seat_command


@seat_command(cmd.Say)
def say_command(request: SeatRequest) -> Outcome:
    """Nothing but talk: it was recorded on arrival (``inbound._seat_mail``); no mail back.
    Talk at a table that is not running (not started, over) is refused, as it reaches nobody."""
    game, seat = request.game, request.seat
    if game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED) or seat.status != SeatStatus.JOINED:
        return request.reject("GAME_NOT_ACTIVE", status=str(game.status))
    return Outcome(InboundStatus.DONE, "TALK_RECORDED", request.base)
