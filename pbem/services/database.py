"""The database the services work on and the clock they date things by, without the mail.

:class:`Database` is the part of :class:`pbem.services.app.Services` that a service reading and
writing rows needs: the settings, the engine, its session factory and the clock. ``Services`` adds
what sending mail needs (the composer with its templates, the relay), so the operator's lists
(``pbem game list``, ``pbem mail list``: :mod:`.operator_games`, :mod:`.operator_mail`) are given a
``Database`` and start without loading Jinja, Babel or the mail contexts (README, "Benchmarks":
``pbem bench cli``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from pbem.config import Settings
from pbem.db.session import make_engine, make_session_factory

from .clock import Clock, clock_for

__all__ = ["Database"]


@dataclass
class Database:
    settings: Settings
    engine: Engine
    session_factory: sessionmaker[Session]
    clock: Clock

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Clock | None = None, engine: Engine | None = None) -> Self:
        engine = engine or make_engine(settings.database_url)
        return cls(settings=settings, engine=engine, session_factory=make_session_factory(engine),
                   clock=clock if clock is not None else clock_for(settings))

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
