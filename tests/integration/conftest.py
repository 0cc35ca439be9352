"""Fixtures shared by the integration tests (the project-wide ones are in ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.services import ServicesFactory


@pytest.fixture
def services(tmp_path: Path, db_url: str) -> Iterator[ServicesFactory]:
    """``services(**PBEM_variables)``: Services on the test's database (SQLite and PostgreSQL)."""
    factory = ServicesFactory(tmp_path, db_url)
    yield factory
    factory.close()
