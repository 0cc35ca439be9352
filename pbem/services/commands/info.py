"""What a player may ask about: ``help``, ``status``, ``rules``, ``games``, ``history``."""

from __future__ import annotations

from pbem.db.models import InboundStatus
from pbem.mail import context as mc
from pbem.mail.addresses import new_game_address
from pbem.mail.reading import commands as cmd

from ..notify import send_to_seat
from ..requests import Outcome, SeatRequest, games_list, seat_command
from ..summaries import history_hands, logged_moves


@seat_command(cmd.Help)
def help_command(request: SeatRequest) -> Outcome:
    return request.answer(mc.Help(new_game_address=new_game_address(request.svc.settings.mail_domain)), "HELP")


@seat_command(cmd.Status)
def status_command(request: SeatRequest) -> Outcome:
    return request.answer(mc.Status(), "STATUS")


@seat_command(cmd.Rules)
def rules_command(request: SeatRequest) -> Outcome:
    return request.answer(mc.Rules(rules=request.game.rules), "RULES")


@seat_command(cmd.Games)
def games_command(request: SeatRequest) -> Outcome:
    return Outcome(InboundStatus.DONE, "GAMES", request.base,
                   games_list(request.session, request.svc, request.owner, request.now, request.row.id))


@seat_command(cmd.History)
def history_command(request: SeatRequest) -> Outcome:
    """Any seat's player may ask, during the game or after it (the sender is the seat's own)."""
    seat = request.seat
    hands = history_hands(logged_moves(request.session, request.game), seat=seat.seat, state=request.state)
    mails = send_to_seat(request.session, request.svc, request.game, request.seats, request.state, seat,
                         [mc.MoveHistory(hands)], inbound_id=request.row.id, now=request.now)
    return Outcome(InboundStatus.DONE, "HISTORY", request.base, mails)
