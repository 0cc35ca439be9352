"""A player's standing choices, changed by mail: ``autoplay on`` / ``autoplay off``, ``language pt``.

With autoplay on (the default), a single legal card is played for the player and their next mail
says so; with it off they are asked every time. The choice is the player's, for all their games.
Turning it on while a forced card is waiting plays it at once.
"""

from __future__ import annotations

from pbem.db.models import InboundStatus
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd

from .games import settle
from .inbound import Outcome, SeatRequest, seat_command
from .turns import begin_turn


@seat_command(cmd.ForcedCards)
def _forced_cards(request: SeatRequest) -> Outcome:
    on = bool(request.command.on)
    player = request.owner
    player.prefs = {**(player.prefs or {}), "autoplay_single": on}
    mails = request.reply(mc.ForcedCardsChanged(on=on))
    if on and request.game.status == "active" and request.state.only_legal_card() is not None:
        turn = begin_turn(request.game, request.seats, request.state, request.now, request.row.id)
        mails += settle(request.session, request.svc, turn)
    return Outcome(InboundStatus.DONE, "AUTOPLAY_ON" if on else "AUTOPLAY_OFF", request.base, mails)


@seat_command(cmd.Language)
def _language(request: SeatRequest) -> Outcome:
    """``language pt``: the player's mails in Portuguese from now on (this answer included)."""
    code = request.command.code
    if code is not None:
        request.owner.language = code
    mails = request.reply(mc.LanguageChanged(language=code))
    return Outcome(InboundStatus.DONE if code else InboundStatus.REJECTED,
                   "LANGUAGE_SET" if code else "LANGUAGE_UNKNOWN", {**request.base, "language": code}, mails)
