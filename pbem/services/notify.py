"""Who is told what after a turn.

For each seat with a person in it, in this order:

1. ``hand_summary`` for every hand scored in the turn, and ``game_summary`` when the game ended;
2. then at most one more mail about the table:
   - ``your_turn`` when the seat must decide something new: it was not waiting for that seat before
     the turn, or the seat decided in the turn (a new decision follows), or a new hand was dealt;
   - otherwise ``card_played`` (players who chose "every card") when a card was played, or
     ``trick_done`` (the default) when a trick was completed and no hand summary already told it.

A seat that is only waiting gets no mail for a card played by someone else unless it asked for every
card. One mail per seat and turn keeps the heavy case (every card) at one mail per player per move.
"""

from __future__ import annotations

from pbem.db.models import Notify, OutboundMessage, Seat, SeatStatus
from pbem.engine import MOON, OVER, PASS, PLAY, CardPlayed, GameOver, HandScored, TrickWon
from pbem.mail import context as mc

from .app import Services
from .mailing import game_context, hand_results, queue_mail, recipient_for
from .turns import Turn


def has_person(seat: Seat) -> bool:
    return seat.player is not None and seat.status == SeatStatus.JOINED


def decision_kind(phase: str) -> str:
    return {PASS: "pass", PLAY: "play", MOON: "moon"}[phase]


def notify_turn(session, svc: Services, turn: Turn) -> list[OutboundMessage]:
    """Write the outbox rows that tell every person at the table what this turn did."""
    state = turn.state
    before = set(turn.before.seats_to_act())
    after = set(state.seats_to_act())
    scored = [e for e in turn.events if isinstance(e, HandScored)]
    over = next((e for e in turn.events if isinstance(e, GameOver)), None)
    tricks = [e for e in turn.events if isinstance(e, TrickWon)]
    plays = [e for e in turn.events if isinstance(e, CardPlayed)]
    rows: list[OutboundMessage] = []
    results = hand_results(state)
    for seat_row in turn.seats:
        if not has_person(seat_row):
            continue
        seat = seat_row.seat
        player = seat_row.player
        recipient = recipient_for(player, svc)
        game_ctx = game_context(svc, turn.game, turn.seats, state, seat)

        def send(detail: object) -> None:
            row = queue_mail(session, svc, mc.MailContext(recipient=recipient, detail=detail, game=game_ctx),
                             player=player, game=turn.game, now=turn.now, inbound_id=turn.inbound_id)
            if row is not None:
                rows.append(row)

        for event in scored:
            send(mc.HandSummary(results[event.hand_no - 1]))
        if over is not None:
            send(mc.GameSummary(winners=tuple(over.winners), totals=tuple(over.totals)))
        if state.phase == OVER:
            continue
        prefs = player.effective_prefs()
        if seat in after and (seat not in before or seat in turn.movers or turn.dealt):
            moon_total = state.t.moon_total * (2 if state.shooter and state.shooter[1] == "sun" else 1)
            send(mc.YourTurn(decision=decision_kind(state.phase), moon_total=moon_total,
                             autoplayed=tuple(turn.autoplayed.get(seat, ()))))
        elif plays and prefs.get("notify") == Notify.EVERY_CARD and not scored:
            send(mc.CardPlayed(seat=plays[-1].seat, card=plays[-1].card))
        elif tricks and not scored and prefs.get("notify") in (Notify.TURN_AND_TRICK, Notify.EVERY_CARD):
            send(mc.TrickDone())
    return rows
