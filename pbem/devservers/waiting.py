"""Waiting for something to become true, with a deadline instead of a sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """The condition did not hold before the deadline (a test failure)."""


def wait_for(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.02,
    message: str | None = None,
) -> T:
    """Call ``predicate`` until it returns something truthy, and return that.

    Raises ``WaitTimeout`` (an ``AssertionError``) naming ``message`` or the
    predicate, with its last value, once ``timeout`` seconds have passed.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            what = message or getattr(predicate, "__name__", repr(predicate))
            raise WaitTimeout(f"timed out after {timeout}s waiting for {what} (last: {value!r})")
        time.sleep(interval)
