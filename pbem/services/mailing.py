"""Turning game states into mails and mails into outbox rows.

``game_context`` builds what one seat may see of a game (from the engine's per-seat view) in the
shape the templates read (:mod:`pbem.mail.context`); ``queue_mail`` renders a mail and writes its
outbox row in the caller's transaction (the row is sent after commit by a worker), returning a
:class:`QueuedMail`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pbem.config import Settings
from pbem.db.models import Game, OutboundMessage, OutboundStatus, Player, Seat
from pbem.db.writes import PendingRow, add_row
from pbem.engine import (
    CALL,
    CHARGE,
    DEAL,
    DISCARD,
    MIX,
    MOON,
    OVER,
    PASS,
    PLAY,
    GameState,
    Rules,
    card_points,
    chargeable_cards,
)
from pbem.engine.cards import CARD_NAMES
from pbem.mail import context as mc
from pbem.mail.addresses import claimed_game_id, make_reply_address
from pbem.mail.reading.message import IncomingMail
from pbem.mail.links import game_link, unsubscribe_link

from . import bot_names
from .app import Services
from .gamestore import current_state
from .reading import READ_FROM_SUBJECT
from .seat_knowledge import SeatFacts, seat_facts, team_values
from .talk import with_unseen_talk

ERROR_KINDS = ("move_rejected", "request_rejected")


def seat_names(seats: list[Seat]) -> tuple[str, ...]:
    return tuple(seat_name(s) for s in sorted(seats, key=lambda s: s.seat))


def seat_name(seat: Seat) -> str:
    name = _person_name(seat)
    return name if name is not None else bot_name(seat)


def _person_name(seat: Seat) -> str | None:
    """The name of the person in ``seat`` (a stand-in bot plays under it), or None for a computer player."""
    if seat.player is not None and (seat.bot is None or seat.player_id is not None):
        return seat.player.display_name or seat.player.address.split("@")[0]
    return None


def bot_name(seat: Seat) -> str:
    """How the computer player in ``seat`` is named in mails and pages (:mod:`pbem.services.bot_names`:
    a first name of its own at this table, and its strength; translated by ``queue_mail``)."""
    game = seat.game
    game_id = seat.game_id if seat.game_id is not None else (game.id if game is not None else None)
    table = game.seats if game is not None else ()
    humans = [name for s in table if s.seat != seat.seat and (name := _person_name(s)) is not None]
    return bot_names.label(game_id or 0, seat.seat, seat.bot, humans)


def recipient_for(player: Player, svc: Services) -> mc.Recipient:
    return mc.Recipient(
        name=player.display_name or player.address.split("@")[0],
        address=player.address,
        language=player.language or svc.settings.default_language,
        timezone=player.timezone or "UTC",
    )


def reply_address(svc: Services, game: Game, seat: Seat) -> str:
    s = svc.settings
    return _reply_address(s.secret_key, s.mail_domain, game.id, seat.seat, seat.decisions)


def game_url(svc: Services, game: Game, seat: int) -> str:
    return _game_url(svc.settings, game.id, seat)


# Signed addresses and links are pure functions of their parts, and the same ones are written
# into mail after mail (each seat's link, in every mail of the game; the reply address until the
# seat decides).  Signing costs tens of microseconds (itsdangerous derives its key on every call).
@functools.lru_cache(maxsize=8192)
def _reply_address(secret: str, domain: str, game_id: int, seat: int, decision: int) -> str:
    return make_reply_address(secret, domain, game_id, seat, decision)


@functools.lru_cache(maxsize=8192)
def _game_url(settings: Settings, game_id: int, seat: int) -> str:
    return game_link(settings, game_id, seat)


@functools.lru_cache(maxsize=8192)
def unsubscribe_url(settings: Settings, player_id: int, game_id: int | None = None, seat: int | None = None) -> str:
    """The signed one-click unsubscribe link (``pbem.mail.links``), kept like the others."""
    return unsubscribe_link(settings, player_id=player_id, game_id=game_id, seat=seat)


def _moon(state: GameState, moon: object | None) -> mc.Moon | None:
    if moon is None:
        return None
    # The moon total the hand was scored with (charged values under Turbo, RULES.md §6.4); a moon
    # recorded without one is scored on the rules' table.
    m = getattr(moon, "total", 0) or state.rules.table.moon_total * (2 if moon.kind == "sun" else 1)  # type: ignore[attr-defined]
    return mc.Moon(shooter=moon.seat, kind=moon.kind, scoring=moon.scoring, total=m,  # type: ignore[attr-defined]
                   team=bool(getattr(moon, "team", False)))


def hand_results(state: GameState) -> tuple[mc.HandResult, ...]:
    """Every scored hand; with a partnership (RULES.md §6.1) the teams' hand scores and totals too
    (team mode: the team's, which both partners carry; individual mode: the partners' sums)."""
    rules = state.rules
    teams = bool(rules.teams)
    return tuple(
        mc.HandResult(hand_number=k + 1, points=tuple(points), totals=tuple(totals), moon=_moon(state, moon),
                      team_points=team_values(rules, tuple(points)) if teams else (),
                      team_totals=team_values(rules, tuple(totals)) if teams else ())
        for k, (points, totals, moon) in enumerate(state.history)
    )


@dataclass(frozen=True)
class TableView:
    """What every seat sees alike of a game at one moment (``table_view``): worked out once for
    the mails of a turn, then completed per seat by ``game_context``."""

    rows: tuple[Seat, ...]
    names: tuple[str, ...]
    phase: str
    trick: tuple[mc.Play, ...]
    last_trick: mc.FinishedTrick | None
    to_act: frozenset[int]
    waiting_for: tuple[int, ...]
    waiting_since: datetime | None
    history: tuple[mc.HandResult, ...]


def table_view(game: Game, seats: list[Seat], state: GameState) -> TableView:
    """The part of the mails' view of ``state`` that is the same for every seat (no hand in it)."""
    rows = tuple(sorted(seats, key=lambda s: s.seat))
    n = state.players
    last = None
    if state.last_trick is not None:
        leader, cards, winner, points = state.last_trick
        last = mc.FinishedTrick(
            number=state.tricks_played,
            plays=tuple(mc.Play((leader + k) % n, state_card) for k, state_card in enumerate(_names(cards))),
            winner=winner,
            points=points,
            boosted=len(cards) > n,  # RULES.md §6.5: a boosted trick holds two rounds
            # RULES.md §6.6: winner -1, every led-suit card cancelled (the trick stays on the table);
            # a trick won with the carried pile counts its points (its cards, when the state says them).
            cancelled=winner < 0,
            carried=tuple(state.last_carried) if winner >= 0 else (),
            ten_of_clubs=ten_of_clubs_factor(state, _names(cards)) if winner >= 0 else 0,
        )
    waiting_for = tuple(state.seats_to_act())
    to_act = frozenset(waiting_for)
    since = [r.waiting_since for r in rows if r.seat in to_act and r.waiting_since is not None]
    return TableView(
        rows=rows,
        names=seat_names(list(rows)),
        phase={CALL: "call", DEAL: "deal", MIX: "mix", PASS: "pass", CHARGE: "charge", PLAY: "play",
               DISCARD: "discard", MOON: "moon", OVER: "over"}.get(state.phase, "play"),
        trick=tuple(mc.Play(s, c) for s, c in state.trick_cards()),
        last_trick=last,
        to_act=to_act,
        waiting_for=waiting_for,
        waiting_since=min(since) if since else None,
        history=hand_results(state),
    )


def game_context(svc: Services, game: Game, seats: list[Seat], state: GameState, seat: int, *,
                 table: TableView | None = None) -> mc.GameContext:
    """What ``seat`` may see of ``state``, for a mail (never another seat's hidden cards).
    ``table``: ``table_view(game, seats, state)`` when the caller has it already."""
    if table is None:
        table = table_view(game, seats, state)
    rows = table.rows
    own_pass = state.passes[seat]
    rules = state.rules
    # What this seat may know of the teams and the kitty (the kitty's cards only for its taker,
    # the other seats' points without them: RULES.md §6.2).
    facts = seat_facts(state, seat)
    charging = state.phase == CHARGE
    return mc.GameContext(
        game_id=game.id,
        title=game.title,
        seat=seat,
        names=table.names,
        hand_number=state.hand_no,
        pass_direction=state.pass_direction,  # type: ignore[arg-type]
        phase=table.phase,  # type: ignore[arg-type]
        hand=state.hand(seat),
        totals=tuple(state.totals),
        hand_points=facts.points,
        reply_address=reply_address(svc, game, rows[seat]),
        game_url=game_url(svc, game, seat),
        pass_count=rules.pass_count,
        trick=table.trick,
        trick_number=state.tricks_played + 1,
        last_trick=table.last_trick,
        to_move=state.to_move if state.phase == PLAY else None,
        # RULES.md §6.4: a seat with nothing chargeable is never waited for, so who else is still to
        # charge would tell who holds a chargeable card: the reader learns only its own part.
        waiting_for=tuple(s for s in table.waiting_for if s == seat) if charging else table.waiting_for,
        legal=state.legal_cards() if state.phase == PLAY and state.to_move == seat else (),
        hearts_broken=state.hearts_broken,
        passed=() if own_pass is None else _names(own_pass),
        received=tuple(state.received_cards(seat)) if state.phase != PASS else (),  # a card received twice, twice
        history=table.history,
        target=None if rules.end_after_hands else rules.target,
        end_after_hands=rules.end_after_hands,
        preset=rules.preset,
        deadline=rows[seat].deadline_at if seat in table.to_act else None,
        waiting_since=table.waiting_since,
        partnership=facts.partnership,
        teams=facts.teams,
        partner=facts.partner,
        team_totals=facts.team_totals,
        team_points=facts.team_points,
        kitty_form=rules.table.kitty_form,  # two decks: the leftovers, for the first trick's winner (§6.6)
        kitty_size=facts.kitty_size,
        kitty_exchange=rules.kitty_exchange,
        kitty_taker=facts.kitty_taker,
        kitty_trick=facts.kitty_trick,
        kitty=facts.kitty if facts.took_kitty else (),
        discarded=facts.discarded if facts.took_kitty else (),
        discard_count=state.discard_count,
        pass_call=tuple(state.pass_call) if state.phase != CALL else (),
        caller=state.next_dealer if state.phase in (CALL, DEAL) else (state.dealer if state.pass_call else None),
        call_choices=tuple(state.call_choices()) if state.phase == CALL and state.next_dealer == seat else (),
        may_decline=state.may_decline and seat in state.seats_to_pass(),
        declined=seat in state.declined,
        **(turbo_view(state, seat, facts) if rules.turbo else {}),
        booster_nines=rules.booster_nines,
        trick_boosted=rules.booster_nines and facts.trick_boosted,
        boost_round=rules.booster_nines and facts.boost_round,
        decks=state.decks,
        carried=tuple(state.carried),
        carried_tricks=getattr(state, "carried_tricks", 0),
    )


def charge_values(rules: Rules) -> tuple[tuple[str, int], ...]:
    """Every chargeable card of ``rules`` (RULES.md §6.4) with its value before a charge: Q♠'s and
    A♥'s penalty points, the bonus card's bonus, 10♣'s 0 (it multiplies a score instead)."""
    def value(card: str) -> int:
        if card == rules.bonus_card and rules.jd_bonus:
            return rules.jd_bonus
        return card_points(rules, [card])
    return tuple((card, value(card)) for card in chargeable_cards(rules))


def turbo_view(state: GameState, seat: int, facts: SeatFacts) -> dict[str, Any]:
    """What ``seat`` may see of the charges (RULES.md §6.4), from its facts
    (:mod:`pbem.services.seat_knowledge`): its own charge and choices; everyone's once all have
    decided, never another seat's before."""
    own = facts.charges[seat] if facts.charges else None  # () before this hand's charge phase
    return {
        "turbo": True,
        "charge_limit": facts.charge_limit,
        "charge_values": charge_values(state.rules),
        "charge_choices": facts.charge_choices,
        "own_charge": None if own is None else tuple(own),
        "charges": tuple(tuple(c or ()) for c in facts.charges) if facts.charges_revealed else (),
        "suits_led": state.suits_led,
    }


def ten_of_clubs_factor(state: GameState, cards: Sequence[str]) -> int:
    """Turbo (RULES.md §6.4): what the 10♣ among a trick's ``cards`` multiplies its taker's hand score
    by, in ``state``'s hand: 2, or 4 when it was charged; 0 without Turbo or without it."""
    if not state.rules.turbo or "TC" not in cards:
        return 0
    return 4 if "TC" in state.charged_cards else 2


def _names(indices: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(CARD_NAMES[i] for i in indices)


def seat_view(svc: Services, game: Game | None, player: Player | None) -> mc.GameContext | None:
    """``game`` as ``player``'s own seat sees it, for a notice about the game (a reply from another
    address, an altered address, a bounce): with it the notice has the game's subject, its
    ``X-Hearts-Game`` and ``X-Hearts-Hand``, and sits in its thread.  None when the player has no
    seat in the game."""
    if game is None or player is None:
        return None
    seats = sorted(game.seats, key=lambda s: s.seat)
    seat = next((s for s in seats if s.player_id == player.id), None)
    if seat is None:
        return None
    return game_context(svc, game, seats, current_state(game), seat.seat)


def claimed_game(session: Session, svc: Services, recipient: str, player: Player | None) -> Game | None:
    """The game an unverifiable reply address (altered, or signed with another key) names, if
    ``player`` has a seat in it: only to thread the notice about it there, never to act on."""
    game_id = claimed_game_id(svc.settings.mail_domain, recipient)
    if game_id is None or player is None:
        return None
    game = session.get(Game, game_id)
    if game is None or not any(s.player_id == player.id for s in game.seats):
        return None
    return game


#: A Message-ID we put in our own In-Reply-To and References: printable ASCII, one ``@``, short.
_THREADABLE_ID = re.compile(r"<[!-;=?-~]{1,200}@[!-;=?-~]{1,200}>")


def answer_thread(mail: IncomingMail, game: Game | None = None) -> tuple[str, ...] | None:
    """The thread of an answer to a received request (``new@``): In-Reply-To the request's
    Message-ID, References the game's root first (so the game's later mails join the same
    thread).  A Message-ID we would not write in a header is left out."""
    root = (game.thread_id,) if game is not None and game.thread_id else ()
    request = mail.message_id or ""
    if not _THREADABLE_ID.fullmatch(request) or request in root:
        return root or None
    return (*root, request)


def error_replies_today(session: Session, address: str, now: datetime) -> int:
    return session.scalar(
        select(func.count()).select_from(OutboundMessage).where(
            OutboundMessage.recipient == address,
            OutboundMessage.kind.in_(ERROR_KINDS),
            OutboundMessage.created_at >= now - timedelta(days=1),
        )
    ) or 0


def queue_mail(session: Session, svc: Services, ctx: mc.MailContext, *, player: Player | None,
               game: Game | None, now: datetime, inbound_id: int | None = None,
               thread: str | Sequence[str] | None = None, reply_to: str | None = None) -> QueuedMail | None:
    """Render ``ctx`` and write its outbox row; error mails beyond the daily cap are dropped (None).
    ``reply_to`` overrides the context's reply address (e.g. an invitation's, for a question about it);
    ``thread`` the game's root (a References chain, oldest first: `answer_thread`).
    A mail that shows ``game`` from the recipient's own seat carries the table talk that seat has
    not heard yet (:func:`pbem.services.talk.with_unseen_talk`), whatever its kind.

    The row is buffered and inserted with the transaction's other mails in one statement
    (:mod:`pbem.db.writes`).  In a transaction whose mails its own task sends right after the
    commit (:func:`claim_for_sending`), the row is written already claimed by that task.
    """
    address = ctx.recipient.address
    if ctx.kind in ERROR_KINDS and error_replies_today(session, address, now) >= svc.settings.error_replies_per_day:
        return None
    if ctx.game is not None and game is not None and player is not None and not ctx.game.table_talk:
        ctx = with_unseen_talk(session, game, player, ctx)  # any mail about the game carries the unseen talk
    ctx = bot_names.localized(ctx, ctx.recipient.language)  # computer players' labels in the reader's words
    read_from_subject = session.info.get(READ_FROM_SUBJECT)
    if read_from_subject and player is not None and ctx.game is not None and player.id in read_from_subject:
        # The move of this player's mail was read from its Subject: the first mail to them says so.
        ctx = replace(ctx, game=replace(ctx.game, read_from_subject=read_from_subject.pop(player.id)))
    composed = svc.composer.compose(
        ctx.kind,
        ctx,
        thread=thread if thread is not None else (game.thread_id if game is not None else None),
        date=now,
        reply_to=reply_to,
    )
    lease_until: datetime | None = session.info.get(_SEND_NOW)
    values = {
        "game_id": game.id if game is not None else None,
        "player_id": player.id if player is not None else None,
        "recipient": composed.recipient,  # as the envelope needs it (an IDNA domain in ASCII)
        "kind": ctx.kind,
        "message_id": composed.message_id,
        "raw": composed.raw,
        "quoted": composed.quoted,
        "status": OutboundStatus.PENDING,
        "attempts": 0 if lease_until is None else 1,
        "inbound_id": inbound_id,
        "created_at": now,
        "next_attempt_at": now if lease_until is None else lease_until,
    }
    mail = QueuedMail(add_row(session, _OUTBOX, values, returning=True), values)
    if lease_until is not None:
        session.info[_CLAIMED].append(mail)
    return mail


class QueuedMail:
    """An outbox row written in this transaction: what was written, and its ``id`` (known once the
    row is inserted; reading it inserts the transaction's waiting rows)."""

    __slots__ = ("_row", "recipient", "kind", "raw", "message_id", "attempts", "next_attempt_at")

    def __init__(self, row: PendingRow, values: dict[str, Any]) -> None:
        self._row = row
        self.recipient: str = values["recipient"]
        self.kind: str = values["kind"]
        self.raw: bytes = values["raw"]
        self.message_id: str = values["message_id"]
        self.attempts: int = values["attempts"]
        self.next_attempt_at: datetime = values["next_attempt_at"]

    @property
    def id(self) -> int:
        value = self._row.id
        if value is None:
            raise RuntimeError("outbox row not written: its transaction was rolled back")
        return value

    def __repr__(self) -> str:
        return f"<QueuedMail {self.kind} to {self.recipient}>"


_OUTBOX = OutboundMessage.__table__
_SEND_NOW = "pbem.send_now_lease"
_CLAIMED = "pbem.send_now_mails"


def claim_for_sending(session: Session, lease_until: datetime) -> list[QueuedMail]:
    """Write this transaction's mails already claimed until ``lease_until`` (one attempt counted,
    not due before then), for the caller to send right after the commit without a claim of its
    own; returns the list the mails are added to.  If the caller dies first, the sweep sends
    them once the lease has run out."""
    session.info[_SEND_NOW] = lease_until
    return session.info.setdefault(_CLAIMED, [])
