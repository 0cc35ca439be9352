"""Creating, starting and leaving games.

A game is created with its rules and its seats (people by address, or bots). ``start_game`` deals
the first hand (from an explicit deck when one is given, else from the seed or system randomness),
lets the bots and the automation move, and mails every person their first decision, which also says
that the game has started (one decision, one mail); a person with nothing to decide yet gets a
``game_started`` mail instead.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbem.db.models import Game, GameStatus, OutboundMessage, Player, Seat, SeatStatus
from pbem.engine import CALL, Deal, GameState, Rules
from pbem.mail import context as mc

from .app import Services
from .deadlines import update_waiting
from .mailing import bot_name, game_context, queue_mail, recipient_for, seat_name
from .gamestore import current_state
from .notify import has_person, notify_turn
from .turns import (
    AUTOMATIC_MOVES_PER_STEP,
    AUTOMATIC_STEP_CPU_SECONDS,
    STAND_IN_VACATION,
    Turn,
    apply_move,
    begin_turn,
    end_turn,
    next_deck,
    run_automation,
)


@dataclass(frozen=True)
class SeatSpec:
    """Who sits in a seat: a person (address, optional name) or a bot (its name)."""

    address: str | None = None
    name: str | None = None
    bot: str | None = None


def get_or_create_player(session: Session, address: str, name: str | None = None,
                         now: datetime | None = None, *, language: str | None = None) -> Player:
    """The player of ``address``; a new one speaks ``language`` (the server's default language)
    until they choose another (``language pt``)."""
    address = address.strip().lower()
    player = session.scalars(select(Player).where(Player.address == address)).one_or_none()
    if player is None:
        player = Player(address=address, display_name=name or "")
        if now is not None:
            player.created_at = now
        if language:
            player.language = language
        session.add(player)
        session.flush()
    elif name and not player.display_name:
        player.display_name = name
    return player


def create_game(session: Session, svc: Services, *, rules: Rules, seats: Sequence[SeatSpec],
                creator: Player | None = None, seed: str | None = None, title: str = "",
                joined: bool = True) -> Game:
    """A new game with its seats. People are ``joined`` (the command line) or ``invited`` (by mail)."""
    if len(seats) != rules.players:
        raise ValueError(f"{rules.players} seats needed, {len(seats)} given")
    now = svc.clock.now()
    game = Game(rules=rules.to_dict(), status=GameStatus.INVITING, creator_id=creator.id if creator else None,
                snapshot=GameState.new(rules).to_dict(), next_seq=1, seed=seed, title=title,
                created_at=now, updated_at=now)
    session.add(game)
    session.flush()
    game.thread_id = f"<hearts-{game.id}.{secrets.token_hex(6)}@{svc.settings.mail_domain}>"
    for number, spec in enumerate(seats):
        if spec.bot:
            row = Seat(game_id=game.id, seat=number, bot=spec.bot, status=SeatStatus.BOT)
        else:
            if not spec.address:
                raise ValueError(f"seat {number}: an address or a bot is needed")
            player = get_or_create_player(session, spec.address, spec.name, now,
                                          language=svc.settings.default_language)
            row = Seat(game_id=game.id, seat=number, player_id=player.id, player=player,
                       status=SeatStatus.JOINED if joined else SeatStatus.INVITED)
        session.add(row)
    session.flush()
    session.refresh(game)
    return game


def start_game(session: Session, svc: Services, game: Game, *, first_deck: Sequence[str] | None = None,
               inbound_id: int | None = None,
               answering: tuple[int, tuple[str, ...] | None] | None = None) -> list[OutboundMessage]:
    """Deal the first hand and tell everyone; the game becomes active.  ``answering``: (player id,
    thread) when the game starts on that player's request, whose mails then thread with it."""
    now = svc.clock.now()
    state = GameState.new(Rules.from_dict(game.rules))
    game.status = GameStatus.ACTIVE
    turn = begin_turn(game, list(game.seats), state, now, inbound_id)
    for seat_row in turn.seats:  # joined while on vacation, as in the player's other games (README, "Time")
        player = seat_row.player
        if (game.absence_policy == "bot" and player is not None and player.vacation_until is not None
                and player.vacation_until > now):
            seat_row.stand_in = STAND_IN_VACATION  # the vacation's end gives the seat back (absence)
    if state.phase == CALL:
        # dealer_calls_pass (RULES.md §6.3): the first dealer calls before the deal (a computer at once,
        # a person by mail); the deal follows the call, from ``first_deck`` when the call is made now.
        turn.first_deck = tuple(first_deck) if first_deck is not None else None
    else:
        apply_move(session, turn, Deal(tuple(first_deck) if first_deck is not None else next_deck(game, state, svc.rng)))
    turn.started = True  # each person's first decision mail says the game has begun (notify.with_game_started)
    if answering is not None and answering[1]:
        turn.answering[answering[0]] = answering[1]
    return settle(session, svc, turn)


def settle(session: Session, svc: Services, turn: Turn,
           before_news: Callable[[Turn], list[OutboundMessage]] | None = None, *,
           moves: int = AUTOMATIC_MOVES_PER_STEP, cpu_seconds: float = AUTOMATIC_STEP_CPU_SECONDS
           ) -> list[OutboundMessage]:
    """Let the automation move (at most a step: ``moves``, ``cpu_seconds``), save the game and write
    the mails of the turn. ``before_news`` writes mails that must come first but show the table as
    the automation left it."""
    automate(session, svc, turn, moves=moves, cpu_seconds=cpu_seconds)
    end_turn(turn)
    update_waiting(turn)  # deadlines of the seats now asked to decide (README, "Time")
    rows = before_news(turn) if before_news is not None else []
    rows += notify_turn(session, svc, turn)
    # No flush here: the turn's rows are written with the rest of the transaction, in one
    # statement on PostgreSQL (pbem.db.writes), and a mail's id when it is first read.
    return rows


def automate(session: Session, svc: Services, turn: Turn, *, moves: int = AUTOMATIC_MOVES_PER_STEP,
             cpu_seconds: float = AUTOMATIC_STEP_CPU_SECONDS) -> bool:
    """The turn's automatic moves (``turns.run_automation``, with each person's choice of having a
    single legal card played for them); whether they stopped at the bound of a step."""
    autoplay = {s.seat: s.player.effective_prefs().get("autoplay_single", True)
                for s in turn.seats if s.player is not None}
    return run_automation(session, turn, rng=svc.rng, stand_in_bot=svc.settings.stand_in_bot,
                          autoplay_single=autoplay, moves=moves, cpu_seconds=cpu_seconds)


def resign(session: Session, svc: Services, game: Game, seat: Seat, *, inbound_id: int | None = None,
           state: GameState | None = None) -> list[OutboundMessage]:
    """The player leaves; a computer player takes the seat so the others can finish the game."""
    now = svc.clock.now()
    state = state or current_state(game)
    player = seat.player
    seat.bot = seat.bot or svc.settings.stand_in_bot
    seat.status = SeatStatus.BOT
    notice = mc.SeatReplaced(seat=seat.seat, old_name=seat_name(seat), new_name=bot_name(seat), game_id=game.id)
    rows = []
    if player is not None:  # the player who left: thanked, without the table (no longer theirs)
        row = queue_mail(session, svc, mc.MailContext(recipient=recipient_for(player, svc), detail=notice),
                         player=player, game=game, now=now, inbound_id=inbound_id)
        rows += [row] if row is not None else []
    for other in game.seats:
        if other.seat != seat.seat and has_person(other):
            ctx = mc.MailContext(recipient=recipient_for(other.player, svc), detail=notice,
                                 game=game_context(svc, game, list(game.seats), state, other.seat))
            row = queue_mail(session, svc, ctx, player=other.player, game=game, now=now, inbound_id=inbound_id)
            rows += [row] if row is not None else []
    turn = begin_turn(game, list(game.seats), state, now, inbound_id)
    return rows + settle(session, svc, turn)
