"""The mail commands a seat's player may send, one module per family.

Each module registers its handlers with :func:`pbem.services.requests.seat_command` (a handler
takes a :class:`~pbem.services.requests.SeatRequest` and returns an
:class:`~pbem.services.requests.Outcome`); importing this package imports them all, and that list
below is their registration.  Adding a command: a module here and its line below; the dispatcher
(``inbound._seat_mail``) is not edited.
"""

from __future__ import annotations

from . import absence, creator, info, moves, notify, playahead, preferences, talk, unreadable

#: The modules of the mail commands (each registered its handlers when imported).
COMMAND_MODULES: tuple[str, ...] = tuple(module.__name__ for module in (
    moves, info, unreadable, absence, creator, playahead, notify, talk, preferences,
))
