"""The production pipeline started for end-to-end tests: real processes on 127.0.0.1.

``pbem smtp`` (the SMTP front, a subprocess), a real Celery worker on Redis, a database
(PostgreSQL or SQLite), and an SMTP sink as the relay, where the players read their mail.
Players send their replies over SMTP to the front, from their own address, to the signed reply
address of the mail they answer.
"""

from __future__ import annotations

import dataclasses
import json
import random
import smtplib
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from email.utils import make_msgid
from pathlib import Path

from sqlalchemy import func, select

from pbem.db.models import Game, InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import make_engine, make_session_factory
from pbem.engine import Rules
from tests.harness.celery_worker import CeleryWorker, pbem_environment
from tests.harness.players import Received, reply_bytes
from tests.harness.ports import free_port
from tests.harness.smtp_sink import SmtpSink
from tests.harness.waiting import wait_for

DOMAIN = "hearts.test"


def redis_db(url: str, number: int) -> str:
    """The same Redis server, another database number (so tests do not share queues)."""
    base = url.rstrip("/")
    if base.rsplit("/", 1)[-1].isdigit():
        base = base.rsplit("/", 1)[0]
    return f"{base}/{number}"


def pbem_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from pbem.cli import main; main()", *args]


@dataclass
class Pipeline:
    database_url: str
    broker_url: str
    sink: SmtpSink
    tmp_path: Path
    concurrency: int = 2
    extra_env: dict[str, str] = field(default_factory=dict)
    #: Run Celery beat inside the worker (``--beat``), as ``pbem serve`` does.
    beat: bool = False

    def __post_init__(self) -> None:
        self.smtp_port = free_port()
        self.env = {
            "PBEM_DATABASE_URL": self.database_url,
            "PBEM_BROKER_URL": self.broker_url,
            "PBEM_DATA_DIR": str(self.tmp_path / "data"),
            "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SECRET_KEY": "e2e-secret",
            "PBEM_SMTP_LISTEN": f"127.0.0.1:{self.smtp_port}",
            "PBEM_RELAY_HOST": self.sink.host,
            "PBEM_RELAY_PORT": str(self.sink.port),
            **self.extra_env,
        }
        self.worker = CeleryWorker(self.env, concurrency=self.concurrency, beat=self.beat, log_dir=self.tmp_path)
        self.smtp: subprocess.Popen[bytes] | None = None
        engine = make_engine(self.database_url)
        self.session_factory = make_session_factory(engine)
        self._engine = engine

    def start(self) -> "Pipeline":
        """The SMTP front and the worker, started side by side (each takes seconds to import and
        get ready); both stopped again if either does not come up."""
        with open(self.tmp_path / "smtp.log", "wb") as log:
            self.smtp = subprocess.Popen(pbem_command("smtp"), env=pbem_environment(self.env), cwd=self.tmp_path,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        try:
            self.worker.start()
            wait_for(self._smtp_up, timeout=30, message="the SMTP front to listen")
        except BaseException:
            self.stop()
            raise
        return self

    def _smtp_up(self) -> bool:
        try:
            with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=2) as client:
                return client.noop()[0] == 250
        except OSError:
            return False

    def stop(self) -> None:
        self.worker.stop()
        if self.smtp is not None:
            self.smtp.terminate()
            self.smtp.wait(timeout=20)
        self._engine.dispose()

    def __enter__(self) -> "Pipeline":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def cli(self, *args: str) -> str:
        out = subprocess.run(pbem_command(*args), env=pbem_environment(self.env), check=True,
                             capture_output=True, text=True, timeout=120)
        return out.stdout

    def cli_each(self, commands: list[list[str]]) -> str:
        """Several ``pbem`` commands, one after the other, each a whole invocation of the command
        line (its arguments parsed, its settings read from the environment) in one process: the
        imports and the mail templates are loaded once instead of once per command. Stops at the
        first that fails (the process exits non-zero with its error)."""
        script = ("import json, sys\nfrom pbem.cli import main\n"
                  "for args in json.loads(sys.argv[1]):\n    main(args, standalone_mode=False)\n")
        out = subprocess.run([sys.executable, "-c", script, json.dumps(commands)], env=pbem_environment(self.env),
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"pbem commands failed ({out.returncode}):\n{out.stdout}\n{out.stderr[-4000:]}")
        return out.stdout

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=30) as client:
            client.sendmail(sender, [recipient], raw)

    def idle(self) -> bool:
        """Every mail received is handled, every mail written is at the relay, and no game is being
        continued: nothing more happens until someone writes."""
        with self.session_factory() as session:
            busy = session.scalars(select(InboundMessage.id).where(
                InboundMessage.status.in_((InboundStatus.PENDING, InboundStatus.PROCESSING)))).first()
            continuing = session.scalars(select(Game.id).where(Game.continue_at.is_not(None))).first()
            unsent = session.scalars(select(OutboundMessage.id).where(
                OutboundMessage.status != OutboundStatus.SENT)).first()
            written = session.scalar(select(func.count()).select_from(OutboundMessage))
        return busy is None and continuing is None and unsent is None and len(self.sink.messages) >= written

    def inbound_statuses(self) -> list[str]:
        with self.session_factory() as session:
            return [str(s) for s in session.scalars(select(InboundMessage.status))]


_HEADERS = BytesHeaderParser(policy=default_policy)

#: The decisions a scripted player answers, each from its mail's ``X-Hearts-Decision``.
DECISIONS = ("pass", "play", "moon", "discard", "call_pass", "charge")
#: The phase (``X-Hearts-Phase``) of each decision where it is not the decision's own name.
PHASE_OF = {"call_pass": "call"}
#: The move-log kind an answer makes: its decision's, or ``decline`` for ``no pass`` (RULES.md §6.3).
MOVE_OF = {"call_pass": "call"}
#: The dealer's call is answered whether its mail names it ``call_pass`` or ``call`` (the tests
#: check which it is).
CALLS = ("call_pass", "call")


@dataclass(frozen=True)
class Asked:
    """One decision mail a scripted player got: its headers, as the relay delivered them, and the reply."""

    player: str
    game: str | None
    seat: int | None
    kind: str
    phase: str | None
    decision: str | None
    hand: tuple[str, ...]
    legal: tuple[str, ...]
    reply_to: str
    reply: str
    #: The reply's Message-ID (its inbound row's key).
    reply_id: str
    #: ``X-Hearts-Decline``: the reply that declines a pass (pass_optional, RULES.md §6.3), if any.
    decline: str | None = None
    #: ``X-Hearts-Charge-Limit``: the most cards a charge may name (Turbo, RULES.md §6.4), if given.
    limit: int | None = None
    #: The mail's text part, as the person reads it (its hand shows ``Q ×2``, RULES.md §6.6).
    text: str = ""

    @property
    def move(self) -> str:
        """The kind of move the reply makes in the move log."""
        if self.decline is not None and self.reply == self.decline:
            return "decline"
        return MOVE_OF.get(self.decision or "", self.decision or "")


@dataclass
class Table:
    """Scripted players: each answers every decision mail addressed to them, once, from its headers
    (``X-Hearts-Decision``, ``X-Hearts-Legal``, ``Reply-To``), and ignores the news mails.

    How many cards a pass or a kitty discard names is the game's rules' (``pass_count``, the
    kitty's size: RULES.md §6.2), read once per game from its row; with ``accept_invitations`` a
    player also accepts every invitation (to their own seat in a game they asked for by mail).

    A dealer's call (``call_pass``, RULES.md §6.3) names one of the calls ``X-Hearts-Legal`` lists
    (comma-separated), a split one when there is one; a pass mail carrying ``X-Hearts-Decline`` is
    declined with that reply by the players in ``declines`` (as many times as it says for each),
    and answered with cards otherwise.

    A charge (Turbo, RULES.md §6.4: ``X-Hearts-Legal`` the chargeable cards held, then ``none``;
    ``X-Hearts-Charge-Limit``) alternates for each player: their first, third, ... charge names as
    many of the cards as the limit allows (``charge QS TC``), starting one card further along the
    list each time; their second, fourth, ... is ``charge none``.

    With two decks (RULES.md §6.6) a pass mail's ``X-Hearts-Legal`` names each copy held: a player
    holding a card twice passes both copies of one such card (``QS QS 2C``) and a card more."""

    pipeline: Pipeline
    players: list[str]
    rng: random.Random = field(default_factory=lambda: random.Random(11))
    accept_invitations: bool = False
    seen: int = 0
    answered: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    #: Kinds of mail received, per player.
    kinds_of: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    #: Every decision mail answered, in the order received.
    asked: list[Asked] = field(default_factory=list)
    #: Mails that carried a decision header without being a decision mail (there should be none).
    stray_headers: list[tuple[str, str]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    #: Pass mails each player declines (with ``X-Hearts-Decline``'s reply) before passing again.
    declines: dict[str, int] = field(default_factory=dict)
    #: Charge decisions answered, per player (what the next one charges: see above).
    charges: Counter[str] = field(default_factory=Counter)
    _rules: dict[str, Rules] = field(default_factory=dict)

    def rules_of(self, game: str | None) -> Rules:
        """``game``'s rules, read once from its row."""
        if str(game) not in self._rules:
            with self.pipeline.session_factory() as session:
                row = session.get(Game, int(str(game)))
                assert row is not None, f"a mail names game {game}, which does not exist"
                self._rules[str(game)] = Rules.from_dict(row.rules)
        return self._rules[str(game)]

    def counts(self, game: str | None) -> tuple[int, int]:
        """``(pass_count, discard_count)`` of ``game``'s rules."""
        rules = self.rules_of(game)
        return rules.pass_count, rules.table.kitty_size

    def charge(self, received: Received, player: str, limit: int | None) -> str:
        """A charge's reply: every other one ``charge none``, the others as many cards as allowed."""
        cards = [c for c in received.legal if c.lower() != "none"]
        limit = self.rules_of(received.game).charge_limit if limit is None else limit
        turn = self.charges[player]
        self.charges[player] += 1
        if turn % 2 or not cards:
            return "charge none"
        start = (turn // 2) % len(cards)
        return "charge " + " ".join((cards[start:] + cards[:start])[:limit])

    def answer(self, received: Received, player: str = "", decline: str | None = None,
               limit: int | None = None) -> str:
        """The words of the reply to a decision mail: any legal choice, the right number of cards."""
        pass_count, discard_count = self.counts(received.game)
        if received.decision == "charge":
            return self.charge(received, player, limit)
        if received.decision in CALLS:
            splits = [c for c in received.legal if len(c.split()) > 2]  # "2 left 1 right"
            return self.rng.choice(splits or list(received.legal))
        if received.decision == "pass" and decline is not None and self.declines.get(player, 0) > 0:
            self.declines[player] -= 1
            return decline
        if received.decision == "pass":
            doubles = sorted({c for c in received.legal if received.legal.count(c) > 1})
            if doubles and pass_count >= 2:  # two decks: both copies of one card, and others
                pair = self.rng.choice(doubles)
                others = [c for c in received.legal if c != pair]
                return " ".join([pair, pair, *self.rng.sample(others, pass_count - 2)])
            return " ".join(self.rng.sample(received.legal, pass_count))
        if received.decision == "discard":
            return "discard " + " ".join(self.rng.sample(received.legal, discard_count))
        if received.decision == "moon":
            return self.rng.choice([c for c in received.legal if c in ("old", "new")] or ["old", "new"])
        return self.rng.choice(received.legal)

    def step(self) -> bool:
        """Answer every new decision mail at the sink; True if there was anything new."""
        messages = self.pipeline.sink.messages
        new = messages[self.seen:]
        self.seen = len(messages)
        for message in new:
            recipient = message.rcpt_tos[0].lower()
            if recipient not in self.players:
                continue
            headers = _HEADERS.parsebytes(message.raw)  # the body is read only to answer
            kind = str(headers["X-Hearts-Kind"] or "")
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            self.kinds_of[recipient][kind] += 1
            if kind == "invitation" and self.accept_invitations:
                received = Received.parse(message.raw)
                self.pipeline.send(recipient, received.reply_to,
                                   reply_bytes(received, sender=recipient, body="accept"))
                continue
            if kind != "your_turn":
                for name in ("X-Hearts-Decision", "X-Hearts-Legal", "X-Hearts-Decline", "X-Hearts-Charge-Limit"):
                    if headers[name] is not None:
                        self.stray_headers.append((recipient, f"{kind}: {name}"))
                continue
            received = Received.parse(message.raw)
            if received.decision in CALLS:  # the calls, comma-separated: "3 left, 2 left 1 right, ..."
                legal = tuple(" ".join(c.split()) for c in str(headers["X-Hearts-Legal"] or "").split(","))
                received = dataclasses.replace(received, legal=tuple(c for c in legal if c))
            decline = headers["X-Hearts-Decline"]
            decline = None if decline is None else str(decline)
            limit_header = headers["X-Hearts-Charge-Limit"]
            limit = None if limit_header is None else int(str(limit_header))
            body = self.answer(received, recipient, decline, limit)
            reply_id = make_msgid(domain=recipient.split("@")[1])
            self.asked.append(Asked(recipient, received.game, received.seat, received.kind,
                                    headers["X-Hearts-Phase"], received.decision, received.hand, received.legal,
                                    received.reply_to, body, reply_id, decline, limit, received.text))
            self.log.append(f"{recipient} {received.decision} -> {body}")
            self.pipeline.send(recipient, received.reply_to,
                               reply_bytes(received, sender=recipient, body=body, message_id=reply_id))
            self.answered += 1
        return bool(new)

    def play_until(self, done: Callable[["Table"], bool], timeout: float) -> None:
        def progress() -> bool:
            self.step()
            return done(self)

        wait_for(progress, timeout=timeout, interval=0.02, message="the game to reach its end")
