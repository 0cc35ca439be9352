"""What a move costs, counted, within fixed budgets (README, "Benchmarks": durations are printed by
the benchmarks and never asserted; what can be counted is asserted here, the same on every run).

Four people play a standard game of one hand (a fixed seed, ``end_after_hands: 1``) by mail, once
with the default notifications and once with every card, on SQLite and PostgreSQL.  Each reply is
received as the SMTP front receives it (``intake.receive_inbound``) and processed as the worker
processes it (``inbound.process_inbound``, automatic moves included), in this process: no Celery, no
other thread, a clock that stands still.  Sending the mails written (the relay) is not counted.
For each received mail, from the front's store to the last outbox row its processing wrote,
:class:`Meter` counts:

- **round trips**: statements sent (SQLAlchemy's ``before_cursor_execute``, which also sees SQLite's
  ``BEGIN IMMEDIATE``) plus the COMMITs and ROLLBACKs that end a transaction (SQLAlchemy's
  ``commit`` and ``rollback`` events; a connection in autocommit sends none).  The BEGIN that
  PostgreSQL's driver sends before a transaction's first statement is not counted;
- **commits**: the transactions committed: COMMITs, and statements other than reads run in
  autocommit (each one commits on its own: ``pbem.db.session.single_statement`` on PostgreSQL);
- **MIME parses**: every parse of a mail's bytes by the standard library's ``email`` package (the
  mail received, the one it answers, a header block), counted where all of them pass
  (``Parser.parse`` and ``FeedParser.close``), once per outermost call;
- **renders per sent mail**: the Jinja templates rendered (``Template.render`` / ``generate``,
  outermost calls), divided by the outbox rows written; the most for one received mail, and over
  the game.

``BUDGETS`` holds, for each backend and notification mode, the most allowed over the whole game
and for any one received mail.  They are set at what the code costs: a change that lowers a cost
lowers its budget, and a change that must raise one says why in its commit message.  A failing
test prints every measured value as a row of ``BUDGETS``.  ``test_one_more_statement_breaks_the_budget``
checks that the meter sees one extra ``SELECT 1`` in a move and that the budgets are tight enough
to refuse it.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from email.feedparser import FeedParser
from email.parser import Parser
from pathlib import Path
from typing import Any

import jinja2
import pytest
from sqlalchemy import event, select, text

from pbem.db.models import Game, GameStatus, InboundMessage, InboundStatus, OutboundMessage
from pbem.db.session import transaction
from pbem.engine import Rules
from pbem.services import inbound
from pbem.services.app import Services
from pbem.services.games import SeatSpec, create_game, get_or_create_player, start_game
from pbem.services.intake import receive_inbound
from tests.harness.players import Received, choose, reply_bytes
from tests.integration.mailplay import address, make_services, outbox

# --- the budgets ---------------------------------------------------------------------------------

#: (backend, notifications) -> cost -> (most over the whole game, most for one received mail).
#: "renders_per_mail" is templates rendered per outbox row written; the others are counts.
BUDGETS: dict[tuple[str, str], dict[str, tuple[float, float]]] = {
    ("sqlite", "default"):        {"round_trips": (869, 28), "commits": (129, 3), "parses": (43, 1),
                                   "renders_per_mail": (2.0, 2.0)},
    ("sqlite", "every_card"):     {"round_trips": (953, 28), "commits": (129, 3), "parses": (43, 1),
                                   "renders_per_mail": (2.0, 2.0)},
    ("postgresql", "default"):    {"round_trips": (361, 11), "commits": (129, 3), "parses": (43, 1),
                                   "renders_per_mail": (2.0, 2.0)},
    ("postgresql", "every_card"): {"round_trips": (361, 11), "commits": (129, 3), "parses": (43, 1),
                                   "renders_per_mail": (2.0, 2.0)},
}

NOTIFICATIONS = ("default", "every_card")
SEED = "move-budget"
PLAYER_SEED = 1  # with SEED, a game of one hand (another seed may tie and play on)


# --- counting --------------------------------------------------------------------------------------


@dataclass
class MailCost:
    """What processing one received mail cost."""

    statements: int = 0
    commits_sent: int = 0  # COMMIT
    rollbacks_sent: int = 0  # ROLLBACK
    autocommitted: int = 0  # statements in autocommit
    parses: int = 0
    renders: int = 0
    mails: int = 0  # outbox rows written

    @property
    def round_trips(self) -> int:
        return self.statements + self.commits_sent + self.rollbacks_sent

    @property
    def commits(self) -> int:
        return self.commits_sent + self.autocommitted

    @property
    def renders_per_mail(self) -> float:
        """Renders per outbox row written (a mail rendered and not written counts as one)."""
        return self.renders / max(self.mails, 1)


@dataclass
class GameCost:
    """The cost of every received mail of a game, in the order they arrived."""

    received: list[MailCost] = field(default_factory=list)

    def over_the_game(self, cost: str) -> float:
        if cost == "renders_per_mail":
            mails = sum(m.mails for m in self.received)
            return round(sum(m.renders for m in self.received) / max(mails, 1), 3)
        return sum(getattr(m, cost) for m in self.received)

    def for_one_mail(self, cost: str) -> float:
        return round(max(getattr(m, cost) for m in self.received), 3)

    def row(self) -> dict[str, tuple[float, float]]:
        """The costs as a row of ``BUDGETS``."""
        return {cost: (self.over_the_game(cost), self.for_one_mail(cost)) for cost in COSTS}

    def detail(self) -> str:
        """Every counter over the game and for the costliest mail, for the failure message."""
        counters = [f.name for f in fields(MailCost)] + ["round_trips", "commits"]
        totals = {name: sum(getattr(m, name) for m in self.received) for name in counters}
        most = {name: max(getattr(m, name) for m in self.received) for name in counters}
        return (f"{len(self.received)} mails received; over the game {totals}; "
                f"most for any one mail (each counter on its own) {most}")


COSTS = ("round_trips", "commits", "parses", "renders_per_mail")


def violations(cost: GameCost, budget: dict[str, tuple[float, float]]) -> list[str]:
    """Each budget ``cost`` exceeds, as "<cost> over the game: <measured> > <budget>"."""
    found = []
    for name in COSTS:
        for scope, measured, allowed in (("over the game", cost.over_the_game(name), budget[name][0]),
                                         ("for one mail", cost.for_one_mail(name), budget[name][1])):
            if measured > allowed:
                found.append(f"{name} {scope}: {measured} > {allowed}")
    return found


class Meter:
    """Counts, while a mail is processed (``measuring``) and on this thread only, the statements,
    commits and rollbacks on ``svc``'s engine, the MIME parses and the template renders."""

    def __init__(self, svc: Services, monkeypatch: pytest.MonkeyPatch) -> None:
        self._thread = threading.get_ident()
        self._current: MailCost | None = None
        self._depth: Counter[str] = Counter()
        engine = svc.engine
        event.listen(engine, "before_cursor_execute", self._on_statement)
        event.listen(engine, "commit", self._on_commit)
        event.listen(engine, "rollback", self._on_rollback)
        # Every parse of the email package ends in Parser.parse (message_from_bytes, BytesParser,
        # the header parsers) or in FeedParser.close (a FeedParser fed directly).
        monkeypatch.setattr(Parser, "parse", self._outermost(Parser.parse, "parses"))
        monkeypatch.setattr(FeedParser, "close", self._outermost(FeedParser.close, "parses"))
        monkeypatch.setattr(jinja2.Template, "render", self._outermost(jinja2.Template.render, "renders"))
        monkeypatch.setattr(jinja2.Template, "generate", self._outermost(jinja2.Template.generate, "renders"))

    @contextmanager
    def measuring(self) -> Iterator[MailCost]:
        self._current = cost = MailCost()
        try:
            yield cost
        finally:
            self._current = None

    def _counting(self) -> MailCost | None:
        return self._current if threading.get_ident() == self._thread else None

    def _outermost(self, function: Callable[..., Any], counter: str) -> Callable[..., Any]:
        """``function`` counted in ``counter`` once per outermost call (a parse made of nested
        parser calls counts once)."""

        def counted(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != self._thread:
                return function(*args, **kwargs)
            if self._current is not None and self._depth[counter] == 0:
                setattr(self._current, counter, getattr(self._current, counter) + 1)
            self._depth[counter] += 1
            try:
                return function(*args, **kwargs)
            finally:
                self._depth[counter] -= 1

        return counted

    def _on_statement(self, conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if (cost := self._counting()) is not None:
            cost.statements += 1
            if not self._in_transaction(conn) and not statement.lstrip().upper().startswith("SELECT"):
                cost.autocommitted += 1  # a read in autocommit commits nothing

    @staticmethod
    def _in_transaction(conn: Any) -> bool:
        """Whether ``conn`` runs statements in a transaction (not in autocommit, where ending
        SQLAlchemy's transaction sends nothing)."""
        return conn.get_execution_options().get("isolation_level") != "AUTOCOMMIT"

    def _on_commit(self, conn: Any) -> None:
        if (cost := self._counting()) is not None and self._in_transaction(conn):
            cost.commits_sent += 1

    def _on_rollback(self, conn: Any) -> None:
        if (cost := self._counting()) is not None and self._in_transaction(conn):
            cost.rollbacks_sent += 1


# --- the game --------------------------------------------------------------------------------------


def backend(svc: Services) -> str:
    return svc.engine.dialect.name


def new_game(svc: Services, notifications: str) -> tuple[int, list[OutboundMessage]]:
    """One hand of a standard game for four people, whose notifications are ``notifications``."""
    with transaction(svc.session_factory) as session:
        seats = []
        for seat in range(4):
            player = get_or_create_player(session, address(seat), f"Player {seat}", svc.clock.now())
            player.prefs = {} if notifications == "default" else {"notify": notifications}
            seats.append(SeatSpec(address=address(seat), name=f"Player {seat}"))
        game = create_game(session, svc, rules=Rules.make("standard", end_after_hands=1), seats=seats,
                           seed=SEED, title="Budget table")
        return game.id, start_game(session, svc, game)


@dataclass
class Delivery:
    cost: MailCost
    stored: list[int]  # the inbound rows
    written: list[int]  # the outbox rows


def receive(svc: Services, meter: Meter, raw: bytes, sender: str, recipient: str) -> Delivery:
    """Receive ``raw`` as the front does and process it as the worker does, counted."""
    stored: list[int] = []
    written: list[int] = []
    with meter.measuring() as cost:
        receive_inbound(svc.session_factory, raw=raw, mail_from=sender, recipients=[recipient], source="smtp",
                        received_at=svc.clock.now(), queue=stored.extend)
        for inbound_id in stored:
            written += inbound.process_inbound(svc, inbound_id)
    cost.mails = len(written)
    return Delivery(cost, stored, written)


def play_one_hand(svc: Services, meter: Meter, notifications: str) -> GameCost:
    """Play the hand by answering every ``your_turn`` mail, oldest first, with a seeded choice."""
    game_id, mails = new_game(svc, notifications)
    # A worker process opens its kept connections once (on PostgreSQL the asynchronous one sets
    # synchronous_commit at its opening): a cost of the process, not of any move.
    with svc.kept_connections.single_statement() as conn:
        conn.execute(text("SELECT 1"))
    rng, game_cost, queue = random.Random(PLAYER_SEED), GameCost(), list(mails)
    stored: list[int] = []
    while queue:
        mail = queue.pop(0)
        if mail.kind != "your_turn":
            continue
        received = Received.parse(mail.raw)
        raw = reply_bytes(received, sender=mail.recipient, body=choose(received, rng),
                          message_id=f"<reply-{game_id}-{len(game_cost.received)}@players.test>")
        delivery = receive(svc, meter, raw, mail.recipient, received.reply_to)
        game_cost.received.append(delivery.cost)
        stored += delivery.stored
        queue += outbox(svc, delivery.written)
        assert len(game_cost.received) < 200, "the hand did not end"
    with transaction(svc.session_factory) as session:
        assert session.get(Game, game_id).status == GameStatus.FINISHED
        statuses = Counter(session.scalars(select(InboundMessage.status).where(InboundMessage.id.in_(stored))))
        assert statuses == {InboundStatus.DONE: len(game_cost.received)}, statuses
        kinds = Counter(session.scalars(select(OutboundMessage.kind).where(OutboundMessage.game_id == game_id)))
        assert kinds["move_rejected"] == kinds["request_rejected"] == 0, kinds
    return game_cost


def report(svc: Services, notifications: str, cost: GameCost) -> str:
    return (f"measured ({backend(svc)!r}, {notifications!r}): {cost.row()!r}\n"
            f"budget   ({backend(svc)!r}, {notifications!r}): {BUDGETS[backend(svc), notifications]!r}\n"
            f"{cost.detail()}")


@pytest.fixture
def budget_svc(db_url: str, tmp_path: Path) -> Iterator[Services]:
    svc = make_services(db_url, tmp_path)
    yield svc
    svc.close()


@pytest.mark.parametrize("notifications", NOTIFICATIONS)
def test_a_hand_by_mail_stays_within_its_budgets(budget_svc: Services, notifications: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    cost = play_one_hand(budget_svc, Meter(budget_svc, monkeypatch), notifications)
    assert violations(cost, BUDGETS[backend(budget_svc), notifications]) == [], report(budget_svc, notifications, cost)


def test_one_more_statement_breaks_the_budget(budget_svc: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``SELECT 1`` added to the transaction of every received mail: the meter counts it once a
    mail, and the round-trip budgets, and those alone, refuse it.  Both games are played in the
    test's one database, the second with the ``SELECT 1``; without it, it costs what the first did."""
    meter = Meter(budget_svc, monkeypatch)
    baseline = play_one_hand(budget_svc, meter, "default")
    handle = inbound.handle

    def handle_and_select_one(session: Any, *args: Any, **kwargs: Any) -> Any:
        session.execute(text("SELECT 1"))
        return handle(session, *args, **kwargs)

    monkeypatch.setattr(inbound, "handle", handle_and_select_one)
    costlier = play_one_hand(budget_svc, meter, "default")

    assert [m.round_trips for m in costlier.received] == [m.round_trips + 1 for m in baseline.received]
    assert violations(costlier, baseline.row()) == [
        f"round_trips over the game: {costlier.over_the_game('round_trips')} > {baseline.over_the_game('round_trips')}",
        f"round_trips for one mail: {costlier.for_one_mail('round_trips')} > {baseline.for_one_mail('round_trips')}",
    ]
    # BUDGETS are the counts themselves, with no room for one statement more a mail.
    table = violations(costlier, BUDGETS[backend(budget_svc), "default"])
    assert [v.split(":")[0] for v in table if v.startswith("round_trips")] == [
        "round_trips over the game", "round_trips for one mail"], (
        "the round-trip budgets let one more statement a mail through:\n" + report(budget_svc, "default", costlier))
