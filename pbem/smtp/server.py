"""Running the SMTP front: an aiosmtpd ``Controller`` configured from the Settings.

``SmtpFront`` listens on ``PBEM_SMTP_LISTEN`` in a background thread (its own
asyncio loop), so the same object serves ``pbem smtp``, ``pbem serve`` and the
tests.  The greeting name is explicit (``PBEM_SMTP_HOSTNAME``): aiosmtpd would
otherwise look up the host's FQDN for every connection.  STARTTLS is offered when
``PBEM_TLS_CERT``/``PBEM_TLS_KEY`` are set (opportunistic: plain sessions stay
allowed, as for any MX).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from aiosmtpd.controller import Controller
from sqlalchemy.orm import Session, sessionmaker

from pbem.config import Settings
from pbem.smtp.handler import InboundHandler, Queue

__all__ = ["SmtpFront", "tls_context"]

log = logging.getLogger("pbem.smtp")

IDENT = "pbem"
SESSION_TIMEOUT_S = 300  # idle client timeout (RFC 5321 suggests 5 minutes)


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server-side TLS context for STARTTLS (client certificates not asked for)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certfile=str(cert), keyfile=str(key))
    return context


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
        self._controller = Controller(
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
        self._controller.stop(no_assert=True)
        log.info("SMTP front on %s stopped", self.address)

    def __enter__(self) -> SmtpFront:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
