"""The things every service needs, built once per process and passed down (no globals).

``Services.from_settings(settings)`` makes the database engine and session factory for
``PBEM_DATABASE_URL``, picks the clock (:func:`clock_for`: the system clock, or an offset clock
when ``PBEM_CLOCK_OFFSET_FILE`` is set for tests) and builds the mail composer on first use. Its
part without the mail is :class:`pbem.services.database.Database`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cached_property

from sqlalchemy import Engine

from pbem.config import Settings
from pbem.db.session import KeptConnections, make_engine, make_session_factory
from pbem.mail.compose import MailComposer
from pbem.mail.relay import Relay, keep_open, make_relay
from pbem.mail.render import MailRenderer
from pbem.resources import templates_dir

from .clock import Clock, clock_for
from .database import Database

__all__ = ["Services", "clock_for"]


@dataclass
class Services(Database):
    #: Source of shuffles for games created without a seed.
    rng: random.Random = field(default_factory=random.SystemRandom)
    #: A renderer built beforehand, every template compiled (a worker's, made before its pool
    #: forks: ``workers.app``); None: the composer builds its own.
    renderer: MailRenderer | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Clock | None = None,
                      engine: Engine | None = None, renderer: MailRenderer | None = None) -> Services:
        engine = engine or make_engine(settings.database_url)
        return cls(settings=settings, engine=engine, session_factory=make_session_factory(engine),
                   clock=clock if clock is not None else clock_for(settings), renderer=renderer)

    @cached_property
    def composer(self) -> MailComposer:
        return MailComposer(templates_dir(), domain=self.settings.mail_domain, clock=self.clock.now,
                            default_language=self.settings.default_language, renderer=self.renderer)

    @cached_property
    def relay(self) -> Relay:
        """The configured relay; an SMTP relay's connection is kept open between batches
        (``pbem.mail.relay.keep_open``): built per process, like the rest of Services."""
        return keep_open(make_relay(self.settings))

    @cached_property
    def kept_connections(self) -> KeptConnections:
        """A connection kept per thread for the statements every move makes outside its transaction,
        committing asynchronously on PostgreSQL, so only for records whose loss in a crash of the
        database server is harmless: the outbox records mails as sent there
        (``pbem.services.outbox``: a record lost only means the mail goes again after its lease, as
        when a sender dies before recording it), and the worker counts a received mail's attempts
        (``pbem.services.inbound.begin_attempt``: a count lost only gives the mail one more attempt;
        a worker killed while processing loses none, since the commit is done). Reads go there too
        (``KeptConnections.reads``: the mail a reply answers, ``pbem.services.reading``)."""
        return KeptConnections(self.session_factory, synchronous_commit=False)

    def close(self) -> None:
        records = self.__dict__.get("kept_connections")
        if records is not None:
            records.close()
        relay = self.__dict__.get("relay")
        close_relay = getattr(relay, "close", None)
        if close_relay is not None:
            close_relay()
        super().close()
