"""Substitutes: a seat offered to someone else (``invitations.kind = "substitute"``).

The creator names the substitute (``replace <player> <address>``, by mail or on the command line;
:mod:`pbem.services.creator`); the invitee's answer is :func:`pbem.services.absence.answer_substitute_invitation`.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbem.db.models import Game, Invitation, InvitationStatus, OutboundMessage, Player, Seat
from pbem.mail import context as mc
from pbem.mail.addresses import make_invite_address

from .app import Services
from .games import get_or_create_player
from .gamestore import current_state
from .mailing import seat_name
from .table import creator_seat, sorted_seats, tell, tell_player


class SubstituteRefused(ValueError):
    def __init__(self, code: str, **details: object) -> None:
        super().__init__(code)
        self.code = code
        self.details = details


def invite_substitute(session: Session, svc: Services, game: Game, seat: Seat, address: str, now: datetime, *,
                      by: Player | None, inbound_id: int | None = None) -> list[OutboundMessage]:
    """Offer ``seat`` to ``address`` (a ``substitute`` invitation, replacing any earlier one)."""
    address = address.strip().lower()
    seats, state = sorted_seats(game), current_state(game)
    if any(s.player is not None and s.player.address == address for s in seats):
        raise SubstituteRefused("ALREADY_PLAYING", address=address)
    if by is not None:
        today = session.scalar(select(func.count()).select_from(Invitation).where(
            Invitation.invited_by == by.id, Invitation.created_at >= now - timedelta(days=1))) or 0
        if today >= svc.settings.invites_per_day:
            raise SubstituteRefused("RATE_LIMITED", limit=svc.settings.invites_per_day)
    invitee = get_or_create_player(session, address, None, now, language=svc.settings.default_language)
    inv = Invitation(game_id=game.id, seat=seat.seat, address=address, kind="substitute",
                     token=f"sub.{game.id}.{seat.seat}.{secrets.token_hex(8)}",
                     invited_by=by.id if by is not None else None, created_at=now)
    session.add(inv)
    session.flush()
    expire_substitute_invitations(session, game, seat, keep=inv.id)
    inviter = by.display_name or by.address if by is not None else ""
    detail = mc.SubstituteInvitation(
        game_id=game.id, inviter_name=inviter, inviter_address=by.address if by is not None else "",
        absent_name=seat_name(seat), players=tuple(seat_name(s) for s in seats if s.seat != seat.seat),
        reply_address=make_invite_address(svc.settings.secret_key, svc.settings.mail_domain, inv.id),
        hand_number=state.hand_no, points=state.totals[seat.seat], rules=game.rules)
    mails = tell_player(session, svc, invitee, detail, now, game=game, inbound_id=inbound_id)
    mine = creator_seat(game, seats)
    if by is not None and mine is not None and mine.player_id == by.id:
        mails += tell(session, svc, game, seats, state, mine, mc.SubstituteWanted(seat=seat.seat, invited=address),
                      now, inbound_id)
    return mails


def expire_substitute_invitations(session: Session, game: Game, seat: Seat, keep: int | None = None) -> None:
    for inv in session.scalars(select(Invitation).where(
            Invitation.game_id == game.id, Invitation.seat == seat.seat, Invitation.kind == "substitute",
            Invitation.status == InvitationStatus.PENDING)):
        if inv.id != keep:
            inv.status = InvitationStatus.EXPIRED
