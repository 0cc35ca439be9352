"""Fixtures shared by the integration tests (the project-wide ones are in ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pbem.services.app import Services
from tests.harness.services import ServicesFactory
from tests.integration.mailplay import make_services


@pytest.fixture
def services(tmp_path: Path, db_url: str) -> Iterator[ServicesFactory]:
    """``services(**PBEM_variables)``: Services on the test's database (SQLite and PostgreSQL)."""
    factory = ServicesFactory(tmp_path, db_url)
    yield factory
    factory.close()


@pytest.fixture
def svc(db_url: str, tmp_path: Path) -> Iterator[Services]:
    """The mail-play tests' Services (``mailplay.make_services``) on the test's database; a module
    that needs other settings defines its own ``svc``."""
    services = make_services(db_url, tmp_path)
    yield services
    services.close()
