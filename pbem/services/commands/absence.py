"""``vacation until <date>`` / ``vacation for <time>`` / ``vacation off``, and taking a seat back:
the absent player's mail commands (the policies and vacations themselves: :mod:`pbem.services.absence`).

**Taking a seat back** (:func:`take_seat_back`, for every verified mail to a seat that has a
``stand_in``): any mail from the player to their seat address ends the stand-in (and a pending
substitute invitation for it). A move that answers the current decision then counts as usual;
anything else gets a ``seat_back`` mail with the table, and commands other than a stale move are
still carried out.
"""

from __future__ import annotations

import re

from pbem.db.models import GameStatus, InboundStatus, OutboundMessage
from pbem.mail import context as mc
from pbem.mail.notation import fold
from pbem.mail.reading import commands as cmd

from ..absence import (
    VacationRefused,
    days_left,
    end_vacation,
    parse_vacation_end,
    parse_vacation_start,
    plan_vacation,
    start_vacation,
    upcoming_absences,
)
from ..creator import resume_game
from ..deadlines import start_waiting, waits_for_person
from ..gamestore import current_state
from ..requests import SEAT_COMMANDS, Outcome, SeatRequest, before_commands, dispatch, seat_command
from ..substitutes import expire_substitute_invitations
from ..table import sorted_seats, tell
from ..turns import PAUSED_FOR, STAND_IN_VACATION

MOVES = (cmd.Play, cmd.Pass, cmd.MoonChoice)

#: ``vacation off`` and its friends (folded).
OFF_WORDS = frozenset({
    "off", "end", "over", "back", "cancel", "stop", "none", "no", "done", "i am back", "im back",
    "fim", "acabou", "voltei", "cancelar", "nao", "terminar", "terminou",
    "gata", "terminat", "anulat", "anulez", "am revenit", "revenit", "inapoi", "stop concediu",
})


#: What a returning player's mail may say that the ``seat_back`` mail answers by itself: a card for
#: a decision the computer player made meanwhile, text like "I'm back!", ``status``, ``help``.
ANSWERED_BY_SEAT_BACK = (*MOVES, cmd.Unreadable, cmd.Ambiguous, cmd.Status, cmd.Help)


@before_commands
def take_seat_back(request: SeatRequest) -> Outcome | None:
    """A verified mail to a seat a computer player holds (or whose absence paused the game): the
    stand-in ends (a vacation ends early, a pause for this seat ends), then a move for the current
    decision is applied, other commands are carried out, and anything else is answered by the
    ``seat_back`` mail (the resumed game's mail when the game was paused for this seat).  None for a
    seat no one stands in for: its command is carried out as usual."""
    if request.seat.stand_in is None:
        return None
    session, svc, game, seat, now = request.session, request.svc, request.game, request.seat, request.now
    command, inbound_id = request.command, request.row.id
    reason = seat.stand_in
    mails: list[OutboundMessage] = []
    if reason == STAND_IN_VACATION:
        if isinstance(command, cmd.Vacation):
            return dispatch(request)  # a new date, or "vacation off": the vacation's own business
        mails += end_vacation(session, svc, request.owner, now, early=True, inbound_id=inbound_id)
    else:
        seat.stand_in = None
        expire_substitute_invitations(session, game, seat)
    if reason == PAUSED_FOR and game.status == GameStatus.PAUSED and not any(s.stand_in == PAUSED_FOR for s in game.seats):
        mails += resume_game(session, svc, game, now, detail=mc.GameResumed(by="return", seat=seat.seat),
                             inbound_id=inbound_id)
    elif game.status == GameStatus.ACTIVE and seat.seat in request.state.seats_to_act() and waits_for_person(seat):
        start_waiting(game, seat, now)  # a fresh deadline for the decision they came back to
    state = current_state(game)
    current_move = (isinstance(command, MOVES) and request.token.decision == seat.decisions
                    and game.status == GameStatus.ACTIVE)
    if not current_move and reason != PAUSED_FOR:
        mails += tell(session, svc, game, sorted_seats(game), state, seat, mc.SeatBack(), now, inbound_id)
    if current_move or (type(command) in SEAT_COMMANDS and not isinstance(command, ANSWERED_BY_SEAT_BACK)):
        request.state = state
        outcome = dispatch(request)
        outcome.mails[:0] = mails
        outcome.details["seat_taken_back"] = reason
        return outcome
    return Outcome(InboundStatus.DONE, "SEAT_TAKEN_BACK", {**request.base, "stand_in": reason}, mails)


# -- vacations -----------------------------------------------------------------------------------------


@seat_command(cmd.Vacation)
def vacation_command(request: SeatRequest) -> Outcome:
    """``vacation until <date>`` / ``vacation for <time>`` / ``vacation off``."""
    session, svc, player, now = request.session, request.svc, request.owner, request.now
    text = request.command.until.strip()
    if " ".join(re.findall(r"[a-z]+", fold(text))) in OFF_WORDS:
        if player.vacation_until is None:
            planned = upcoming_absences(session, player, now)
            if not planned:
                return request.reject("NOT_ON_VACATION")
            for absence in planned:  # "vacation off" before a planned vacation began: it is cancelled
                session.delete(absence)
            session.flush()
            return request.answer(mc.VacationNoted(until=None, days_left=days_left(session, player, now),
                                                   starts=planned[0].starts_at, cancelled=True),
                                  "VACATION_CANCELLED")
        mails = end_vacation(session, svc, player, now, early=True, inbound_id=request.row.id, confirm_in=request)
        return Outcome(InboundStatus.DONE, "VACATION_ENDED", request.base, mails)
    zone = player.timezone or "UTC"
    starts = parse_vacation_start(request.command.starts, now, zone) if request.command.starts else None
    if request.command.starts and starts is None:
        return request.reject("VACATION_DATE", text=request.command.starts)
    until = parse_vacation_end(text, max(starts or now, now), zone) if text else None
    if until is None:
        return request.reject("VACATION_DATE", text=text)
    if starts is not None and starts > now:
        try:
            plan_vacation(session, player, starts, until, now)
        except VacationRefused as refused:
            return request.reject(refused.code, text=f"{request.command.starts} – {text}", **refused.details)
        return request.answer(mc.VacationNoted(until=until, days_left=days_left(session, player, now), starts=starts),
                              "VACATION_PLANNED", starts=starts.isoformat(), until=until.isoformat())
    try:
        mails = start_vacation(session, svc, player, until, now, inbound_id=request.row.id)
    except VacationRefused as refused:
        return request.reject(refused.code, text=text, **refused.details)
    mails += request.reply(mc.VacationNoted(until=until, days_left=days_left(session, player, now)))
    return Outcome(InboundStatus.DONE, "VACATION_SET", {**request.base, "until": until.isoformat()}, mails)
