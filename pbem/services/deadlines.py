"""Deadlines of long games (README, "Time"): by when a seat must decide, and the reminders.

When the game starts waiting for a seat's decision (:func:`update_waiting`, which
``games.settle`` calls after every turn), the seat gets ``waiting_since`` = now and
``deadline_at`` = now + the game's ``deadline_hours``; both are cleared once the seat has decided.
With ``skip_weekends`` the hours falling on a Saturday or a Sunday *in UTC* do not count: the
players of one game often live in different zones, and one deadline for the whole table is the
easiest to explain (mails still show it in each reader's own zone). A player on vacation in a game
whose absence policy is not ``bot`` has their deadlines counted from the end of the vacation.

:func:`pbem.services.tick.tick` (the ``pbem.tick`` task, queued by Celery beat every minute) then takes, for each
seat with a deadline, the one step that is due, each exactly once (``reminders_sent`` counts them):

1. ``reminder_hours`` before the deadline: a ``reminder`` mail (stage ``before``);
2. at the deadline: a ``reminder`` mail (stage ``deadline``) saying what will happen, and when,
   once the grace period ends;
3. at the deadline + ``grace_hours``: the game's absence policy (:mod:`pbem.services.absence`).

The default grace period is :data:`DEFAULT_GRACE_HOURS` (12 hours), so that by default the player
the game waits for is told both before the deadline and at it, and has half a day left to answer
before anything is done in their place. A game may ask for ``grace: 0``: then steps 2 and 3 fall
together, and the policy's own mail at the deadline (``stand_in``, ``game_paused``…) is the notice.

A tick that comes late (the scheduler was down) takes only the latest step due: nobody is told
"24 hours left" about a deadline that has already passed. The tick also ends the vacations that
are over and sends the daily digests (:mod:`pbem.services.digest`).
Time comes only from ``svc.clock``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy.orm import Session

from pbem.db.models import Game, GameStatus, OutboundMessage, Seat, SeatStatus
from pbem.engine import OVER, GameState
from pbem.mail import context as mc
from pbem.mail.notation import fold

from .app import Services
from .durations import duration_hours
from .gamestore import current_state
from .mailing import game_context, queue_mail, recipient_for
from .turns import Turn, deadline_default, default_decision, is_computer

POLICIES = ("bot", "pause", "substitute")
MAX_DEADLINE_HOURS = 24 * 60
MAX_GRACE_HOURS = 24 * 14
MAX_REMINDER_HOURS = 24 * 7
#: The grace period of a game that names none: the at-deadline reminder, then half a day to answer.
DEFAULT_GRACE_HOURS = 12
#: ``reminders_sent`` values: the early reminder, then the one at the deadline.
SENT_BEFORE, SENT_AT_DEADLINE = 1, 2


# -- a game's timing, from a new-game mail or the command line ------------------------------------


class BadTiming(ValueError):
    """A timing option that cannot be used; ``code`` names which (``BAD_DEADLINE``…)."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(f"{code}: {text!r}")
        self.code = code
        self.text = text


@dataclass(frozen=True)
class Timing:
    """How long a seat has to decide, and what happens when it does not."""

    deadline_hours: int = 72
    skip_weekends: bool = False
    grace_hours: int = DEFAULT_GRACE_HOURS
    reminder_hours: int = 24
    absence_policy: str = "bot"

    def __post_init__(self) -> None:
        if not 1 <= self.deadline_hours <= MAX_DEADLINE_HOURS:
            raise BadTiming("BAD_DEADLINE", str(self.deadline_hours))
        if not 0 <= self.grace_hours <= MAX_GRACE_HOURS:
            raise BadTiming("BAD_GRACE", str(self.grace_hours))
        if not 0 <= self.reminder_hours <= MAX_REMINDER_HOURS:
            raise BadTiming("BAD_REMINDER", str(self.reminder_hours))
        if self.absence_policy not in POLICIES:
            raise BadTiming("BAD_POLICY", self.absence_policy)

    def apply(self, game: Game) -> None:
        for f in fields(self):
            setattr(game, f.name, getattr(self, f.name))


#: Option names (folded, spaces as ``_``, as the mail reader gives them) -> Timing field.
TIMING_OPTIONS: Mapping[str, str] = {
    **dict.fromkeys(("deadline", "prazo", "termen", "termen_limita"), "deadline_hours"),
    **dict.fromkeys(("weekends", "weekend", "fins_de_semana", "fim_de_semana", "weekenduri",
                     "weekendurile"), "skip_weekends"),
    **dict.fromkeys(("grace", "tolerancia", "carencia", "gratie", "gratia"), "grace_hours"),
    **dict.fromkeys(("reminder", "lembrete", "aviso", "memento", "reamintire"), "reminder_hours"),
    **dict.fromkeys(("policy", "absence", "politica", "ausencia", "absenta"), "absence_policy"),
}
_SKIP_WORDS = frozenset({"skip", "skipped", "skip them", "no", "off", "not counted", "dont count", "pular",
                         "saltar", "ignorar", "nao", "nao contam", "sem", "fara", "sari", "exclude", "exclus"})
_COUNT_WORDS = frozenset({"count", "counted", "yes", "on", "contar", "contam", "sim", "da", "numara", "include"})
_POLICY_WORDS = {
    **dict.fromkeys(("bot", "bots", "computer", "robo", "robot", "computador", "calculator"), "bot"),
    **dict.fromkeys(("pause", "pausa", "pauza"), "pause"),
    **dict.fromkeys(("substitute", "substituto", "substituir", "replace", "inlocuitor", "inlocuire"),
                    "substitute"),
}


def parse_hours(text: str, code: str = "BAD_DEADLINE") -> int:
    """``48``, ``48h``, ``2d``, ``2 dias``, ``1 săptămână`` -> hours."""
    hours = duration_hours(text)
    if hours is None:
        raise BadTiming(code, str(text))
    return hours


def _parse_weekends(text: str) -> bool:
    words = " ".join(re.findall(r"[a-z]+", fold(str(text))))
    if words in _SKIP_WORDS:
        return True
    if words in _COUNT_WORDS:
        return False
    raise BadTiming("BAD_WEEKENDS", str(text))


def _parse_policy(text: str) -> str:
    policy = _POLICY_WORDS.get(fold(str(text)).strip())
    if policy is None:
        raise BadTiming("BAD_POLICY", str(text))
    return policy


def timing_from_options(options: Mapping[str, Any]) -> Timing:
    """A Timing from option names and values as written (unknown names are a caller's business)."""
    values: dict[str, Any] = {}
    for key, value in options.items():
        name = TIMING_OPTIONS.get(re.sub(r"[\s-]+", "_", fold(str(key)).strip()))
        if name == "deadline_hours":
            values[name] = parse_hours(value, "BAD_DEADLINE")
        elif name == "grace_hours":
            values[name] = parse_hours(value, "BAD_GRACE")
        elif name == "reminder_hours":
            values[name] = parse_hours(value, "BAD_REMINDER")
        elif name == "skip_weekends":
            values[name] = value if isinstance(value, bool) else _parse_weekends(value)
        elif name == "absence_policy":
            values[name] = _parse_policy(value)
    return Timing(**values)


def pop_timing(options: dict[str, Any]) -> Timing:
    """Take the timing options out of a new game's ``options`` (the rest are rules options)."""
    mine = {key: options.pop(key) for key in list(options)
            if re.sub(r"[\s-]+", "_", fold(str(key)).strip()) in TIMING_OPTIONS}
    return timing_from_options(mine)


# -- arithmetic ---------------------------------------------------------------------------------


def add_hours(start: datetime, hours: float, *, skip_weekends: bool) -> datetime:
    """``start`` + ``hours``; with ``skip_weekends`` the hours of Saturdays and Sundays (UTC) do
    not count. A deadline that falls due just as a weekend starts stays at Saturday 00:00."""
    t = start.astimezone(UTC)
    remaining = timedelta(hours=hours)
    if not skip_weekends:
        return t + remaining
    while remaining > timedelta(0):
        if t.weekday() >= 5:  # Saturday or Sunday: the clock stands until Monday 00:00
            t = datetime.combine(t.date() + timedelta(days=7 - t.weekday()), time(0), tzinfo=UTC)
            continue
        weekend = datetime.combine(t.date() + timedelta(days=5 - t.weekday()), time(0), tzinfo=UTC)
        step = min(remaining, weekend - t)
        t += step
        remaining -= step
    return t


def deadline_for(game: Game, seat: Seat, start: datetime) -> datetime:
    """The deadline of a decision the seat is asked for at ``start``."""
    player = seat.player
    if (player is not None and player.vacation_until is not None and player.vacation_until > start
            and game.absence_policy != "bot"):
        start = player.vacation_until  # the deadlines of a player on vacation wait for them
    return add_hours(start, game.deadline_hours, skip_weekends=game.skip_weekends)


def acts_at(game: Game, seat: Seat) -> datetime | None:
    """When the absence policy applies to the seat (its deadline + the grace period)."""
    if seat.deadline_at is None:
        return None
    return add_hours(seat.deadline_at, game.grace_hours, skip_weekends=game.skip_weekends)


def reminder_at(game: Game, seat: Seat) -> datetime | None:
    """When the early reminder is due, or None when the game sends none for this decision
    (no reminder hours, or a deadline shorter than them: it would come at once)."""
    if seat.deadline_at is None or game.reminder_hours <= 0:
        return None
    at = seat.deadline_at - timedelta(hours=game.reminder_hours)
    if seat.waiting_since is not None and at <= seat.waiting_since:
        return None
    return at


def due_step(game: Game, seat: Seat, now: datetime) -> str | None:
    """The step of the module docstring due for the seat now: ``before``, ``deadline``, ``act``."""
    if seat.deadline_at is None:
        return None
    if now >= acts_at(game, seat):  # type: ignore[operator]
        return "act"
    if now >= seat.deadline_at:
        return "deadline" if seat.reminders_sent < SENT_AT_DEADLINE else None
    remind = reminder_at(game, seat)
    if remind is not None and now >= remind and seat.reminders_sent < SENT_BEFORE:
        return "before"
    return None


# -- waiting for seats --------------------------------------------------------------------------


def waits_for_person(seat: Seat) -> bool:
    """Whether a decision of this seat waits for a person (not a bot, nor a bot standing in)."""
    return seat.player is not None and seat.status == SeatStatus.JOINED and not is_computer(seat)


def start_waiting(game: Game, seat: Seat, now: datetime) -> None:
    seat.waiting_since = now
    seat.deadline_at = deadline_for(game, seat, now)
    seat.reminders_sent = 0


def stop_waiting(seat: Seat) -> None:
    seat.waiting_since = None
    seat.deadline_at = None
    seat.reminders_sent = 0


def update_waiting(turn: Turn) -> None:
    """After a turn: start the clock of each seat now asked for a new decision, stop it for the
    seats that decided (a new hand or a seat that moved again is a new decision)."""
    game, state = turn.game, turn.state
    waiting = set(state.seats_to_act()) if game.status == GameStatus.ACTIVE and state.phase != OVER else set()
    before = set(turn.before.seats_to_act())
    for seat in turn.seats:
        if seat.seat in waiting and waits_for_person(seat):
            if seat.waiting_since is None or seat.seat not in before or seat.seat in turn.movers or turn.dealt:
                start_waiting(game, seat, turn.now)
        elif seat.waiting_since is not None or seat.deadline_at is not None:
            stop_waiting(seat)


def restart_waiting(game: Game, seats: list[Seat], state: GameState, now: datetime) -> None:
    """Fresh deadlines for every seat the game waits for (after a pause, nothing is overdue)."""
    waiting = set(state.seats_to_act()) if state.phase != OVER else set()
    for seat in seats:
        if seat.seat in waiting and waits_for_person(seat):
            start_waiting(game, seat, now)
        else:
            stop_waiting(seat)


def send_reminder(session: Session, svc: Services, game: Game, seats: list[Seat], seat: Seat, stage: str,
                  now: datetime) -> OutboundMessage | None:
    state = current_state(game)
    # A decision with a default of its own in the rules says what that default is, not the policy.
    default_move = deadline_default(state, seat.seat)
    default = default_decision(default_move) if default_move is not None else ""
    detail = mc.Reminder(stage=stage, since=seat.waiting_since, deadline=seat.deadline_at,  # type: ignore[arg-type]
                         acts_at=acts_at(game, seat), policy=game.absence_policy,  # type: ignore[arg-type]
                         default=default)
    ctx = mc.MailContext(recipient=recipient_for(seat.player, svc), detail=detail,  # type: ignore[arg-type]
                         game=game_context(svc, game, seats, state, seat.seat))
    return queue_mail(session, svc, ctx, player=seat.player, game=game, now=now)
