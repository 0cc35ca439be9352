"""Throwaway real servers on 127.0.0.1, for the test suite and the benchmarks.

PostgreSQL (``initdb``/``pg_ctl`` in a temporary directory, under ``runuser`` when
run as root), Redis (no persistence), an SMTP sink (aiosmtpd, capturing what it
receives) and a real Celery worker subprocess, each a ``DevServer`` (``with … as
server``); free ports, and polling with a deadline.  They live in the package, not in ``tests/``, so ``pbem bench e2e`` runs
without the test suite; ``tests/harness`` re-exports them for the fixtures.
Nothing here runs at import time.
"""

from pbem.devservers.ports import free_port
from pbem.devservers.waiting import WaitTimeout, wait_for

__all__ = ["WaitTimeout", "free_port", "wait_for"]
