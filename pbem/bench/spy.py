"""Sampling profiles of the running pipeline's processes with py-spy (``pbem bench e2e --profile``).

``py-spy record --format raw`` writes collapsed stacks (``frame;frame;frame count``) of the
non-idle threads of one process; ``summarise`` turns them into the share of samples per *area*
(the library or pbem package a sample's innermost frame is in, e.g. ``sqlalchemy``,
``jinja2/templates``, ``pbem.mail``) and the top functions by own samples.  py-spy is an optional
dependency (the ``bench`` extra); without it the profile is skipped with a note.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Recording", "Summary", "available", "record", "summarise"]

_FRAME = re.compile(r"^(?P<function>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
_AREAS = (
    ("site-packages/sqlalchemy/", "sqlalchemy"),
    ("site-packages/psycopg", "psycopg"),
    ("site-packages/jinja2/", "jinja2"),
    ("site-packages/markupsafe/", "jinja2"),
    ("templates/email/", "jinja2 (templates)"),
    ("site-packages/celery/", "celery"),
    ("site-packages/kombu/", "kombu"),
    ("site-packages/billiard/", "billiard (pool)"),
    ("site-packages/redis/", "redis client"),
    ("site-packages/aiosmtpd/", "aiosmtpd"),
    ("site-packages/babel/", "babel"),
    ("/pbem/mail/reading/", "pbem.mail.reading"),
    ("/pbem/mail/", "pbem.mail (compose)"),
    ("/pbem/engine/", "pbem.engine"),
    ("/pbem/services/", "pbem.services"),
    ("/pbem/db/", "pbem.db"),
    ("/workers/", "workers"),
    ("/pbem/smtp/", "pbem.smtp"),
    ("/email/", "stdlib email"),
    ("/asyncio/", "asyncio"),
    ("/logging/", "logging"),
    ("/smtplib.py", "smtplib"),
    ("/json/", "json"),
    ("/socket.py", "socket"),
    ("/selectors.py", "selectors"),
    ("/threading.py", "threading"),
)


def _binary() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"  # installed in the same virtualenv
    return str(beside) if beside.exists() else shutil.which("py-spy")


def available() -> bool:
    return _binary() is not None


@dataclass
class Recording:
    """One running ``py-spy record`` (``wait`` for it, then ``summarise`` its file)."""

    label: str
    pid: int
    output: Path
    process: subprocess.Popen[bytes]

    def wait(self, timeout: float) -> bool:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
            return False
        return self.process.returncode == 0 and self.output.exists()


def record(label: str, pid: int, seconds: float, directory: Path, rate: int = 250) -> Recording:
    """Start sampling ``pid`` for ``seconds`` (non-blocking: the process is not paused).

    Only samples holding the GIL count (``--gil``): a thread waiting for a socket does not.
    """
    output = directory / f"{label.replace(' ', '_')}-{pid}.txt"
    process = subprocess.Popen(
        [_binary() or "py-spy", "record", "--pid", str(pid), "--duration", str(max(int(seconds), 1)),
         "--rate", str(rate), "--format", "raw", "--nonblocking", "--gil", "--full-filenames",
         "--output", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return Recording(label, pid, output, process)


def _area(file: str) -> str:
    for marker, area in _AREAS:
        if marker in file:
            return area
    if "site-packages/" in file:
        return file.split("site-packages/", 1)[1].split("/", 1)[0]
    if file.startswith("<"):
        return "builtins"
    return "other (stdlib)"


@dataclass(frozen=True)
class Summary:
    samples: int
    own: list[tuple[str, float]]  # area of the innermost frame
    inclusive: dict[str, float]  # area anywhere on the stack
    functions: list[tuple[str, float]]  # innermost function


def summarise(paths: list[Path], top: int = 12) -> Summary:
    """Shares of the samples over these recordings: per area (own and inclusive), per function."""
    areas: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    total = 0
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            stack, _, count_text = line.rpartition(" ")
            if not stack or not count_text.isdigit():
                continue
            count = int(count_text)
            innermost = stack.rsplit(";", 1)[-1]
            match = _FRAME.match(innermost)
            file = match.group("file") if match else innermost
            function = match.group("function") if match else innermost
            areas[_area(file)] += count
            on_stack = set()
            for frame in stack.split(";"):
                found = _FRAME.match(frame)
                on_stack.add(_area(found.group("file") if found else frame))
            for area in on_stack:
                inclusive[area] += count
            short = file.split("site-packages/", 1)[-1].split("/work/main/", 1)[-1]
            functions[f"{function} ({short})"] += count
            total += count
    if not total:
        return Summary(0, [], {}, [])
    return Summary(total, [(area, n / total) for area, n in areas.most_common(top)],
                   {area: n / total for area, n in inclusive.items()},
                   [(name, n / total) for name, n in functions.most_common(top)])
