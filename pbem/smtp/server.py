"""Running the SMTP front: an aiosmtpd ``Controller`` configured from the Settings.

``SmtpFront`` listens on ``PBEM_SMTP_LISTEN`` in a background thread (its own
asyncio loop), so the same object serves ``pbem smtp``, ``pbem serve`` and the
tests.  Started, it records its metrics (``pbem.metrics``) and, given
``PBEM_METRICS_LISTEN``, serves those of the whole host.  The greeting name is explicit (``PBEM_SMTP_HOSTNAME``): aiosmtpd would
otherwise look up the host's FQDN for every connection.  STARTTLS is offered when
``PBEM_TLS_CERT``/``PBEM_TLS_KEY`` are set (opportunistic: plain sessions stay
allowed, as for any MX).

The protocol is aiosmtpd's ``SMTP`` with two of its per-mail costs cut (``_Smtp``; they were
a third of the front's CPU per mail): the message is read in pieces of up to a kilobyte
instead of one line at a time, and the common envelope address ``<local@domain>`` is read
with one regular expression instead of the standard library's header-address parser.  Both
give what aiosmtpd gives, and hand anything unusual to aiosmtpd's own code.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import MISSING, SMTP, syntax
from sqlalchemy.orm import Session, sessionmaker

from pbem import metrics
from pbem.config import Settings
from pbem.services.backlog import backlog_reader
from pbem.smtp.handler import FRONT, InboundHandler, Queue

__all__ = ["SmtpFront", "tls_context"]

log = logging.getLogger("pbem.smtp")

IDENT = "pbem"
SESSION_TIMEOUT_S = 300  # idle client timeout (RFC 5321 suggests 5 minutes)


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server-side TLS context for STARTTLS (client certificates not asked for)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certfile=str(cert), keyfile=str(key))
    return context


_END_OF_DATA = b"\r\n.\r\n"
_MAX_TEXT_LINE = 999
"""aiosmtpd's ``line_length_limit`` (1001 octets with the CRLF, counting a stuffed dot) as the
longest line without its CRLF."""

_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_SIMPLE_PATH = re.compile(rf"<({_ATEXT}(?:\.{_ATEXT})*@{_ATEXT}(?:\.{_ATEXT})*)>(.*)", re.DOTALL)
"""``<local@domain>``, both dot-atoms of ASCII atext (RFC 5322), then whatever follows."""


def _end_state(state: int, data: bytes) -> int:
    """How much of ``CRLF . CRLF`` the data read so far ends with, once ``data`` is read after
    a stretch that ended with ``state`` octets of it (5: the end of the message)."""
    text = _END_OF_DATA[:state] + data
    for length in range(min(len(text), len(_END_OF_DATA)), 0, -1):
        if text.endswith(_END_OF_DATA[:length]):
            return length
    return 0


class _Smtp(SMTP):  # type: ignore[misc]
    """aiosmtpd's protocol, reading DATA in pieces and simple addresses by a regex."""

    def _getaddr(self, arg: str) -> tuple[str | None, str | None]:
        match = _SIMPLE_PATH.fullmatch(arg)
        if match is None or "=?" in match.group(1):  # leave encoded words to the parser
            return super()._getaddr(arg)  # type: ignore[no-any-return]
        address, rest = match.groups()
        if rest[:1] in (" ", "\t"):
            rest = rest.lstrip()  # the parser takes the white space after '>' with the address
        if rest[:1] == "(":
            return super()._getaddr(arg)  # type: ignore[no-any-return]  # a comment: the parser's
        if self.local_part_limit and len(address.rpartition("@")[0]) > self.local_part_limit:
            return None, None
        return address, rest

    @syntax("DATA")
    async def smtp_DATA(self, arg: str) -> None:
        """aiosmtpd's DATA, reading the message with ``readuntil(CRLF . CRLF)``: at most a
        kilobyte at a time (the stream's limit), so a message costs a few reads, not one per
        line.  The same checks and answers: ``552`` past ``data_size_limit``, ``500`` for a line
        past 998 octets (one of the two, once the end of data is seen, if a message has both),
        dot-unstuffing, the handler's DATA hook, then its status or ``250 OK``."""
        if self._decode_data:
            await super().smtp_DATA(arg)  # not how the front runs; aiosmtpd's own
            return
        if await self.check_helo_needed():
            return
        if await self.check_auth_needed("DATA"):
            return
        assert self.envelope is not None
        if not self.envelope.rcpt_tos:
            await self.push("503 Error: need RCPT command")
            return
        if arg:
            await self.push("501 Syntax: DATA")
            return
        await self.push("354 End data with <CR><LF>.<CR><LF>")
        try:
            content, refusal = await self._read_data()
        except asyncio.CancelledError:
            logging.getLogger("mail.log").info("Connection lost during DATA")  # as aiosmtpd says
            self._writer.close()
            raise
        if refusal is not None:
            metrics.count_received(FRONT, "refused")
            await self.push(refusal)
            self._set_post_data_state()
            return
        if content[:1] == b".":
            content = content[1:]
        content = content.replace(b"\r\n.", b"\r\n")  # RFC 5321 4.5.2: one dot off each line
        self.envelope.content = self.envelope.original_content = content
        status = await self._call_handler_hook("DATA") if "DATA" in self._handle_hooks else MISSING
        self._set_post_data_state()
        await self.push("250 OK" if status is MISSING else status)

    async def _read_data(self) -> tuple[bytes, str | None]:
        """The message up to the line holding a lone dot (its lines with their CRLF, still
        dot-stuffed), or a refusal once the end is seen: too long a line, too much data.

        The terminator ``CRLF . CRLF`` may begin with the CRLF that ended the DATA command, or
        with one read earlier; so whenever what was read ends with a part of it (``state``),
        one octet is read at a time until it is complete or broken, and only then a piece."""
        reader, limit = self._reader, self.data_size_limit
        pieces: list[bytes] = []
        size = 0  # octets read, with the terminator's ".\r\n"
        refusal: str | None = None
        state = 2  # the CRLF of the DATA command
        while state < len(_END_OF_DATA):
            if state:
                piece = await reader.readexactly(1)
                state = _end_state(state, piece)
            else:
                try:
                    piece = await reader.readuntil(_END_OF_DATA)
                    state = len(_END_OF_DATA)
                except asyncio.LimitOverrunError as error:  # a kilobyte and no end yet
                    piece = await reader.read(error.consumed)
                    state = _end_state(0, piece[-4:])
            size += len(piece)
            if refusal is None:
                pieces.append(piece)
                if limit and size - 3 > limit:
                    refusal = (_line_too_long(b"".join(pieces))
                               or "552 Error: Too much mail data")
                    pieces = []  # not kept: the rest is only read
        if refusal is not None:
            return b"", refusal
        content = b"".join(pieces)[:-3]  # without the terminator's ".\r\n"
        return content, _line_too_long(content)


def _line_too_long(data: bytes) -> str | None:
    """The refusal for a line of ``data`` longer than ``_MAX_TEXT_LINE`` (without its CRLF).

    Such a line holds a stretch of 1000 octets with no CRLF in it, and any such stretch covers
    one of the windows ``[k, k + 500]`` (k a multiple of 500): when each window holds the
    start of a CRLF there is none, found with a few ``find`` calls, not by cutting the message
    into lines."""
    if all(data.find(b"\r\n", start, start + 502) >= 0 for start in range(0, len(data), 500)):
        return None
    if max(map(len, data.split(b"\r\n"))) > _MAX_TEXT_LINE:
        return "500 Line too long (see RFC5321 4.5.3.1.6)"
    return None


class _Controller(Controller):  # type: ignore[misc]
    def factory(self) -> SMTP:
        return _Smtp(self.handler, **self.SMTP_kwargs)


class SmtpFront:
    """The SMTP front on ``settings.smtp_listen``: ``start()`` returns once it accepts
    connections, ``stop()`` closes it.  Also a context manager."""

    def __init__(
        self,
        settings: Settings,
        *,
        session_factory: sessionmaker[Session],
        queue: Queue,
        clock: Callable[[], datetime],
    ) -> None:
        self.settings = settings
        self.handler = InboundHandler(
            mail_domain=settings.mail_domain,
            session_factory=session_factory,
            queue=queue,
            clock=clock,
        )
        tls = (
            tls_context(settings.tls_cert, settings.tls_key)
            if settings.tls_cert is not None and settings.tls_key is not None
            else None
        )
        self._running = False
        self._metrics_server: Any = None
        self._controller = _Controller(
            self.handler,
            hostname=settings.smtp_listen.host,
            port=settings.smtp_listen.port,
            server_hostname=settings.smtp_hostname,
            ident=IDENT,
            data_size_limit=settings.max_message_size,
            enable_SMTPUTF8=True,
            decode_data=False,
            tls_context=tls,
            timeout=SESSION_TIMEOUT_S,
            ready_timeout=10,
        )

    @property
    def address(self) -> str:
        return str(self.settings.smtp_listen)

    @property
    def starttls(self) -> bool:
        return self.settings.tls_cert is not None

    def start(self) -> SmtpFront:
        self._running = True  # from here on, stop() has something to clean up
        # The front's metrics, in the host's directory; served from here with PBEM_METRICS_LISTEN.
        metrics.enable(self.settings.metrics_dir)
        metrics.process_started(FRONT)
        if self.settings.metrics_listen is not None and self._metrics_server is None:
            self._metrics_server = metrics.serve_metrics(self.settings.metrics_listen, self.settings.metrics_dir,
                                                         backlog_reader(self.settings))
        self._controller.start()
        log.info(
            "SMTP front listening on %s for @%s (max %d bytes%s)",
            self.address,
            self.settings.mail_domain,
            self.settings.max_message_size,
            ", STARTTLS" if self.starttls else "",
        )
        return self

    def stop(self) -> None:
        """Close the listener, then end the store threads (a second call does nothing)."""
        if self._running:
            self._controller.stop(no_assert=True)
            self._running = False
            log.info("SMTP front on %s stopped", self.address)
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
            self._metrics_server = None
        self.handler.close()

    def __enter__(self) -> SmtpFront:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
