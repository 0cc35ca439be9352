"""A player's data, sent to them or erased (README, "Operating pbem"): ``pbem player export|forget``.

:func:`export_player` gathers everything stored about one address: the player's row (names,
language, time zone, choices, bounces, vacations), their seats and games with the moves their seats
made, their invitations, their table talk, the mails they sent and the mails sent to them (whole,
while retention keeps the bytes), and the answers counted against a stranger's caps.

:func:`forget_player` erases it, in one transaction, and keeps every finished game replayable:

- the player's row stays (seats and the move log point at it) under a stable placeholder address,
  ``player-<id>@anonymised.invalid`` (``.invalid`` can never receive mail, RFC 2606), with no
  name, the default language and UTC, no choices, bounces or vacations; the game pages and replays
  then call the seat ``player-<id>``;
- their invitations and the answers counted against a stranger's caps carry the placeholder;
- the mails they sent and the mails sent to them keep their rows (ids, status, times: what the
  duplicate check and the caps need) with the placeholder for the address and their bytes emptied,
  as retention empties them (:mod:`.retention`), and so do all the settled mails of their games
  (the others' mails named them, quoted them, showed their cards); a mail to them still waiting to
  be sent is given up, one from them still waiting to be processed is ignored; an outcome or a
  last error that names the address names the placeholder instead;
- their table talk is deleted.

The move log holds seats and cards, never an address or a name, and is left as it is, so every
game still replays exactly. A game's title (a new-game mail's Subject) is the table's and is kept.

Only a player with no game in progress can be forgotten: a game inviting, active or paused with
them at a seat (or as its creator, or with an invitation to them pending) would go on mailing the
address. :class:`ForgetRefused` names those games; the operator aborts them (``pbem game abort``)
or replaces the player (``pbem game replace``) and forgets them once those are over.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Text, cast, delete, func, or_, select, update
from sqlalchemy.orm import Session

from pbem.db.models import (
    Absence,
    Game,
    GameStatus,
    InboundMessage,
    InboundStatus,
    Invitation,
    InvitationStatus,
    MailRetry,
    Move,
    OutboundMessage,
    OutboundStatus,
    Player,
    Seat,
    StrangerAnswer,
    TableTalk,
)
from pbem.db.session import transaction

from .app import Services

__all__ = ["ANONYMISED_DOMAIN", "ForgetRefused", "Forgotten", "export_player", "forget_player", "placeholder"]

ANONYMISED_DOMAIN = "anonymised.invalid"
#: The address put where an address with no player row was (a stranger who only ever mailed us).
NO_PLAYER = f"forgotten@{ANONYMISED_DOMAIN}"
IN_PROGRESS = (GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED)
#: A mail to a forgotten player that was still waiting to be sent is given up with this error.
FORGOTTEN_RECIPIENT = "recipient forgotten (pbem player forget)"
_UNSETTLED_IN = (InboundStatus.PENDING, InboundStatus.PROCESSING)


def placeholder(player_id: int) -> str:
    """The stable address a forgotten player's row keeps: ``player-<id>@anonymised.invalid``."""
    return f"player-{player_id}@{ANONYMISED_DOMAIN}"


def _normal(address: str) -> str:
    return address.strip().lower()


def _player(session: Session, address: str) -> Player | None:
    return session.scalars(select(Player).where(Player.address == address)).one_or_none()


def _games_of(session: Session, player: Player | None, address: str) -> list[Game]:
    """The games the player has (had) a seat in, created, or was invited to."""
    conditions = [Game.id.in_(select(Invitation.game_id).where(Invitation.address == address))]
    if player is not None:
        conditions += [Game.id.in_(select(Seat.game_id).where(Seat.player_id == player.id)),
                       Game.creator_id == player.id]
    return list(session.scalars(select(Game).where(or_(*conditions)).order_by(Game.id)))


def _in_progress(session: Session, player: Player | None, address: str, games: list[Game]) -> list[Game]:
    """The games that would still mail the address: in progress with them seated or creating, or
    with an invitation to them pending."""
    seated = set()
    if player is not None:
        seated = set(session.scalars(select(Seat.game_id).where(Seat.player_id == player.id)))
    pending = set(session.scalars(select(Invitation.game_id).where(
        Invitation.address == address, Invitation.status == InvitationStatus.PENDING)))
    return [g for g in games if g.status in IN_PROGRESS
            and (g.id in seated or g.id in pending or (player is not None and g.creator_id == player.id))]


def _sent_by(address: str) -> Any:
    return func.lower(InboundMessage.mail_from) == address


def _sent_to(player: Player | None, address: str) -> Any:
    if player is None:
        return OutboundMessage.recipient == address
    return or_(OutboundMessage.recipient == address, OutboundMessage.player_id == player.id)


# -- export ----------------------------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _raw(raw: bytes | None) -> dict[str, Any]:
    """A mail's bytes for the export: as text when they are UTF-8 (mail mostly is), else base64."""
    data = bytes(raw or b"")
    try:
        return {"raw": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"raw_base64": base64.b64encode(data).decode("ascii")}


def export_player(svc: Services, address: str) -> dict[str, Any] | None:
    """Everything stored about ``address``, JSON-able; None when nothing is."""
    address = _normal(address)
    with transaction(svc.session_factory) as session:
        player = _player(session, address)
        games = _games_of(session, player, address)
        received = list(session.scalars(select(InboundMessage).where(_sent_by(address)).order_by(InboundMessage.id)))
        sent = list(session.scalars(select(OutboundMessage).where(_sent_to(player, address))
                                    .order_by(OutboundMessage.id)))
        invitations = list(session.scalars(select(Invitation).where(Invitation.address == address)
                                           .order_by(Invitation.id)))
        strangers = list(session.scalars(select(StrangerAnswer).where(StrangerAnswer.address == address)
                                         .order_by(StrangerAnswer.id)))
        if player is None and not (games or received or sent or invitations or strangers):
            return None
        seats = list(session.scalars(select(Seat).where(Seat.player_id == player.id))) if player else []
        seat_of = {s.game_id: s.seat for s in seats}
        export: dict[str, Any] = {"address": address, "player": None}
        if player is not None:
            absences = session.scalars(select(Absence).where(Absence.player_id == player.id).order_by(Absence.id))
            export["player"] = {
                "id": player.id, "address": player.address, "display_name": player.display_name,
                "language": player.language, "timezone": player.timezone, "prefs": player.prefs or {},
                "created_at": _iso(player.created_at), "bounced_at": _iso(player.bounced_at),
                "bounce_count": player.bounce_count, "vacation_until": _iso(player.vacation_until),
                "digest_sent_at": _iso(player.digest_sent_at),
                "vacations": [{"starts_at": _iso(a.starts_at), "ends_at": _iso(a.ends_at),
                               "created_at": _iso(a.created_at)} for a in absences],
            }
        export["games"] = [_game_export(session, game, seat_of.get(game.id), player) for game in games]
        export["invitations"] = [{"id": i.id, "game": i.game_id, "seat": i.seat, "kind": i.kind,
                                  "status": str(i.status), "created_at": _iso(i.created_at)} for i in invitations]
        export["mails_received_from_them"] = [
            {"id": f"in:{m.id}", "received_at": _iso(m.received_at), "to": m.recipient, "source": str(m.source),
             "status": str(m.status), "outcome": m.outcome, "message_id": m.message_key, **_raw(m.raw)}
            for m in received]
        export["mails_sent_to_them"] = [
            {"id": f"out:{m.id}", "created_at": _iso(m.created_at), "to": m.recipient, "kind": m.kind,
             "game": m.game_id, "status": str(m.status), "sent_at": _iso(m.sent_at), "message_id": m.message_id,
             **_raw(m.raw)} for m in sent]
        export["stranger_answers"] = [{"kind": a.kind, "sent_at": _iso(a.sent_at)} for a in strangers]
    return export


def _game_export(session: Session, game: Game, seat: int | None, player: Player | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": game.id, "title": game.title, "status": str(game.status),
                             "rules": game.rules, "created_at": _iso(game.created_at),
                             "creator": player is not None and game.creator_id == player.id, "seat": seat}
    if seat is not None:
        entry["moves"] = [{"seq": m.seq, "kind": m.kind, "payload": m.payload, "at": _iso(m.created_at)}
                          for m in session.scalars(select(Move).where(Move.game_id == game.id, Move.seat == seat)
                                                   .order_by(Move.seq))]
        entry["table_talk"] = [{"text": t.text, "at": _iso(t.created_at)} for t in session.scalars(
            select(TableTalk).where(TableTalk.game_id == game.id, TableTalk.seat == seat).order_by(TableTalk.id))]
    return entry


# -- forget ----------------------------------------------------------------------------------------


class ForgetRefused(Exception):
    """The player still has games in progress (``games``: (id, status) pairs)."""

    def __init__(self, address: str, games: list[tuple[int, str]]) -> None:
        self.address = address
        self.games = games
        super().__init__(address, games)


@dataclass(frozen=True)
class Forgotten:
    """What :func:`forget_player` did."""

    address: str
    placeholder: str
    player_id: int | None
    games: tuple[int, ...]  # the (finished or aborted) games they had a part in, still replayable
    mails_in: int  # received mails whose bytes were emptied
    mails_out: int  # mails sent whose bytes were emptied


def forget_player(svc: Services, address: str) -> Forgotten | None:
    """Erase what is stored about ``address`` (the module's docstring says what and how); None
    when nothing is; :class:`ForgetRefused` while a game of theirs is in progress."""
    address = _normal(address)
    with transaction(svc.session_factory) as session:
        player = _player(session, address)
        games = _games_of(session, player, address)
        busy = _in_progress(session, player, address, games)
        if busy:
            raise ForgetRefused(address, [(g.id, str(g.status)) for g in busy])
        anonymous = placeholder(player.id) if player is not None else NO_PLAYER
        game_ids = [g.id for g in games]
        if player is not None:
            _forget_row(session, player, anonymous, svc.settings.default_language)
            seats = [(s.game_id, s.seat) for s in session.scalars(select(Seat).where(Seat.player_id == player.id))]
            for game_id, seat in seats:
                session.execute(delete(TableTalk).where(TableTalk.game_id == game_id, TableTalk.seat == seat))
        session.execute(update(Invitation).where(Invitation.address == address).values(address=anonymous))
        session.execute(update(StrangerAnswer).where(StrangerAnswer.address == address).values(address=anonymous))
        mails_in, mails_out = _forget_mail(session, player, address, anonymous, game_ids, svc.clock.now())
        if player is None and not (game_ids or mails_in or mails_out):
            return None
        _scrub_records(session, address, anonymous)
    return Forgotten(address, anonymous, player.id if player is not None else None, tuple(game_ids),
                     mails_in, mails_out)


def _forget_row(session: Session, player: Player, anonymous: str, language: str) -> None:
    player.address = anonymous
    player.display_name = ""
    player.language = language
    player.timezone = "UTC"
    player.prefs = {}
    player.bounced_at = None
    player.bounce_count = 0
    player.vacation_until = None
    player.digest_sent_at = None
    session.execute(delete(Absence).where(Absence.player_id == player.id))
    session.flush()


def _forget_mail(session: Session, player: Player | None, address: str, anonymous: str, game_ids: list[int],
                 now: datetime) -> tuple[int, int]:
    """The player's mails under the placeholder, and the bytes of every one of theirs and their
    games' emptied. A mail to them still waiting to be sent is given up (``failed``, "recipient
    forgotten"), one from them still waiting to be processed is ignored (``SENDER_FORGOTTEN``);
    the others' mails of their games are emptied once settled (a mail still to send or to process
    keeps its bytes, and retention empties them later)."""
    outbound = OutboundMessage.__table__
    inbound = InboundMessage.__table__
    theirs_out = list(session.scalars(select(outbound.c.id).where(_sent_to(player, address))))
    _update(session, outbound, theirs_out, recipient=anonymous)
    _update(session, outbound, theirs_out, outbound.c.status == OutboundStatus.PENDING,
            status=OutboundStatus.FAILED, last_error=FORGOTTEN_RECIPIENT)
    theirs_in = list(session.scalars(select(inbound.c.id).where(_sent_by(address))))
    _update(session, inbound, theirs_in, mail_from=anonymous)
    _update(session, inbound, theirs_in, inbound.c.status.in_(_UNSETTLED_IN),
            status=InboundStatus.IGNORED, outcome={"code": "SENDER_FORGOTTEN"}, processed_at=now)
    games_out = set(session.scalars(select(outbound.c.id).where(outbound.c.game_id.in_(game_ids))))
    emptied_out = sorted(set(theirs_out) | games_out)
    # The received mails of their games: the moves' and the answers' (the new-game mail, every reply).
    games_in = set(session.scalars(select(Move.inbound_id).where(Move.game_id.in_(game_ids),
                                                                 Move.inbound_id.is_not(None))))
    games_in |= set(session.scalars(select(outbound.c.inbound_id).where(
        outbound.c.game_id.in_(game_ids), outbound.c.inbound_id.is_not(None))))
    emptied_in = sorted(set(theirs_in) | games_in)
    mails_in = _update(session, inbound, emptied_in, func.length(inbound.c.raw) > 0,
                       inbound.c.status.not_in(_UNSETTLED_IN), raw=b"")
    mails_out = _update(session, outbound, emptied_out, func.length(outbound.c.raw) > 0,
                        outbound.c.status != OutboundStatus.PENDING, raw=b"", quoted=None)
    return mails_in, mails_out


#: Rows changed by one UPDATE of :func:`_update` (well within both databases' parameter limits).
_BATCH = 500


def _update(session: Session, table: Any, ids: list[int], *conditions: Any, **values: Any) -> int:
    """``UPDATE table SET values WHERE id IN ids AND conditions``, ``_BATCH`` ids at a time; the rows changed."""
    changed = 0
    for start in range(0, len(ids), _BATCH):
        result = session.execute(update(table).where(table.c.id.in_(ids[start:start + _BATCH]), *conditions)
                                 .values(**values))
        changed += result.rowcount or 0
    return changed


def _replaced(value: Any, address: str, anonymous: str) -> Any:
    """``value`` (JSON) with every mention of ``address`` (any case) replaced by ``anonymous``."""
    if isinstance(value, str):
        lowered = value.lower()
        if address not in lowered:
            return value
        out, start = [], 0
        while (found := lowered.find(address, start)) >= 0:
            out += [value[start:found], anonymous]
            start = found + len(address)
        return "".join(out) + value[start:]
    if isinstance(value, list):
        return [_replaced(v, address, anonymous) for v in value]
    if isinstance(value, dict):
        return {k: _replaced(v, address, anonymous) for k, v in value.items()}
    return value


def _scrub_records(session: Session, address: str, anonymous: str) -> None:
    """Outcomes, last errors and retry records that name the address name the placeholder (a
    bounce's failed recipients, a forged sender, a relay's "550 <address>: unknown user")."""
    pattern = f"%{address}%"
    for model, column in ((InboundMessage, InboundMessage.outcome), (MailRetry, MailRetry.before)):
        for row in session.scalars(select(model).where(func.lower(cast(column, Text)).like(pattern))):
            setattr(row, column.key, _replaced(getattr(row, column.key), address, anonymous))
    for row in session.scalars(select(OutboundMessage).where(func.lower(OutboundMessage.last_error).like(pattern))):
        row.last_error = _replaced(row.last_error, address, anonymous)
