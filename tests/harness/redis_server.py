"""Moved to :mod:`pbem.devservers.redis_server` (the benchmarks use it too); re-exported for the tests."""

from pbem.devservers.redis_server import RedisServerError, RedisServer  # noqa: F401
