"""``Services`` for integration tests: on a test database, with a ``ManualClock``.

``services`` (the fixture in ``tests/integration/conftest.py``) is a factory: each call builds
Services from the test's database and the given extra ``PBEM_*`` variables, and all of them are
closed when the test ends.
"""

from __future__ import annotations

from pathlib import Path

from pbem.config import Settings
from pbem.services.app import Services
from pbem.services.clock import ManualClock

DOMAIN = "hearts.test"


def make_settings(tmp_path: Path, db_url: str, **extra: str) -> Settings:
    return Settings.from_env(
        {
            "PBEM_DATA_DIR": str(tmp_path),
            "PBEM_DATABASE_URL": db_url,
            "PBEM_MAIL_DOMAIN": DOMAIN,
            "PBEM_SECRET_KEY": "test-secret",
            # Stand-ins as the tests were written for (strong, the default, thinks for about 0.3 s
            # a card; tests/integration/test_absence.py checks the default once).
            "PBEM_STAND_IN_BOT": "heuristic",
        }
        | extra
    )


class ServicesFactory:
    """Builds Services on one database, each with its own ManualClock; ``close`` closes them all."""

    def __init__(self, tmp_path: Path, db_url: str) -> None:
        self.tmp_path = tmp_path
        self.db_url = db_url
        self._made: list[Services] = []

    def __call__(self, **extra: str) -> Services:
        svc = Services.from_settings(make_settings(self.tmp_path, self.db_url, **extra), clock=ManualClock())
        self._made.append(svc)
        return svc

    def close(self) -> None:
        for svc in self._made:
            svc.close()
