"""Who is told what after a turn, by each player's notification choice (README, "Notifications").

A seat's *level* is this game's choice (``seats.notify``), else the player's (``players.prefs
["notify"]``), else ``turn_and_trick``:

==================  =========================================================================
``every_card``      a mail for every card played (the last one of the turn), the hand summaries
``turn_and_trick``  (default) the turn mails, a mail per finished trick, the hand summaries
``digest``          the turn mails at once; everything else in one daily mail (``digest.py``)
``turn_only``       the turn mails only (what one-click unsubscribe switches to)
==================  =========================================================================

Whatever the level, a seat that must decide something new always gets its ``your_turn`` mail at
once (a digest must never leave a player unaware that they must act), and every seat gets the
``game_summary`` when the game ends. For each seat with a person in it, in this order:

1. ``hand_summary`` for every hand scored in the turn (``every_card``, ``turn_and_trick``), and
   ``game_summary`` when the game ended;
2. then at most one more mail about the table:
   - ``your_turn`` when the seat must decide something new: it was not waiting for that seat before
     the turn, or the seat decided in the turn (a new decision follows), or a new hand was dealt;
   - otherwise ``card_played`` (``every_card``) when a card was played, or ``trick_done``
     (``turn_and_trick``) when a trick was completed and no hand summary already told it.

One mail per seat and turn keeps the heavy case (every card) at one mail per player per move.
News mails (``trick_done``, ``card_played``, ``hand_summary``) carry ``List-Unsubscribe``; the
last mail a seat gets in a turn carries the table talk it has not seen yet.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from pbem.db.models import Game, Notify, OutboundMessage, Seat, SeatStatus
from pbem.engine import MOON, OVER, PASS, PLAY, CardPlayed, GameOver, GameState, HandScored, TrickWon
from pbem.mail import context as mc

from .app import Services
from .mailing import (
    TableView,
    game_context,
    hand_results,
    queue_mail,
    recipient_for,
    reply_address,
    table_view,
    unsubscribe_url,
)
from .playahead import ahead_view
from .summaries import game_summary, hands_taken
from .talk import take_unseen, take_unseen_for
from .turns import Turn

#: The levels, from the most mail to the least.
LEVELS: tuple[str, ...] = ("every_card", "turn_and_trick", "digest", "turn_only")
DEFAULT_LEVEL = Notify.TURN_AND_TRICK.value
#: What the one-click unsubscribe switches to: the mails a seat cannot play without.
MINIMUM_LEVEL = "turn_only"
#: Mails that only tell news (a player can do without them): they carry List-Unsubscribe.
NEWS_KINDS = frozenset({"trick_done", "card_played", "hand_summary"})


def has_person(seat: Seat) -> bool:
    return seat.player is not None and seat.status == SeatStatus.JOINED


def decision_kind(phase: str) -> str:
    return {PASS: "pass", PLAY: "play", MOON: "moon"}[phase]


def player_level(prefs: dict[str, Any]) -> str:
    level = prefs.get("notify")
    return level if level in LEVELS else DEFAULT_LEVEL


def notify_level(seat: Seat) -> str:
    """This game's choice for ``seat``, else its player's, else the default."""
    if seat.notify in LEVELS:
        return str(seat.notify)
    return player_level(seat.player.effective_prefs() if seat.player is not None else {})


def seat_context(svc: Services, game: Game, seats: list[Seat], state: GameState, seat: Seat, *,
                 table: TableView | None = None) -> mc.GameContext:
    """``game_context`` plus what playing ahead adds for this seat: its queue and its autopilot."""
    queued, autopilot = ahead_view(seat, state)
    ctx = game_context(svc, game, seats, state, seat.seat, table=table)
    if not queued and not autopilot:
        return ctx
    return dataclasses.replace(ctx, queued=queued, autopilot=autopilot)


def unsubscribe_for(svc: Services, game: Game, seat: Seat) -> mc.Unsubscribe | None:
    """The ``List-Unsubscribe`` targets of a news mail to ``seat``: the signed one-click link,
    and a mail to the seat's own reply address saying ``notify turn only``."""
    if seat.player is None:
        return None
    url = unsubscribe_url(svc.settings, seat.player.id, game.id, seat.seat)
    mailto = f"mailto:{reply_address(svc, game, seat)}?subject=unsubscribe&body=notify%20turn%20only"
    return mc.Unsubscribe(url=url, mailto=mailto)


def notify_turn(session: Session, svc: Services, turn: Turn) -> list[OutboundMessage]:
    """Write the outbox rows that tell every person at the table what this turn did."""
    state = turn.state
    before = set(turn.before.seats_to_act())
    after = set(state.seats_to_act())
    scored = [e for e in turn.events if isinstance(e, HandScored)]
    over = next((e for e in turn.events if isinstance(e, GameOver)), None)
    tricks = [e for e in turn.events if isinstance(e, TrickWon)]
    plays = [e for e in turn.events if isinstance(e, CardPlayed)]
    rows: list[OutboundMessage] = []
    outgoing: list[tuple[Seat, list[Any]]] = []
    last_tricks = hands_last_tricks(turn.events, state.players)
    taken = hands_taken(turn.before, turn.events) if scored else {}
    results = hand_results(state)
    played_out = bool(turn.played_out)  # the last hand scored in this turn was finished for the players
    summary = None
    if over is not None:
        summary = game_summary(session, svc, turn.game, state, over)
    for seat_row in turn.seats:
        if not has_person(seat_row):
            continue
        seat = seat_row.seat
        remember_played_for(seat_row, turn.autoplayed.get(seat, ()), turn.played_ahead.get(seat, ()))
        level = notify_level(seat_row)
        details: list[Any] = []
        if level in ("every_card", "turn_and_trick"):
            details += [mc.HandSummary(results[event.hand_no - 1], last_trick=last_tricks.get(event.hand_no),
                                       played_out=played_out and event is scored[-1],
                                       taken=taken.get(event.hand_no, ()), lowest_wins=state.rules.lowest_wins)
                        for event in scored]
        if summary is not None:
            details.append(summary.for_seat(svc, turn.game, seat))
        if state.phase != OVER:
            if seat in after and (seat not in before or seat in turn.movers or turn.dealt):
                moon_total = state.t.moon_total * (2 if state.shooter and state.shooter[1] == "sun" else 1)
                forced, ahead = take_played_for(seat_row)
                details.append(mc.YourTurn(decision=decision_kind(state.phase), moon_total=moon_total,
                                           autoplayed=forced, played_ahead=ahead))
            elif tricks and not scored and level == "every_card":
                details.append(mc.TrickDone())  # the finished trick, who took it, and what follows
            elif plays and level == "every_card" and not scored:
                details.append(mc.CardPlayed(seat=plays[-1].seat, card=plays[-1].card))
            elif tricks and not scored and level == "turn_and_trick":
                details.append(mc.TrickDone())
        if details:
            outgoing.append((seat_row, details))
    talk = take_unseen_for(session, turn.game.id, [seat_row for seat_row, _ in outgoing])
    table = table_view(turn.game, turn.seats, state) if outgoing else None  # the same for every seat
    for seat_row, details in outgoing:
        rows += send_to_seat(session, svc, turn.game, turn.seats, state, seat_row, details,
                             inbound_id=turn.inbound_id, now=turn.now, talk=talk[seat_row.seat], table=table)
    return rows


def hands_last_tricks(events: list[Any], players: int) -> dict[int, mc.FinishedTrick]:
    """The last trick of each hand scored among ``events``, by hand number."""
    out: dict[int, mc.FinishedTrick] = {}
    last = None
    for event in events:
        if isinstance(event, TrickWon):
            last = event
        elif isinstance(event, HandScored) and last is not None:
            plays = tuple(mc.Play((last.leader + k) % players, card) for k, card in enumerate(last.cards))
            out[event.hand_no] = mc.FinishedTrick(number=last.trick_no, plays=plays, winner=last.winner,
                                                  points=last.points)
    return out


def remember_played_for(seat: Seat, forced: Any, ahead: Any) -> None:
    """Keep the cards just played for the seat's player (a single legal card, a queued card, the
    autopilot) until their next "your turn" mail, which lists them."""
    if not forced and not ahead:
        return
    kept = dict(seat.played_for or {})
    kept["forced"] = list(kept.get("forced", [])) + list(forced)
    kept["ahead"] = list(kept.get("ahead", [])) + list(ahead)
    seat.played_for = kept


def take_played_for(seat: Seat) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The cards played for the player since they were last asked, now told (and forgotten)."""
    kept = seat.played_for or {}
    seat.played_for = None
    return tuple(kept.get("forced", ())), tuple(kept.get("ahead", ()))


def send_to_seat(session: Session, svc: Services, game: Game, seats: list[Seat], state: GameState, seat: Seat,
                 details: list[Any], *, inbound_id: int | None, now: datetime,
                 talk: tuple[mc.TalkLine, ...] | None = None, table: TableView | None = None) -> list[OutboundMessage]:
    """Queue ``details`` (in order) to the seat's player; the last mail carries the unseen talk
    (``talk`` when the caller took it already, for several seats at once; ``table``: the
    ``table_view`` of ``state``, likewise)."""
    plain = seat_context(svc, game, seats, state, seat, table=table)
    if talk is None:
        talk = take_unseen(session, game.id, seat)
    talking = dataclasses.replace(plain, table_talk=talk) if talk else plain
    recipient = recipient_for(seat.player, svc)
    rows = []
    for k, detail in enumerate(details):
        ctx = mc.MailContext(recipient=recipient, detail=detail, game=talking if k == len(details) - 1 else plain,
                             unsubscribe=unsubscribe_for(svc, game, seat) if detail.KIND in NEWS_KINDS else None)
        row = queue_mail(session, svc, ctx, player=seat.player, game=game, now=now, inbound_id=inbound_id)
        if row is not None:
            rows.append(row)
    return rows
