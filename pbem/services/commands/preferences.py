"""A player's standing choices, changed by mail: ``autoplay on`` / ``autoplay off``, ``language pt``,
``timezone Europe/Lisbon``.

With autoplay on (the default), a single legal card is played for the player and their next mail
says so; with it off they are asked every time. The choice is the player's, for all their games.
Turning it on while a forced card is waiting plays it at once.

**Time zone**: the zone the player's mails show times in (deadlines, "waiting since") and in which
their vacation dates are read; an IANA name, in any case, spaces for underscores.
"""

from __future__ import annotations

import functools
from zoneinfo import available_timezones

from pbem.db.models import InboundStatus
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd

from ..games import settle
from ..requests import Outcome, SeatRequest, seat_command
from ..turns import begin_turn


@seat_command(cmd.ForcedCards)
def forced_cards_command(request: SeatRequest) -> Outcome:
    on = bool(request.command.on)
    player = request.owner
    player.prefs = {**(player.prefs or {}), "autoplay_single": on}
    mails = request.reply(mc.ForcedCardsChanged(on=on))
    if on and request.game.status == "active" and request.state.only_legal_card() is not None:
        turn = begin_turn(request.game, request.seats, request.state, request.now, request.row.id)
        mails += settle(request.session, request.svc, turn)
    return Outcome(InboundStatus.DONE, "AUTOPLAY_ON" if on else "AUTOPLAY_OFF", request.base, mails)


@seat_command(cmd.Language)
def language_command(request: SeatRequest) -> Outcome:
    """``language pt``: the player's mails in Portuguese from now on (this answer included)."""
    code = request.command.code
    if code is not None:
        request.owner.language = code
    mails = request.reply(mc.LanguageChanged(language=code))
    return Outcome(InboundStatus.DONE if code else InboundStatus.REJECTED,
                   "LANGUAGE_SET" if code else "LANGUAGE_UNKNOWN", {**request.base, "language": code}, mails)


# -- the player's time zone --------------------------------------------------------------------------------


@functools.cache
def _zones() -> dict[str, str]:
    zones = {zone.lower(): zone for zone in available_timezones()}
    zones.update({"utc": "UTC", "gmt": "UTC", "z": "UTC"})
    return zones


def find_zone(text: str) -> str | None:
    """The IANA zone ``text`` names (``europe/lisbon``, ``America/Sao Paulo``), or None."""
    return _zones().get("_".join(text.split()).lower()) if text.strip() else None


@seat_command(cmd.TimeZone)
def time_zone_command(request: SeatRequest) -> Outcome:
    zone = find_zone(request.command.zone)
    if zone is None:
        return request.reject("BAD_TIMEZONE", text=request.command.zone)
    request.owner.timezone = zone
    return request.answer(mc.TimeZoneSet(zone=zone, now=request.now), "TIMEZONE_SET", zone=zone)
