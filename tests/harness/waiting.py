"""Moved to :mod:`pbem.devservers.waiting` (the benchmarks use it too); re-exported for the tests."""

from pbem.devservers.waiting import WaitTimeout, wait_for  # noqa: F401
