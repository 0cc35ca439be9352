"""Where services get the time from: a clock they are given, never the wall clock directly.

``SystemClock`` is the real one. ``ManualClock`` is set by hand (unit tests). ``OffsetClock`` adds
an offset read from a small file to the real time, so tests that run real worker processes can move
time forward (days of deadlines in seconds: README, "Time") without patching any process: every process
started with ``PBEM_CLOCK_OFFSET_FILE`` reads the same file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

from pbem.config import Settings


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, aware, in UTC."""


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass
class ManualClock:
    """A clock that only moves when told to."""

    current: datetime = field(default_factory=lambda: datetime(2026, 1, 1, 12, 0, tzinfo=UTC))

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> datetime:
        self.current += timedelta(**delta)
        return self.current


@dataclass
class OffsetClock:
    """Real time plus a number of seconds read from ``path`` (missing or empty file: 0)."""

    path: Path

    def offset(self) -> timedelta:
        try:
            text = self.path.read_text().strip()
        except FileNotFoundError:
            return timedelta(0)
        return timedelta(seconds=float(text or 0))

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset()

    def advance(self, **delta: float) -> None:
        """Move this clock (and every process reading the same file) forward."""
        total = self.offset() + timedelta(**delta)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(str(total.total_seconds()))
        tmp.replace(self.path)


def clock_for(settings: Settings) -> Clock:
    """The clock every process of the server takes its time from (SMTP front, web front, worker,
    command line): the system clock, or with ``PBEM_CLOCK_OFFSET_FILE`` the offset clock of tests."""
    offset_file = getattr(settings, "clock_offset_file", None)
    return OffsetClock(offset_file) if offset_file else SystemClock()
