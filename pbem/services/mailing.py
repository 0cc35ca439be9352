"""Turning game states into mails and mails into outbox rows.

``game_context`` builds what one seat may see of a game (from the engine's per-seat view) in the
shape the templates read (:mod:`pbem.mail.context`); ``queue_mail`` renders a mail and writes its
outbox row in the caller's transaction (the row is sent after commit by a worker).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbem.db.models import Game, OutboundMessage, Player, Seat
from pbem.engine import MOON, OVER, PASS, PLAY, GameState
from pbem.mail import context as mc
from pbem.mail.addresses import make_reply_address

from .app import Services

ERROR_KINDS = ("move_rejected", "request_rejected")


def seat_names(seats: list[Seat]) -> tuple[str, ...]:
    return tuple(seat_name(s) for s in sorted(seats, key=lambda s: s.seat))


def seat_name(seat: Seat) -> str:
    if seat.player is not None and (seat.bot is None or seat.player_id is not None):
        return seat.player.display_name or seat.player.address.split("@")[0]
    return f"{(seat.bot or 'bot').capitalize()} (bot {seat.seat + 1})"


def recipient_for(player: Player, svc: Services) -> mc.Recipient:
    return mc.Recipient(
        name=player.display_name or player.address.split("@")[0],
        address=player.address,
        language=player.language or svc.settings.default_language,
        timezone=player.timezone or "UTC",
    )


def reply_address(svc: Services, game: Game, seat: Seat) -> str:
    s = svc.settings
    return make_reply_address(s.secret_key, s.mail_domain, game.id, seat.seat, seat.decisions)


def game_url(svc: Services, game: Game, seat: int) -> str:
    from pbem.web.links import game_link

    return game_link(svc.settings, game.id, seat)


def _moon(state: GameState, moon: object | None) -> mc.Moon | None:
    if moon is None:
        return None
    m = state.t.moon_total * (2 if moon.kind == "sun" else 1)  # type: ignore[attr-defined]
    return mc.Moon(shooter=moon.seat, kind=moon.kind, scoring=moon.scoring, total=m)  # type: ignore[attr-defined]


def hand_results(state: GameState) -> tuple[mc.HandResult, ...]:
    return tuple(
        mc.HandResult(hand_number=k + 1, points=tuple(points), totals=tuple(totals), moon=_moon(state, moon))
        for k, (points, totals, moon) in enumerate(state.history)
    )


def game_context(svc: Services, game: Game, seats: list[Seat], state: GameState, seat: int) -> mc.GameContext:
    """What ``seat`` may see of ``state``, for a mail (never another seat's hidden cards)."""
    rows = sorted(seats, key=lambda s: s.seat)
    n = state.players
    phase = {PASS: "pass", PLAY: "play", MOON: "moon", OVER: "over"}.get(state.phase, "play")
    trick = tuple(mc.Play(s, c) for s, c in state.trick_cards())
    last = None
    if state.last_trick is not None:
        leader, cards, winner, points = state.last_trick
        last = mc.FinishedTrick(
            number=state.tricks_played,
            plays=tuple(mc.Play((leader + k) % n, state_card) for k, state_card in enumerate(_names(cards))),
            winner=winner,
            points=points,
        )
    own_pass = state.passes[seat]
    rules = state.rules
    to_act = set(state.seats_to_act())
    since = [r.waiting_since for r in rows if r.seat in to_act and r.waiting_since is not None]
    return mc.GameContext(
        game_id=game.id,
        title=game.title,
        seat=seat,
        names=seat_names(rows),
        hand_number=state.hand_no,
        pass_direction=state.pass_direction,  # type: ignore[arg-type]
        phase=phase,  # type: ignore[arg-type]
        hand=state.hand(seat),
        totals=tuple(state.totals),
        hand_points=tuple(state.points),
        reply_address=reply_address(svc, game, rows[seat]),
        game_url=game_url(svc, game, seat),
        pass_count=rules.pass_count,
        trick=trick,
        trick_number=state.tricks_played + 1,
        last_trick=last,
        to_move=state.to_move if state.phase == PLAY else None,
        waiting_for=tuple(state.seats_to_act()),
        legal=state.legal_cards() if state.phase == PLAY and state.to_move == seat else (),
        hearts_broken=state.hearts_broken,
        passed=() if own_pass is None else _names(own_pass),
        received=_mask_names(state.received[seat]) if state.phase != PASS else (),
        history=hand_results(state),
        target=None if rules.end_after_hands else rules.target,
        end_after_hands=rules.end_after_hands,
        preset=rules.preset,
        deadline=rows[seat].deadline_at if seat in to_act else None,
        waiting_since=min(since) if since else None,
    )


def _names(indices: tuple[int, ...]) -> tuple[str, ...]:
    from pbem.engine.cards import CARD_NAMES

    return tuple(CARD_NAMES[i] for i in indices)


def _mask_names(mask: int) -> tuple[str, ...]:
    from pbem.engine.cards import cards_of

    return cards_of(mask)


def error_replies_today(session: Session, address: str, now: datetime) -> int:
    return session.scalar(
        select(func.count()).select_from(OutboundMessage).where(
            OutboundMessage.recipient == address,
            OutboundMessage.kind.in_(ERROR_KINDS),
            OutboundMessage.created_at >= now - timedelta(days=1),
        )
    ) or 0


def queue_mail(session: Session, svc: Services, ctx: mc.MailContext, *, player: Player | None,
               game: Game | None, now: datetime, inbound_id: int | None = None,
               thread: str | None = None, reply_to: str | None = None) -> OutboundMessage | None:
    """Render ``ctx`` and write its outbox row; error mails beyond the daily cap are dropped (None).
    ``reply_to`` overrides the context's reply address (e.g. an invitation's, for a question about it)."""
    address = ctx.recipient.address
    if ctx.kind in ERROR_KINDS and error_replies_today(session, address, now) >= svc.settings.error_replies_per_day:
        return None
    composed = svc.composer.compose(
        ctx.kind,
        ctx,
        thread=thread if thread is not None else (game.thread_id if game is not None else None),
        date=now,
        reply_to=reply_to,
    )
    row = OutboundMessage(
        game_id=game.id if game is not None else None,
        player_id=player.id if player is not None else None,
        recipient=address,
        kind=ctx.kind,
        message_id=composed.message_id,
        raw=composed.raw,
        inbound_id=inbound_id,
        created_at=now,
        next_attempt_at=now,
    )
    session.add(row)
    return row
