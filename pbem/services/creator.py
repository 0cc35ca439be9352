"""The game creator's commands (README, "Time"): pause, resume, extend a deadline, replace a player, abort.

By mail (:mod:`pbem.services.commands.creator`), from the creator's address to their own seat's
address in that game (``pause``, ``resume``, ``extend 24h``, ``extend Bob``, ``extend Bob 2d``,
``replace Bob ana@example.org``, ``abort``); anyone else sending them gets a ``NOT_THE_CREATOR``
refusal and nothing changes. On the command line, the operator may do the same to any game (``pbem game pause|resume|extend|replace|
abort``). In a mail, a player is named by their name as the mails show it, their address, or their
seat's number in playing order (1 first); on the command line by the seat number of ``pbem game
show`` (0 first) or the address.

- ``pause``: no moves are taken, the deadlines stop; everyone is told.
- ``resume``: the game goes on, every seat it waits for gets a fresh deadline; everyone is told.
- ``extend [player] [time]``: moves the deadline of that player (or of every seat the game waits
  for) by ``time`` (default: the game's deadline hours), counted from the later of the old deadline
  and now; everyone is told. The reminders restart for the new deadline.
- ``replace <player> <address>``: the seat is offered to ``address`` by a substitute invitation
  (:func:`pbem.services.substitutes.invite_substitute`); the player keeps it until the substitute
  accepts.
- ``abort``: the game ends without a result; everyone is told, with the scores at that point.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbem.db.models import Game, GameStatus, Invitation, InvitationStatus, OutboundMessage, Player, Seat
from pbem.mail import context as mc
from pbem.mail.notation import fold
from pbem.mail.compose import can_address
from pbem.mail.reading.clean import find_addresses

from .app import Services
from .deadlines import add_hours, reminder_at, stop_waiting
from .durations import duration_hours
from .games import settle
from .gamestore import current_state
from .mailing import seat_name
from .substitutes import SubstituteRefused, invite_substitute
from .table import sorted_seats, tell_table
from .turns import PAUSED_FOR, begin_turn


class CreatorRefused(ValueError):
    """A creator's command that cannot be carried out; ``code`` and ``details`` for the mail."""

    def __init__(self, code: str, **details: Any) -> None:
        super().__init__(code)
        self.code = code
        self.details = details


def _by(by: Player | None) -> tuple[str, str]:
    """Who acted, for the mails: the creator (by name) or the server's operator."""
    if by is None:
        return "operator", ""
    return "creator", by.display_name or by.address.split("@")[0]


# -- the actions (mail and command line) ----------------------------------------------------------------


def pause_game(session: Session, svc: Services, game: Game, now: datetime, *, by: Player | None = None,
               detail: mc.GamePaused | None = None, inbound_id: int | None = None) -> list[OutboundMessage]:
    if game.status != GameStatus.ACTIVE:
        raise CreatorRefused("GAME_NOT_ACTIVE", status=str(game.status))
    game.status = GameStatus.PAUSED
    game.paused_at = now
    seats = sorted_seats(game)
    for seat in seats:
        stop_waiting(seat)
    who, name = _by(by)
    detail = detail or mc.GamePaused(by=who, by_name=name)  # type: ignore[arg-type]
    return tell_table(session, svc, game, seats, current_state(game), detail, now, inbound_id)


def resume_game(session: Session, svc: Services, game: Game, now: datetime, *, by: Player | None = None,
                detail: mc.GameResumed | None = None, inbound_id: int | None = None) -> list[OutboundMessage]:
    """The game goes on: what the automation can do is done, every waiting seat gets a fresh deadline."""
    if game.status != GameStatus.PAUSED:
        raise CreatorRefused("GAME_NOT_PAUSED", status=str(game.status))
    game.status = GameStatus.ACTIVE
    game.paused_at = None
    seats = sorted_seats(game)
    for seat in seats:
        if seat.stand_in == PAUSED_FOR:
            seat.stand_in = None
        stop_waiting(seat)  # so that settle starts every waiting seat's clock afresh
    mails = settle(session, svc, begin_turn(game, seats, current_state(game), now, inbound_id))
    who, name = _by(by)
    detail = detail or mc.GameResumed(by=who, by_name=name)  # type: ignore[arg-type]
    return tell_table(session, svc, game, seats, current_state(game), detail, now, inbound_id) + mails


def abort_game(session: Session, svc: Services, game: Game, now: datetime, *, by: Player | None = None,
               inbound_id: int | None = None) -> list[OutboundMessage]:
    if game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED, GameStatus.INVITING):
        raise CreatorRefused("GAME_NOT_ACTIVE", status=str(game.status))
    game.status = GameStatus.ABORTED
    game.updated_at = now
    seats = sorted_seats(game)
    for seat in seats:
        stop_waiting(seat)
    for inv in game_invitations(session, game):
        inv.status = InvitationStatus.EXPIRED
    who, name = _by(by)
    return tell_table(session, svc, game, seats, current_state(game), mc.GameAborted(by=who, by_name=name),  # type: ignore[arg-type]
                      now, inbound_id)


def game_invitations(session: Session, game: Game) -> list[Invitation]:
    return list(session.scalars(select(Invitation).where(Invitation.game_id == game.id,
                                                         Invitation.status == InvitationStatus.PENDING)))


def extend_deadline(session: Session, svc: Services, game: Game, now: datetime, *, seat: Seat | None = None,
                    hours: int | None = None, by: Player | None = None,
                    inbound_id: int | None = None) -> list[OutboundMessage]:
    if game.status == GameStatus.PAUSED:
        raise CreatorRefused("PAUSED_NO_DEADLINES")  # nothing to extend: resuming gives fresh deadlines
    if game.status != GameStatus.ACTIVE:
        raise CreatorRefused("GAME_NOT_ACTIVE", status=str(game.status))
    seats = sorted_seats(game)
    if seat is not None and seat.deadline_at is None:
        raise CreatorRefused("NOT_WAITING", name=seat_name(seat))
    targets = [seat] if seat is not None else [s for s in seats if s.deadline_at is not None]
    if not targets:
        raise CreatorRefused("NOT_WAITING")
    hours = hours or game.deadline_hours
    for target in targets:
        start = max(target.deadline_at, now)  # type: ignore[type-var]
        target.deadline_at = add_hours(start, hours, skip_weekends=game.skip_weekends)
        remind = reminder_at(game, target)
        target.reminders_sent = 1 if remind is not None and remind <= now else 0
    who, name = _by(by)
    detail = mc.DeadlineExtended(seats=tuple(t.seat for t in targets), hours=hours, by=who, by_name=name)  # type: ignore[arg-type]
    return tell_table(session, svc, game, seats, current_state(game), detail, now, inbound_id)


def replace_player(session: Session, svc: Services, game: Game, now: datetime, *, seat: Seat, address: str,
                   by: Player | None = None, inbound_id: int | None = None) -> list[OutboundMessage]:
    if game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED):
        raise CreatorRefused("GAME_NOT_ACTIVE", status=str(game.status))
    if seat.player is None:
        raise CreatorRefused("BAD_REPLACE", text=str(seat.seat + 1))
    try:
        return invite_substitute(session, svc, game, seat, address, now, by=by, inbound_id=inbound_id)
    except SubstituteRefused as refused:
        raise CreatorRefused(refused.code, **refused.details) from refused


# -- reading the commands' words ---------------------------------------------------------------------

#: Little words around a player's name ("replace Bob with ana@…", "extend for Bob").
_FILLER = frozenset({"with", "by", "for", "to", "of", "the", "player", "seat", "more",
                     "por", "com", "para", "de", "do", "da", "o", "a", "jogador", "jogadora", "lugar", "mais",
                     "cu", "pe", "pentru", "lui", "jucatorul", "jucatoarea", "locul", "inca"})


def find_seat(seats: list[Seat], text: str, *, first: int = 1) -> Seat | None:
    """The seat ``text`` names: its number (``first`` is the number of the first seat), its player's
    address, name as the mails show it, or the first word of that name when only one matches."""
    text = text.strip()
    if not text:
        return None
    if text.isdigit():
        number = int(text) - first
        return seats[number] if 0 <= number < len(seats) else None
    wanted = fold(text)
    people = [s for s in seats if s.player is not None]
    for seat in people:
        if seat.player.address == wanted:  # type: ignore[union-attr]
            return seat
    exact = [s for s in seats if fold(seat_name(s)) == wanted]
    if len(exact) == 1:
        return exact[0]
    partial = [s for s in people if fold(seat_name(s)).split()[:1] == [wanted] or fold(seat_name(s)).startswith(wanted)]
    return partial[0] if len(partial) == 1 else None


def _words(text: str) -> list[str]:
    words = (w.strip(".!?()'\"“”„") for w in re.findall(r"[^\s,;:]+", text))
    return [w for w in words if w]


def _find_named(seats: list[Seat], words: list[str]) -> Seat | None:
    """The seat ``words`` name: tried as written ("Player 3" may be a name), then without the
    little words at either end ("with", "for"…), then without any of them."""
    def trimmed(ws: list[str], front: bool, back: bool) -> list[str]:
        ws = list(ws)
        while front and ws and fold(ws[0]) in _FILLER:
            ws.pop(0)
        while back and ws and fold(ws[-1]) in _FILLER:
            ws.pop()
        return ws

    candidates = (words, trimmed(words, False, True), trimmed(words, True, False), trimmed(words, True, True),
                  [w for w in words if fold(w) not in _FILLER])
    for candidate in candidates:
        seat = find_seat(seats, " ".join(candidate))
        if seat is not None:
            return seat
    return None


def parse_extend(text: str, seats: list[Seat]) -> tuple[Seat | None, int | None]:
    """``24h``, ``Bob``, ``Bob 2d``, ``2 days``, ``3`` -> (seat or None for all, hours or None for the
    default). A bare number is a seat's number when there is such a seat, else hours."""
    words = _words(text)
    if len(words) == 1 and words[0].isdigit() and not 1 <= int(words[0]) <= len(seats):
        words = [words[0] + "h"]
    hours = None
    rest: list[str] = []
    i = 0
    while i < len(words):
        for size in (2, 1):  # "2 days" or "2d"
            found = duration_hours(" ".join(words[i:i + size]), unit_required=True) \
                if hours is None and i + size <= len(words) else None
            if found is not None:
                hours = found
                i += size
                break
        else:
            rest.append(words[i])
            i += 1
    if hours is not None and not 1 <= hours <= 24 * 60:
        raise CreatorRefused("BAD_EXTEND", text=text)
    if not [w for w in rest if fold(w) not in _FILLER]:
        return None, hours
    seat = _find_named(seats, rest)
    if seat is None:
        raise CreatorRefused("BAD_EXTEND", text=text)
    return seat, hours


def parse_replace(text: str, seats: list[Seat]) -> tuple[Seat, str]:
    """``Bob ana@example.org``, ``2 with ana@example.org`` -> (seat, address)."""
    addresses = find_addresses(text)  # linear in the text's length (clean.py)
    if len(addresses) != 1:
        raise CreatorRefused("BAD_REPLACE", text=text)
    address = addresses[0].lower().rstrip(".")
    seat = _find_named(seats, _words(text.replace(addresses[0], " ")))
    if seat is None or seat.player is None or not can_address(address):
        raise CreatorRefused("BAD_REPLACE", text=text)
    return seat, address
