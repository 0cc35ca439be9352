"""Notification choices (README, "Notifications"): the levels, one-click unsubscribe, the digest.

``notify <level>`` (the mail command: :mod:`pbem.services.commands.notify`) in a reply to a
game's mail sets that game's level (``seats.notify``); with ``everywhere`` it sets the player's
default (``players.prefs["notify"]``) and clears every per-game choice of their running games, so
it really holds everywhere. The levels and what each sends are in :mod:`pbem.services.notify`.

One-click unsubscribe (RFC 8058): every news mail carries a signed link (``pbem.web.unsubscribe``)
naming the game, the seat and the player. A POST to it switches that game to ``turn_only``
— never further: the seat is not given up, turn mails keep coming, and a confirmation mail says
so and how to undo it. A digest's link names only the player and switches all their running
games. A link whose seat has changed hands meanwhile does nothing. Repeated POSTs (mail
providers retry) change nothing more and send no second confirmation.

The digest: :func:`send_due_digests` (called by the periodic tick) sends each player whose
level is ``digest`` in at least one running game one mail a day with what happened in those
games since the last digest: cards played, hands scored, whom the game waits for, totals, and
the table talk they have not been told. Nothing happened, no mail. Turn mails are never held
back for the digest.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbem.db.models import Game, GameStatus, Move, OutboundMessage, Player, Seat, SeatStatus
from pbem.engine import CHARGE, OVER
from pbem.mail import context as mc
from pbem.mail.links import unsubscribe_link

from .app import Services
from .gamestore import GameNotFound, current_state, load_game
from .mailing import game_url, hand_results, queue_mail, recipient_for, reply_address, seat_names
from .notify import LEVELS, MINIMUM_LEVEL, has_person, notify_level, send_to_seat
from .seat_knowledge import teams_of
from .talk import take_unseen

#: How often a digest goes out (at most).
DIGEST_INTERVAL = timedelta(days=1)
RUNNING = (GameStatus.ACTIVE, GameStatus.PAUSED)


# -- choosing -------------------------------------------------------------------------------------


def running_seats(session: Session, player: Player) -> list[Seat]:
    return list(session.scalars(
        select(Seat).join(Game, Game.id == Seat.game_id)
        .where(Seat.player_id == player.id, Seat.status == SeatStatus.JOINED, Game.status.in_(RUNNING))
        .order_by(Seat.game_id)
    ))


def choose_level(session: Session, player: Player, seat: Seat | None, level: str, now: datetime,
                 *, everywhere: bool) -> bool:
    """Set a level for one seat (``seat``) or for all the player's games; whether anything changed."""
    if level not in LEVELS:
        raise ValueError(f"unknown notification level {level!r}")
    changed = False
    if everywhere:
        prefs = dict(player.prefs or {})
        if prefs.get("notify") != level:
            prefs["notify"] = level
            player.prefs = prefs
            changed = True
        for other in running_seats(session, player):
            if other.notify is not None:
                other.notify = None
                changed = True
    elif seat is not None and notify_level(seat) != level:
        seat.notify = level
        changed = True
    if level == "digest" and player.digest_sent_at is None:
        player.digest_sent_at = now  # the first digest covers a whole day from now
    return changed


# -- one-click unsubscribe ------------------------------------------------------------------------


@dataclass(frozen=True)
class Unsubscribed:
    """What an unsubscribe did: whether it changed anything, and the confirmation mails."""

    changed: bool
    mails: list[OutboundMessage]
    found: bool = True


def unsubscribe(session: Session, svc: Services, *, player_id: int, game_id: int | None, seat: int | None,
                now: datetime) -> Unsubscribed:
    """Switch one game (or, without a game, all the player's games) to the minimum level."""
    player = session.get(Player, player_id)
    if player is None:
        return Unsubscribed(False, [], found=False)
    if game_id is None:
        changed = choose_level(session, player, None, MINIMUM_LEVEL, now, everywhere=True)
        mails = []
        if changed:
            ctx = mc.MailContext(recipient=recipient_for(player, svc),
                                 detail=mc.NotifyChanged(MINIMUM_LEVEL, everywhere=True, via="web"))
            row = queue_mail(session, svc, ctx, player=player, game=None, now=now)
            mails = [row] if row is not None else []
        return Unsubscribed(changed, mails)
    try:
        game = load_game(session, game_id)  # locked: a game's seats change under its lock
    except GameNotFound:
        return Unsubscribed(False, [], found=False)
    row = next((s for s in game.seats if s.seat == seat), None)
    if row is None or row.player_id != player.id:
        return Unsubscribed(False, [], found=False)  # the seat changed hands: the link is void
    changed = choose_level(session, player, row, MINIMUM_LEVEL, now, everywhere=False)
    mails = []
    if changed and has_person(row):
        seats = sorted(game.seats, key=lambda s: s.seat)
        detail = mc.NotifyChanged(MINIMUM_LEVEL, via="web")
        mails = send_to_seat(session, svc, game, seats, current_state(game), row, [detail], inbound_id=None, now=now)
    return Unsubscribed(changed, mails)


# -- the daily digest -------------------------------------------------------------------------------


def _digest_game(session: Session, svc: Services, game: Game, seat: Seat, since: datetime) -> mc.DigestGame | None:
    """What ``seat``'s player has not been told of ``game`` since ``since``; None if nothing."""
    state = current_state(game)
    seats = sorted(game.seats, key=lambda s: s.seat)
    cards_played = session.scalar(
        select(func.count()).select_from(Move).where(Move.game_id == game.id, Move.kind == "play",
                                                     Move.created_at > since)) or 0
    deals_before = session.scalar(
        select(func.count()).select_from(Move).where(Move.game_id == game.id, Move.kind == "deal",
                                                     Move.created_at <= since)) or 0
    # Hand k (1-based) was scored after ``since`` if it was still being played then: k >= deals_before.
    results = hand_results(state)
    hands = tuple(r for r in results if r.hand_number >= max(deals_before, 1))
    talk = take_unseen(session, game.id, seat)
    if not cards_played and not hands and not talk:
        return None
    return mc.DigestGame(
        game_id=game.id, title=game.title, names=seat_names(seats), seat=seat.seat, hand_number=state.hand_no,
        totals=tuple(state.totals), cards_played=cards_played, hands=hands,
        # RULES.md §6.4: who else is still to charge would tell who holds a chargeable card.
        waiting_for=(tuple(state.seats_to_act()) if state.phase != CHARGE
                     else tuple(s for s in state.seats_to_act() if s == seat.seat)) if state.phase != OVER else (),
        charging=state.phase == CHARGE,
        over=state.phase == OVER, winners=tuple(state.winners or ()) if state.phase == OVER else (),
        table_talk=talk, game_url=game_url(svc, game, seat.seat),
        teams=teams_of(state.rules), team_totals=tuple(state.team_totals) if state.rules.teams else (),
    )


def send_due_digests(session: Session, svc: Services, now: datetime) -> list[OutboundMessage]:
    """Write the digests that are due at ``now``; the caller commits and queues the rows."""
    candidates = session.scalars(
        select(Seat).join(Game, Game.id == Seat.game_id)
        .where(Game.status.in_(RUNNING), Seat.status == SeatStatus.JOINED, Seat.player_id.is_not(None))
        .order_by(Seat.game_id)
    ).all()
    by_player: dict[int, list[int]] = defaultdict(list)
    for seat in candidates:
        if notify_level(seat) == "digest":
            by_player[seat.player_id].append(seat.game_id)  # type: ignore[index]
    rows: list[OutboundMessage] = []
    for player_id, game_ids in sorted(by_player.items()):
        player = session.get(Player, player_id)
        if player is None or (player.digest_sent_at is not None and player.digest_sent_at > now - DIGEST_INTERVAL):
            continue
        games = [load_game(session, game_id) for game_id in sorted(game_ids)]  # locked, in id order
        session.refresh(player)  # another tick may have sent it while we waited for the locks
        if player.digest_sent_at is not None and player.digest_sent_at > now - DIGEST_INTERVAL:
            continue
        since = player.digest_sent_at or (now - DIGEST_INTERVAL)
        parts = []
        for game in games:
            seat = next(s for s in game.seats if s.player_id == player.id)
            if has_person(seat) and notify_level(seat) == "digest":
                part = _digest_game(session, svc, game, seat, since)
                if part is not None:
                    parts.append(part)
        if not parts:
            continue
        ctx = mc.MailContext(recipient=recipient_for(player, svc), detail=mc.Digest(since=since, games=tuple(parts)),
                             unsubscribe=_digest_unsubscribe(svc, player, games))
        row = queue_mail(session, svc, ctx, player=player, game=None, now=now)
        player.digest_sent_at = now
        if row is not None:
            rows.append(row)
    session.flush()
    return rows


def _digest_unsubscribe(svc: Services, player: Player, games: list[Game]) -> mc.Unsubscribe:
    url = unsubscribe_link(svc.settings, player_id=player.id)
    seat = next(s for s in games[0].seats if s.player_id == player.id)
    mailto = f"mailto:{reply_address(svc, games[0], seat)}?subject=unsubscribe&body=notify%20turn%20only%20everywhere"
    return mc.Unsubscribe(url=url, mailto=mailto)
