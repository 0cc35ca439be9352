"""Moved to :mod:`pbem.devservers.postgres` (the benchmarks use it too); re-exported for the tests."""

from pbem.devservers.postgres import TEST_USER, SUPERUSER, PostgresError, ensure_system_user, PostgresServer  # noqa: F401
