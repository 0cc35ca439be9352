"""An SMTP server that keeps every message it receives: the stand-in for the
outgoing relay (and for players' mail servers) in tests and benchmarks.

A benchmark passes ``on_message`` to react to each mail as it arrives (it is
called in the sink's event-loop thread, so it must be quick) and ``keep=False``
so that hours of mail are not held in memory."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

from pbem.devservers.lifecycle import DevServer
from pbem.devservers.ports import free_port
from pbem.devservers.waiting import wait_for


@dataclass(frozen=True)
class CapturedMessage:
    """One delivered message: the envelope and the bytes exactly as received."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    raw: bytes
    #: ``time.monotonic()`` when the DATA command completed (system-wide on Linux,
    #: so comparable with other processes' monotonic readings).
    received_at: float = 0.0

    def parsed(self) -> EmailMessage:
        """The message parsed with the modern policy (for assertions on headers)."""
        return message_from_bytes(self.raw, policy=policy.default)  # type: ignore[return-value]


class _Handler:
    def __init__(self, sink: SmtpSink) -> None:
        self.sink = sink

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.sink._add(
            CapturedMessage(
                mail_from=envelope.mail_from or "",
                rcpt_tos=tuple(envelope.rcpt_tos),
                raw=bytes(envelope.original_content or envelope.content),
                received_at=time.monotonic(),
            )
        )
        return "250 OK"


class CapturingSink(DevServer):
    """What both SMTP sinks (``SmtpSink``, ``LeanSmtpSink``) share: the mail they keep, in a
    thread-safe list (``_add`` is called by the server for each message, in its own thread;
    ``messages``, ``wait_for_messages``, ``wait_for_message`` and ``to`` read them), and their
    use as a context manager on 127.0.0.1 (each defines ``start``, ``stop`` and ``port``)."""

    def __init__(self, *, on_message: Callable[[CapturedMessage], None] | None, keep: bool) -> None:
        self.on_message = on_message
        self.keep = keep
        self.received = 0
        self._messages: list[CapturedMessage] = []
        self._lock = threading.Lock()

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def _add(self, message: CapturedMessage) -> None:
        with self._lock:
            self.received += 1
            if self.keep:
                self._messages.append(message)
        if self.on_message is not None:
            self.on_message(message)

    @property
    def messages(self) -> list[CapturedMessage]:
        """A snapshot copy of everything received so far, in arrival order."""
        with self._lock:
            return list(self._messages)

    def clear(self) -> None:
        with self._lock:
            self._messages.clear()

    def wait_for_messages(self, count: int, timeout: float = 10.0) -> list[CapturedMessage]:
        """Wait until at least ``count`` messages arrived; return them all."""
        wait_for(
            lambda: len(self.messages) >= count,
            timeout=timeout,
            message=f"{count} message(s) at the SMTP sink",
        )
        return self.messages

    def wait_for_message(
        self, predicate: Callable[[CapturedMessage], bool], timeout: float = 10.0
    ) -> CapturedMessage:
        """Wait for the first message satisfying ``predicate`` and return it."""

        def find() -> CapturedMessage | None:
            return next((m for m in self.messages if predicate(m)), None)

        return wait_for(find, timeout=timeout, message="a matching message at the SMTP sink")

    def to(self, address: str) -> list[CapturedMessage]:
        """Messages whose envelope includes ``address`` (case-insensitive)."""
        address = address.lower()
        return [m for m in self.messages if address in (r.lower() for r in m.rcpt_tos)]


class SmtpSink(CapturingSink):
    """An aiosmtpd ``Controller`` on 127.0.0.1 capturing messages in a thread-safe list.

    ``server_hostname`` is explicit, so aiosmtpd does not look up the host's name
    on every connection.
    """

    def __init__(
        self,
        hostname: str = "sink.localhost",
        *,
        on_message: Callable[[CapturedMessage], None] | None = None,
        keep: bool = True,
    ) -> None:
        super().__init__(on_message=on_message, keep=keep)
        self.hostname = hostname
        self._controller: Controller | None = None

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> SmtpSink:
        self._controller = Controller(
            _Handler(self),
            hostname="127.0.0.1",
            port=free_port(),
            server_hostname=self.hostname,
            ready_timeout=10,
        )
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    @property
    def port(self) -> int:
        if self._controller is None:
            raise RuntimeError("sink not started")
        return self._controller.port
