"""``pbem bench fuzz``: hostile mail through the whole path the worker runs for a stored mail.

Everything runs in this one process, on an SQLite file migrated as the server's is, with the
real ``Services``: each mail is stored as the fronts store it (``intake.receive_inbound``), then
processed exactly as the ``pbem.process_inbound`` task does (``workers.tasks.run_move``: read,
classify, extract, parse, handle and compose in one transaction, then the answers sent to a
real SMTP sink on 127.0.0.1, ``LeanSmtpSink``; with ``send=False`` the answers are left unsent
in the outbox and ``apply_inbound`` is called directly).

Before the first mail it sets up games in progress (four players each, dealt, through
``create_game``/``start_game`` as ``pbem game new`` does) and invitations (through the same
path, from a clean ``new@`` mail), then sends every mail to a live *target*:

=============  ======================================================================
seat           a seat's signed reply address for its current decision, from its player
stale          the same seat's address for another decision, from its player
forged         a seat's current address, from another registered player
stranger       a seat's current address, from an address never seen
new-known      ``new@``, from a registered (verified) player
new-unknown    ``new@``, from an address never seen
invite         a pending invitation's signed address, from the invited address
=============  ======================================================================

A mail that applies a move changes its game: targets are read from the database for each mail
(the seat's decision count, the cards it may play), and a game that ended, or has nobody left
to write for it, is replaced by a new one.  Rate limits stay out of the way: the daily error
and invitation caps are set very high, the services' clock advances a minute per mail and new
senders are made up as needed.

The mails are templates of :mod:`pbem.bench.mutations` (real replies built for the target,
mails of ``tests/mail/corpus`` and the generators), most of them mutated.  For each mail the
fuzzer records the received row's status and outcome code, whether it reached a command
handler (the mail was read, its address and sender checked and its text parsed into a command:
``parse_command`` returned) and the composer (``MailComposer.compose`` was called), how many
outbox rows it wrote, and any exception that escaped ``run_move`` (by type and the innermost
frame in pbem).  A mail that uses more than ``limit`` seconds of CPU is interrupted and counted
as a stall (with the frame it was interrupted in), so a quadratic reader cannot hold the run.

With ``save_crashes``, each mail that raised is minimised by replaying smaller versions of it to
new targets of its kind; those replays change the games, so the rest of the stream differs from
a run without it.

Then, for each generator, one case at each size (10 kB, 100 kB, 1 MB and 10 MB by default)
through the same path, with the CPU time (``time.process_time``) it cost; a generator whose case
ran over the limit is not tried at the larger sizes.
"""

from __future__ import annotations

import itertools
import logging
import random
import re
import shutil
import signal
import tempfile
import threading
import time
import tomllib
import traceback
import importlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from sqlalchemy import and_, func, or_, select

from pbem.config import Settings
from pbem.db import migrate
from pbem.db.models import (
    Game,
    GameStatus,
    InboundMessage,
    Invitation,
    InvitationStatus,
    OutboundMessage,
    Player,
    Seat,
    SeatStatus,
)
from pbem.db.session import transaction
from pbem.devservers.lean_sink import LeanSmtpSink
from pbem.engine import MOON, PASS, PLAY, Rules
from pbem.mail import reading as mail_reading
from pbem.mail.addresses import make_invite_address, make_reply_address
from pbem.mail.reading import commands as mail_commands
from pbem.services import inbound
from pbem.services.app import Services
from pbem.services.clock import ManualClock
from pbem.services.commands import COMMAND_MODULES
from pbem.services.games import SeatSpec, create_game, get_or_create_player, start_game
from pbem.services.gamestore import current_state, load_game
from pbem.services.inbound import apply_inbound
from pbem.services.intake import receive_inbound
from pbem.services.requests import SEAT_COMMANDS
from workers.tasks import run_move

from . import mutations as mu

__all__ = ["TARGET_KINDS", "TERMINAL", "CaseResult", "Fixture", "Options", "Report", "exit_code", "load_corpus",
           "main_report", "manifest_cases", "replay_case", "replay_manifest", "run"]

log = logging.getLogger("pbem.bench.fuzz")

DOMAIN = "hearts.test"
PLAYER_DOMAIN = "players.test"
TARGET_KINDS = ("seat", "stale", "forged", "stranger", "new-known", "new-unknown", "invite")
_TARGET_WEIGHTS = (34, 10, 6, 5, 15, 15, 15)
TERMINAL = frozenset({"done", "rejected", "ignored", "failed"})
SIZES = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000, "10M": 10_000_000}
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "mail" / "corpus"
_PBEM_ROOT = str(Path(__file__).resolve().parents[1])
_WORKERS_ROOT = str(Path(__file__).resolve().parents[2] / "workers")


def parse_size(text: str) -> int:
    """``10k``, ``1M``, ``2500`` -> bytes (k = 1,000, M = 1,000,000, as the table's labels)."""
    text = text.strip()
    factor = {"k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if factor != 1 else text) * factor)


def size_label(size: int) -> str:
    for label, value in SIZES.items():
        if value == size:
            return label
    return f"{size / 1000:g}k" if size < 1_000_000 else f"{size / 1_000_000:g}M"


@dataclass
class Options:
    messages: int = 1000
    seed: str = "1"
    sizes: list[int] = field(default_factory=lambda: list(SIZES.values()))
    corpus: Path | None = DEFAULT_CORPUS
    save_crashes: Path | None = None
    save_per_kind: int = 3  # mails saved of each kind of crash or stall (the first ones)
    send: bool = True
    tables: int = 8
    limit: float = 5.0  # CPU seconds one mail of the stream may use before it is interrupted
    size_limit: float = 20.0  # the same for one case of the size table
    progress: bool = True
    directory: Path | None = None  # for the database (default: a temporary one, removed at the end)


# -- targets ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    kind: str
    recipient: str
    sender: str
    name: str = ""
    expected: str | None = None  # play, pass, moon, invitation, new_game
    suggestion: str = ""  # an answer that fits (a legal card, three cards, yes...)
    game_id: int | None = None


@dataclass
class Crash:
    kind: str  # "ValueError in pbem/services/inbound.py:_new_game"
    where: str  # the innermost pbem frame with its line
    message: str
    stall: bool = False


@dataclass
class CaseResult:
    stored: bool
    status: str
    code: str
    handler: bool
    composer: bool
    outbound: int
    cpu: float
    crash: Crash | None = None
    #: What the reader had to degrade, as the outcome records it (its ``reading`` list).
    problems: tuple[str, ...] = ()


class CaseTimeout(BaseException):
    """Raised in the main thread when a case used up its CPU time (a BaseException: the services'
    ``except Exception`` must not take it for a failure of the mail)."""


@contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block with ``CaseTimeout`` after ``seconds`` of this process's CPU time
    (``ITIMER_PROF``); only in the main thread, where Python runs signal handlers (elsewhere: no
    limit).  The regular-expression engine checks for signals, so a quadratic match is
    interrupted too."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise CaseTimeout()

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def innermost_pbem_frame(tb: Any) -> str:
    """``path:function:line`` of the innermost frame in pbem (or workers), else the innermost."""
    frames = traceback.extract_tb(tb)
    for frame in reversed(frames):
        if frame.filename.startswith((_PBEM_ROOT, _WORKERS_ROOT)) and not frame.filename.endswith("bench/fuzz.py"):
            root = Path(_PBEM_ROOT).parent
            return f"{Path(frame.filename).relative_to(root)}:{frame.name}:{frame.lineno}"
    if frames:
        frame = frames[-1]
        return f"{Path(frame.filename).name}:{frame.name}:{frame.lineno}"
    return "?"


def innermost_frame(tb: Any) -> str:
    frames = traceback.extract_tb(tb)
    return f"{Path(frames[-1].filename).name}:{frames[-1].name}:{frames[-1].lineno}" if frames else "?"


def _crash(error: BaseException, stall: bool = False) -> Crash:
    where = innermost_pbem_frame(error.__traceback__)
    place = where.rsplit(":", 1)[0]
    name = "stall" if stall else type(error).__name__
    return Crash(kind=f"{name} in {place}", where=where, message=str(error)[:300], stall=stall)


class Probe:
    """Counts, without changing the services, the calls that show how far a mail got: the
    command parser returning (``parse_command``, as the services call it), the composer
    (``svc.composer.compose``: every mail pbem writes is composed there, in ``queue_mail``), and
    each seat command handler of the registry (``pbem.services.requests.SEAT_COMMANDS``)."""

    def __init__(self) -> None:
        self.parsed = 0
        self.composed = 0
        self.handlers: Counter[str] = Counter()

    @contextmanager
    def installed(self, svc: Any) -> Iterator[None]:
        for module in COMMAND_MODULES:  # they register their handlers when imported
            importlib.import_module(module)
        parse = mail_commands.parse_command
        composer = svc.composer
        compose = composer.compose

        def counted_parse(*args: Any, **kwargs: Any) -> Any:
            command = parse(*args, **kwargs)
            self.parsed += 1
            return command

        def counted_compose(*args: Any, **kwargs: Any) -> Any:
            self.composed += 1
            return compose(*args, **kwargs)

        def counted(name: str, handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
            def run(request: Any) -> Any:
                self.handlers[name] += 1
                return handler(request)
            return run

        wrapped = {kind: (counted(kind.__name__, handler), needs)
                   for kind, (handler, needs) in SEAT_COMMANDS.items()}
        with mock.patch.object(mail_commands, "parse_command", counted_parse), \
                mock.patch.object(mail_reading, "parse_command", counted_parse), \
                mock.patch.object(composer, "compose", counted_compose), \
                mock.patch.dict(SEAT_COMMANDS, wrapped):
            yield


def load_corpus(directory: Path | None) -> list[tuple[str, str | None, bytes]]:
    """(file name, expected decision, raw bytes with CRLF) of every .eml of the corpus."""
    if directory is None or not directory.is_dir():
        return []
    expected: dict[str, str | None] = {}
    manifest = directory / "expectations.toml"
    if manifest.exists():
        for case in tomllib.loads(manifest.read_text(encoding="utf-8")).get("case", []):
            expected[case["file"]] = case.get("expected")
    return [(path.name, expected.get(path.name), mu.normalise_line_ends(path.read_bytes()))
            for path in sorted(directory.glob("*.eml"))]


class Fixture:
    """A database with games, invitations and players, and the real services on it."""

    def __init__(self, base: Path, *, seed: str = "1", send: bool = True, tables: int = 8) -> None:
        url = f"sqlite:///{base / 'fuzz.db'}"
        migrate.upgrade(url)
        self.sink = None
        env = {
            "PBEM_DATABASE_URL": url, "PBEM_DATA_DIR": str(base), "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SECRET_KEY": "fuzz", "PBEM_ERROR_REPLIES_PER_DAY": "1000000000",
            "PBEM_INVITES_PER_DAY": "1000000000",
            # The hourly cap of answers to unverified addresses: read only by servers that have it.
            "PBEM_STRANGER_ANSWERS_PER_HOUR": "1000000000",
        }
        if send:
            self.sink = LeanSmtpSink(keep=False).start()
            env |= {"PBEM_RELAY_HOST": self.sink.host, "PBEM_RELAY_PORT": str(self.sink.port)}
        self.send = send
        self.svc = Services.from_settings(Settings.from_env(env), clock=ManualClock())
        self.svc.rng = random.Random(f"{seed}:shuffles")  # games made by mail deal from it
        self.rng = random.Random(f"{seed}:targets")
        self.seed = seed
        self.players = [f"player{k}@{PLAYER_DOMAIN}" for k in range(16)]
        self.names = {address: f"Player {k}" for k, address in enumerate(self.players)}
        self.tables: list[int] = []
        self._numbers = itertools.count()
        self._strangers = itertools.count()
        self._invitees = itertools.count()
        self.probe = Probe()
        self._probing = self.probe.installed(self.svc)
        self._probing.__enter__()
        self.svc.composer.renderer.preload()  # as each worker process does when it starts
        for _ in range(tables):
            self.tables.append(self._new_table())
        self._refill_invitations()

    def close(self) -> None:
        self._probing.__exit__(None, None, None)
        self.svc.close()
        if self.sink is not None:
            self.sink.stop()

    # -- set-up ---------------------------------------------------------------------------------

    def _new_table(self) -> int:
        number = next(self._numbers)
        preset = self.rng.choice(("standard", "standard", "omnibus", "spot", "pagat"))
        rules = Rules.make(preset)
        addresses = self.rng.sample(self.players, rules.players)
        with transaction(self.svc.session_factory) as session:
            players = [get_or_create_player(session, address, self.names[address], self.svc.clock.now())
                       for address in addresses]
            # Half the tables have a creator (seat 0), whose pause, abort, extend and replace count.
            creator = players[0] if self.rng.random() < 0.5 else None
            game = create_game(session, self.svc, rules=rules, seats=[SeatSpec(address=a) for a in addresses],
                               creator=creator, seed=f"{self.seed}:table:{number}", title=f"Fuzz {number}")
            start_game(session, self.svc, game)
            session.flush()
            return game.id

    def _refill_invitations(self) -> None:
        """Pending invitations, made as a verified player makes them: a clean mail to ``new@``."""
        creator = self.rng.choice(self.players)
        invitees = [f"invitee{next(self._invitees)}@friends.test" for _ in range(3)]
        body = ("new game\r\nplayers: " + ", ".join(invitees) + "\r\n").encode()
        template = mu.build_mail([(b"From", b"<" + mu.FROM + b">"), (b"To", mu.TO), (b"Subject", b"new game"),
                                  (b"Message-ID", b"<setup.%d@fuzz.test>" % next(self._numbers))], body)
        target = Target("new-known", f"new@{DOMAIN}", creator)
        self.process(template, target, limit=0)

    def _verified_players(self) -> list[str]:
        """The fixture's players who hold a seat (verified, as the services define it), in order."""
        with self.svc.session_factory() as session:
            seated = set(session.scalars(
                select(Player.address).join(Seat, Seat.player_id == Player.id)
                .where(Seat.status.in_((SeatStatus.JOINED, SeatStatus.BOT)))))
        return [address for address in self.players if address in seated] or self.players

    def _pending_invitations(self) -> list[tuple[int, str]]:
        """Invitations to a new game's seat, and to take over an absent player's (``replace``)."""
        with self.svc.session_factory() as session:
            return list(session.execute(
                select(Invitation.id, Invitation.address).join(Game, Game.id == Invitation.game_id)
                .where(Invitation.status == InvitationStatus.PENDING,
                       or_(and_(Invitation.kind == "join", Game.status == GameStatus.INVITING),
                           and_(Invitation.kind == "substitute", Game.status == GameStatus.ACTIVE)))
                .order_by(Invitation.id.desc()).limit(200)).all())

    # -- targets --------------------------------------------------------------------------------

    def stranger(self) -> str:
        return f"stranger{next(self._strangers)}@elsewhere.test"

    def target(self, kind: str) -> Target:
        if kind in ("seat", "stale", "forged", "stranger"):
            return self._seat_target(kind)
        if kind == "new-known":
            sender = self.rng.choice(self._verified_players())
            return Target(kind, f"new@{DOMAIN}", sender, self.names[sender], "new_game", self._new_game_text())
        if kind == "new-unknown":
            return Target(kind, f"new@{DOMAIN}", self.stranger(), "Someone New", "new_game", self._new_game_text())
        if kind == "invite":
            pending = self._pending_invitations()
            if len(pending) < 3:
                self._refill_invitations()
                pending = self._pending_invitations()
            invitation_id, address = self.rng.choice(pending)
            answer = self.rng.choice(("yes", "Yes, count me in!", "no, thanks", "sim", "da", "nu pot", "maybe", "ok"))
            return Target(kind, make_invite_address("fuzz", DOMAIN, invitation_id), address, "", "invitation", answer)
        raise ValueError(f"unknown target kind {kind!r}")

    def _seat_target(self, kind: str) -> Target:
        for _ in range(20):
            game_id = self.rng.choice(self.tables)
            target = self._seat_target_in(game_id, kind)
            if target is not None:
                return target
            self._replace(game_id)  # once the reading session is closed: it holds SQLite's lock
        raise RuntimeError("no live seat found")

    def _seat_target_in(self, game_id: int, kind: str) -> Target | None:
        """A target of ``kind`` at a seat of this game, or None when nobody is left to write for it."""
        with self.svc.session_factory() as session:
            game = load_game(session, game_id, lock=False)
            state = current_state(game)
            seats = sorted(game.seats, key=lambda s: s.seat)
            joined = [s for s in seats if s.status == SeatStatus.JOINED and s.player is not None
                      and s.stand_in is None]
            if not joined:
                return None
            acting = [s for s in joined if s.seat in state.seats_to_act()]
            seat = self.rng.choice(acting if acting and self.rng.random() < 0.85 else joined)
            decision = seat.decisions
            if kind == "stale":
                decision = decision - 1 if decision > 0 and self.rng.random() < 0.8 else decision + 1
            owner = seat.player.address
            sender = owner
            if kind == "forged":
                sender = self.rng.choice([p for p in self.players if p != owner])
            elif kind == "stranger":
                sender = self.stranger()
            expected, suggestion = None, self.rng.choice(mu.COMMAND_LINES)
            if state.phase == PLAY and state.to_move == seat.seat:
                expected, suggestion = "play", self.rng.choice(state.legal_cards())
            elif state.phase == PASS and seat.seat in state.seats_to_pass():
                expected = "pass"
                suggestion = "pass: " + " ".join(self.rng.sample(state.hand(seat.seat), state.rules.pass_count))
            elif state.phase == MOON and state.shooter and state.shooter[0] == seat.seat:
                expected, suggestion = "moon", self.rng.choice(("old", "new"))
            recipient = make_reply_address("fuzz", DOMAIN, game.id, seat.seat, decision)
            return Target(kind, recipient, sender, self.names.get(sender, ""), expected, suggestion, game.id)

    def _replace(self, game_id: int) -> None:
        if game_id in self.tables:
            self.tables[self.tables.index(game_id)] = self._new_table()

    def after(self, target: Target) -> None:
        """Keep the tables live: a game that ended, or has nobody left to write for it, is replaced."""
        if target.game_id is None:
            return
        with self.svc.session_factory() as session:
            game = load_game(session, target.game_id, lock=False)
            live = game.status == GameStatus.ACTIVE and any(
                s.status == SeatStatus.JOINED and s.player is not None and s.stand_in is None for s in game.seats)
        if not live:
            self._replace(target.game_id)

    def _new_game_text(self) -> str:
        rng = self.rng
        people = [f"invitee{next(self._invitees)}@friends.test" for _ in range(rng.choice((0, 1, 2, 3, 3, 3, 4)))]
        lines = ["new game"]
        if people:
            lines.append("players: " + ", ".join(people))
        bots = 3 - len(people)
        lines.append(rng.choice((f"bots: {bots}", f"bots: {bots}", "bots: three", "bots: -1", "bots: 1e9",
                                 f"bots: {bots + 1}", "bots:")))
        lines += rng.sample(("rules: omnibus", "rules: nonexistent", "target: 50", "target: -5", "players: 9",
                             "deadline: 48h", "deadline: forever", "weekends: skip", "grace: 0", "policy: pause",
                             "policy: chaos", "moon: choice", "pass_cycle: left right", "foo: bar", "reminder: 1s",
                             "removed_cards: 2C", "heart_values: x"), rng.choice((0, 0, 1, 2)))
        return "\r\n".join(lines)

    # -- one mail through the path --------------------------------------------------------------

    def process(self, template: bytes, target: Target, *, source: str = "smtp", envelope: str = "sender",
                limit: float = 5.0) -> CaseResult:
        """Store the mail as a front does, then run what the worker's task runs; what happened."""
        raw = mu.instantiate(template, target.sender, target.recipient)
        mail_from = {"null": "", "other": f"bounces+{target.sender.replace('@', '=')}@lists.test"}.get(
            envelope, target.sender)
        parsed, composed = self.probe.parsed, self.probe.composed
        svc = self.svc
        svc.clock.advance(minutes=1)  # type: ignore[attr-defined]
        ids: list[int] = []
        crash = None
        started = time.process_time()
        try:
            with cpu_limit(limit):
                received = receive_inbound(svc.session_factory, raw=raw, mail_from=mail_from,
                                           recipients=[target.recipient], source=source,
                                           received_at=svc.clock.now(), queue=lambda new: None)
                ids = received.ids
                for inbound_id in ids:
                    if self.send:
                        run_move(svc, inbound_id, queue_retry=lambda outbound_id, countdown: None)
                    else:
                        apply_inbound(svc, inbound_id)
        except CaseTimeout as error:
            crash = _crash(error, stall=True)
            # Interrupted anywhere, perhaps inside the database driver: the next mail starts on
            # fresh connections rather than one left in an unknown state.
            svc.engine.dispose()
        except Exception as error:  # noqa: BLE001 (every escape is what the fuzzer looks for)
            crash = _crash(error)
        cpu = time.process_time() - started
        status, code, outbound, problems = "not stored", "-", 0, ()
        if ids:
            with svc.session_factory() as session:
                row = session.get(InboundMessage, ids[0])
                if row is not None:
                    status = str(row.status)
                    outcome = row.outcome if isinstance(row.outcome, dict) else {}
                    code = str(outcome.get("code", "-"))
                    reading = outcome.get("reading")
                    problems = tuple(str(p) for p in reading) if isinstance(reading, list) else ()
                outbound = session.scalar(select(func.count()).select_from(OutboundMessage)
                                          .where(OutboundMessage.inbound_id.in_(ids))) or 0
        return CaseResult(stored=bool(ids), status=status, code=code, handler=self.probe.parsed > parsed,
                          composer=self.probe.composed > composed, outbound=outbound, cpu=cpu, crash=crash,
                          problems=problems)


# -- the stream of mails ------------------------------------------------------------------------------


@dataclass
class Case:
    """One mail to send: its template, the kind of target, how it was made."""

    template: bytes
    kind: str
    origin: str  # "reply", "corpus:<file>", "generator:<name>"
    mutations: list[str]
    source: str = "smtp"
    envelope: str = "sender"  # the SMTP envelope sender: "sender" (the From), "null" (<>) or "other"


def _reply_template(rng: random.Random, target: Target, number: int) -> bytes:
    """A reply as a person's client writes it: the answer on top, the mail answered quoted below,
    in one of the usual charsets and transfer encodings, sometimes with an HTML alternative."""
    lines = [target.suggestion if rng.random() < 0.75 else rng.choice(mu.COMMAND_LINES)]
    if rng.random() < 0.15:
        lines.append(rng.choice(mu.COMMAND_LINES))
    if rng.random() < 0.1:
        lines.append("say " + rng.choice(("good luck", "gl hf", "bom jogo", "\u2660\u2665", "x" * 300)))
    text = "\r\n".join(lines) + "\r\n\r\nOn Mon, 30 Nov 2026 at 10:00, Hearts <hearts@hearts.test> wrote:\r\n" + "\r\n".join(
        f"> line {k} of the mail answered: your hand \u2663 2 5 9  \u2665 Q" for k in range(rng.choice((0, 3, 20))))
    charset, encoding = rng.choice((("utf-8", "8bit"), ("utf-8", "quoted-printable"), ("utf-8", "base64"),
                                    ("iso-8859-1", "quoted-printable"), ("windows-1252", "8bit"),
                                    ("iso-8859-2", "8bit"), ("us-ascii", "7bit")))
    data = text.encode(charset, "replace")
    if encoding == "base64":
        import base64

        data = base64.encodebytes(data).replace(b"\n", b"\r\n")
    elif encoding == "quoted-printable":
        import quopri

        data = quopri.encodestring(data.replace(b"\r\n", b"\n")).replace(b"\n", b"\r\n")
    subject = {"play": "Re: [Hearts] Your turn", "pass": "Re: [Hearts] Pass three cards", "moon": "Re: [Hearts] Moon",
               "invitation": "Re: Invitation to a game of Hearts", "new_game": "new game"}.get(target.expected or "", "Re: Hearts")
    sender = (target.name.encode() + b" <" + mu.FROM + b">") if target.name else mu.FROM
    headers = [(b"From", sender), (b"To", mu.TO), (b"Subject", subject.encode()),
               (b"Message-ID", b"<fuzz.%d@fuzz.test>" % number), (b"Date", b"Mon, 30 Nov 2026 10:00:00 +0000"),
               (b"MIME-Version", b"1.0")]
    part_headers = [(b"Content-Type", b"text/plain; charset=" + charset.encode()),
                    (b"Content-Transfer-Encoding", encoding.encode())]
    if rng.random() < 0.3:
        html = ("<div>" + "<br>".join(lines) + "</div><blockquote>quoted</blockquote>").encode("utf-8")
        body = (b"--alt\r\n" + b"".join(n + b": " + v + b"\r\n" for n, v in part_headers) + b"\r\n" + data
                + b"\r\n--alt\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + html + b"\r\n--alt--\r\n")
        return mu.build_mail(headers + [(b"Content-Type", b'multipart/alternative; boundary="alt"')], body)
    return mu.build_mail(headers + part_headers, data)


def _corpus_template(rng: random.Random, raw: bytes, target: Target, number: int) -> bytes:
    """A corpus mail sent by the target's sender to the target (its display name kept)."""
    old_from = mu.get_header(raw, b"From") or b""
    match = re.match(rb'\s*("?[^"<]*"?)\s*<', old_from)
    name = match.group(1).strip() if match and match.group(1).strip() else b""
    raw = mu.set_header(raw, b"From", (name + b" <" if name else b"<") + mu.FROM + b">")
    raw = mu.set_header(raw, b"To", mu.TO)
    return mu.set_header(raw, b"Message-ID", b"<fuzz.%d@fuzz.test>" % number)


_SEAT_KINDS = ("seat", "stale", "forged", "stranger")


def _corpus_kind(expected: str | None, rng: random.Random) -> str:
    if expected == "new_game":
        return rng.choice(("new-known", "new-unknown"))
    if expected == "invitation":
        return "invite"
    return rng.choices(_SEAT_KINDS, (34, 10, 6, 5))[0]


def make_case(rng: random.Random, fixture: Fixture, corpus: list[tuple[str, str | None, bytes]],
              number: int) -> tuple[Case, Target]:
    """The next mail of the stream and its live target."""
    roll = rng.random()
    if roll < 0.35 and corpus:
        name, expected, raw = rng.choice(corpus)
        kind = _corpus_kind(expected, rng)
        target = fixture.target(kind)
        template, origin = _corpus_template(rng, raw, target, number), f"corpus:{name}"
        source = "smtp"
    elif roll < 0.8:
        kind = rng.choices(TARGET_KINDS, _TARGET_WEIGHTS)[0]
        target = fixture.target(kind)
        template, origin, source = _reply_template(rng, target, number), "reply", "smtp"
    else:
        generator = rng.choice(list(mu.GENERATORS.values()))
        size = int(10 ** rng.uniform(2, 4.3))  # 100 B to 20 kB: the big sizes are the size table's
        kind = generator.target
        target = fixture.target(kind)
        template = mu.set_header(generator.build(rng, size), b"Message-ID", b"<fuzz.%d@fuzz.test>" % number)
        origin, source = f"generator:{generator.name}", generator.source
    applied: list[str] = []
    if rng.random() < 0.85:
        template, applied = mu.mutate(rng, template)
    roll = rng.random()
    envelope = "null" if roll < 0.03 else "other" if roll < 0.06 else "sender"
    return Case(template, kind, origin, applied, source, envelope), target


# -- the report -----------------------------------------------------------------------------------------


@dataclass
class Report:
    messages: int = 0
    stored: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    handler: int = 0
    composer: int = 0
    outbound: int = 0
    crashes: Counter[str] = field(default_factory=Counter)
    crash_where: dict[str, Counter[str]] = field(default_factory=dict)
    crash_origins: dict[str, Counter[str]] = field(default_factory=dict)
    crash_messages: dict[str, str] = field(default_factory=dict)
    stalls: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)
    handler_by_kind: Counter[str] = field(default_factory=Counter)
    composer_by_kind: Counter[str] = field(default_factory=Counter)
    problems: Counter[str] = field(default_factory=Counter)
    handlers: Counter[str] = field(default_factory=Counter)
    cpu: float = 0.0
    slowest: list[tuple[float, str]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    size_table: dict[str, dict[int, CaseResult | None]] = field(default_factory=dict)
    saved: list[Path] = field(default_factory=list)
    #: Errors of the fuzzer's own set-up of a mail (not of the services): a bug to fix here.
    fuzzer_errors: Counter[str] = field(default_factory=Counter)
    wall: float = 0.0

    @property
    def handler_share(self) -> float:
        return self.handler / self.messages if self.messages else 0.0

    @property
    def composer_share(self) -> float:
        return self.composer / self.messages if self.messages else 0.0

    @property
    def uncaught(self) -> int:
        return sum(self.crashes.values())

    def add(self, case: Case, result: CaseResult) -> None:
        self.messages += 1
        self.stored += result.stored
        self.outcomes[f"{result.status} {result.code}"] += 1
        self.handler += result.handler
        self.composer += result.composer
        self.outbound += result.outbound
        self.by_kind[case.kind] += 1
        self.handler_by_kind[case.kind] += result.handler
        self.composer_by_kind[case.kind] += result.composer
        self.problems.update(result.problems)
        self.cpu += result.cpu
        label = f"{case.origin} to {case.kind}" + (f" ({', '.join(case.mutations)})" if case.mutations else "")
        self.slowest = sorted([*self.slowest, (result.cpu, label)], reverse=True)[:5]
        if result.crash is not None:
            crash = result.crash
            table = self.stalls if crash.stall else self.crashes
            table[crash.kind] += 1
            self.crash_where.setdefault(crash.kind, Counter())[crash.where] += 1
            self.crash_messages.setdefault(crash.kind, crash.message)
            origin = case.origin + (" + " + ", ".join(case.mutations) if case.mutations else "")
            self.crash_origins.setdefault(crash.kind, Counter())[origin] += 1


def exit_code(report: Report) -> int:
    """0 when nothing escaped, nothing stalled and at least half reached a handler and the composer."""
    if report.uncaught or report.stalls or report.fuzzer_errors:
        return 1
    if report.handler_share < 0.5 or report.composer_share < 0.5:
        return 1
    return 0


def format_report(report: Report) -> list[str]:
    out = [f"messages: {report.messages} ({report.stored} stored; targets: "
           + ", ".join(f"{k} {n}" for k, n in sorted(report.by_kind.items())) + ")"]
    out.append("outcomes (status and code of the received row):")
    for outcome, count in report.outcomes.most_common():
        out.append(f"  {count:7d}  {outcome}")
    out.append(f"reached a command handler: {report.handler} ({report.handler_share:.1%}); "
               f"reached the composer: {report.composer} ({report.composer_share:.1%}); "
               f"outbox rows written: {report.outbound} ({report.outbound / max(report.messages, 1):.2f} a mail)")
    out.append("  by target: " + "; ".join(
        f"{kind} {n}: {report.handler_by_kind[kind] / n:.0%} / {report.composer_by_kind[kind] / n:.0%}"
        for kind, n in sorted(report.by_kind.items())) + " (handler / composer)")
    if report.problems:
        out.append("degraded by the reader (the outcome's reading list): "
                   + ", ".join(f"{k} {n}" for k, n in report.problems.most_common(15)))
    if report.handlers:
        out.append("seat command handlers run: " + ", ".join(f"{k} {n}" for k, n in report.handlers.most_common()))
    out.append(f"uncaught exceptions: {report.uncaught}" + (" (goal 0)" if report.uncaught else ""))
    for table in (report.crashes, report.stalls):
        for kind, count in table.most_common():
            out.append(f"  {count:7d}  {kind}: {report.crash_messages[kind][:120]!r}")
            for where, n in report.crash_where[kind].most_common(3):
                out.append(f"           {n:5d} at {where}")
            for origin, n in report.crash_origins[kind].most_common(3):
                out.append(f"           {n:5d} from {origin}")
        if table is report.crashes:
            limit_note = "interrupted at the CPU limit"
            out.append(f"stalls ({limit_note}): {sum(report.stalls.values())}")
    out.append(f"CPU: {report.cpu:.1f} s for the stream ({1000 * report.cpu / max(report.messages, 1):.1f} ms a mail); "
               f"wall {report.wall:.1f} s; slowest mails:")
    for cpu, label in report.slowest:
        out.append(f"  {cpu:8.3f} s  {label[:150]}")
    if report.size_table:
        out.append("CPU seconds (process_time) per case, by generator and size (store + the worker's task):")
        out.append(f"  {'generator':<16}" + "".join(f"{size_label(s):>10}" for s in report.sizes)
                   + "  last step  outcome at the largest size run")
        over = []
        for name, row in report.size_table.items():
            cells = []
            run_results = [(size, row[size]) for size in report.sizes if row.get(size) is not None]
            for size in report.sizes:
                result = row.get(size)
                if result is None:
                    cells.append(f"{'-':>10}")
                    continue
                mark = "!" if result.crash is not None and result.crash.stall else "x" if result.crash else ""
                cells.append(f"{result.cpu:>9.3f}{mark or ' '}")
                if result.cpu > 1.0:
                    over.append(f"{name} {size_label(size)}")
            step, tail = "", ""
            if run_results:
                last = run_results[-1][1]
                assert last is not None
                tail = f"{last.status} {last.code}" + (f"; {last.crash.kind}" if last.crash else "")
            if len(run_results) >= 2:
                (s0, r0), (s1, r1) = run_results[-2], run_results[-1]
                assert r0 is not None and r1 is not None
                step = f"x{r1.cpu / max(r0.cpu, 1e-6):.1f}/x{s1 / s0:g}"
            out.append(f"  {name:<16}" + "".join(cells) + f"  {step:>9}  " + tail)
        out.append("  (last step: how much more CPU the largest size run took than the one before, for how much more"
                   " mail: linear is about x10/x10; ! interrupted at the CPU limit, larger sizes not tried;"
                   " x an exception escaped)")
        out.append(f"  cases over 1 s of CPU: {len(over)}" + (f" ({', '.join(over)})" if over else "")
                   + " (goal: none, up to 10 MB)")
    for kind, count in report.fuzzer_errors.most_common():
        out.append(f"the fuzzer's own errors (a mail not sent): {count} {kind}")
    for path in report.saved:
        out.append(f"saved: {path}")
    return out


# -- crashes: minimised and saved -----------------------------------------------------------------


def _reproduces(fixture: Fixture, case: Case, template: bytes, kind: str, number: int, limit: float) -> bool:
    template = b"Message-ID: <replay.%d@fuzz.test>\r\n" % number + template
    result = fixture.process(template, fixture.target(case.kind), source=case.source, envelope=case.envelope,
                             limit=limit)
    return result.crash is not None and result.crash.kind == kind


def minimise(fixture: Fixture, case: Case, kind: str, *, budget: int = 60, limit: float = 5.0) -> bytes:
    """A smaller template that still raises ``kind``: lines dropped by halves, then quarters...
    (delta debugging, bounded to ``budget`` replays through the full path)."""
    template = case.template
    if len(template) > 200_000:
        return template
    counter = itertools.count()
    lines = template.split(b"\n")
    chunk = max(len(lines) // 2, 1)
    tries = 0
    while chunk >= 1 and tries < budget:
        start = 0
        while start < len(lines) and tries < budget:
            candidate = lines[:start] + lines[start + chunk:]
            tries += 1
            if candidate and _reproduces(fixture, case, b"\n".join(candidate), kind, next(counter), limit):
                lines = candidate
            else:
                start += chunk
        chunk //= 2
    return b"\n".join(lines)


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", kind.lower()).strip("_")[:60]


def save_crash(directory: Path, case: Case, crash: Crash, template: bytes, index: int) -> Path:
    """Write the template as ``<kind>-<n>.eml`` and its line in ``manifest.toml`` (the regression
    corpus's format: ``tests/fuzz/regressions``)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{_slug(crash.kind)}-{index}.eml"
    path.write_bytes(template)
    what = f"{crash.kind} at {crash.where}: {crash.message}".replace("\\", "\\\\").replace('"', '\\"')
    what = re.sub(r"[\x00-\x1f\x7f]", " ", what)
    with open(directory / "manifest.toml", "a", encoding="utf-8") as manifest:
        manifest.write(f'\n[[case]]\nfile = "{path.name}"\ntarget = "{case.kind}"\nsource = "{case.source}"\n'
                       f'envelope = "{case.envelope}"\nwhat = "{what[:400]}"\n'
                       f'found = "{case.origin}; mutations: {", ".join(case.mutations) or "none"}"\n')
    return path


# -- running ----------------------------------------------------------------------------------------


def run(options: Options, echo: Callable[[str], None] = print) -> Report:
    """The stream of ``options.messages`` mails, then the size table; prints and returns the report."""
    report = Report(sizes=list(options.sizes))
    corpus = load_corpus(options.corpus)
    base = options.directory or Path(tempfile.mkdtemp(prefix="pbem-fuzz-"))
    started = time.perf_counter()
    fixture = Fixture(base, seed=options.seed, send=options.send, tables=options.tables)
    rng = random.Random(f"{options.seed}:mails")
    saved_per_kind: Counter[str] = Counter()
    pbem_log = logging.getLogger("pbem")
    level = pbem_log.level
    pbem_log.setLevel(logging.CRITICAL)  # the services log every failure: counted here (restored after)
    try:
        handlers_before = Counter(fixture.probe.handlers)
        for number in range(options.messages):
            try:
                case, target = make_case(rng, fixture, corpus, number)
            except Exception as error:  # noqa: BLE001 (the fuzzer's own fault: counted, shown, not hidden)
                report.fuzzer_errors[f"{type(error).__name__} at {innermost_frame(error.__traceback__)}"] += 1
                if sum(report.fuzzer_errors.values()) > 100:
                    raise
                continue
            result = fixture.process(case.template, target, source=case.source, envelope=case.envelope,
                                     limit=options.limit)
            report.add(case, result)
            try:
                fixture.after(target)
            except Exception as error:  # noqa: BLE001
                report.fuzzer_errors[f"{type(error).__name__} at {innermost_frame(error.__traceback__)}"] += 1
            if result.crash is not None and options.save_crashes is not None \
                    and saved_per_kind[result.crash.kind] < options.save_per_kind:
                saved_per_kind[result.crash.kind] += 1
                template = case.template if result.crash.stall else minimise(fixture, case, result.crash.kind,
                                                                             limit=options.limit)
                report.saved.append(save_crash(options.save_crashes, case, result.crash, template,
                                               saved_per_kind[result.crash.kind]))
            if options.progress and number and number % 1000 == 0:
                echo(f"... {number} mails, {report.uncaught} uncaught, {sum(report.stalls.values())} stalls, "
                     f"{time.perf_counter() - started:.0f} s")
        report.handlers = fixture.probe.handlers - handlers_before
        report.wall = time.perf_counter() - started
        for name, generator in mu.GENERATORS.items():
            row: dict[int, CaseResult | None] = {}
            report.size_table[name] = row
            stop = False
            for size in options.sizes:
                if stop:
                    row[size] = None
                    continue
                case_rng = random.Random(f"{options.seed}:size:{name}")  # the same case at every size
                template = mu.set_header(generator.build(case_rng, size), b"Message-ID",
                                         b"<size.%s.%d@fuzz.test>" % (name.encode(), size))
                target = fixture.target(generator.target)
                result = fixture.process(template, target, source=generator.source, limit=options.size_limit)
                row[size] = result
                fixture.after(target)
                _forget_cached_texts()
                if result.crash is not None and result.crash.stall:
                    stop = True
                if result.crash is not None and options.save_crashes is not None and size <= 1_000_000 \
                        and saved_per_kind[result.crash.kind] < options.save_per_kind:
                    saved_per_kind[result.crash.kind] += 1
                    case = Case(template, generator.target, f"generator:{name}:{size_label(size)}", [],
                                generator.source)
                    report.saved.append(save_crash(options.save_crashes, case, result.crash, template,
                                                   saved_per_kind[result.crash.kind]))
            if options.progress:
                echo(f"... size table: {name} done")
    finally:
        pbem_log.setLevel(level)
        fixture.close()
        if options.directory is None:
            shutil.rmtree(base, ignore_errors=True)
    for line in format_report(report):
        echo(line)
    return report


def _forget_cached_texts() -> None:
    """The services keep the reply text of the last mails (``inbound.reply_of``); after a 10 MB
    case that is tens of MB held for nothing."""
    cache_clear = getattr(inbound.reply_of, "cache_clear", None)
    if cache_clear is not None:
        cache_clear()


def replay_case(fixture: Fixture, directory: Path, entry: dict[str, Any], *, limit: float = 120.0) -> CaseResult:
    """One case of a regression corpus (``directory/manifest.toml``'s ``entry``) through the full
    path, to a live target of its kind (a Message-ID of its own put first, so the same file
    replayed twice is stored twice)."""
    template = (directory / entry["file"]).read_bytes()
    template = b"Message-ID: <regression.%d.%s@fuzz.test>\r\n" % (next(_replays), _slug(entry["file"]).encode()) + template
    target = fixture.target(entry.get("target", "seat"))
    result = fixture.process(template, target, source=entry.get("source", "smtp"),
                             envelope=entry.get("envelope", "sender"), limit=limit)
    fixture.after(target)
    return result


_replays = itertools.count()


def manifest_cases(directory: Path) -> list[dict[str, Any]]:
    return list(tomllib.loads((directory / "manifest.toml").read_text(encoding="utf-8"))["case"])


def replay_manifest(directory: Path, fixture: Fixture, *, limit: float = 120.0) -> list[tuple[dict[str, Any], CaseResult]]:
    """Every case of ``directory/manifest.toml`` through the full path; the results in its order."""
    return [(entry, replay_case(fixture, directory, entry, limit=limit)) for entry in manifest_cases(directory)]


def main_report(options: Options, echo: Callable[[str], None] = print) -> int:
    """Run and return the exit status (for the command line)."""
    return exit_code(run(options, echo))
