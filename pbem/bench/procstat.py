"""CPU time and memory of processes, read from ``/proc`` (Linux only).

The end-to-end benchmark charges CPU to each *kind* of process (the SMTP front, the
Celery worker and its pool, PostgreSQL's backends, Redis, the benchmark itself) by
reading ``utime + stime`` of every process of that kind before and after a
measurement window.  Whatever else the machine did in the window (other people's
work on a shared machine) is shown too, as "rest of the machine", so a figure is
never silently inflated by a neighbour.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuSample", "Machine", "cpu_seconds", "descendants", "rss_bytes", "sample"]

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process (all its threads), or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def rss_bytes(pid: int) -> int:
    """Resident set size of one process (0 if it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
        return 0


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (from every thread's ``children`` list)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return []
    for task in tasks:
        try:
            found.extend(int(p) for p in (task / "children").read_text().split())
        except FileNotFoundError:
            continue
    return sorted(set(found))


def descendants(pid: int, *, limit: int = 10_000) -> list[int]:
    """Every process below ``pid`` (breadth first, at most ``limit``)."""
    out: list[int] = []
    frontier = [pid]
    while frontier and len(out) < limit:
        nxt: list[int] = []
        for parent in frontier:
            nxt.extend(children(parent))
        out.extend(nxt)
        frontier = nxt
    return out[:limit]


@dataclass(frozen=True)
class Machine:
    """Whole-machine CPU time from ``/proc/stat``: busy and total seconds (all cores)."""

    busy: float
    total: float

    @classmethod
    def read(cls) -> Machine:
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
        total = sum(values[:8])  # guest time is already inside user
        return cls(busy=(total - idle) / _TICK, total=total / _TICK)


@dataclass(frozen=True)
class CpuSample:
    """CPU seconds per pid, grouped by kind, plus the machine's totals, at one moment."""

    by_kind: Mapping[str, Mapping[int, float]]
    machine: Machine

    def minus(self, earlier: CpuSample) -> dict[str, float]:
        """CPU seconds each kind used since ``earlier``, and "rest of the machine".

        A process that appeared since counts whole (it started inside the window); one
        that ended is lost (its last seconds cannot be read any more).
        """
        used: dict[str, float] = {}
        for kind, pids in self.by_kind.items():
            before = earlier.by_kind.get(kind, {})
            used[kind] = sum(now - before.get(pid, 0.0) for pid, now in pids.items())
        machine = self.machine.busy - earlier.machine.busy
        used["rest of the machine"] = max(machine - sum(used.values()), 0.0)
        return used


def sample(kinds: Mapping[str, Callable[[], Iterable[int]]]) -> CpuSample:
    """Read every process of every kind now (``kinds`` maps a name to a pid lister)."""
    by_kind: dict[str, dict[int, float]] = {}
    for kind, lister in kinds.items():
        pids: dict[int, float] = {}
        for pid in lister():
            seconds = cpu_seconds(pid)
            if seconds is not None:
                pids[pid] = seconds
        by_kind[kind] = pids
    return CpuSample(by_kind=by_kind, machine=Machine.read())
