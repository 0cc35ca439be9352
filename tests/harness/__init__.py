"""Test harness: real servers (PostgreSQL, Redis, an SMTP sink) on 127.0.0.1, and
polling with a deadline.  The pytest fixtures that use these live in
``tests/conftest.py``; the classes here can also be used directly (a benchmark
or an end-to-end test may want its own sink or database)."""

from pbem.devservers import free_port
from pbem.devservers import WaitTimeout, wait_for

__all__ = ["WaitTimeout", "free_port", "wait_for"]
