"""What a mail command is given and gives back, and the registry that finds it.

A verified mail from a seat's own player becomes a :class:`SeatRequest`; the handler registered
for its command (:func:`seat_command`) carries it out and returns an :class:`Outcome`.  The
dispatcher (``inbound._seat_mail``) knows only :func:`carry_out`; the handlers live in
:mod:`pbem.services.commands`, one module per family, each registering its own.  The helpers they
share with the dispatcher (answering a player, the reader's details) are here too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbem.db.models import Game, GameStatus, InboundStatus, Player, Seat, SeatStatus, TableTalk
from pbem.engine import CHARGE
from pbem.mail import context as mc
from pbem.mail.reading.message import IncomingMail

from .app import Services
from .gamestore import current_state
from .mailing import QueuedMail, game_context, game_url, queue_mail, recipient_for, seat_name
from .talk import withdraw_talk


class ReceivedRow(Protocol):
    """What the handlers read of a received mail's row (the Core row ``apply_inbound`` locked)."""

    id: int
    recipient: str
    mail_from: str


@dataclass
class Outcome:
    status: InboundStatus
    code: str
    details: dict[str, Any] = field(default_factory=dict)
    mails: list[QueuedMail] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, **self.details}


def reply(session: Session, svc: Services, player: Player, detail: Any, now: datetime, inbound_id: int,
          game: Game | None = None, game_ctx: mc.GameContext | None = None,
          reply_to: str | None = None, thread: Sequence[str] | None = None) -> list[QueuedMail]:
    """A mail to ``player`` answering the received mail ``inbound_id`` (``thread``: see
    ``mailing.answer_thread``)."""
    ctx = mc.MailContext(recipient=recipient_for(player, svc), detail=detail, game=game_ctx)
    row = queue_mail(session, svc, ctx, player=player, game=game, now=now, inbound_id=inbound_id, reply_to=reply_to,
                     thread=thread)
    return [row] if row is not None else []


def reader_details(details: Any) -> dict[str, Any]:
    """The mail reader's details (all strings) in the shapes the templates take: card lists, counts."""
    out: dict[str, Any] = {}
    for key, value in dict(details).items():
        if key in ("cards", "legal", "held", "commands") and isinstance(value, str):
            out[key] = value.split()
        elif key in ("expected", "found", "given") and isinstance(value, str) and value.isdigit():
            out["given" if key == "found" else key] = int(value)
        else:
            out[key] = value
    return out


def games_list(session: Session, svc: Services, player: Player, now: datetime,
               inbound_id: int) -> list[QueuedMail]:
    """The ``games`` mail: every game of the player, newest first, with whose turn it is."""
    listings = []
    seats = session.scalars(select(Seat).where(Seat.player_id == player.id)).all()
    for seat in sorted(seats, key=lambda s: -s.game_id):
        game = seat.game
        state = current_state(game)
        # RULES.md §6.4: who is still to charge would tell who holds a chargeable card: not named.
        waiting = [] if state.phase == CHARGE else [seat_name(s) for s in game.seats if s.seat in state.seats_to_act()]
        listings.append(mc.GameListing(
            game_id=game.id, title=game.title or f"#{game.id}", status=str(game.status),  # type: ignore[arg-type]
            my_turn=seat.seat in state.seats_to_act(), hand_number=state.hand_no,
            my_total=state.totals[seat.seat], waiting_for=tuple(waiting), game_url=game_url(svc, game, seat.seat)))
    return reply(session, svc, player, mc.Games(tuple(listings)), now, inbound_id)


# -- a seat's mail --------------------------------------------------------------------------------


@dataclass
class SeatRequest:
    """A verified mail from a seat's own player: everything a command handler needs."""

    session: Session
    svc: Services
    row: ReceivedRow
    mail: IncomingMail
    now: datetime
    game: Game
    seats: list[Seat]
    seat: Seat
    owner: Player
    state: Any
    token: Any
    command: Any
    #: The table talk recorded from this mail (``talk.record_talk``), until a refusal takes it back.
    talk: TableTalk | None = None

    @property
    def base(self) -> dict[str, Any]:
        return {"game": self.game.id, "seat": self.seat.seat, "command": type(self.command).__name__}

    def reply(self, detail: Any, player: Player | None = None) -> list[QueuedMail]:
        """A mail about this game to this seat's player (or ``player``), with the seat's view."""
        who = player or self.owner
        seat = next((s.seat for s in self.seats if s.player_id == who.id), self.seat.seat)
        ctx = game_context(self.svc, self.game, self.seats, self.state, seat)
        return reply(self.session, self.svc, who, detail, self.now, self.row.id, self.game, ctx)

    def answer(self, detail: Any, code: str, status: InboundStatus = InboundStatus.DONE, **more: Any) -> Outcome:
        """Answer the mail with ``detail``. A refused mail changes nothing, its table talk included
        (README, "Table talk"): the talk is taken back and the refusal quotes it, to be sent again
        with the corrected reply, so that it reaches the table once."""
        if status == InboundStatus.REJECTED and self.talk is not None and hasattr(detail, "withheld_talk"):
            withheld = withdraw_talk(self.session, self.game, self.talk)
            self.talk = None
            if withheld:
                detail = dataclasses.replace(detail, withheld_talk=withheld)
                more["talk_withheld"] = True
        return Outcome(status, code, {**self.base, **more}, self.reply(detail))

    def reject(self, code: str, **details: Any) -> Outcome:
        return self.answer(mc.RequestRejected(code, details), code, InboundStatus.REJECTED)


SeatHandler = Callable[[SeatRequest], Outcome]
#: Command class -> (handler, whether it needs a running game and a seated player).
SEAT_COMMANDS: dict[type, tuple[SeatHandler, bool]] = {}
#: Handlers that see a seat's mail before its command is looked up; the first that returns an
#: outcome has taken the mail (a player writing to a seat held for them takes it back).
BEFORE_COMMANDS: list[Callable[[SeatRequest], Outcome | None]] = []


def seat_command(*kinds: type, needs_active: bool = False) -> Callable[[SeatHandler], SeatHandler]:
    """Register the handler of some commands sent to a seat's address (the modules of
    :mod:`pbem.services.commands` register theirs when they are imported)."""

    def register(handler: SeatHandler) -> SeatHandler:
        for kind in kinds:
            SEAT_COMMANDS[kind] = (handler, needs_active)
        return handler

    return register


def before_commands(handler: Callable[[SeatRequest], Outcome | None]) -> Callable[[SeatRequest], Outcome | None]:
    """Register a handler of :data:`BEFORE_COMMANDS`."""
    BEFORE_COMMANDS.append(handler)
    return handler


def unknown_command(request: SeatRequest) -> Outcome:
    """The answer to a mail whose command no handler knows."""
    return request.reject("NO_COMMAND")


def dispatch(request: SeatRequest) -> Outcome:
    """Carry out the mail's command by its registered handler (``NO_COMMAND`` when none is)."""
    handler, needs_active = SEAT_COMMANDS.get(type(request.command), (unknown_command, True))
    if needs_active and (request.game.status != GameStatus.ACTIVE or request.seat.status != SeatStatus.JOINED):
        return request.reject("GAME_NOT_ACTIVE", status=str(request.game.status))
    return handler(request)


def carry_out(request: SeatRequest) -> Outcome:
    """What the dispatcher calls for a verified seat mail: the handlers of
    :data:`BEFORE_COMMANDS`, then :func:`dispatch`."""
    for before in BEFORE_COMMANDS:
        outcome = before(request)
        if outcome is not None:
            return outcome
    return dispatch(request)
