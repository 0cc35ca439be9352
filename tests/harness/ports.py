"""Moved to :mod:`pbem.devservers.ports` (the benchmarks use it too); re-exported for the tests."""

from pbem.devservers.ports import free_port  # noqa: F401
