"""What the web front's views share: settings, database sessions, the clock, the Celery app.

One ``WebRuntime`` per Flask app, kept in ``app.extensions["pbem"]`` (the Flask way of
attaching things to an application without globals), built by ``create_app`` and read
by the views through ``runtime()``.  Nothing here connects at construction: engines
open connections on first use and the Celery app is made on the first queueing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from celery import Celery
from flask import current_app
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from pbem.config import Settings
from pbem.db.session import make_engine, make_session_factory
from pbem.services.app import clock_for
from pbem.services.clock import Clock
from workers import make_celery

__all__ = ["EXTENSION_KEY", "WebRuntime", "runtime"]

EXTENSION_KEY = "pbem"


@dataclass
class WebRuntime:
    """The web front's share of the process: built once per app, never per request."""

    settings: Settings
    #: Sessions for requests that write (inbound mail); ``BEGIN IMMEDIATE`` on SQLite.
    session_factory: sessionmaker[Session]
    #: Sessions for pages that only read; on SQLite they start DEFERRED so a page never
    #: queues behind a writer (WAL gives it a consistent snapshot).
    read_session_factory: sessionmaker[Session]
    engines: tuple[Engine, ...]
    #: The services' clock protocol (``.now()``): webhook timestamps are checked against it, and
    #: it dates what the pages write. By default the one of every other process (``clock_for``:
    #: the offset clock of ``PBEM_CLOCK_OFFSET_FILE`` in tests, else the system clock).
    clock: Clock
    _celery: Celery | None = None
    _celery_lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        celery_app: Celery | None = None,
    ) -> WebRuntime:
        writer = make_engine(settings.database_url)
        if make_url(settings.database_url).get_backend_name() == "sqlite":
            reader = make_engine(settings.database_url, sqlite_begin="DEFERRED")
            engines: tuple[Engine, ...] = (writer, reader)
        else:
            reader = writer
            engines = (writer,)
        return cls(
            settings=settings,
            session_factory=make_session_factory(writer),
            read_session_factory=make_session_factory(reader),
            engines=engines,
            clock=clock if clock is not None else clock_for(settings),
            _celery=celery_app,
        )

    @property
    def read_engine(self) -> Engine:
        bind = self.read_session_factory.kw["bind"]
        assert isinstance(bind, Engine)
        return bind

    def celery(self) -> Celery:
        """The Celery app the fronts queue tasks on, made from the settings on first use
        (so the web front starts, and serves pages, even while the broker is down)."""
        if self._celery is None:
            with self._celery_lock:
                if self._celery is None:
                    self._celery = make_celery(self.settings)
        return self._celery

    def dispose(self) -> None:
        """Close the pooled connections (tests, and gunicorn worker exit)."""
        for engine in self.engines:
            engine.dispose()


def runtime(app: Any = None) -> WebRuntime:
    """The runtime of ``app`` (default: the app handling this request)."""
    target = app if app is not None else current_app
    found = target.extensions[EXTENSION_KEY]
    assert isinstance(found, WebRuntime)
    return found
