"""Durations as players and the operator write them (README, "Time"): ``48``, ``48h``, ``2d``,
``2 dias``, ``1 săptămână`` -> hours. Read by a game's timing options (:mod:`.deadlines`), the
creator's ``extend`` (:mod:`.creator`) and ``pbem game list --idle``."""

from __future__ import annotations

import re

from pbem.mail.notation import fold

__all__ = ["duration_hours"]

_HOUR_UNITS = {
    **dict.fromkeys(("", "h", "hr", "hrs", "hour", "hours", "hora", "horas", "ora", "ore"), 1),
    **dict.fromkeys(("d", "day", "days", "dia", "dias", "zi", "zile"), 24),
    **dict.fromkeys(("w", "week", "weeks", "semana", "semanas", "saptamana", "saptamani"), 24 * 7),
}
#: Matched on stripped text: one run of spaces only, so no input makes the match backtrack.
_DURATION = re.compile(r"(\d{1,4})\s*([a-z]*)")


def duration_hours(text: str, *, unit_required: bool = False) -> int | None:
    """``48``, ``48h``, ``2 dias`` -> hours; None when ``text`` is no duration (or has no unit
    and ``unit_required``)."""
    m = _DURATION.fullmatch(fold(str(text)).strip())
    if m is None or m.group(2) not in _HOUR_UNITS or (unit_required and not m.group(2)):
        return None
    return int(m.group(1)) * _HOUR_UNITS[m.group(2)]
