"""The aiosmtpd handler of the SMTP front: check recipients, store, queue. Nothing else.

Modelled on Mailman 3's LMTP runner: recipients are judged one by one at RCPT
time, from the envelope only; the message is stored durably before the final
answer; no game logic runs here (the worker parses and applies it later).

Answers:

- EHLO offers PIPELINING (RFC 2920) besides aiosmtpd's own extensions: a sending server
  then gives MAIL, RCPT and DATA in one write, and the message in a second (aiosmtpd reads
  commands in order from its buffer, so a group is answered as if sent one by one).
- MAIL FROM or RCPT TO with an address no row can hold (a NUL or another control
  character, over-long, not Unicode: ``intake.envelope_address_problem``): ``553 5.1.7`` /
  ``553 5.1.3``, permanent, so the sending server gives up at once instead of retrying.
- RCPT to an address outside ``PBEM_MAIL_DOMAIN``: ``550 5.7.1``: this server
  is never an open relay.  ``postmaster@<domain>`` (and bare ``postmaster``,
  which RFC 5321 says must be accepted) is in the domain like any other address.
- a message over ``PBEM_MAX_MESSAGE_SIZE``: ``552`` (aiosmtpd's
  ``data_size_limit``, at MAIL with a SIZE parameter or during DATA).
- DATA: ``250`` once the rows are committed; ``451 4.3.0`` when they could not be
  (database down, disk full...), so the sending server keeps the mail and retries.
  If only *queueing* fails after the commit the answer is still 250: the mail
  is safe and the worker's sweep queues it later.

Each answer is counted (``pbem_mail_received_total{front="smtp"}``, README "Metrics and logs"):
``stored`` and ``duplicate`` per message, ``failed`` per 451, ``refused`` per permanent refusal of a
sender, a recipient or a message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from pbem import metrics
from pbem.db.models import InboundSource
from pbem.db.session import KeptConnections
from pbem.services.intake import accepted_recipient, envelope_address_problem, receive_inbound

__all__ = ["MAX_RECIPIENTS", "STORE_THREADS", "InboundHandler"]

log = logging.getLogger("pbem.smtp")

MAX_RECIPIENTS = 100
"""RFC 5321 asks servers to take at least 100 recipients per message."""

STORE_THREADS = 4
"""Mails stored (and queued) at once.  Each thread keeps a database and a broker connection;
a store takes about a millisecond, so four carry thousands of mails a second."""

Queue = Callable[[list[int]], None]
FRONT = "smtp"


def _unholdable(address: str, role: str, answer: str, session: Any) -> str | None:
    """``answer`` (a permanent refusal, logged) for an envelope address no row can hold
    (``intake.envelope_address_problem``), else None."""
    problem = envelope_address_problem(address)
    if problem is None:
        return None
    log.info("refused %s %r (%s, peer %s)", role, address[:200], problem, session.peer)
    metrics.count_received(FRONT, "refused")
    return answer


class InboundHandler:
    """aiosmtpd handler hooks.  ``store_and_queue`` is blocking (database, broker)
    and runs on one of ``STORE_THREADS`` threads, so one slow commit does not stall
    other connections.  ``close`` (after the server stopped) ends the threads and gives
    back their database connections."""

    def __init__(
        self,
        *,
        mail_domain: str,
        session_factory: sessionmaker[Session],
        queue: Queue,
        clock: Callable[[], datetime],
    ) -> None:
        self.mail_domain = mail_domain.lower()
        self.session_factory = session_factory
        self.queue = queue
        self.clock = clock
        self._connections = KeptConnections(session_factory)
        self._threads: ThreadPoolExecutor | None = None  # made by the first mail

    def close(self) -> None:
        threads, self._threads = self._threads, None
        if threads is not None:
            threads.shutdown(wait=True)
        self._connections.close()

    async def handle_EHLO(
        self, server: Any, session: Any, envelope: Any, hostname: str, responses: list[str]
    ) -> list[str]:
        """aiosmtpd's EHLO answer, with PIPELINING before its last line."""
        session.host_name = hostname  # what aiosmtpd does itself when there is no hook
        return [*responses[:-1], "250-PIPELINING", responses[-1]]

    async def handle_MAIL(
        self, server: Any, session: Any, envelope: Any, address: str, mail_options: list[str]
    ) -> str:
        refusal = _unholdable(address, "sender", "553 5.1.7 Bad sender address syntax", session)
        if refusal is not None:
            return refusal
        envelope.mail_from = address  # what aiosmtpd does itself when there is no hook
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        refusal = _unholdable(address, "recipient", "553 5.1.3 Bad destination mailbox address syntax", session)
        if refusal is not None:
            return refusal
        recipient = accepted_recipient(address, self.mail_domain)
        if recipient is None:
            log.info("refused relay from %s to %s (peer %s)", envelope.mail_from, address, session.peer)
            metrics.count_received(FRONT, "refused")
            return f"550 5.7.1 Relaying denied: this server only receives mail for {self.mail_domain}"
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(recipient)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = bytes(envelope.original_content or b"")
        mail_from = envelope.mail_from or ""
        if mail_from == "<>":  # the null sender: a bounce or an auto-reply
            mail_from = ""
        recipients = list(envelope.rcpt_tos)
        try:
            if self._threads is None:
                self._threads = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="pbem-smtp-store")
            received = await asyncio.get_running_loop().run_in_executor(
                self._threads, self._store_and_queue, raw, mail_from, recipients
            )
        except Exception:
            # Whatever went wrong, the mail is not stored: refuse it *temporarily*
            # so the sender's server keeps it and tries again (a 5xx would bounce it
            # and a 250 would lose it).
            log.exception("could not store mail from %s to %s", mail_from, recipients)
            metrics.count_received(FRONT, "failed")
            return "451 4.3.0 Temporary failure storing the message, try again later"
        # Each stored mail is a row (with its time, sender and recipient): the line is for
        # debugging; what an operator should see (a redelivery, a mail left to the sweep) is INFO.
        log.log(
            logging.DEBUG if received.ids and received.queued else logging.INFO,
            "stored mail from %s to %s as inbound %s%s",
            mail_from,
            recipients,
            received.ids or "(duplicate)",
            "" if received.queued else " (not queued: the sweep will)",
        )
        metrics.count_received(FRONT, "stored" if received.ids else "duplicate")
        return "250 2.0.0 Message accepted"

    def _store_and_queue(self, raw: bytes, mail_from: str, recipients: list[str]) -> Any:
        return receive_inbound(
            self.session_factory,
            raw=raw,
            mail_from=mail_from,
            recipients=recipients,
            source=InboundSource.SMTP,
            received_at=self.clock(),
            queue=self.queue,
            connections=self._connections,
        )
