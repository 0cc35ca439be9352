"""A lean SMTP sink: ``SmtpSink``'s API on a bare ``asyncio.Protocol``, for the benchmarks.

aiosmtpd reads a message line by line in Python (a ``readuntil`` and a few list operations per
line), which made the sink one of the largest costs of the benchmark process.  This server
keeps each connection's input in one ``bytearray``: commands are cut at ``CRLF``, and a
message body is found whole by searching for ``CRLF . CRLF`` (one C-level ``find`` per read),
then dot-unstuffed with one ``replace``.  Answers to everything that arrived in one read are
written together, so a pipelining client (RFC 2920) gets them in order in one segment.

What a client may send (RFC 5321, with the RFC 1869 ESMTP extensions it advertises:
``SIZE``, ``8BITMIME``, ``SMTPUTF8``, ``PIPELINING``, ``ENHANCEDSTATUSCODES``):

- ``EHLO``/``HELO`` (either resets the transaction; ``MAIL`` before either is ``503``);
- ``MAIL FROM:<path> [SIZE=n] [BODY=7BIT|8BITMIME] [SMTPUTF8]`` (``<>`` allowed; a ``SIZE``
  past the limit is ``552``; another parameter ``555``; ``MAIL`` inside a transaction ``503``);
- ``RCPT TO:<path>`` (``503`` before ``MAIL``; a non-ASCII address without ``SMTPUTF8``
  ``553``);
- ``DATA`` (``503`` before ``MAIL`` or with no accepted recipient; ``354``, then the message up
  to the line holding a lone ``.``; a message past the size limit is ``552`` and a line past
  998 octets ``500``, both answered once the end of data is seen, as RFC 5321 §4.2.5 implies);
- ``RSET``, ``NOOP``, ``HELP``, ``VRFY`` (``252``), ``EXPN`` (``502``), ``QUIT`` (``221``, then
  the connection is closed); anything else is ``500``, and so is a command line past
  ``command_limit`` octets.

``CapturedMessage.raw`` is what aiosmtpd gives ``SmtpSink``: the message's lines with their
``CRLF`` (so a non-empty message ends with one), dot-unstuffed, without the final ``.``.

Test hooks for clients' error paths: ``refuse_recipients`` (``RCPT TO`` one of them: ``550
5.1.1``), ``refuse_data_from_recipients`` (a message whose envelope includes one of them:
``554 5.6.0`` after its data, and nothing captured) and ``hang_up_after_data_from_recipients``
(such a message is captured, then the connection is closed before its ``250`` and before
anything after it in the input is read: a relay that crashed at that moment); all compared
case-insensitively.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import cast

from pbem.devservers.ports import free_port
from pbem.devservers.smtp_sink import CapturedMessage, CapturingSink

__all__ = ["CapturedMessage", "LeanSmtpSink"]

log = logging.getLogger(__name__)

#: RFC 5321 §4.5.3.1.6: a text line is at most 1000 octets with its CRLF.
MAX_TEXT_LINE = 998
#: RFC 5321 §4.5.3.1.4 allows 512 octets for a command line; ESMTP parameters (RFC 1869 §4.1.2)
#: and UTF-8 addresses (RFC 6531) make it longer, so a little room is left.
COMMAND_LIMIT = 2048
MAX_RECIPIENTS = 1000  # RFC 5321 §4.5.3.1.8 asks for at least 100

_CRLF = b"\r\n"
_END = b"\r\n.\r\n"
_DOT_LINE = b"\r\n."


def _reply(text: str) -> bytes:
    return (text + "\r\n").encode("ascii")


R_OK = _reply("250 2.0.0 OK")
R_SENDER_OK = _reply("250 2.1.0 Sender OK")
R_RCPT_OK = _reply("250 2.1.5 Recipient OK")
R_QUEUED = _reply("250 2.0.0 OK: message accepted")
R_DATA = _reply("354 End data with <CR><LF>.<CR><LF>")
R_BYE = _reply("221 2.0.0 Bye")
R_VRFY = _reply("252 2.1.5 Cannot VRFY user, but will accept message and attempt delivery")
R_HELP = _reply("214 2.0.0 Commands: EHLO HELO MAIL RCPT DATA RSET NOOP VRFY HELP QUIT")
R_UNKNOWN = _reply("500 5.5.2 Error: command not recognized")
R_LINE_TOO_LONG = _reply("500 5.5.2 Error: line too long")
R_TEXT_TOO_LONG = _reply("500 5.6.0 Error: a line of the message is longer than 998 octets")
R_BAD_UTF8 = _reply("500 5.5.2 Error: command is not valid UTF-8")
R_NOT_IMPLEMENTED = _reply("502 5.5.1 Error: command not implemented")
R_NEED_HELO = _reply("503 5.5.1 Error: send HELO or EHLO first")
R_NESTED_MAIL = _reply("503 5.5.1 Error: nested MAIL command")
R_NEED_MAIL = _reply("503 5.5.1 Error: need MAIL command")
R_NEED_RCPT = _reply("503 5.5.1 Error: need RCPT command")
R_TOO_MANY_RCPTS = _reply("452 4.5.3 Error: too many recipients")
R_NO_SUCH_USER = _reply("550 5.1.1 No such user")
R_TOO_BIG = _reply("552 5.3.4 Error: message size exceeds fixed maximum message size")
R_NEEDS_SMTPUTF8 = _reply("553 5.6.7 Error: a non-ASCII address needs SMTPUTF8")
R_REFUSED = _reply("554 5.6.0 Message refused")
R_PARAM_UNKNOWN = _reply("555 5.5.4 Error: parameter not recognized or not implemented")
R_HANDLER_FAILED = _reply("451 4.3.0 Error: the sink failed to handle the message")


def _syntax(usage: str) -> bytes:
    return _reply(f"501 5.5.4 Syntax: {usage}")


def _parse_path(text: str) -> tuple[str, str] | None:
    """``<path> params`` (or a bare address, as lenient servers accept) -> (address, params)."""
    text = text.lstrip(" ")  # "MAIL FROM: <a@b>" is common enough to accept
    if text.startswith("<"):
        end = text.find(">")
        if end < 0:
            return None
        address, params = text[1:end], text[end + 1:]
        if params and params[0] != " ":
            return None
    else:
        address, _, params = text.partition(" ")
        if "<" in address or ">" in address:
            return None
    if address.startswith("@") and ":" in address:  # a source route (RFC 5321 §4.1.2): ignored
        address = address.split(":", 1)[1]
    if " " in address:
        return None
    return address, params.strip(" ")


def _has_long_line(data: bytes, limit: int = MAX_TEXT_LINE) -> bool:
    """Whether a line of ``data`` is longer than ``limit`` octets before its CRLF (a bare LF ends
    a line here too).  Without cutting the message into lines: a line that long holds a whole
    block of ``limit // 2 + 1`` octets aligned on that size, so only a block with no LF is
    looked at closely (a dozen ``find`` calls for a mail of a few kilobytes)."""
    block = limit // 2 + 1
    find = data.find
    for start in range(0, len(data) - block + 1, block):
        if find(b"\n", start, start + block) < 0:
            line_start = data.rfind(b"\n", 0, start) + 1
            line_end = find(b"\n", start + block)
            if line_end < 0:
                line_end = len(data)
            elif data[line_end - 1:line_end] == b"\r":
                line_end -= 1
            if line_end - line_start > limit:
                return True
    return False


class _Session(asyncio.Protocol):
    """One SMTP connection.  All state is this object's; it runs in the sink's loop thread."""

    def __init__(self, sink: LeanSmtpSink) -> None:
        self.sink = sink
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.greeted = False
        self.esmtp = False
        self.in_data = False
        self.scan_from = 0  # in data: where the search for the end may start
        self.dropped = 0  # in data: octets of the message discarded (past the size limit)
        self.discarding_line = False  # a command line past the limit is being skipped
        self.closing = False
        self._reset()

    def _reset(self) -> None:
        self.mail_from: str | None = None
        self.smtputf8 = False
        self.rcpt_tos: list[str] = []

    # -- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (not an instance of it on every loop)
        self.sink._sessions.add(self)
        self.transport.write(self.sink._greeting)

    def connection_lost(self, exc: Exception | None) -> None:
        self.sink._sessions.discard(self)
        self.transport = None
        self.buffer = bytearray()

    def eof_received(self) -> bool:
        return False  # the client half-closed: close (an unfinished message is dropped)

    def data_received(self, data: bytes) -> None:
        if self.closing:
            return
        self.buffer += data
        out: list[bytes] = []
        try:
            self._process(out)
        finally:
            transport = self.transport
            if transport is not None:
                if out:
                    transport.write(b"".join(out))
                if self.closing:
                    transport.close()

    # -- input ------------------------------------------------------------------------------

    def _process(self, out: list[bytes]) -> None:
        buffer = self.buffer
        while buffer and not self.closing:
            if self.in_data:
                if not self._take_data(out):
                    return
                continue
            end = buffer.find(_CRLF)
            if end < 0:
                if len(buffer) > COMMAND_LIMIT:
                    self.discarding_line = True
                    del buffer[:-1]  # keep a trailing CR: its LF may come next
                return
            line = bytes(buffer[:end])
            del buffer[:end + 2]
            if self.discarding_line or end > COMMAND_LIMIT:
                self.discarding_line = False
                out.append(R_LINE_TOO_LONG)
                continue
            self._command(line, out)

    def _take_data(self, out: list[bytes]) -> bool:
        """Look for the end of the message; False when more input is needed."""
        buffer = self.buffer
        end = buffer.find(_END, self.scan_from)
        if end < 0:
            limit = self.sink.max_size
            if self.dropped + len(buffer) - 2 > limit:  # too big: keep counting, keep nothing
                self.dropped += len(buffer) - 4
                del buffer[:-4]
            self.scan_from = max(0, len(buffer) - 4)  # the end may begin in the last 4 octets
            return False
        received_at = time.monotonic()
        # The buffer began with a CRLF put there at DATA, so "\r\n.\r\n" is found for an empty
        # message too, and every line of the message follows a CRLF for the unstuffing.
        size = self.dropped + end  # the octets of the message (with its CRLFs, before unstuffing)
        content = bytes(buffer[:end + 2])
        del buffer[:end + 5]
        self.in_data = False
        self.scan_from = 0
        dropped, self.dropped = self.dropped, 0
        mail_from, rcpt_tos = self.mail_from or "", tuple(self.rcpt_tos)
        self._reset()
        sink = self.sink
        if dropped or size > sink.max_size:
            out.append(R_TOO_BIG)
            return True
        content = content.replace(_DOT_LINE, _CRLF)[2:]  # (replace copies only when it finds one)
        if _has_long_line(content):
            out.append(R_TEXT_TOO_LONG)
            return True
        if sink._refuse_data and any(r.lower() in sink._refuse_data for r in rcpt_tos):
            out.append(R_REFUSED)
            return True
        try:
            sink._add(CapturedMessage(mail_from=mail_from, rcpt_tos=rcpt_tos, raw=content,
                                      received_at=received_at))
        except Exception:
            log.exception("the SMTP sink's on_message failed")
            out.append(R_HANDLER_FAILED)
            return True
        if sink._hang_up and any(r.lower() in sink._hang_up for r in rcpt_tos):
            self.closing = True  # kept, but its 250 never sent: a relay that crashed right then
            return True
        out.append(R_QUEUED)
        return True

    # -- commands ---------------------------------------------------------------------------

    def _command(self, line: bytes, out: list[bytes]) -> None:
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            out.append(R_BAD_UTF8)
            return
        verb, _, arg = text.partition(" ")
        handler = _COMMANDS.get(verb.upper())
        if handler is None:
            out.append(R_UNKNOWN)
            return
        handler(self, arg.strip(" "), out)

    def ehlo(self, arg: str, out: list[bytes]) -> None:
        if not arg:
            out.append(_syntax("EHLO hostname"))
            return
        self._reset()
        self.greeted = self.esmtp = True
        out.append(self.sink._ehlo)

    def helo(self, arg: str, out: list[bytes]) -> None:
        if not arg:
            out.append(_syntax("HELO hostname"))
            return
        self._reset()
        self.greeted, self.esmtp = True, False
        out.append(self.sink._helo)

    def mail(self, arg: str, out: list[bytes]) -> None:
        if not self.greeted:
            out.append(R_NEED_HELO)
            return
        if self.mail_from is not None:
            out.append(R_NESTED_MAIL)
            return
        parsed = _parse_path(arg[5:]) if arg[:5].upper() == "FROM:" else None
        if parsed is None:
            out.append(_syntax("MAIL FROM:<address> [parameters]"))
            return
        address, params = parsed
        smtputf8 = False
        for param in params.split():
            key, _, value = param.partition("=")
            key = key.upper()
            if not self.esmtp:
                out.append(R_PARAM_UNKNOWN)
                return
            if key == "SIZE":
                if not value.isdigit():
                    out.append(_syntax("SIZE=<octets>"))
                    return
                if int(value) > self.sink.max_size:
                    out.append(R_TOO_BIG)
                    return
            elif key == "BODY":
                if value.upper() not in ("7BIT", "8BITMIME"):
                    out.append(_syntax("BODY=7BIT|8BITMIME"))
                    return
            elif key == "SMTPUTF8" and not value:
                smtputf8 = True
            else:
                out.append(R_PARAM_UNKNOWN)
                return
        if not smtputf8 and not address.isascii():
            out.append(R_NEEDS_SMTPUTF8)
            return
        self.mail_from, self.smtputf8 = address, smtputf8
        out.append(R_SENDER_OK)

    def rcpt(self, arg: str, out: list[bytes]) -> None:
        if self.mail_from is None:
            out.append(R_NEED_MAIL)
            return
        parsed = _parse_path(arg[3:]) if arg[:3].upper() == "TO:" else None
        if parsed is None or not parsed[0]:
            out.append(_syntax("RCPT TO:<address>"))
            return
        address, params = parsed
        if params:
            out.append(R_PARAM_UNKNOWN)
            return
        if "@" not in address and address.lower() != "postmaster":
            out.append(_syntax("RCPT TO:<local-part@domain>"))
            return
        if not self.smtputf8 and not address.isascii():
            out.append(R_NEEDS_SMTPUTF8)
            return
        if len(self.rcpt_tos) >= MAX_RECIPIENTS:
            out.append(R_TOO_MANY_RCPTS)
            return
        if self.sink._refuse_rcpt and address.lower() in self.sink._refuse_rcpt:
            out.append(R_NO_SUCH_USER)
            return
        self.rcpt_tos.append(address)
        out.append(R_RCPT_OK)

    def data(self, arg: str, out: list[bytes]) -> None:
        if self.mail_from is None:
            out.append(R_NEED_MAIL)
            return
        if not self.rcpt_tos:
            out.append(R_NEED_RCPT)
            return
        if arg:
            out.append(_syntax("DATA"))
            return
        out.append(R_DATA)
        self.in_data = True
        self.scan_from = self.dropped = 0
        self.buffer[0:0] = _CRLF  # see _take_data

    def rset(self, arg: str, out: list[bytes]) -> None:
        self._reset()
        out.append(R_OK)

    def noop(self, arg: str, out: list[bytes]) -> None:
        out.append(R_OK)

    def vrfy(self, arg: str, out: list[bytes]) -> None:
        out.append(R_VRFY if arg else _syntax("VRFY <address>"))

    def expn(self, arg: str, out: list[bytes]) -> None:
        out.append(R_NOT_IMPLEMENTED)

    def help(self, arg: str, out: list[bytes]) -> None:
        out.append(R_HELP)

    def quit(self, arg: str, out: list[bytes]) -> None:
        out.append(R_BYE)
        self.closing = True


_COMMANDS: dict[str, Callable[[_Session, str, list[bytes]], None]] = {
    "EHLO": _Session.ehlo, "HELO": _Session.helo, "MAIL": _Session.mail, "RCPT": _Session.rcpt,
    "DATA": _Session.data, "RSET": _Session.rset, "NOOP": _Session.noop, "VRFY": _Session.vrfy,
    "EXPN": _Session.expn, "HELP": _Session.help, "QUIT": _Session.quit,
}


class LeanSmtpSink(CapturingSink):
    """An SMTP server on 127.0.0.1 (its own event loop in a daemon thread) capturing messages.

    Same API as ``SmtpSink``: ``on_message`` is called in the loop thread for each message
    (before its ``250``), ``keep=False`` keeps none of them, ``received`` counts them.
    """

    def __init__(
        self,
        hostname: str = "sink.localhost",
        *,
        on_message: Callable[[CapturedMessage], None] | None = None,
        keep: bool = True,
        max_size: int = 33554432,
        refuse_recipients: Collection[str] = (),
        refuse_data_from_recipients: Collection[str] = (),
        hang_up_after_data_from_recipients: Collection[str] = (),
    ) -> None:
        super().__init__(on_message=on_message, keep=keep)
        self.hostname = hostname
        self.max_size = max_size
        self._refuse_rcpt = frozenset(a.lower() for a in refuse_recipients)
        self._refuse_data = frozenset(a.lower() for a in refuse_data_from_recipients)
        self._hang_up = frozenset(a.lower() for a in hang_up_after_data_from_recipients)
        self._sessions: set[_Session] = set()
        self._greeting = _reply(f"220 {hostname} ESMTP pbem lean sink")
        self._helo = _reply(f"250 {hostname}")
        self._ehlo = "".join(
            f"250-{line}\r\n" for line in
            (hostname, f"SIZE {max_size}", "8BITMIME", "SMTPUTF8", "PIPELINING", "ENHANCEDSTATUSCODES")
        ).encode("ascii") + b"250 HELP\r\n"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._port: int | None = None

    # -- lifecycle -------------------------------------------------------------

    def start(self, port: int | None = None) -> LeanSmtpSink:
        """Listen on a free port, or on ``port`` (a sink stopped and started again on the same
        port: a relay that was down for a while)."""
        if self._loop is not None:
            raise RuntimeError("sink already started")
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="lean-smtp-sink", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        wanted = port
        try:
            for attempt in range(5):  # free_port may lose a race with another process
                port = wanted if wanted is not None else free_port()
                future = asyncio.run_coroutine_threadsafe(
                    loop.create_server(lambda: _Session(self), "127.0.0.1", port), loop)
                try:
                    self._server = future.result(timeout=10)
                except OSError:
                    if attempt == 4:
                        raise
                    continue
                self._port = port
                break
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for session in list(self._sessions):
                if session.transport is not None:
                    session.transport.abort()
            if self._server is not None:
                await self._server.wait_closed()

        try:
            if loop.is_running():
                asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            if not thread.is_alive():
                loop.close()
            self._loop = self._thread = self._server = None
            self._port = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("sink not started")
        return self._port
