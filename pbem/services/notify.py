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
     (``every_card``, ``turn_and_trick``) when a trick was completed and no hand summary already
     told it; or ``pass_done`` (the same two levels) to a player who passed while others have not;
     ``charge_done`` likewise to a player who charged (Turbo Hearts, RULES.md §6.4); or
     ``charges_revealed`` (the same two levels) when every seat has decided its charges and no
     other mail of the turn shows them.

One decision, one mail (README, "Playing by mail"): ``your_turn`` is the only mail that asks for a
decision (and carries ``X-Hearts-Decision``/``X-Hearts-Legal``); in the turn that starts a game it
also says the game began (``with_game_started``), so there is no separate mail for that.  What a
player has not yet been shown is kept on the seat (``seats.played_for``) until a mail shows it:
cards played for them (by hand, and told only in the same hand: a finished hand's end is its
summary's) and the exchange of the passes (told in their first mail about the table after it).
A turn or trick mail shows every trick of the hand completed in the turn, and a turn mail each
trick holding a card played for the player.

One mail per seat and turn keeps the heavy case (every card) at one mail per player per move.
News mails (``trick_done``, ``card_played``, ``hand_summary``, ``pass_done``) carry
``List-Unsubscribe``; the last mail a seat gets in a turn carries the table talk it has not seen yet.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from pbem.db.models import Game, Notify, OutboundMessage, Seat, SeatStatus
from pbem.engine import (
    CALL,
    CHARGE,
    DISCARD,
    MOON,
    OVER,
    PASS,
    PLAY,
    CardPlayed,
    CardsCharged,
    CardsPassed,
    ChargesRevealed,
    GameOver,
    GameState,
    HandDealt,
    HandScored,
    PassesExchanged,
    TrickCancelled,
    TrickWon,
    card_points,
    trick_winner,
)
from pbem.engine.cards import CARD_NAMES
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
    ten_of_clubs_factor,
    unsubscribe_url,
)
from .playahead import ahead_view
from .summaries import game_summary, hands_taken
from .talk import take_unseen, take_unseen_for
from .turns import Turn, hand_tricks, is_computer

#: The levels, from the most mail to the least.
LEVELS: tuple[str, ...] = ("every_card", "turn_and_trick", "digest", "turn_only")
DEFAULT_LEVEL = Notify.TURN_AND_TRICK.value
#: What the one-click unsubscribe switches to: the mails a seat cannot play without.
MINIMUM_LEVEL = "turn_only"
#: Mails that only tell news (a player can do without them): they carry List-Unsubscribe.
NEWS_KINDS = frozenset({"trick_done", "card_played", "hand_summary", "pass_done", "charge_done", "charges_revealed"})


def has_person(seat: Seat) -> bool:
    return seat.player is not None and seat.status == SeatStatus.JOINED


def decision_kind(phase: str) -> str:
    return {CALL: "call", PASS: "pass", CHARGE: "charge", PLAY: "play", DISCARD: "discard", MOON: "moon"}[phase]


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
    tricks = [e for e in turn.events if isinstance(e, (TrickWon, TrickCancelled))]  # RULES.md §6.6: a cancelled one too
    plays = [e for e in turn.events if isinstance(e, CardPlayed)]
    this_hand = current_hand_events(turn.events)
    hand_tricks_now = tuple(finished_trick(e, state.players, state) for e in this_hand
                            if isinstance(e, (TrickWon, TrickCancelled)))
    exchanged = any(isinstance(e, PassesExchanged) for e in this_hand)
    passed = {e.seat for e in this_hand if isinstance(e, CardsPassed)}
    charged = {e.seat for e in this_hand if isinstance(e, CardsCharged)}
    revealed = any(isinstance(e, ChargesRevealed) for e in this_hand)
    rows: list[OutboundMessage] = []
    outgoing: list[tuple[Seat, list[Any]]] = []
    scored_tricks = hands_tricks(turn.events, state.players)
    taken = hands_taken(turn.before, turn.events, turn.kitties) if scored else {}
    results = hand_results(state)
    played_out = bool(turn.played_out)  # the last hand scored in this turn was finished for the players
    summary = None
    logged: list[mc.FinishedTrick] | None = None  # this hand's tricks from the move log, read once if needed
    if over is not None:
        summary = game_summary(session, svc, turn.game, state, over)
    for seat_row in turn.seats:
        if not has_person(seat_row):
            continue
        seat = seat_row.seat
        remember_played_for(seat_row, turn.autoplayed.get(seat, ()), turn.played_ahead.get(seat, ()))
        if exchanged:
            remember_exchange(seat_row, state.hand_no)
        level = notify_level(seat_row)
        details: list[Any] = []
        if level in ("every_card", "turn_and_trick"):
            details += [mc.HandSummary(results[event.hand_no - 1], tricks=scored_tricks.get(event.hand_no, ()),
                                       played_out=played_out and event is scored[-1],
                                       taken=taken.get(event.hand_no, ()), lowest_wins=state.rules.lowest_wins,
                                       moon_by_deadline=event.moon is not None and "moon" in turn.defaulted.values(),
                                       charges=tuple(tuple(c) for c in event.charged),
                                       multiplier=tuple(event.multiplier), **hand_kitty(turn, event.hand_no))
                        for event in scored]
        if summary is not None:
            details.append(summary.for_seat(svc, turn.game, seat))
        if state.phase != OVER:
            if seat in after and (seat not in before or seat in turn.movers or turn.dealt or turn.started):
                moon_total = state.moon_total * (2 if state.shooter and state.shooter[1] == "sun" else 1)
                forced, ahead = take_played_for(seat_row, state.hand_no)
                shown: tuple[mc.FinishedTrick, ...] = ()
                if state.phase == PLAY:
                    mine = forced + ahead
                    seen = {p.card for t in holding(hand_tricks_now, mine, seat) for p in t.plays}
                    if logged is None and any(card not in seen for card in mine):
                        logged = logged_tricks(session, turn)  # a card played for them in an earlier move
                    shown = tricks_to_show(hand_tricks_now, logged or [], mine, seat)
                details.append(mc.YourTurn(decision=decision_kind(state.phase), moon_total=moon_total,
                                           autoplayed=forced, played_ahead=ahead, tricks=shown,
                                           exchange=state.phase in (PLAY, CHARGE)
                                           and take_exchange(seat_row, state.hand_no)))
            elif tricks and not scored and level in ("every_card", "turn_and_trick"):
                # The finished trick(s), who took them, and what follows.
                details.append(mc.TrickDone(tricks=hand_tricks_now, exchange=take_exchange(seat_row, state.hand_no)))
            elif plays and level == "every_card" and not scored:
                details.append(mc.CardPlayed(seat=plays[-1].seat, card=plays[-1].card,
                                             exchange=take_exchange(seat_row, state.hand_no)))
            elif (seat in passed and seat in turn.movers and seat not in after and state.phase == PASS
                  and level in ("every_card", "turn_and_trick") and not is_computer(seat_row)):
                details.append(mc.PassDone())  # the pass is noted; the others have not all passed
            elif ((seat in charged or (exchanged and seat in passed)) and seat in turn.movers and seat not in after
                  and state.phase == CHARGE and level in ("every_card", "turn_and_trick") and not is_computer(seat_row)):
                # RULES.md §6.4: the charge noted (nobody else learns it yet), or the last pass made
                # and, holding nothing chargeable, nothing to decide while the others charge.
                details.append(mc.ChargeDone(exchange=take_exchange(seat_row, state.hand_no)))
            elif revealed and level in ("every_card", "turn_and_trick") and not scored:
                # Every seat has decided: the table learns the charges (RULES.md §6.4).
                details.append(mc.ChargesRevealed(exchange=take_exchange(seat_row, state.hand_no)))
        if turn.started:
            details = with_game_started(details, turn.game)
        if details:
            outgoing.append((seat_row, details))
    talk = take_unseen_for(session, turn.game.id, [seat_row for seat_row, _ in outgoing])
    table = table_view(turn.game, turn.seats, state) if outgoing else None  # the same for every seat
    for seat_row, details in outgoing:
        rows += send_to_seat(session, svc, turn.game, turn.seats, state, seat_row, details,
                             inbound_id=turn.inbound_id, now=turn.now, talk=talk[seat_row.seat], table=table,
                             thread=turn.answering.get(seat_row.player_id or -1))
    return rows


def hand_kitty(turn: Turn, hand_no: int) -> dict[str, Any]:
    """The kitty of a hand scored in ``turn``, for its summary (RULES.md §6.2: once the hand is over
    every card of it has been played face up but these, so the table may see them now)."""
    kitty = turn.kitties.get(hand_no)
    if kitty is None or kitty.taker is None:
        return {}
    return {"kitty": kitty.cards, "kitty_taker": kitty.taker, "kitty_trick": kitty.trick,
            "discarded": kitty.discarded}


def with_game_started(details: list[Any], game: Game) -> list[Any]:
    """The mails of the turn that starts ``game``, for one person: their first decision mail says
    that the game has begun (one decision, one mail); with nothing to decide yet, a
    ``game_started`` mail comes first."""
    for k, detail in enumerate(details):
        if isinstance(detail, mc.YourTurn):
            return [*details[:k], dataclasses.replace(detail, started=True, rules=game.rules), *details[k + 1:]]
    return [mc.GameStarted(rules=game.rules), *details]


def current_hand_events(events: list[Any]) -> list[Any]:
    """The events of the hand being played now: those after the last hand dealt or scored."""
    last = max((k for k, e in enumerate(events) if isinstance(e, (HandDealt, HandScored))), default=-1)
    return events[last + 1:]


def finished_trick(event: TrickWon | TrickCancelled, players: int, state: GameState | None = None
                   ) -> mc.FinishedTrick:
    """A trick as the mails show it: a boosted one's two rounds (RULES.md §6.5); with two decks
    (§6.6) a cancelled one left on the table (winner -1), the carried cards taken with a trick, a
    last trick with no winner given to the winner of the trick before it; with ``state`` (the hand
    it was played in), what its 10♣ does to its taker's score in Turbo (§6.4)."""
    plays = tuple(mc.Play((event.leader + k) % players, card) for k, card in enumerate(event.cards))
    if isinstance(event, TrickCancelled):
        return mc.FinishedTrick(number=event.trick_no, plays=plays, winner=-1, points=event.points, cancelled=True)
    return mc.FinishedTrick(number=event.trick_no, plays=plays, winner=event.winner, points=event.points,
                            boosted=len(event.cards) > players,  # RULES.md §6.5: two rounds
                            cancelled=event.cancelled, carried=tuple(event.carried),
                            ten_of_clubs=ten_of_clubs_factor(state, event.cards) if state is not None else 0)


def hands_tricks(events: list[Any], players: int) -> dict[int, tuple[mc.FinishedTrick, ...]]:
    """The tricks of each hand scored among ``events`` that were completed in them, in order, by
    hand number: what a hand summary shows (README, "Playing by mail"), so that the tricks
    played out for the players at the end of a hand are seen, not only its last trick."""
    out: dict[int, tuple[mc.FinishedTrick, ...]] = {}
    hand: list[mc.FinishedTrick] = []
    for event in events:
        if isinstance(event, (TrickWon, TrickCancelled)):
            hand.append(finished_trick(event, players))
        elif isinstance(event, HandDealt):
            hand = []
        elif isinstance(event, HandScored):
            if hand:
                out[event.hand_no] = tuple(hand)
            hand = []
    return out


def holding(tricks: tuple[mc.FinishedTrick, ...] | list[mc.FinishedTrick], cards: tuple[str, ...],
            seat: int) -> list[mc.FinishedTrick]:
    """The tricks among ``tricks`` where ``seat`` played one of ``cards``."""
    return [t for t in tricks if any(p.seat == seat and p.card in cards for p in t.plays)]


def tricks_to_show(now: tuple[mc.FinishedTrick, ...], logged: list[mc.FinishedTrick], cards: tuple[str, ...],
                   seat: int) -> tuple[mc.FinishedTrick, ...]:
    """What a turn mail shows of this hand's finished tricks (README, "Playing by mail"): every
    trick completed since the last move, and each trick holding a card played for the seat (a
    single legal card, a queued card), so that none of them goes unseen (the templates add
    ``game.last_trick`` when it is not among them)."""
    chosen = {t.number: t for t in now}
    for trick in holding(logged, cards, seat):
        chosen.setdefault(trick.number, trick)
    return tuple(chosen[n] for n in sorted(chosen))


def logged_tricks(session: Session, turn: Turn) -> list[mc.FinishedTrick]:
    """The finished tricks of the hand being played, from the move log."""
    state = turn.state
    n = state.players
    out = []
    pile: list[str] = []  # RULES.md §6.6: the cancelled tricks' cards, for the next trick's winner
    pile_points = 0
    last_winner = -1
    tricks = hand_tricks(session, turn.game, state)
    for number, (leader, indices) in enumerate(tricks, start=1):
        cards = [CARD_NAMES[i] for i in indices]
        plays = tuple(mc.Play((leader + k) % n, c) for k, c in enumerate(cards))
        # The hand's charged values (RULES.md §6.4; the charges are known before its first lead).
        points = sum(state.card_value(c) for c in cards) if state.rules.turbo else card_points(state.rules, cards)
        winner = trick_winner(cards, leader, n)
        if winner is None and number < state.rules.table.hand_size:
            # Every led-suit card cancelled (two decks): the trick stays on the table.
            out.append(mc.FinishedTrick(number=number, plays=plays, winner=-1, points=points, cancelled=True))
            pile += cards
            pile_points += points
            continue
        cancelled = winner is None  # the hand's last trick: to the previous trick's winner, or its leader
        if winner is None:
            winner = last_winner if last_winner >= 0 else leader
        out.append(mc.FinishedTrick(number=number, plays=plays, winner=winner, points=points + pile_points,
                                    boosted=len(cards) > n, cancelled=cancelled, carried=tuple(pile),
                                    ten_of_clubs=ten_of_clubs_factor(state, cards)))
        pile, pile_points, last_winner = [], 0, winner
    return out


def remember_played_for(seat: Seat, forced: Any, ahead: Any) -> None:
    """Keep the cards just played for the seat's player (a single legal card, a queued card, the
    autopilot), as (hand number, card), until their next "your turn" mail, which lists those of
    its own hand (the end of a finished hand is its hand summary's)."""
    if not forced and not ahead:
        return
    kept = dict(seat.played_for or {})
    kept["forced"] = list(kept.get("forced", [])) + [list(entry) for entry in forced]
    kept["ahead"] = list(kept.get("ahead", [])) + [list(entry) for entry in ahead]
    seat.played_for = kept


def take_played_for(seat: Seat, hand_no: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The cards of hand ``hand_no`` played for the player since they were last asked, now told;
    everything played for them is forgotten (the exchange still to show is kept)."""
    kept = seat.played_for or {}

    def of_hand(entries: Any) -> tuple[str, ...]:  # (hand, card) pairs; a bare card is of this hand
        return tuple(e if isinstance(e, str) else e[1] for e in entries
                     if isinstance(e, str) or int(e[0]) == hand_no)

    forced, ahead = of_hand(kept.get("forced", ())), of_hand(kept.get("ahead", ()))
    exchange = kept.get("exchange")
    seat.played_for = {"exchange": exchange} if exchange is not None else None
    return forced, ahead


def remember_exchange(seat: Seat, hand_no: int) -> None:
    """Every seat has passed in hand ``hand_no``: the player's next mail about the table shows
    what they passed and received, whenever that mail comes (a card played for them on the
    first trick, or a digest level, may put it off)."""
    seat.played_for = {**(seat.played_for or {}), "exchange": hand_no}


def take_exchange(seat: Seat, hand_no: int) -> bool:
    """Whether this mail shows the exchange of hand ``hand_no`` (the player has not seen it): then
    it is forgotten."""
    kept = seat.played_for or {}
    if "exchange" not in kept:
        return False
    shown = kept["exchange"] == hand_no
    rest = {k: v for k, v in kept.items() if k != "exchange"}
    seat.played_for = rest or None
    return shown


def send_to_seat(session: Session, svc: Services, game: Game, seats: list[Seat], state: GameState, seat: Seat,
                 details: list[Any], *, inbound_id: int | None, now: datetime,
                 talk: tuple[mc.TalkLine, ...] | None = None, table: TableView | None = None,
                 thread: tuple[str, ...] | None = None) -> list[OutboundMessage]:
    """Queue ``details`` (in order) to the seat's player; the last mail carries the unseen talk
    (``talk`` when the caller took it already, for several seats at once; ``table``: the
    ``table_view`` of ``state``, likewise; ``thread``: the request they answer, if any)."""
    plain = seat_context(svc, game, seats, state, seat, table=table)
    if talk is None:
        talk = take_unseen(session, game.id, seat)
    talking = dataclasses.replace(plain, table_talk=talk) if talk else plain
    recipient = recipient_for(seat.player, svc)
    rows = []
    for k, detail in enumerate(details):
        ctx = mc.MailContext(recipient=recipient, detail=detail, game=talking if k == len(details) - 1 else plain,
                             unsubscribe=unsubscribe_for(svc, game, seat) if detail.KIND in NEWS_KINDS else None)
        row = queue_mail(session, svc, ctx, player=seat.player, game=game, now=now, inbound_id=inbound_id,
                         thread=thread)
        if row is not None:
            rows.append(row)
    return rows
