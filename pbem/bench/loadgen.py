"""The load generator of ``pbem bench e2e``: scripted players at many tables, and a pacer.

``Players.on_message`` is the SMTP sink's callback: every mail pbem sends arrives there, its
arrival time is kept by Message-ID, and each ``your_turn`` mail becomes a ready ``Decision``
(a seat that must answer).  ``Pacer.run`` offers moves at a fixed rate: every ``1/rate``
seconds it takes the oldest ready decision of the group being measured and hands the reply to
``Senders``, a few threads that each keep one SMTP connection open to the front (as a mail
provider's outgoing server does; ``SmtpClient``) and record when the front accepted each reply
(its 250 after DATA, i.e. once the mail is stored).

Replies are what a person's mail client writes: from the seat's own address, to the signed
``Reply-To`` of the mail answered, the choice on top and the original quoted below (so the
reader's quote stripping runs on every move).  The choice is read from the machine headers pbem
adds for bots (``X-Hearts-Decision``, ``-Legal``, ``-Hand``).

Everything is bounded: the pacer runs for a given number of seconds, the senders' queue has a
cap (a slot that finds it full is counted as *not offered*, never queued without end), and
every wait has a deadline.
"""

from __future__ import annotations

import binascii
import queue
import random
import re
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from pbem.devservers.smtp_sink import CapturedMessage

__all__ = ["Decision", "Pacer", "Players", "SentReply", "Senders", "SmtpClient", "SmtpReplyError", "group_of"]

# The headers the players read, each at the start of a line (the block is searched with a
# "\n" put before it), with its continuation lines.
_WANTED = re.compile(rb"\n(?i:(message-id|x-hearts-kind|x-hearts-decision|x-hearts-hand|x-hearts-legal"
                     rb"|reply-to|subject|x-hearts-game)):[ \t]*([^\r\n]*(?:\r\n[ \t][^\r\n]*)*)")
_ANGLE = re.compile(r"<([^<>]+)>")
QUOTED_LINES = 40


def group_of(address: str) -> str:
    """The group of a load player: the local part up to its first ``-`` (``heavy-12@load.test``)."""
    return address.split("@", 1)[0].split("-", 1)[0]


def _headers(raw: bytes) -> dict[bytes, str]:
    """The few headers the players read (names in lower case), unfolded (pbem writes them in
    ASCII); the last one wins when a header is repeated."""
    end = raw.find(b"\r\n\r\n")
    out: dict[bytes, str] = {}
    for match in _WANTED.finditer(b"\n" + (raw if end < 0 else raw[:end])):
        value = match.group(2)
        if b"\r\n" in value:
            first, *rest = value.split(b"\r\n")
            value = b" ".join([first, *(line.strip() for line in rest)])
        out[match.group(1).lower()] = value.decode("ascii", "replace")
    return out


def _text_part(raw: bytes) -> str:
    """The plain-text part of one of pbem's mails (quoted-printable UTF-8), for quoting."""
    start = raw.find(b"Content-Type: text/plain")
    if start < 0:
        return ""
    body = raw.find(b"\r\n\r\n", start)
    end = raw.find(b"\r\n--=_hearts", body)
    if body < 0 or end < 0:
        return ""
    return binascii.a2b_qp(raw[body + 4:end]).decode("utf-8", "replace")


@dataclass(frozen=True)
class Decision:
    """A ``your_turn`` mail that a load player must answer."""

    player: str
    reply_to: str
    decision: str
    hand: tuple[str, ...]
    legal: tuple[str, ...]
    message_id: str
    subject: str
    quote: str
    arrived: float

    def choose(self, rng: random.Random, pass_count: int = 3) -> str:
        if self.decision == "pass":
            return " ".join(rng.sample(self.hand, pass_count))
        if self.decision == "moon":
            return rng.choice(["old", "new"])
        return rng.choice(self.legal)

    def reply(self, body: str, message_id: str) -> bytes:
        # Quoted as a client does: "> " before each line, long lines wrapped (SMTP allows 998).
        lines_in = [line[k:k + 76] or "" for line in self.quote.splitlines()
                    for k in range(0, max(len(line), 1), 76)]
        quoted = "\r\n".join("> " + line for line in lines_in[:QUOTED_LINES])
        lines = [
            f"From: {self.player}",
            f"To: {self.reply_to}",
            f"Subject: Re: {self.subject}",
            f"Message-ID: {message_id}",
            f"In-Reply-To: {self.message_id}",
            f"References: {self.message_id}",
            "MIME-Version: 1.0",
            'Content-Type: text/plain; charset="utf-8"',
            "Content-Transfer-Encoding: 8bit",
            "",
            body,
            "",
            "On Mon, 30 Nov 2026 at 10:00, Hearts <hearts@example> wrote:",
            quoted,
            "",
        ]
        return "\r\n".join(lines).encode("utf-8")


@dataclass
class Players:
    """Every load player, reading its mail at the sink (``on_message``)."""

    domain: str = "load.test"
    arrivals: dict[str, float] = field(default_factory=dict)
    kinds: Counter[str] = field(default_factory=Counter)
    ready: dict[str, deque[Decision]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    last_arrival: float = 0.0

    def on_message(self, message: CapturedMessage) -> None:
        headers = _headers(message.raw)
        message_id = headers.get(b"message-id", "").strip()
        kind = headers.get(b"x-hearts-kind", "")
        recipient = message.rcpt_tos[0].lower() if message.rcpt_tos else ""
        decision = None
        if kind == "your_turn" and recipient.endswith("@" + self.domain):
            reply_to = _ANGLE.search(headers.get(b"reply-to", ""))
            decision = Decision(
                player=recipient,
                reply_to=reply_to.group(1) if reply_to else headers.get(b"reply-to", "").strip(),
                decision=headers.get(b"x-hearts-decision", ""),
                hand=tuple(headers.get(b"x-hearts-hand", "").split()),
                legal=tuple(headers.get(b"x-hearts-legal", "").split()),
                message_id=message_id,
                subject=headers.get(b"subject", ""),
                quote=_text_part(message.raw),
                arrived=message.received_at,
            )
        with self._lock:
            self.arrivals[message_id] = message.received_at
            self.kinds[kind] += 1
            self.last_arrival = message.received_at
            if decision is not None:
                self.ready.setdefault(group_of(recipient), deque()).append(decision)

    def take(self, group: str) -> Decision | None:
        with self._lock:
            waiting = self.ready.get(group)
            return waiting.popleft() if waiting else None

    def waiting(self, group: str) -> int:
        with self._lock:
            return len(self.ready.get(group, ()))

    def arrival(self, message_id: str) -> float | None:
        with self._lock:
            return self.arrivals.get(message_id)

    def quiet_since(self) -> float:
        with self._lock:
            return self.last_arrival


@dataclass(frozen=True)
class SentReply:
    """One reply handed to the front: when it was sent and when the front accepted it."""

    message_id: str
    group: str
    sent: float
    accepted: float | None  # None: the front refused it or the connection failed
    error: str = ""


class SmtpReplyError(Exception):
    """The front answered a command with something other than the success expected."""

    def __init__(self, command: str, code: int, text: bytes) -> None:
        super().__init__(f"{command}: {code} {text.decode('utf-8', 'replace')}")
        self.code = code


class SmtpClient:
    """One SMTP connection as a sending mail server keeps it: EHLO once, then any number of
    ``MAIL``/``RCPT``/``DATA`` transactions; with PIPELINING (RFC 2920, as Postfix and the big
    providers' servers send when offered) the three go in one write, else one command per round
    trip; ``SIZE``, ``BODY=8BITMIME`` (and ``SMTPUTF8`` for a non-ASCII address) given when the
    front offers them.

    It replaces smtplib, which spent about twice the CPU a mail (130 against 70 µs, one sender
    on loopback) on what a load generator does not need: both addresses parsed again by
    ``email.utils``, two regular-expression passes over every message, replies read line by
    line through a buffered file.  Here each command is one ``send`` and each reply usually one
    ``recv``.  The message must be in CRLF lines (replies are); lines starting with a dot are
    doubled (RFC 5321 §4.5.2)."""

    def __init__(self, host: str, port: int, *, timeout: float, local_hostname: str = "load.test") -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pending = b""
            self._expect("greeting", 220)
            self.sock.sendall(f"EHLO {local_hostname}\r\n".encode("ascii"))
            lines = self._expect("EHLO", 250)
        except BaseException:
            self.sock.close()
            raise
        self.extensions = {line.split(b" ", 1)[0].upper() for line in lines[1:]}
        self._body_param = " BODY=8BITMIME" if b"8BITMIME" in self.extensions else ""
        self._size = b"SIZE" in self.extensions
        self._pipelining = b"PIPELINING" in self.extensions

    def _reply(self) -> tuple[int, list[bytes]]:
        """The next complete reply: its code and its lines' texts."""
        data = self._pending
        while True:
            lines: list[bytes] = []
            start = 0
            while True:
                end = data.find(b"\r\n", start)
                if end < 0:
                    break
                line = data[start:end]
                lines.append(line[4:])
                start = end + 2
                if line[3:4] != b"-":  # the last line of a reply: "250 text" (or just "250")
                    self._pending = data[start:]
                    if not line[:3].isdigit():
                        raise ConnectionError(f"not an SMTP reply: {line[:80]!r}")
                    return int(line[:3]), lines
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the front closed the connection")
            data += chunk

    def _expect(self, command: str, *codes: int) -> list[bytes]:
        code, lines = self._reply()
        if code not in codes:
            raise SmtpReplyError(command, code, b" ".join(lines))
        return lines

    def _command(self, line: str, *codes: int) -> None:
        self.sock.sendall(line.encode("utf-8") + b"\r\n")
        self._expect(line.split(":", 1)[0], *codes)

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        """One transaction; ``SmtpReplyError`` (after a ``RSET``) when the front refuses it."""
        params = f" SIZE={len(raw)}{self._body_param}" if self._size else self._body_param
        if not (sender.isascii() and recipient.isascii()) and b"SMTPUTF8" in self.extensions:
            params += " SMTPUTF8"  # RFC 6531
        commands = [(f"MAIL FROM:<{sender}>{params}", (250,)), (f"RCPT TO:<{recipient}>", (250, 251)),
                    ("DATA", (354,))]
        try:
            if self._pipelining:
                self.sock.sendall("".join(f"{line}\r\n" for line, _ in commands).encode("utf-8"))
                problems = []  # every answer read before judging any: the connection stays in step
                data_accepted = False
                for line, codes in commands:
                    try:
                        self._expect(line.split(":", 1)[0], *codes)
                        data_accepted = line == "DATA"
                    except SmtpReplyError as error:
                        problems.append(error)
                if problems:
                    if data_accepted:  # RFC 2920 3.1: DATA taken all the same: end the message
                        self._command(".", 250, 554)
                    raise problems[0]
            else:
                for line, codes in commands:
                    self._command(line, *codes)
        except SmtpReplyError:
            self._command("RSET", 250)
            raise
        if raw.startswith(b".") or b"\r\n." in raw:
            raw = _LEADING_DOT.sub(b"..", raw)
        self.sock.sendall(raw + b".\r\n" if raw.endswith(b"\r\n") else raw + b"\r\n.\r\n")
        self._expect("end of data", 250)

    def quit(self) -> None:
        try:
            self._command("QUIT", 221)
        except (SmtpReplyError, OSError):
            pass  # closing anyway
        finally:
            self.close()

    def close(self) -> None:
        self.sock.close()


_LEADING_DOT = re.compile(rb"(?m)^\.")


class Senders:
    """``threads`` SMTP clients, each on its own persistent connection to the front."""

    def __init__(self, host: str, port: int, *, threads: int = 8, backlog: int = 2000,
                 timeout: float = 60.0) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.jobs: queue.Queue[tuple[str, str, str, bytes, str] | None] = queue.Queue(maxsize=backlog)
        self.results: list[SentReply] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, name=f"sender-{k}", daemon=True)
                         for k in range(threads)]

    def start(self) -> Senders:
        for thread in self._threads:
            thread.start()
        return self

    def offer(self, sender: str, recipient: str, message_id: str, raw: bytes, group: str) -> bool:
        """Queue one reply; False when the backlog is full (the slot is not offered)."""
        try:
            self.jobs.put_nowait((sender, recipient, message_id, raw, group))
            return True
        except queue.Full:
            return False

    def stop(self, timeout: float = 30.0) -> None:
        for _ in self._threads:
            self.jobs.put(None, timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=timeout)

    def _connect(self) -> SmtpClient:
        return SmtpClient(self.host, self.port, timeout=self.timeout, local_hostname="load.test")

    def _run(self) -> None:
        client: SmtpClient | None = None
        while True:
            job = self.jobs.get()
            if job is None:
                break
            sender, recipient, message_id, raw, group = job
            sent = time.monotonic()
            accepted: float | None = None
            error = ""
            for _attempt in range(2):  # once more on a fresh connection if the old one broke
                try:
                    if client is None:
                        client = self._connect()
                    client.send(sender, recipient, raw)
                    accepted = time.monotonic()
                    break
                except SmtpReplyError as exc:  # refused (the connection is still in step)
                    error = str(exc)
                    break
                except OSError as exc:  # refused connection, reset, closed, timeout
                    if client is not None:
                        client.close()
                    client, error = None, repr(exc)
                    if isinstance(exc, TimeoutError):
                        break  # a front that does not answer in ``timeout`` is not retried
            with self._lock:
                self.results.append(SentReply(message_id, group, sent, accepted, error))
        if client is not None:
            client.quit()

    def taken(self) -> list[SentReply]:
        with self._lock:
            return list(self.results)


@dataclass
class PaceResult:
    offered: int = 0  # replies handed to the senders
    starved: int = 0  # slots with no decision ready (every table was waiting for pbem)
    backlogged: int = 0  # slots skipped because the senders' queue was full


class Pacer:
    """Offers one move every ``1/rate`` seconds from the ready decisions of one group."""

    def __init__(self, players: Players, senders: Senders, *, rng: random.Random,
                 message_id: Callable[[], str]) -> None:
        self.players = players
        self.senders = senders
        self.rng = rng
        self.message_id = message_id

    def offer_one(self, group: str, result: PaceResult) -> bool:
        decision = self.players.take(group)
        if decision is None:
            result.starved += 1
            return False
        message_id = self.message_id()
        raw = decision.reply(decision.choose(self.rng), message_id)
        if self.senders.offer(decision.player, decision.reply_to, message_id, raw, group):
            result.offered += 1
            return True
        result.backlogged += 1
        with self.players._lock:  # not sent: the seat still has to answer it
            self.players.ready.setdefault(group, deque()).appendleft(decision)
        return False

    def run(self, group: str, rate: float, seconds: float) -> PaceResult:
        """Offer ``rate`` moves a second for ``seconds`` (slots, not retries: a missed slot is gone)."""
        result = PaceResult()
        interval = 1.0 / rate
        start = time.monotonic()
        slots = int(rate * seconds)
        for k in range(slots):
            due = start + k * interval
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)  # pacing, not waiting for a result
            self.offer_one(group, result)
        remaining = start + seconds - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)
        return result
