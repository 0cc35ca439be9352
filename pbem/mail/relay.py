"""Hand finished mail to the world: an SMTP relay, or the local dev mailbox.

``make_relay(settings)`` picks one:

- ``SmtpRelay`` when ``PBEM_RELAY_HOST`` is set (``PBEM_RELAY_TLS`` none / starttls /
  ssl; AUTH when ``PBEM_RELAY_USER`` is set): one SMTP connection per batch of mails
  (``relay_session``: the mails of one move), one per mail through ``deliver``.
  ``KeptSmtpConnection`` (``keep_open``) keeps one connection open across batches: a
  worker process sends the mails of move after move on it.  A relay that offers PIPELINING
  (RFC 2920; Postfix does) gets each mail in two round trips instead of four, and a run of
  mails (``deliver_each``: the mails of a move) in one more round trip than it has mails.
- ``DevMailbox`` when it is empty (``pbem serve`` on a laptop): the mail is
  written to a file, and the web front shows it.

Both take the stored raw bytes unchanged (the outbox row's ``raw``), and the
envelope separately: the sender is always the server's bounce address
(``bounces@<mail domain>``) so that delivery failures come back to pbem's own
SMTP front and never to a player; the recipients are the row's, never read from
the headers.

Failures are sorted for the outbox: ``RelayError.permanent`` is true when the
relay said 5xx about the recipient or the message (retrying cannot help), false
for 4xx answers, refused or dropped connections, timeouts and TLS/AUTH problems
(an operator can fix those, and the mail should still go out afterwards).

The dev mailbox format (read by the web front's ``/dev/mail`` pages)
---------------------------------------------------------------------
Directory ``<PBEM_DATA_DIR>/devmail/`` (``dev_mailbox_dir(settings)``), one file per
outgoing mail, named ``<key>.eml`` where ``<key>`` is the outbox row id, zero-padded
to 10 digits (``0000000042.eml``), so sorting the names sorts by id and the
row behind a file is ``int(stem)``.  The content is the raw RFC 5322 message exactly
as stored, preceded by the two trace headers a delivery agent adds::

    Return-Path: <bounces@hearts.localhost>
    Delivered-To: alice@example.com

(``Delivered-To`` once per envelope recipient).  Files are written to a temporary
name and renamed into place, so a reader never sees half a mail; sending the same
row again replaces its file.  Parse a file with
``email.message_from_bytes(data, policy=email.policy.default)``.
"""

from __future__ import annotations

import os
import re
import smtplib
import ssl
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pbem.config import Settings

__all__ = [
    "DEV_MAILBOX_DIRNAME",
    "DevMailbox",
    "KeptSmtpConnection",
    "OutgoingMail",
    "Relay",
    "RelayError",
    "SmtpRelay",
    "bounce_address",
    "deliver_each",
    "dev_mailbox_dir",
    "dev_mailbox_name",
    "keep_open",
    "make_relay",
    "relay_session",
]

DEV_MAILBOX_DIRNAME = "devmail"
RELAY_TIMEOUT_S = 60.0
"""Per-socket-operation timeout talking to the relay (the outbox's lease is longer)."""


class RelayError(Exception):
    """The mail was not handed over.  ``permanent``: retrying cannot help."""

    def __init__(self, message: str, *, permanent: bool, code: int | None = None) -> None:
        super().__init__(message)
        self.permanent = permanent
        self.code = code


class Relay(Protocol):
    """Something that delivers one raw message to its envelope recipients."""

    def deliver(self, raw: bytes, *, recipients: list[str], key: int) -> None:
        """Hand ``raw`` over for ``recipients``; ``key`` names the outbox row.
        Raises ``RelayError`` when it could not."""
        ...


@contextmanager
def relay_session(relay: Relay) -> Iterator[Relay]:
    """A relay for several mails in a row: ``SmtpRelay`` keeps one connection open
    for them (``SmtpRelay.session``); any other relay is used as it is."""
    session = getattr(relay, "session", None)
    if session is None:
        yield relay
        return
    with session() as opened:
        yield opened


def deliver_each(relay: Relay, mails: Iterable[OutgoingMail]) -> dict[int, RelayError]:
    """Hand over ``mails`` (``(raw, recipients, key)``, read lazily) in order on ``relay`` (or a
    ``relay_session``); the failed ones by key, each mail succeeding or failing on its own."""
    if isinstance(relay, SmtpRelaySession):
        return relay.deliver_many(mails)
    failures: dict[int, RelayError] = {}
    for raw, recipients, key in mails:
        try:
            relay.deliver(raw, recipients=recipients, key=key)
        except RelayError as error:
            failures[key] = error
    return failures


def bounce_address(settings: Settings) -> str:
    """The envelope sender of every outgoing mail: bounces come back to us."""
    return f"bounces@{settings.mail_domain}"


def dev_mailbox_dir(settings: Settings) -> Path:
    """Where ``DevMailbox`` writes (see the module docstring for the format)."""
    return settings.data_dir / DEV_MAILBOX_DIRNAME


def dev_mailbox_name(key: int) -> str:
    """The file name of outbox row ``key`` in the dev mailbox."""
    return f"{key:010d}.eml"


def make_relay(settings: Settings) -> Relay:
    """The configured relay: SMTP when ``PBEM_RELAY_HOST`` is set, else the dev mailbox."""
    if settings.relay_host:
        return SmtpRelay(
            host=settings.relay_host,
            port=settings.relay_port,
            tls=settings.relay_tls,
            user=settings.relay_user,
            password=settings.relay_password,
            sender=bounce_address(settings),
            local_hostname=settings.smtp_hostname,
        )
    return DevMailbox(dev_mailbox_dir(settings), sender=bounce_address(settings))


@dataclass(frozen=True)
class SmtpRelay:
    """Delivers through an SMTP relay.

    ``deliver`` opens a connection for one message.  ``session()`` keeps one open for
    several (the mails of one move: a connection, greeting, EHLO and QUIT per move
    instead of per mail), reconnecting after any error, so a failure still concerns
    one message and never the next.  Nothing stays open between sessions, unless a
    ``KeptSmtpConnection`` holds it (a worker process, sending move after move).
    """

    host: str
    port: int
    tls: str  # none | starttls | ssl
    user: str
    password: str
    sender: str
    local_hostname: str | None = None
    timeout: float = RELAY_TIMEOUT_S

    def deliver(self, raw: bytes, *, recipients: list[str], key: int) -> None:
        with self.session() as session:
            session.deliver(raw, recipients=recipients, key=key)

    @contextmanager
    def session(self) -> Iterator[SmtpRelaySession]:
        session = SmtpRelaySession(self)
        try:
            yield session
        finally:
            session.close()

    def _open(self) -> smtplib.SMTP:
        client = self._connect()
        try:
            if self.tls == "starttls":
                client.starttls(context=ssl.create_default_context())
            if self.user:
                client.login(self.user, self.password)
        except BaseException:
            client.close()
            raise
        return client

    def _connect(self) -> smtplib.SMTP:
        if self.tls == "ssl":
            return smtplib.SMTP_SSL(
                self.host,
                self.port,
                local_hostname=self.local_hostname,
                timeout=self.timeout,
                context=ssl.create_default_context(),
            )
        return smtplib.SMTP(
            self.host, self.port, local_hostname=self.local_hostname, timeout=self.timeout
        )


class SmtpRelaySession:
    """Mails handed over one after another on one connection to the relay.

    ``deliver_many`` hands over a run of mails (the mails of a move) and says which failed; to a
    relay that offers PIPELINING the next mail's MAIL, RCPT and DATA go in the same write as the
    message before it (RFC 2920 lets message content open a group of commands): the four mails
    of a move in five round trips instead of eight.  ``deliver`` is one mail, its failure raised.
    """

    def __init__(self, relay: SmtpRelay) -> None:
        self.relay = relay
        self._client: smtplib.SMTP | None = None

    def deliver(self, raw: bytes, *, recipients: list[str], key: int) -> None:
        failures = self.deliver_many([(raw, recipients, key)])
        if failures:
            raise failures[key]

    def deliver_many(self, mails: Iterable[OutgoingMail]) -> dict[int, RelayError]:
        """Hand over ``mails`` (``(raw, recipients, key)``) in order; the failed ones by key.

        ``mails`` is read lazily, one mail at a time, just before its envelope goes out (the
        outbox renews its lease there).  Each mail succeeds or fails on its own: after a refusal
        that leaves the connection in step (a refused message) the next mail follows on it;
        after any other failure the connection is dropped and the next mail opens a fresh one.
        A connection lost while a message's answer was outstanding fails that mail too (sent
        again later: delivery is at least once).
        """
        try:
            return self._deliver_many(mails)
        except BaseException:
            # Raised by ``mails`` itself (or a bug): a message may be waiting for its content, so
            # the connection is not in step for the next caller.
            self._drop()
            raise

    def _deliver_many(self, mails: Iterable[OutgoingMail]) -> dict[int, RelayError]:
        failures: dict[int, RelayError] = {}
        pending: _Pending | None = None  # its DATA accepted; its content goes with the next write
        for raw, recipients, key in mails:
            try:
                client = self._ready()
                if not (client.does_esmtp and client.has_extn("pipelining")):
                    refused = client.sendmail(self.relay.sender, recipients, raw)
                    if refused:  # some recipients refused, the others got it
                        failures[key] = _from_refusals(refused)
                    continue
                envelope = _envelope(client, self.relay.sender, recipients, raw)
                client.send(pending.content + envelope if pending is not None else envelope)
            except (smtplib.SMTPException, OSError) as error:
                self._fail(error, [key] if pending is None else [pending.key, key], failures)
                pending = None
                continue
            if pending is not None:
                if not self._finish(client, pending, failures):  # the connection is gone
                    failures[key] = failures[pending.key]
                    pending = None
                    continue
            try:
                refused = _read_envelope_replies(client, self.relay.sender, recipients)
            except (smtplib.SMTPException, OSError) as error:
                # The caller of a refusal drops the connection too, which also ends a transaction
                # the relay left waiting for its message (a 354 to a refused sender).
                self._fail(error, [key], failures)
                pending = None
                continue
            pending = _Pending(key, _message_content(raw), refused)
        if pending is not None:
            client = self._client
            assert client is not None  # dropped only by _fail, which forgets the pending mail
            try:
                client.send(pending.content)
            except (smtplib.SMTPException, OSError) as error:
                self._fail(error, [pending.key], failures)
            else:
                self._finish(client, pending, failures)
        return failures

    def _ready(self) -> smtplib.SMTP:
        if self._client is None:
            self._client = self.relay._open()
        self._client.ehlo_or_helo_if_needed()
        return self._client

    def _finish(self, client: smtplib.SMTP, pending: _Pending, failures: dict[int, RelayError]) -> bool:
        """Read the answer to ``pending``'s content; False if that lost the connection."""
        try:
            code, message = client.getreply()
        except (smtplib.SMTPException, OSError) as error:
            self._fail(error, [pending.key], failures)
            return False
        if code != 250:  # refused, and the connection still in step
            failures[pending.key] = self._relay_error(smtplib.SMTPDataError(code, message))
        elif pending.refused:  # some recipients refused, the others got it
            failures[pending.key] = _from_refusals(pending.refused)
        return True

    def _fail(self, error: Exception, keys: list[int], failures: dict[int, RelayError]) -> None:
        """``error`` for the mails of ``keys``; the connection dropped."""
        self._drop()
        failure = self._relay_error(error)
        for key in keys:
            failures[key] = failure

    def _relay_error(self, error: Exception) -> RelayError:
        relay = self.relay
        if isinstance(error, smtplib.SMTPRecipientsRefused):
            failure = _from_refusals(error.recipients)
        elif isinstance(error, smtplib.SMTPResponseException):
            # Sender refused, DATA refused, AUTH refused, STARTTLS refused...
            # AUTH failures are configuration problems: worth retrying once fixed.
            permanent = error.smtp_code >= 500 and not isinstance(error, smtplib.SMTPAuthenticationError)
            failure = RelayError(f"relay answered {error.smtp_code} {_text(error.smtp_error)}",
                                 permanent=permanent, code=error.smtp_code)
        else:  # connection, TLS, timeouts
            failure = RelayError(f"relay {relay.host}:{relay.port} unreachable: {error!r}", permanent=False)
        failure.__cause__ = error
        return failure

    def _drop(self) -> None:
        """Forget the connection after an error: the next mail starts on a fresh one."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except OSError:
                pass  # already broken; nothing more to release

    def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        try:
            client.quit()
        except (smtplib.SMTPException, OSError):
            client.close()


class KeptSmtpConnection:
    """One connection to the relay kept open from batch to batch, by one process.

    Opening a connection costs a TCP handshake, the greeting, EHLO (STARTTLS and AUTH when
    configured) and QUIT: more than the mails of a move take to send.  A worker process sends
    move after move, so it keeps one open (``session()``, the ``relay_session`` protocol):

    - a connection idle for over ``check_after_s`` is checked with NOOP before it is used, and
      one idle for over ``max_idle_s`` is closed and replaced: relays drop idle connections
      (Postfix after 300 s), and a mail should not be the one to find out;
    - any error drops it (``SmtpRelaySession``): the next mail opens a fresh one;
    - one batch at a time uses it (a lock): a second thread at the same moment gets a
      connection of its own for its batch, closed after it.
    """

    def __init__(self, relay: SmtpRelay, *, check_after_s: float = 2.0, max_idle_s: float = 30.0) -> None:
        self.relay = relay
        self.check_after_s = check_after_s
        self.max_idle_s = max_idle_s
        self._session = SmtpRelaySession(relay)
        self._last_used = 0.0
        self._lock = threading.Lock()

    def deliver(self, raw: bytes, *, recipients: list[str], key: int) -> None:
        with self.session() as session:
            session.deliver(raw, recipients=recipients, key=key)

    @contextmanager
    def session(self) -> Iterator[SmtpRelaySession]:
        if not self._lock.acquire(blocking=False):
            with self.relay.session() as own:
                yield own
            return
        try:
            self._freshen()
            yield self._session
        finally:
            self._last_used = time.monotonic()
            self._lock.release()

    def _freshen(self) -> None:
        session = self._session
        if session._client is None:
            return
        idle = time.monotonic() - self._last_used
        if idle > self.max_idle_s:
            session.close()
        elif idle > self.check_after_s:
            try:
                code, _message = session._client.noop()
            except (smtplib.SMTPException, OSError):
                code = 0
            if code != 250:
                session._drop()

    def close(self) -> None:
        with self._lock:
            self._session.close()


def keep_open(relay: Relay) -> Relay:
    """``relay`` with its connection kept open between batches when it is an ``SmtpRelay``."""
    return KeptSmtpConnection(relay) if isinstance(relay, SmtpRelay) else relay


def _quote_periods(raw: bytes) -> bytes:
    """A period doubled at the start of every line, as ``smtplib`` does it (``(?m)^\\.``: after
    each LF and at the very start), with ``bytes.replace``: the regex took 45 µs a mail."""
    data = raw.replace(b"\n.", b"\n..")
    return b"." + data if data.startswith(b".") else data


#: A bare ``local@domain`` with nothing ``email.utils.parseaddr`` would read differently: no
#: spaces, quotes, brackets, comments, routes, dots at the ends of a part or two in a row.
_BARE_ADDRESS = re.compile(r"[^\s\"<>()\[\]\\,;:@.]+(?:\.[^\s\"<>()\[\]\\,;:@.]+)*"
                           r"@[^\s\"<>()\[\]\\,;:@.]+(?:\.[^\s\"<>()\[\]\\,;:@.]+)*")


def _smtp_path(address: str) -> str:
    """``smtplib.quoteaddr(address)`` (``<address>`` for a bare address), without parsing a bare
    one: ``parseaddr`` was 1% of a worker's CPU (about 0.1 ms a move), for addresses that are all bare."""
    return f"<{address}>" if _BARE_ADDRESS.fullmatch(address) else smtplib.quoteaddr(address)


#: One mail of a run: its raw bytes, its envelope recipients and its key (the outbox row).
OutgoingMail = tuple[bytes, list[str], int]


@dataclass(frozen=True, slots=True)
class _Pending:
    """A mail whose DATA the relay accepted: its content is sent with the next write."""

    key: int
    content: bytes  # periods doubled, ending in CRLF "." CRLF
    refused: dict[str, tuple[int, bytes]]  # recipients refused while others were accepted


def _envelope(client: smtplib.SMTP, sender: str, recipients: list[str], raw: bytes) -> bytes:
    """MAIL, the RCPTs and DATA for one mail, as one pipelined group (RFC 2920)."""
    options = f" SIZE={len(raw)}" if client.has_extn("size") else ""
    commands = [f"MAIL FROM:{_smtp_path(sender)}{options}"]
    commands += [f"RCPT TO:{_smtp_path(recipient)}" for recipient in recipients]
    commands.append("DATA")
    return ("\r\n".join(commands) + "\r\n").encode("ascii")


def _read_envelope_replies(client: smtplib.SMTP, sender: str, recipients: list[str]) -> dict[str, tuple[int, bytes]]:
    """The answers to ``_envelope``'s group, judged as ``sendmail`` judges them: the refused
    recipients, or ``SMTPSenderRefused`` / ``SMTPRecipientsRefused`` / ``SMTPDataError``."""
    # Every answer is read before judging any: the connection stays in step.
    mail_reply = client.getreply()
    rcpt_replies = [client.getreply() for _ in recipients]
    data_reply = client.getreply()
    refused = {
        recipient: reply for recipient, reply in zip(recipients, rcpt_replies) if reply[0] not in (250, 251)
    }
    if mail_reply[0] != 250:
        raise smtplib.SMTPSenderRefused(mail_reply[0], mail_reply[1], sender)
    if len(refused) == len(recipients):
        raise smtplib.SMTPRecipientsRefused(refused)
    if data_reply[0] != 354:
        raise smtplib.SMTPDataError(*data_reply)
    return refused


def _message_content(raw: bytes) -> bytes:
    """What follows a 354: the message with its periods doubled, then CRLF "." CRLF."""
    data = _quote_periods(raw)
    if not data.endswith(b"\r\n"):
        data += b"\r\n"
    return data + b".\r\n"


def _from_refusals(refusals: dict[str, tuple[int, bytes]]) -> RelayError:
    codes = [code for code, _ in refusals.values()]
    detail = "; ".join(f"{rcpt}: {code} {_text(msg)}" for rcpt, (code, msg) in refusals.items())
    return RelayError(
        f"recipient refused: {detail}",
        permanent=all(code >= 500 for code in codes),
        code=max(codes) if codes else None,
    )


def _text(message: bytes | str) -> str:
    return message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)


@dataclass(frozen=True)
class DevMailbox:
    """Writes each mail to ``<directory>/<key>.eml`` (format in the module docstring)."""

    directory: Path
    sender: str

    def deliver(self, raw: bytes, *, recipients: list[str], key: int) -> None:
        trace = f"Return-Path: <{self.sender}>\r\n" + "".join(
            f"Delivered-To: {recipient}\r\n" for recipient in recipients
        )
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".incoming-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(trace.encode("ascii", "backslashreplace") + raw)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, self.directory / dev_mailbox_name(key))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as error:
            raise RelayError(f"dev mailbox {self.directory}: {error}", permanent=False) from error

