"""Absent players (README, "Time"): the deadline policies, vacations, substitutes' answers.

**After a deadline and its grace period** (:func:`apply_absence_policy`, from the tick), by the
game's ``absence_policy``:

- ``bot``: a computer player decides for the absent player (``seat.stand_in = "deadline"``) and
  keeps doing so until they write again; they are told so;
- ``pause``: the game pauses (``stand_in = "paused"`` marks whose return resumes it); everyone is
  told;
- ``substitute``: a computer player keeps the game moving (``stand_in = "substitute_wanted"``) and
  the game's creator is asked to name a substitute (``replace <player> <address>``, by mail or on
  the command line). Asking the creator is the simplest choice that needs nobody's address book:
  the creator knows who could play; offering the seat to strangers would make us a spam source.
  The substitute gets an invitation (``invitations.kind = "substitute"``) and, on accepting,
  inherits the seat as it is: hand, points and all.

**Taking a seat back** (any mail from the player to their seat address ends the stand-in) is the
mail command :func:`pbem.services.commands.absence.take_seat_back`.

**Vacations** (``vacation until 12 December``, ``férias até 5 de janeiro``, ``concediu până pe 3
martie``, ``vacation for 2 weeks``; ``vacation off`` ends one): the date is read by ``dateparser``
in the player's time zone; a bare date means "away through that day" (back at the next midnight of
the player's zone). In every game of the player, by the game's policy, a computer player plays for
them (``bot``: ``stand_in = "vacation"``) or their deadlines are counted from the end of the
vacation (``pause`` and ``substitute``: an announced absence is not an abandoned seat). The other
players are told, and told again when the player is back. A vacation starts when it is announced,
or, planned ahead (``vacation from 20 December until 3 January``), on its first day: the tick
begins it (:func:`begin_due_vacations`) and only then are the tables told; ``vacation off`` before
then cancels it, and a new plan replaces the old one. Each player has
:data:`VACATION_DAYS_PER_YEAR` days per calendar year (UTC), counted in started days of absence;
asking for more is refused with a mail that says how many are left. A vacation ends at its date
(the tick), by ``vacation off``, or when the player writes to a seat a computer player holds for
them (coming back early); days not used return to the allowance.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from pbem.db.models import (
    Absence,
    Game,
    GameStatus,
    InboundStatus,
    Invitation,
    InvitationStatus,
    OutboundMessage,
    Player,
    Seat,
    SeatStatus,
)
from pbem.db.session import transaction
from pbem.engine import GameState, HandScored
from pbem.mail import context as mc
from pbem.mail.notation import fold
from pbem.mail.reading import commands as cmd
from pbem.mail.reading.message import IncomingMail

from .app import Services
from .creator import pause_game, resume_game
from .deadlines import deadline_for, start_waiting, stop_waiting, waits_for_person
from .games import get_or_create_player, settle
from .gamestore import current_state, load_game
from .mailing import seat_name
from .notify import decision_kind
from .reading import read_command
from .requests import Outcome, ReceivedRow, SeatRequest
from .substitutes import expire_substitute_invitations
from .table import creator_seat, sorted_seats, tell, tell_player, tell_table
from .turns import (
    PAUSED_FOR,
    STAND_IN_DEADLINE,
    STAND_IN_SUBSTITUTE,
    STAND_IN_VACATION,
    Turn,
    apply_move,
    begin_turn,
    deadline_default,
    default_decision,
    games_to_continue,
)

log = logging.getLogger("pbem.worker")

VACATION_DAYS_PER_YEAR = 30
#: A vacation may be announced at most this far ahead.
LONGEST_VACATION = timedelta(days=366)


# -- the policies -------------------------------------------------------------------------------------


def apply_absence_policy(session: Session, svc: Services, game: Game, seat: Seat,
                         now: datetime) -> list[OutboundMessage]:
    """The seat's deadline and grace period have passed: apply the game's policy."""
    seats = sorted_seats(game)
    state = current_state(game)
    deadline = seat.deadline_at
    stop_waiting(seat)
    default = deadline_default(state, seat.seat)
    if default is not None:
        return apply_deadline_default(session, svc, game, seats, seat, state, default, deadline, now)
    if game.absence_policy == "pause":
        seat.stand_in = PAUSED_FOR
        return pause_game(session, svc, game, now, detail=mc.GamePaused(by="deadline", seat=seat.seat))
    seat.stand_in = STAND_IN_SUBSTITUTE if game.absence_policy == "substitute" else STAND_IN_DEADLINE
    def notices(turn: Turn) -> list[OutboundMessage]:
        # Told first, but with the table as the computer player's move left it, not as it was.
        mails = tell(session, svc, game, seats, turn.state, seat,
                     mc.StandIn(reason=seat.stand_in, deadline=deadline), now)
        if game.absence_policy == "substitute":
            mails += ask_creator_for_substitute(session, svc, game, seats, turn.state, seat, now)
        return mails

    return settle(session, svc, begin_turn(game, seats, state, now), before_news=notices)


def apply_deadline_default(session: Session, svc: Services, game: Game, seats: list[Seat], seat: Seat,
                           state: GameState, move: Any, deadline: datetime | None,
                           now: datetime) -> list[OutboundMessage]:
    """A decision with a default of its own in the rules (``turns.deadline_default``: a moon
    choice, RULES.md §3; the kitty discard, §6.2) whose time ran out: the default is the move,
    whatever the absence policy, and the player is told what was decided and why. The seat stays
    theirs (no computer player, no pause): their next decision has a deadline of its own."""
    turn = begin_turn(game, seats, state, now)
    decision = default_decision(move)
    apply_move(session, turn, move)
    turn.defaulted[seat.seat] = decision
    moon = next((e.moon for e in turn.events if isinstance(e, HandScored) and e.moon is not None), None)
    detail = mc.DecisionDefaulted(
        decision=decision,  # type: ignore[arg-type]
        deadline=deadline,
        scoring=moon.scoring if moon is not None else "",
        kind=moon.kind if moon is not None else "moon",
        moon_total=state.t.moon_total * (2 if moon is not None and moon.kind == "sun" else 1),
        team=bool(getattr(moon, "team", False)),
        cards=tuple(getattr(move, "cards", ()) or ()),
        call=tuple(getattr(move, "call", ()) or ()),
    )

    def notice(turn: Turn) -> list[OutboundMessage]:
        return tell(session, svc, game, seats, turn.state, seat, detail, now)

    return settle(session, svc, turn, before_news=notice)


def ask_creator_for_substitute(session: Session, svc: Services, game: Game, seats: list[Seat], state: GameState,
                               seat: Seat, now: datetime) -> list[OutboundMessage]:
    mine = creator_seat(game, seats)
    if mine is None or mine.seat == seat.seat:  # no playing creator to ask: the operator is told
        log.warning("game %s: seat %s wants a substitute and no playing creator can name one; a computer "
                    "player holds it until `pbem game replace %s %s ADDRESS`", game.id, seat.seat, game.id, seat.seat)
        return []
    return tell(session, svc, game, seats, state, mine, mc.SubstituteWanted(seat=seat.seat), now)


# -- vacations -------------------------------------------------------------------------------------------

#: Words that may come before the date ("until", "for", "pe"…), folded.
_LEADING = frozenset({"until", "till", "to", "ate", "pana", "pina", "la", "pe", "for", "por", "durante",
                      "pentru", "timp", "de", "the", "o", "a", "as", "os", "na", "no", "em", "in"})


def parse_vacation_end(text: str, now: datetime, timezone: str) -> datetime | None:
    """When a vacation written as ``text`` ends (aware UTC), or None when it cannot be read."""
    return _parse_vacation_date(text, now, timezone, end=True)


def parse_vacation_start(text: str, now: datetime, timezone: str) -> datetime | None:
    """When a vacation planned ahead begins (aware UTC): a bare date means from that day's midnight
    in the player's zone. None when ``text`` cannot be read."""
    return _parse_vacation_date(text, now, timezone, end=False)


def _parse_vacation_date(text: str, now: datetime, timezone: str, *, end: bool) -> datetime | None:
    from dateparser.date import DateDataParser  # a third-party package slow to import: when first needed

    words = text.split()
    while words and fold(words[0]).strip(".,:;") in _LEADING:
        words.pop(0)
    if not words:
        return None
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        zone, timezone = ZoneInfo("UTC"), "UTC"
    parser = DateDataParser(languages=["en", "pt", "ro"], settings={
        "PREFER_DATES_FROM": "future",
        "RELATIVE_BASE": now.astimezone(zone).replace(tzinfo=None),
        "TIMEZONE": timezone,
        "RETURN_AS_TIMEZONE_AWARE": True,
    })
    data = parser.get_date_data(" ".join(words))
    when = data.date_obj
    if when is None:
        return None
    if data.period in ("day", "month", "year") and when.astimezone(zone).time() == time(0):
        # A date without a time: an end means away through that day, back at the next midnight of
        # their zone; a start, away from that day's midnight.
        when = datetime.combine(when.astimezone(zone).date() + timedelta(days=1 if end else 0), time(0),
                                tzinfo=zone)
    return when.astimezone(UTC)


def days_by_year(start: datetime, end: datetime) -> Counter[int]:
    """Started days of absence in [start, end), by calendar year (UTC)."""
    days: Counter[int] = Counter()
    t = start.astimezone(UTC)
    end = end.astimezone(UTC)
    while t < end:
        year_end = datetime(t.year + 1, 1, 1, tzinfo=UTC)
        part = min(end, year_end) - t
        days[t.year] += math.ceil(part / timedelta(days=1))
        t = year_end
    return days


def used_days(session: Session, player: Player, *, exclude: int | None = None) -> Counter[int]:
    used: Counter[int] = Counter()
    for absence in session.scalars(select(Absence).where(Absence.player_id == player.id)):
        if absence.id != exclude:
            used.update(days_by_year(absence.starts_at, absence.ends_at))
    return used


def open_absence(session: Session, player: Player, now: datetime) -> Absence | None:
    return session.scalars(select(Absence).where(
        Absence.player_id == player.id, Absence.starts_at <= now, Absence.ends_at > now)
        .order_by(Absence.id.desc())).first()


def player_games(session: Session, player: Player) -> list[tuple[Game, Seat]]:
    """The running games (active or paused) where the player has a seat, each locked, in id order."""
    ids = session.scalars(
        select(Seat.game_id).join(Game, Game.id == Seat.game_id).where(
            Seat.player_id == player.id, Seat.status == SeatStatus.JOINED,
            Game.status.in_((GameStatus.ACTIVE, GameStatus.PAUSED))).order_by(Seat.game_id)
    ).all()
    out = []
    for game_id in ids:
        game = load_game(session, game_id)
        out.append((game, next(s for s in game.seats if s.player_id == player.id)))
    return out


class VacationRefused(ValueError):
    def __init__(self, code: str, **details: object) -> None:
        super().__init__(code)
        self.code = code
        self.details = details


def check_allowance(used: Counter[int], start: datetime, until: datetime) -> None:
    """Raises ``VACATION_ALLOWANCE`` when [start, until) takes more days in a year than are left."""
    for year, days in sorted(days_by_year(start, until).items()):
        if used[year] + days > VACATION_DAYS_PER_YEAR:
            raise VacationRefused("VACATION_ALLOWANCE", allowance=VACATION_DAYS_PER_YEAR, asked=days,
                                  left=max(VACATION_DAYS_PER_YEAR - used[year], 0), year=year)


def start_vacation(session: Session, svc: Services, player: Player, until: datetime, now: datetime, *,
                   inbound_id: int | None = None) -> list[OutboundMessage]:
    """Set (or move) the player's vacation end; raises :class:`VacationRefused` beyond the allowance.
    Returns the mails to the other players; the caller confirms to the player."""
    if until <= now or until > now + LONGEST_VACATION:
        raise VacationRefused("VACATION_DATE")
    current = open_absence(session, player, now)
    start = current.starts_at if current is not None else now
    check_allowance(used_days(session, player, exclude=current.id if current is not None else None), start, until)
    if current is None:
        session.add(Absence(player_id=player.id, starts_at=now, ends_at=until, created_at=now))
    else:
        current.ends_at = until
    return _go_away(session, svc, player, until, now, inbound_id)


def _go_away(session: Session, svc: Services, player: Player, until: datetime, now: datetime,
             inbound_id: int | None) -> list[OutboundMessage]:
    """The vacation begins: in each game, a computer player or waiting deadlines; the tables told."""
    player.vacation_until = until
    mails: list[OutboundMessage] = []
    for game, seat in player_games(session, player):
        seats, state = sorted_seats(game), current_state(game)
        bot = game.absence_policy == "bot"
        if bot:
            seat.stand_in = STAND_IN_VACATION
            stop_waiting(seat)
        elif seat.deadline_at is not None:
            seat.deadline_at = deadline_for(game, seat, seat.waiting_since or now)
            seat.reminders_sent = 0
        mails += tell_table(session, svc, game, seats, state, mc.PlayerAway(seat=seat.seat, until=until, bot=bot),
                            now, inbound_id, skip=frozenset({seat.seat}))
        if bot and game.status == GameStatus.ACTIVE:
            mails += settle(session, svc, begin_turn(game, seats, state, now, inbound_id))
    session.flush()
    return mails


def upcoming_absences(session: Session, player: Player, now: datetime) -> list[Absence]:
    """The vacations the player planned ahead that have not begun, soonest first."""
    return list(session.scalars(select(Absence).where(Absence.player_id == player.id, Absence.starts_at > now)
                                .order_by(Absence.starts_at)))


def plan_vacation(session: Session, player: Player, starts: datetime, until: datetime, now: datetime) -> None:
    """A vacation from ``starts`` (later than ``now``) to ``until``, begun by the tick when its day
    comes (:func:`begin_due_vacations`); it replaces one planned before. Raises
    :class:`VacationRefused` for dates that do not fit (the end before the start, longer or further
    ahead than :data:`LONGEST_VACATION`, overlapping the vacation the player is on) or beyond the
    allowance, counted as if it had begun."""
    current = open_absence(session, player, now)
    if (until <= starts or until - starts > LONGEST_VACATION or starts > now + LONGEST_VACATION
            or (current is not None and starts < current.ends_at)):
        raise VacationRefused("VACATION_DATE")
    replaced = upcoming_absences(session, player, now)
    used = used_days(session, player)
    for absence in replaced:
        used.subtract(days_by_year(absence.starts_at, absence.ends_at))
    check_allowance(used, starts, until)
    for absence in replaced:
        session.delete(absence)
    session.add(Absence(player_id=player.id, starts_at=starts, ends_at=until, created_at=now))
    session.flush()


def begin_due_vacations(svc: Services, now: datetime, *,
                        continuing: list[tuple[int, int]] | None = None) -> list[int]:
    """The tick's part: begin every vacation planned ahead whose start has come (each player in its
    own transaction); the tables are told then.  The games where a computer now plays and stopped at
    the bound of a step are added to ``continuing`` (with their marks)."""
    def begin(session: Session, player: Player) -> list[OutboundMessage]:
        absence = open_absence(session, player, now)
        if player.vacation_until is not None or absence is None:
            return []
        return _go_away(session, svc, player, absence.ends_at, now, None)

    return _for_each_player(svc, select(Absence.player_id).join(Player, Player.id == Absence.player_id).where(
        Absence.starts_at <= now, Absence.ends_at > now, Player.vacation_until.is_(None))
        .distinct().order_by(Absence.player_id), begin, continuing)


def _for_each_player(svc: Services, due: Any, act: Callable[[Session, Player], list[OutboundMessage]],
                     continuing: list[tuple[int, int]] | None = None) -> list[int]:
    """The tick's vacations: ``act`` on each player that ``due`` selects, locked, in a transaction of
    its own (a player busy elsewhere is left for the next tick); the ids of the mails written, and
    the games left to continue added to ``continuing``."""
    with transaction(svc.session_factory) as session:
        player_ids = list(session.scalars(due))
    ids: list[int] = []
    for player_id in player_ids:
        try:
            with transaction(svc.session_factory) as session:
                player = session.get(Player, player_id, with_for_update=True, populate_existing=True)
                if player is None:
                    continue
                mails = act(session, player)
                session.flush()
                written = [m.id for m in mails]
                marked = games_to_continue(session)
        except (StaleDataError, OperationalError) as error:
            log.info("tick: vacation of player %s left for the next tick (%s)", player_id, type(error).__name__)
        else:
            ids += written
            if continuing is not None:
                continuing += marked
    return ids


def days_left(session: Session, player: Player, now: datetime) -> int:
    return max(VACATION_DAYS_PER_YEAR - used_days(session, player)[now.year], 0)


def end_vacation(session: Session, svc: Services, player: Player, now: datetime, *, early: bool,
                 inbound_id: int | None = None, confirm_in: SeatRequest | None = None) -> list[OutboundMessage]:
    """The player is back: computer players leave their seats, deadlines count again, the tables are
    told and so is the player (in the game of ``confirm_in`` when they asked by mail)."""
    player.vacation_until = None
    current = open_absence(session, player, now)
    if early and current is not None:
        current.ends_at = max(now, current.starts_at)
    mails: list[OutboundMessage] = []
    for game, seat in player_games(session, player):
        seats, state = sorted_seats(game), current_state(game)
        had_bot = seat.stand_in == STAND_IN_VACATION
        if had_bot:
            seat.stand_in = None
        if game.status == GameStatus.ACTIVE and seat.seat in state.seats_to_act() and waits_for_person(seat):
            if seat.waiting_since is None or had_bot:
                start_waiting(game, seat, now)
            elif early:  # the deadline counted from the planned end: count it from now instead
                seat.deadline_at = deadline_for(game, seat, now)
                seat.reminders_sent = 0
        mails += tell_table(session, svc, game, seats, state, mc.PlayerAway(seat=seat.seat, bot=had_bot, back=True),
                            now, inbound_id, skip=frozenset({seat.seat}))
    session.flush()
    detail = mc.VacationNoted(until=None, days_left=days_left(session, player, now), ended=True)
    if confirm_in is not None:
        mails += confirm_in.reply(detail)
    else:
        mails += tell_player(session, svc, player, detail, now, inbound_id=inbound_id)
    return mails


def end_due_vacations(svc: Services, now: datetime) -> list[int]:
    """The tick's part: end every vacation whose date has come (each in its own transaction)."""
    def end(session: Session, player: Player) -> list[OutboundMessage]:
        if player.vacation_until is None or player.vacation_until > now:
            return []
        return end_vacation(session, svc, player, now, early=False)

    return _for_each_player(svc, select(Player.id).where(Player.vacation_until.is_not(None),
                                                         Player.vacation_until <= now).order_by(Player.id), end)


# -- substitutes ------------------------------------------------------------------------------------------


def answer_substitute_invitation(session: Session, svc: Services, row: ReceivedRow, mail: IncomingMail,
                                 inv: Invitation, now: datetime) -> Outcome:
    """The invitee answered a ``substitute`` invitation (the sender is already checked)."""
    game = load_game(session, inv.game_id)
    invitee = get_or_create_player(session, inv.address, mail.from_name or None, now,
                                   language=svc.settings.default_language)
    details = {"game": game.id, "seat": inv.seat, "invitation": inv.id}
    seats = sorted_seats(game)
    seat = seats[inv.seat]
    if inv.status != InvitationStatus.PENDING or game.status not in (GameStatus.ACTIVE, GameStatus.PAUSED):
        mails = tell_player(session, svc, invitee, mc.RequestRejected("SUBSTITUTE_CLOSED", {"game": game.id}), now,
                            game=game, inbound_id=row.id)
        return Outcome(InboundStatus.IGNORED, "INVITATION_CLOSED", details, mails)
    command = read_command(mail, expected="invitation", pass_count=3)
    inviter = session.get(Player, inv.invited_by) if inv.invited_by is not None else None
    if isinstance(command, cmd.Decline):
        inv.status = InvitationStatus.DECLINED
        mails = []
        mine = creator_seat(game, seats)
        if inviter is not None and mine is not None and mine.player_id == inviter.id:
            mails = tell(session, svc, game, seats, current_state(game), mine,
                         mc.InvitationAccepted(game_id=game.id, player_name=invitee.display_name or invitee.address,
                                               accepted=False), now, row.id)
        return Outcome(InboundStatus.DONE, "SUBSTITUTE_DECLINED", details, mails)
    if any(s.player_id == invitee.id for s in seats):
        mails = tell_player(session, svc, invitee, mc.RequestRejected("ALREADY_PLAYING", {"address": invitee.address}),
                            now, game=game, inbound_id=row.id)
        return Outcome(InboundStatus.REJECTED, "ALREADY_PLAYING", details, mails)
    old_player, old_name, reason = seat.player, seat_name(seat), seat.stand_in
    inv.status = InvitationStatus.ACCEPTED
    expire_substitute_invitations(session, game, seat, keep=inv.id)
    seat.player, seat.player_id = invitee, invitee.id
    seat.status, seat.stand_in, seat.bot = SeatStatus.JOINED, None, None
    stop_waiting(seat)
    session.flush()
    mails: list[OutboundMessage] = []
    if old_player is not None:
        mails += tell_player(session, svc, old_player,
                             mc.SeatReplaced(seat=seat.seat, old_name=old_name, new_name=seat_name(seat),
                                             game_id=game.id), now, game=game, inbound_id=row.id)
    if reason == PAUSED_FOR and game.status == GameStatus.PAUSED and not any(s.stand_in == PAUSED_FOR for s in seats):
        mails += resume_game(session, svc, game, now, detail=mc.GameResumed(by="substitute", seat=seat.seat),
                             inbound_id=row.id)
    state = current_state(game)
    if game.status == GameStatus.ACTIVE and seat.seat in state.seats_to_act():
        start_waiting(game, seat, now)
    mails += tell_table(session, svc, game, seats, state,
                        mc.SeatReplaced(seat=seat.seat, old_name=old_name, new_name=seat_name(seat)), now, row.id)
    if game.status == GameStatus.ACTIVE and seat.seat in state.seats_to_act():
        moon_total = state.t.moon_total * (2 if state.shooter and state.shooter[1] == "sun" else 1)
        mails += tell(session, svc, game, seats, state, seat,
                      mc.YourTurn(decision=decision_kind(state.phase), moon_total=moon_total), now, row.id)  # type: ignore[arg-type]
    return Outcome(InboundStatus.DONE, "SUBSTITUTE_JOINED",
                   {**details, "replaced": old_player.address if old_player else None}, mails)
