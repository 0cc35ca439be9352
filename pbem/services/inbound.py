"""Processing one received mail: read it, check who sent it, find the command, act, answer.

``apply_inbound(svc, inbound_id)`` is what the worker task calls. It counts the attempt first, in a
statement committed on its own (a mail out of attempts is set aside as ``failed``), reads the mail
outside any transaction, then in one transaction locks the inbound row (so a mail delivered twice,
or a task run twice, is processed once), applies whatever the mail asks (a move goes through
:mod:`pbem.services.turns`), writes the outbox rows, and marks the row ``done``/``rejected``/
``ignored`` with an outcome for operators (README, "Under faults and hostile mail").

A verified mail to a seat's address is carried out by the mail command registered for it
(:mod:`pbem.services.requests`, the commands in :mod:`pbem.services.commands`): this module knows
the registry, not the commands.

Who may move (README, "Playing by mail"): a reply must go to a seat's signed address
(``hearts+…``), come from the seat's registered address, and answer the seat's current decision.
Anything else changes nothing and is answered, if at all, only at a registered player's own
address — never to an unverified sender. A late reply (to a decision already made) is refused even
when the card would be legal now: the player chose that card for an earlier trick, so playing it in
a later one is not what they meant.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from pbem.db.models import (
    Game,
    GameStatus,
    InboundMessage,
    InboundStatus,
    Invitation,
    InvitationStatus,
    Player,
    Seat,
    SeatStatus,
)
from pbem.db.session import transaction
from pbem.db.writes import add_update
from pbem.engine import CALL, CHARGE, DISCARD, MOON, PASS, PLAY
from pbem.mail import context as mc
from pbem.mail.addresses import (
    BadAddress,
    make_invite_address,
    new_game_address,
    parse_invite_address,
    parse_reply_address,
)
from pbem.mail.compose import can_address
from pbem.mail.reading import commands as cmd
from pbem.mail.reading.autoreply import BOUNCE, Verdict, classify
from pbem.mail.reading.message import IncomingMail, read_mail

from .absence import answer_substitute_invitation
from .app import Services
from .commands import COMMAND_MODULES  # noqa: F401  (importing them registers the mail commands)
from .continuation import Applied, continue_to_rest, write_turn
from .deadlines import BadTiming, pop_timing
from .game_options import OptionRefused, make_rules, read_bots
from .games import SeatSpec, create_game, get_or_create_player, start_game
from .gamestore import GameNotFound, current_state, load_game
from .intake import envelope_address_problem
from .mailing import (
    QueuedMail,
    answer_thread,
    claim_for_sending,
    claimed_game,
    queue_mail,
    recipient_for,
    seat_name,
    seat_view,
)
from .observed import note_received
from .reading import READ_FROM_SUBJECT, read_command, reply_of, subject_command, with_answered
from .requests import (
    Outcome,
    ReceivedRow,
    SeatRequest,
    carry_out,
    games_list,
    reader_details,
    reply,
)
from .sender_auth import NOT_CHECKED, SenderAuth, check_sender, is_special_use
from .strangers import answer_stranger, may_answer_stranger, record_stranger_answer, stranger_recipient
from .talk import record_talk

log = logging.getLogger("pbem.worker")

#: Attempts after which a mail that keeps failing is set aside as ``failed``.
MAX_ATTEMPTS = 5
#: Retries of a transaction that lost a race with another worker (the game moved meanwhile).
RACE_RETRIES = 5


def process_inbound(svc: Services, inbound_id: int) -> list[int]:
    """Process one stored mail once, then continue every game it left with automatic moves to
    play, step by step, right here; the ids of all the outbox rows written (committed).  For
    callers with no worker to queue follow-ups on (tests, the command line)."""
    applied = apply_inbound(svc, inbound_id)
    return [mail.id for mail in applied.mails] + continue_to_rest(svc, applied.continue_games)


def apply_inbound(svc: Services, inbound_id: int, *, send_lease: timedelta | None = None) -> Applied:
    """Process one stored mail once; what it did (committed).

    1. The attempt is counted, in a statement committed on its own, before anything else: a
       process killed while processing (SIGKILL, out of memory, a task's hard time limit) has
       still used up one of ``MAX_ATTEMPTS``, so no mail can crash workers forever.  On
       PostgreSQL that commit is asynchronous (``Services.kept_connections``): only a crash of the
       database server itself could lose a count, which gives the mail one attempt more.  A mail out
       of attempts is set aside as ``failed`` with its outcome (README, "Under faults and
       hostile mail").
    2. The mail is read (parsed, classified, its reply text extracted) outside any transaction:
       on SQLite no write lock is held while its bytes are worked on.
    3. One transaction locks the row again (a small Core ``SELECT .. FOR UPDATE``; a mail
       processed meanwhile by a duplicate task is left alone), handles it, and writes the
       outcome with the rest of the turn (``pbem.db.writes``).

    With ``send_lease`` the caller sends the mails itself right after this returns: they are
    written already claimed for that long (``mailing.claim_for_sending``), and every mail the
    transaction wrote is returned.
    """
    attempt = begin_attempt(svc, inbound_id, svc.clock.now())
    if attempt is None:
        return Applied()
    try:
        mail = read_received(attempt, svc)
        return _apply_read(svc, inbound_id, mail, send_lease, _sender_auth(svc, attempt.raw, attempt.recipient, mail))
    except Exception as error:
        record_failed_attempt(svc, inbound_id, type(error).__name__)
        raise


def _sender_auth(svc: Services, raw: bytes, recipient: str, mail: IncomingMail) -> SenderAuth:
    """Sender authentication (README, "Mail that providers accept"), before the transaction since it may
    wait on DNS; worth it only for a mail whose From is the address that may act for its recipient (the
    seat's player, the invited address): any other From is refused as forged anyway. So a stranger's or a
    forger's mail costs no DNS lookup, and neither does a special-use domain (tests use them)."""
    domain = mail.from_address.rpartition("@")[2]
    if not domain or is_special_use(domain) or mail.from_address != _acting_address(svc, recipient):
        return NOT_CHECKED
    return check_sender(svc, raw, recipient)


def _acting_address(svc: Services, recipient: str) -> str | None:
    """The address whose mail to ``recipient`` acts: a seat's player, an invitation's invitee; else None."""
    settings = svc.settings
    local = recipient.split("@", 1)[0]
    try:
        with transaction(svc.session_factory) as session:
            if local.startswith("hearts+"):
                token = parse_reply_address(settings.secret_key, settings.mail_domain, recipient)
                return session.scalar(select(Player.address).join(Seat, Seat.player_id == Player.id)
                                      .where(Seat.game_id == token.game_id, Seat.seat == token.seat))
            if local.startswith("invite+"):
                invite = parse_invite_address(settings.secret_key, settings.mail_domain, recipient)
                return session.scalar(select(Invitation.address).where(Invitation.id == invite.invitation_id))
    except BadAddress:
        return None
    return None


def _apply_read(svc: Services, inbound_id: int, mail: IncomingMail, send_lease: timedelta | None,
                auth: SenderAuth = NOT_CHECKED) -> Applied:
    for _ in range(RACE_RETRIES):
        try:
            with transaction(svc.session_factory) as session:
                row = session.connection().execute(_LOCK_INBOUND, {"id": inbound_id}).one_or_none()
                if row is None or row.status != InboundStatus.PENDING:
                    return Applied()
                now = svc.clock.now()
                claimed = claim_for_sending(session, now + send_lease) if send_lease is not None else None
                outcome = handle(session, svc, row, mail, now, auth)
                recorded = outcome.as_json()
                if mail.problems:  # what the reader had to degrade (message.py), for the operator
                    recorded["reading"] = list(mail.problems)
                add_update(session, _INBOUND, {"id": inbound_id}, {
                    "status": outcome.status, "outcome": recorded, "processed_at": now})
                note_received(session, row.received_at)  # for the moves' log lines and metrics (observed)
                return write_turn(session, outcome.mails, claimed)  # this outcome with the turn
        except (StaleDataError, IntegrityError, OperationalError) as error:
            # Another worker changed the same game (or SQLite was busy): run the whole thing again.
            log.info("inbound %s: retrying after a concurrent change (%s)", inbound_id, type(error).__name__)
            last = error
            continue
    raise last


_INBOUND = InboundMessage.__table__
_LOCK_INBOUND = (
    select(_INBOUND.c.id, _INBOUND.c.recipient, _INBOUND.c.mail_from, _INBOUND.c.status, _INBOUND.c.received_at)
    .where(_INBOUND.c.id == bindparam("id"))
    .with_for_update()
)


@dataclass(frozen=True)
class Attempt:
    """A received mail whose attempt has begun (and is counted): what reading it needs."""

    id: int
    recipient: str
    mail_from: str
    raw: bytes
    attempts: int


_BEGIN_ATTEMPT = (
    update(_INBOUND)
    .where(_INBOUND.c.id == bindparam("inbound_id"), _INBOUND.c.status == InboundStatus.PENDING,
           _INBOUND.c.attempts < MAX_ATTEMPTS)
    .values(attempts=_INBOUND.c.attempts + 1, attempted_at=bindparam("now"))
    .returning(_INBOUND.c.id, _INBOUND.c.recipient, _INBOUND.c.mail_from, _INBOUND.c.raw, _INBOUND.c.attempts)
)


def begin_attempt(svc: Services, inbound_id: int, now: datetime) -> Attempt | None:
    """Count an attempt at a pending mail and stamp when it began, committed at once (one
    statement); None when there is nothing to do: the mail was processed (a duplicate task) or
    has just been set aside because its attempts were used up."""
    with svc.kept_connections.single_statement() as conn:  # committed asynchronously (Services.kept_connections)
        row = conn.execute(_BEGIN_ATTEMPT, {"inbound_id": inbound_id, "now": now}).one_or_none()
    if row is not None:
        return Attempt(row.id, row.recipient, row.mail_from, bytes(row.raw), row.attempts)
    set_aside(svc, inbound_id, now, "PROCESSING_FAILED")
    return None


def read_received(attempt: Attempt, svc: Services | None = None) -> IncomingMail:
    """The mail read as the handlers need it: parsed, with the lines of the mail it answers (found
    by ``reading.with_answered`` in a read of its own, when ``svc`` is given), and its reply text
    extracted (kept by ``reply_of`` for the handlers), so that no transaction waits on this work."""
    mail = read_mail(attempt.raw, envelope_sender=attempt.mail_from)
    if classify(mail) is None:
        if svc is not None:
            mail = with_answered(svc, mail, attempt.recipient)
        reply_of(mail.text, mail.answered)
    return mail


def record_failed_attempt(svc: Services, inbound_id: int, error: str) -> None:
    """Record that an attempt raised ``error`` (an exception's name), in its own transaction: the
    outcome says so while the mail is still pending, and a mail out of attempts is set aside as
    ``failed`` at once."""
    now = svc.clock.now()
    with transaction(svc.session_factory) as session:
        row = session.get(InboundMessage, inbound_id, with_for_update=True)
        if row is None or row.status != InboundStatus.PENDING:
            return
        row.outcome = {"code": "ATTEMPT_FAILED", "error": error, "attempts": row.attempts}
        if row.attempts < MAX_ATTEMPTS:
            return
        _fail(row, now, "PROCESSING_FAILED")
    _tell_sender_set_aside(svc, inbound_id, now)


def set_aside(svc: Services, inbound_id: int, now: datetime, code: str) -> None:
    """Set a pending mail aside as ``failed`` with ``code`` (nothing if it is no longer pending)."""
    with transaction(svc.session_factory) as session:
        row = session.get(InboundMessage, inbound_id, with_for_update=True)
        if row is None or row.status != InboundStatus.PENDING:
            return
        _fail(row, now, code)
    _tell_sender_set_aside(svc, inbound_id, now)


def _fail(row: InboundMessage, now: datetime, code: str) -> None:
    """``failed``, with the last attempt's error (``WORKER_LOST`` when no attempt said why: the
    process died, or was stopped past its time limit, while working on it)."""
    last = row.outcome or {}
    row.status = InboundStatus.FAILED
    row.outcome = {"code": code, "attempts": row.attempts, "last_error": last.get("error", "WORKER_LOST")}
    row.processed_at = now
    log.warning("inbound %s set aside after %s attempts: %s", row.id, row.attempts, row.outcome)


def _tell_sender_set_aside(svc: Services, inbound_id: int, now: datetime) -> None:
    """A verified player whose mail was set aside is told so at their registered address (what to
    do: write again).  Nobody else is (``pbem.services.strangers``), nor an auto-reply or a bounce.
    Its own transaction, after the set-aside committed: if even this fails, the mail stays set
    aside and the failure is logged for the operator; the mail goes out with the sweep."""
    try:
        with transaction(svc.session_factory) as session:
            row = session.get(InboundMessage, inbound_id)
            if row is None or not row.raw:
                return
            mail = read_mail(bytes(row.raw), envelope_sender=row.mail_from)
            player = _player_by_address(session, mail.from_address)
            if classify(mail) is None and _verified(session, player):
                # A request to new@ is answered as new@ answers (README, "Starting a game"): in its
                # thread, and a reply (the request sent again) goes to new@.
                to_new = row.recipient.split("@", 1)[0] == "new"
                reply(session, svc, player, mc.RequestRejected("PROCESSING_FAILED", {}), now, inbound_id,
                      thread=answer_thread(mail) if to_new else None, reply_to=row.recipient if to_new else None)
    except Exception:
        log.exception("inbound %s: could not tell its sender that it was set aside", inbound_id)


# -- routing ------------------------------------------------------------------------------------


def handle(session: Session, svc: Services, row: ReceivedRow, mail: IncomingMail, now: datetime,
           auth: SenderAuth = NOT_CHECKED) -> Outcome:
    """What a received mail (``row``, already read into ``mail``) asks for, done and answered.

    A From address no mail can go back to (``compose.can_address``: no SMTPUTF8, a broken
    domain, a NUL) is no sender at all: nothing is answered to it or looked up by it."""
    if mail.from_address and (envelope_address_problem(mail.from_address) or not can_address(mail.from_address)):
        mail = dataclasses.replace(mail, from_address="")
    automatic = classify(mail)
    if automatic is not None:
        return _automatic(session, svc, mail, automatic, now, row.id)
    local = row.recipient.split("@", 1)[0]
    if local.startswith("hearts+"):
        return _seat_mail(session, svc, row, mail, now, auth)
    if local.startswith("invite+"):
        return _invitation_reply(session, svc, row, mail, now, auth)
    if local == "new":
        return _new_game(session, svc, row, mail, now)
    if local in ("postmaster", "abuse"):
        return Outcome(InboundStatus.IGNORED, "FOR_POSTMASTER", {"from": mail.from_address})
    return _account_mail(session, svc, row, mail, now)


def _player_by_address(session: Session, address: str) -> Player | None:
    """The player registered at ``address``; None for an address no player can have (as a bounce's
    recipients, read from a report anyone can write, may be)."""
    if not address or envelope_address_problem(address) is not None:
        return None
    return session.scalars(select(Player).where(Player.address == address.lower())).one_or_none()


def _verified(session: Session, player: Player | None) -> bool:
    """A player is verified once they have taken a seat by replying from their address."""
    if player is None:
        return False
    return session.scalar(
        select(func.count()).select_from(Seat).where(Seat.player_id == player.id,
                                                     Seat.status.in_((SeatStatus.JOINED, SeatStatus.BOT)))
    ) > 0


# -- auto-replies and bounces ---------------------------------------------------------------------


def _automatic(session: Session, svc: Services, mail: IncomingMail, reason: Verdict, now: datetime,
               inbound_id: int) -> Outcome:
    """Recorded, never answered. A bounce for a player's address is told to their games' creators."""
    code = reason.reason
    details: dict[str, Any] = {"from": mail.from_address, "signal": reason.signal}
    mails: list[QueuedMail] = []
    if reason.bounce is not None and code == BOUNCE and reason.bounce.permanent:
        failed = list(reason.bounce.failed_recipients)
        details["failed"] = failed
        for address in failed:
            mails += _bounce(session, svc, address, mail, now, inbound_id)
    return Outcome(InboundStatus.IGNORED, code, details, mails)


def _bounce(session: Session, svc: Services, address: str, mail: IncomingMail, now: datetime,
            inbound_id: int) -> list[QueuedMail]:
    player = _player_by_address(session, address)
    if player is None:
        return []
    first_today = player.bounced_at is None or player.bounced_at < now - timedelta(days=1)
    player.bounce_count += 1
    player.bounced_at = now
    if not first_today:
        return []
    diagnostic = ""
    if mail.report is not None:
        diagnostic = next((r.diagnostic for r in mail.report.recipients if r.final_recipient == address), "")
    mails: list[QueuedMail] = []
    games = session.scalars(
        select(Game).join(Seat, Seat.game_id == Game.id).where(
            Seat.player_id == player.id, Game.status.in_((GameStatus.INVITING, GameStatus.ACTIVE)))
    ).all()
    for game in games:
        creator = game.creator
        if creator is None:  # made on the command line: its operator reads the log
            log.warning("game %s: mail to %s bounced (%s); the game has no creator to tell",
                        game.id, player.address, diagnostic[:300] or "no diagnostic")
            continue
        if creator.id == player.id:
            continue
        detail = mc.BounceNotice(game_id=game.id, player_name=player.display_name or player.address,
                                 player_address=player.address, diagnostic=diagnostic[:300])
        mails += reply(session, svc, creator, detail, now, inbound_id, game=game)
    return mails


# -- a seat's mail --------------------------------------------------------------------------------


def _seat_mail(session: Session, svc: Services, row: ReceivedRow, mail: IncomingMail,
               now: datetime, auth: SenderAuth = NOT_CHECKED) -> Outcome:
    settings = svc.settings
    try:
        token = parse_reply_address(settings.secret_key, settings.mail_domain, row.recipient)
    except BadAddress as error:
        mails = []
        sender = _player_by_address(session, mail.from_address)
        if _verified(session, sender):
            claimed = claimed_game(session, svc, row.recipient, sender)  # only to thread the notice there
            mails = reply(session, svc, sender, mc.RequestRejected("BAD_ADDRESS", {"problem": error.code}),
                          now, row.id, game=claimed, game_ctx=seat_view(svc, claimed, sender))
        return Outcome(InboundStatus.REJECTED, "BAD_ADDRESS", {"problem": error.code}, mails)
    try:
        game = load_game(session, token.game_id)
    except GameNotFound:
        return Outcome(InboundStatus.REJECTED, "NO_SUCH_GAME", {"game": token.game_id})
    seats = sorted(game.seats, key=lambda s: s.seat)
    if token.seat >= len(seats):
        return Outcome(InboundStatus.REJECTED, "NO_SUCH_SEAT", {"game": game.id, "seat": token.seat})
    seat = seats[token.seat]
    owner = seat.player
    if owner is None or owner.address != mail.from_address or auth.refused:
        # Someone else wrote to this seat's address (or wrote as its player, and their domain's DMARC
        # policy says it was not them): tell the seat's own player, nobody else.
        mails = []
        if owner is not None and seat.status == SeatStatus.JOINED:
            mails = reply(session, svc, owner, mc.RequestRejected("FORGED_SENDER", {"sender": mail.from_address}),
                          now, row.id, game=game, game_ctx=seat_view(svc, game, owner))
        details = {"game": game.id, "seat": seat.seat, "sender": mail.from_address}
        if auth.refused:
            details["authentication"] = auth.as_json()
        return Outcome(InboundStatus.REJECTED, "FORGED_SENDER", details, mails)

    talk = record_talk(session, game, seat, mail, now)  # a `say` line in any reply is passed on (README, "Table talk")
    state = current_state(game)
    expected = _expected(state, seat.seat)
    command = read_command(mail, expected=expected, pass_count=state.rules.pass_count, language=owner.language,
                           suggest_from=_suggestable(state, seat.seat, expected))
    from_subject = ""
    if isinstance(command, cmd.Unreadable) and command.reason == "EMPTY":
        # Nothing new in the body: the command may be in the Subject (README, "Playing by mail").
        found = subject_command(mail, expected=expected, pass_count=state.rules.pass_count,
                                language=owner.language, titles=(game.title,) if game.title else ())
        if found is not None:
            command, from_subject = found
            session.info.setdefault(READ_FROM_SUBJECT, {})[owner.id] = from_subject
    command = _with_example(command, state, seat.seat, expected)
    outcome = carry_out(SeatRequest(session, svc, row, mail, now, game, seats, seat, owner, state, token, command,
                                    talk))
    if from_subject:
        outcome.details["read_from"] = "subject"  # for the operator; the player is told through READ_FROM_SUBJECT
    return outcome


#: Reasons of the reader after which the answer shows how to write a card (README, "Playing by
#: mail": every reply that names no card shows how to write one); EMPTY (a reply with no new text,
#: such as a signature alone) only where the decision, if any, is a card's.
_EXAMPLE_REASONS = frozenset({"UNKNOWN_WORD", "DID_YOU_MEAN", "NO_COMMAND", "EMPTY"})
_CARD_DECISIONS = frozenset({None, "play", "pass", "discard"})


def _with_example(command: cmd.Command, state: Any, seat: int, expected: str | None = None) -> cmd.Command:
    """An unreadable reply's details with ``example``: a card to show how cards are written, one the
    player may play, else one they hold (nothing when they hold none)."""
    if not isinstance(command, cmd.Unreadable) or command.reason not in _EXAMPLE_REASONS:
        return command
    if command.reason == "EMPTY" and expected not in _CARD_DECISIONS:
        return command
    legal = state.legal_cards() if state.phase == PLAY and state.to_move == seat else ()
    cards = tuple(legal) or tuple(state.hand(seat))
    if not cards:
        return command
    return cmd.Unreadable(command.reason, MappingProxyType({**command.details, "example": cards[len(cards) // 2]}))


def _suggestable(state: Any, seat: int, expected: str | None) -> tuple[str, ...]:
    """The cards a typo may be read as (README, "Playing by mail"): what the decision's
    ``X-Hearts-Legal`` names, the legal cards to play; else the cards the seat holds."""
    if expected == "play":
        return tuple(state.legal_cards())
    return tuple(state.hand(seat))


def _expected(state: Any, seat: int) -> str | None:
    if state.phase == CALL and state.next_dealer == seat:
        return "call"  # dealer_calls_pass (RULES.md §6.3): "2 left 1 right", "mix"
    if state.phase == PASS and seat in state.seats_to_pass():
        return "pass"
    if state.phase == PLAY and state.to_move == seat:
        return "play"
    if state.phase == MOON and state.shooter and state.shooter[0] == seat:
        return "moon"
    if state.phase == DISCARD and seat in state.seats_to_act():
        return "discard"  # kitty_exchange (RULES.md §6.2): the cards alone are the discard
    if state.phase == CHARGE and seat in state.seats_to_charge():
        return "charge"  # Turbo (RULES.md §6.4): the cards alone, or "none", are the charge
    return None


# -- mail to other addresses of the domain -----------------------------------------------------------


def _account_mail(session: Session, svc: Services, row: ReceivedRow, mail: IncomingMail,
                  now: datetime) -> Outcome:
    """``help@``, ``games@`` and the like: answered only to verified players, except a request for
    a new game, which is answered with where to send it: to a verified player always, to an
    unverified address as its one answer within the caps of :mod:`pbem.services.strangers`
    (README, "What a stranger may receive")."""
    player = _player_by_address(session, mail.from_address)
    verified = _verified(session, player)
    if not verified and not mail.from_address:
        return Outcome(InboundStatus.IGNORED, "UNKNOWN_SENDER", {"from": mail.from_address})
    command = read_command(mail, expected=None, pass_count=3)
    if isinstance(command, cmd.NewGame):
        return _new_game_elsewhere(session, svc, row, mail, now, player if verified else None)
    if not verified or player is None:
        return Outcome(InboundStatus.IGNORED, "UNKNOWN_SENDER", {"from": mail.from_address})
    if isinstance(command, (cmd.Games, cmd.Status)):  # no game named: the list of the player's games
        return Outcome(InboundStatus.DONE, "GAMES", {}, games_list(session, svc, player, now, row.id))
    help_mail = mc.Help(new_game_address=new_game_address(svc.settings.mail_domain))
    return Outcome(InboundStatus.DONE, "HELP", {}, reply(session, svc, player, help_mail, now, row.id))


def _new_game_elsewhere(session: Session, svc: Services, row: ReceivedRow, mail: IncomingMail, now: datetime,
                        player: Player | None) -> Outcome:
    """A new game asked for at another address of the domain: where to send it, replying to new@
    (``player``: the verified sender; None for an unverified one, answered within the caps)."""
    new = new_game_address(svc.settings.mail_domain)
    detail = mc.RequestRejected("NEW_GAME_ELSEWHERE", {"address": new}, new_game_address=new)
    if player is not None:
        mails = reply(session, svc, player, detail, now, row.id, thread=answer_thread(mail), reply_to=new)
    else:
        recipient = stranger_recipient(svc, mail.from_address, mail.from_name)
        mails = answer_stranger(session, svc, recipient, detail, now, row.id, thread=answer_thread(mail),
                                reply_to=new)
    return Outcome(InboundStatus.REJECTED, "NEW_GAME_ELSEWHERE", {"from": mail.from_address, "to": row.recipient,
                                                                 "answered": bool(mails)}, mails)


# -- starting a game by mail ----------------------------------------------------------------------------


def _new_game(session: Session, svc: Services, row: ReceivedRow, mail: IncomingMail,
              now: datetime) -> Outcome:
    """``new@``: the sender and the people listed, plus bots. An unverified sender is first sent an
    invitation to their own seat; the others are invited only once the sender has confirmed by
    replying, so the address cannot be used to send mail to strangers in someone else's name.  A
    request that cannot be used is answered with what was wrong; to an unverified sender that
    answer, or the invitation, is the one mail :mod:`pbem.services.strangers` allows."""
    sender_address = mail.from_address
    if not sender_address:
        return Outcome(InboundStatus.IGNORED, "NO_SENDER", {})
    creator = _player_by_address(session, sender_address)
    verified = _verified(session, creator)
    recipient = recipient_for(creator, svc) if creator is not None else \
        stranger_recipient(svc, sender_address, mail.from_name)

    def refuse(code: str, details: dict[str, Any], **more: Any) -> Outcome:
        # A reply to the refusal, the corrected request, goes to new@ again, in the request's thread.
        detail = mc.RequestRejected(code, details, new_game_address=row.recipient)  # with an example
        if verified:
            mails = reply(session, svc, creator, detail, now, row.id, thread=answer_thread(mail),
                          reply_to=row.recipient)
        else:
            mails = answer_stranger(session, svc, recipient, detail, now, row.id, thread=answer_thread(mail),
                                    reply_to=row.recipient)
        return Outcome(InboundStatus.REJECTED, code, {"from": sender_address, **details, **more,
                                                      "answered": bool(mails)}, mails)

    command = read_command(mail, expected="new_game", pass_count=3)
    if not isinstance(command, cmd.NewGame):
        return refuse(getattr(command, "reason", "NO_COMMAND"), reader_details(getattr(command, "details", {})))
    options = dict(command.options)
    preset = options.pop("rules", None) or options.pop("preset", None) or "standard"
    try:
        bots = read_bots(options.pop("bots", ""), svc.settings.bot_name)  # "3", "2 heuristic, 1 random"
        timing = pop_timing(options)  # deadline, weekends, grace, reminder, policy (README, "Time")
        rules = make_rules(preset, options)  # any RULES.md §3/§6 option, players: N included
    except BadTiming as error:
        return refuse("BAD_RULES", {"problem": error.code, "value": error.text[:60]})
    except OptionRefused as error:
        if error.code == "BAD_OPTION":
            return refuse("BAD_OPTION", dict(error.details))
        return refuse("BAD_RULES", {"problem": error.code, **error.details})
    others = [a.lower() for a in command.players if a.lower() != sender_address]
    unusable = next((a for a in others if not can_address(a)), None)
    if unusable is not None:
        return refuse("NOT_AN_ADDRESS", {"address": unusable[:100]})
    if 1 + len(others) + len(bots) != rules.players:  # the sender has a seat too
        return refuse("WRONG_PLAYER_COUNT", {"players": rules.players, "people": 1 + len(others),
                                             "bots": len(bots)})
    if _invitations_today(session, creator, now) + len(others) > svc.settings.invites_per_day:
        return refuse("RATE_LIMITED", {"limit": svc.settings.invites_per_day})
    if not verified and not may_answer_stranger(session, svc, sender_address, now):
        # Past the caps an unverified address gets nothing, not even its invitation.
        return Outcome(InboundStatus.REJECTED, "STRANGER_CAP", {"from": sender_address, "answered": False})
    specs = [SeatSpec(address=sender_address, name=mail.from_name or None)]
    specs += [SeatSpec(address=a) for a in others]
    specs += [SeatSpec(bot=bot) for bot in bots]
    creator = creator or get_or_create_player(session, sender_address, mail.from_name or None, now,
                                              language=svc.settings.default_language)
    game = create_game(session, svc, rules=rules, seats=specs, creator=creator, joined=False,
                       title=mail.subject[:200] if mail.subject else "")
    timing.apply(game)
    invitations = []
    for seat in sorted(game.seats, key=lambda s: s.seat):
        if seat.player is None:
            continue
        inv = Invitation(game_id=game.id, seat=seat.seat, address=seat.player.address,
                         token=f"{game.id}.{seat.seat}", invited_by=creator.id, created_at=now)
        session.add(inv)
        invitations.append(inv)
    session.flush()
    mails: list[QueuedMail] = []
    if verified:
        creator_seat = game.seats[0]
        creator_seat.status = SeatStatus.JOINED
        invitations[0].status = InvitationStatus.ACCEPTED
        mails += _send_invitations(session, svc, game, invitations[1:], creator, now, row.id)
        if all(s.status != SeatStatus.INVITED for s in game.seats):
            mails += start_game(session, svc, game, inbound_id=row.id,
                                answering=(creator.id, answer_thread(mail, game)))
        else:  # the creator is told the invitations went out, and to whom
            still = tuple(inv.address for inv in invitations[1:])
            mails += reply(session, svc, creator, mc.InvitationAccepted(
                game_id=game.id, player_name=creator.display_name or creator.address, accepted=True,
                still_waiting=still), now, row.id, game=game, thread=answer_thread(mail, game))
    else:
        mails += _send_invitations(session, svc, game, invitations[:1], creator, now, row.id,
                                   thread=answer_thread(mail, game))
        for sent in mails:
            record_stranger_answer(session, sender_address, sent.kind, now, row.id)
    return Outcome(InboundStatus.DONE, "GAME_CREATED", {"game": game.id, "verified": verified}, mails)


def _invitations_today(session: Session, creator: Player | None, now: datetime) -> int:
    if creator is None:
        return 0
    return session.scalar(
        select(func.count()).select_from(Invitation).where(
            Invitation.invited_by == creator.id, Invitation.created_at >= now - timedelta(days=1))
    ) or 0


def _send_invitations(session: Session, svc: Services, game: Game, invitations: list[Invitation],
                      creator: Player, now: datetime, inbound_id: int,
                      thread: tuple[str, ...] | None = None) -> list[QueuedMail]:
    mails = []
    people = [s.player.address for s in sorted(game.seats, key=lambda s: s.seat) if s.player is not None]
    bots = sum(1 for s in game.seats if s.player is None)
    computers = tuple(seat_name(s) for s in sorted(game.seats, key=lambda s: s.seat) if s.player is None)
    for inv in invitations:
        invitee = _player_by_address(session, inv.address)
        address = make_invite_address(svc.settings.secret_key, svc.settings.mail_domain, inv.id)
        detail = mc.Invitation(game_id=game.id, inviter_name=creator.display_name or creator.address,
                               inviter_address=creator.address,
                               players=tuple(a for a in people if a not in (inv.address, creator.address)),
                               reply_address=address, rules=game.rules, bots=bots,
                               confirm=inv.address == creator.address, title=game.title or "",
                               computers=computers)
        ctx = mc.MailContext(recipient=recipient_for(invitee, svc), detail=detail)
        out = queue_mail(session, svc, ctx, player=invitee, game=game, now=now, inbound_id=inbound_id, thread=thread)
        if out is not None:
            mails.append(out)
    return mails


def _invitation_reply(session: Session, svc: Services, row: ReceivedRow, mail: IncomingMail,
                      now: datetime, auth: SenderAuth = NOT_CHECKED) -> Outcome:
    settings = svc.settings
    try:
        token = parse_invite_address(settings.secret_key, settings.mail_domain, row.recipient)
    except BadAddress as error:
        return Outcome(InboundStatus.REJECTED, "BAD_ADDRESS", {"problem": error.code})
    inv = session.get(Invitation, token.invitation_id)
    if inv is None:
        return Outcome(InboundStatus.REJECTED, "NO_SUCH_INVITATION", {"invitation": token.invitation_id})
    if inv.address != mail.from_address or auth.refused:
        details = {"invitation": inv.id, "sender": mail.from_address}
        if auth.refused:
            details["authentication"] = auth.as_json()
        return Outcome(InboundStatus.REJECTED, "FORGED_SENDER", details)
    if inv.kind == "substitute":  # taking over an absent player's seat (README, "Time")
        return answer_substitute_invitation(session, svc, row, mail, inv, now)
    game = load_game(session, inv.game_id)
    if inv.status != InvitationStatus.PENDING or game.status != GameStatus.INVITING:
        return Outcome(InboundStatus.IGNORED, "INVITATION_CLOSED", {"invitation": inv.id})
    command = read_command(mail, expected="invitation", pass_count=3)
    seat = next(s for s in game.seats if s.seat == inv.seat)
    invitee = seat.player
    if not isinstance(command, (cmd.Accept, cmd.Decline)):
        # Neither a yes nor a no: ask again (the sender is the invited address), never guess.
        mails = reply(session, svc, invitee, mc.RequestRejected("INVITATION_UNCLEAR", {"game": game.id}), now,
                      row.id, reply_to=row.recipient) if invitee is not None else []
        return Outcome(InboundStatus.REJECTED, "INVITATION_UNCLEAR", {"invitation": inv.id}, mails)
    accepted = isinstance(command, cmd.Accept)
    creator = game.creator
    mails: list[QueuedMail] = []
    if accepted:
        inv.status = InvitationStatus.ACCEPTED
        seat.status = SeatStatus.JOINED
    else:
        inv.status = InvitationStatus.DECLINED
        seat.status = SeatStatus.BOT
        seat.bot = settings.bot_name
    session.flush()
    if creator is not None and invitee is not None and invitee.id == creator.id:
        # The creator confirmed their own game: now the others are invited.
        others = session.scalars(select(Invitation).where(
            Invitation.game_id == game.id, Invitation.id != inv.id, Invitation.status == InvitationStatus.PENDING)
        ).all()
        if accepted:
            mails += _send_invitations(session, svc, game, list(others), creator, now, row.id)
        else:
            game.status = GameStatus.ABORTED
            return Outcome(InboundStatus.DONE, "GAME_WITHDRAWN", {"game": game.id}, mails)
    still = tuple(s.player.display_name or s.player.address for s in game.seats
                  if s.status == SeatStatus.INVITED and s.player is not None)
    if creator is not None and invitee is not None and still:
        # The creator hears of every answer (their own confirmation included) and who is awaited.
        detail = mc.InvitationAccepted(game_id=game.id, player_name=invitee.display_name or invitee.address,
                                       accepted=accepted, still_waiting=still)
        mails += reply(session, svc, creator, detail, now, row.id, game=game)
    if not still:
        mails += start_game(session, svc, game, inbound_id=row.id)
    return Outcome(InboundStatus.DONE, "INVITATION_ACCEPTED" if accepted else "INVITATION_DECLINED",
                   {"game": game.id, "seat": seat.seat}, mails)
