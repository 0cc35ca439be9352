"""Table talk (README, "Table talk"): a ``say …`` line in any reply is passed on to the other players.

Every verified mail from a seat's own player is read for ``say`` lines (whatever else it asks:
a card, a command, or nothing but talk) and each mail's talk is stored as one ``table_talk``
row. The lines are not mailed at once: they ride along in each other player's *next* mail about
the game, whatever it is (a turn mail, a trick, a summary, a reminder, a stand-in notice, a
status, a refusal, the game paused, resumed or aborted…, or the daily digest), and
``seats.talk_seen`` remembers the last row passed on to that seat, so each line reaches each
player exactly once. Speakers never get their own lines back.

One place does it for every mail: :func:`pbem.services.mailing.queue_mail` calls
:func:`with_unseen_talk` for each mail that shows a game from the seat its recipient holds, and
the mail layouts print the lines (``templates/email/_layout.*``). Callers that write several
mails to a seat at once (``notify.send_to_seat``) take the talk themselves, for the last one; the
digest, which shows no single seat, takes each game's talk for its own lines.

A reply that is refused (a card that may not be played, a stale reply, a command that cannot be
carried out…) changes nothing, its talk included: the talk is taken back (:func:`withdraw_talk`)
and the refusal quotes it, asking for it again with the corrected reply, so the table reads it once.

Talk is kept only while a game runs (active or paused) and from seats still held by their
player; a reply of nothing but talk (:class:`~pbem.mail.reading.commands.Say`) is recorded and
answered with no mail (the others will read it; the speaker knows what they wrote):
:mod:`pbem.services.commands.talk`.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbem.db.models import Game, GameStatus, Player, Seat, SeatStatus, TableTalk
from pbem.mail import context as mc
from pbem.mail.reading import commands as cmd
from pbem.mail.reading.message import IncomingMail

from .gamestore import last_talk, note_last_talk
from .reading import reply_of

#: The longest talk kept from one mail (characters): table talk, not letters.
MAX_TALK = 1000
#: The most lines of one mail kept.
MAX_LINES = 10


def talk_of(mail: IncomingMail) -> str | None:
    """The talk of a reply (its ``say`` lines, joined), trimmed to :data:`MAX_TALK`."""
    said = cmd.table_talk(reply_of(mail.text, mail.answered))
    if not said:
        return None
    lines = [" ".join(line.split()) for line in said.split("\n")][:MAX_LINES]
    text = "\n".join(line for line in lines if line)[:MAX_TALK].strip()
    return text or None


def record_talk(session: Session, game: Game, seat: Seat, mail: IncomingMail, now: datetime) -> TableTalk | None:
    """Store the talk of a verified seat mail, when the game runs and the seat is its player's."""
    if game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED) or seat.status != SeatStatus.JOINED:
        return None
    text = talk_of(mail)
    if text is None:
        return None
    row = TableTalk(game_id=game.id, seat=seat.seat, text=text, created_at=now)
    session.add(row)
    session.flush()
    if last_talk(session, game.id) is not None:
        note_last_talk(session, game.id, row.id)
    return row


def withdraw_talk(session: Session, game: Game, row: TableTalk) -> tuple[str, ...]:
    """Take back the talk of a mail that was refused (``requests.SeatRequest.answer``): its lines,
    for the refusal to quote; () when another seat was already told them (then they stay said)."""
    if any(s.seat != row.seat and s.talk_seen >= row.id for s in game.seats):
        return ()
    lines = tuple(row.text.split("\n"))
    session.delete(row)
    session.flush()
    return lines


def take_unseen(session: Session, game_id: int, seat: Seat) -> tuple[mc.TalkLine, ...]:
    """The lines other seats said that ``seat`` has not been told yet, marked as told.

    Call it only for a mail that is actually being written: the lines are then passed on.
    """
    return take_unseen_for(session, game_id, [seat])[seat.seat]


def take_unseen_for(session: Session, game_id: int, seats: list[Seat]) -> dict[int, tuple[mc.TalkLine, ...]]:
    """``take_unseen`` for several seats of one game at once (one query for the turn's mails)."""
    if not seats:
        return {}
    newest = last_talk(session, game_id)
    if newest is not None and all(s.talk_seen >= newest for s in seats):
        return {seat.seat: () for seat in seats}  # nothing said since each seat last heard
    # No autoflush: talk rows are flushed when said (``record_talk``), and flushing here wrote each
    # outbox row of the turn on its own (one INSERT per seat) instead of all in one statement.
    with session.no_autoflush:
        rows = session.execute(
            select(TableTalk.id, TableTalk.seat, TableTalk.text)
            .where(TableTalk.game_id == game_id, TableTalk.id > min(s.talk_seen for s in seats))
            .order_by(TableTalk.id)
        ).all()
    unseen: dict[int, tuple[mc.TalkLine, ...]] = {}
    for seat in seats:
        mine = [row for row in rows if row.id > seat.talk_seen]
        if mine:
            seat.talk_seen = mine[-1].id
        unseen[seat.seat] = tuple(mc.TalkLine(seat=row.seat, text=line) for row in mine if row.seat != seat.seat
                                  for line in row.text.split("\n"))
    return unseen


def with_unseen_talk(session: Session, game: Game, player: Player, ctx: mc.MailContext) -> mc.MailContext:
    """``ctx`` carrying the talk its recipient has not heard yet (marked as told), when it is a mail
    about ``game`` shown from the seat ``player`` holds; else ``ctx`` itself. A mail that carries
    talk already (taken by its caller) is left as it is. Call it only for a mail being written."""
    view = ctx.game
    if view is None or view.table_talk or view.game_id != game.id:
        return ctx
    seat = next((s for s in game.seats if s.seat == view.seat), None)
    if seat is None or seat.player_id is None or seat.player_id != player.id:
        return ctx  # e.g. the player whose seat was just given to a substitute: the talk is the seat's
    talk = take_unseen(session, game.id, seat)
    if not talk:
        return ctx
    return dataclasses.replace(ctx, game=dataclasses.replace(view, table_talk=talk))
