"""A game's table: its seats in order, the creator's own seat, and telling the people at it.

The absence policies (:mod:`pbem.services.absence`), substitutes (:mod:`pbem.services.substitutes`)
and the creator's actions (:mod:`pbem.services.creator`) tell the table through here.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from pbem.db.models import Game, OutboundMessage, Player, Seat
from pbem.engine import GameState
from pbem.mail import context as mc

from .app import Services
from .mailing import game_context, queue_mail, recipient_for
from .notify import has_person


def tell(session: Session, svc: Services, game: Game, seats: list[Seat], state: GameState, seat: Seat,
         detail: object, now: datetime, inbound_id: int | None = None) -> list[OutboundMessage]:
    """One mail about ``game`` to the person in ``seat``, with what that seat may see."""
    ctx = mc.MailContext(recipient=recipient_for(seat.player, svc), detail=detail,  # type: ignore[arg-type]
                         game=game_context(svc, game, seats, state, seat.seat))
    row = queue_mail(session, svc, ctx, player=seat.player, game=game, now=now, inbound_id=inbound_id)
    return [row] if row is not None else []


def tell_table(session: Session, svc: Services, game: Game, seats: list[Seat], state: GameState,
               detail: object, now: datetime, inbound_id: int | None = None,
               skip: frozenset[int] = frozenset()) -> list[OutboundMessage]:
    """The same news to every person at the table (but the seats in ``skip``)."""
    mails: list[OutboundMessage] = []
    for seat in seats:
        if has_person(seat) and seat.seat not in skip:
            mails += tell(session, svc, game, seats, state, seat, detail, now, inbound_id)
    return mails


def tell_player(session: Session, svc: Services, player: Player, detail: object, now: datetime,
                game: Game | None = None, inbound_id: int | None = None) -> list[OutboundMessage]:
    """A mail without a table view (the player has no seat to see from, or it is about no game)."""
    ctx = mc.MailContext(recipient=recipient_for(player, svc), detail=detail)  # type: ignore[arg-type]
    row = queue_mail(session, svc, ctx, player=player, game=game, now=now, inbound_id=inbound_id)
    return [row] if row is not None else []


def sorted_seats(game: Game) -> list[Seat]:
    return sorted(game.seats, key=lambda s: s.seat)


def creator_seat(game: Game, seats: list[Seat]) -> Seat | None:
    """The creator's own seat at the table, if they play (mails to them need a seat to show)."""
    if game.creator_id is None:
        return None
    return next((s for s in seats if s.player_id == game.creator_id and has_person(s)), None)
