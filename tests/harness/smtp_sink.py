"""Moved to :mod:`pbem.devservers.smtp_sink` (the benchmarks use it too); re-exported for the tests."""

from pbem.devservers.smtp_sink import CapturedMessage, SmtpSink  # noqa: F401
