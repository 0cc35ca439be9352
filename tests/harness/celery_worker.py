"""Moved to :mod:`pbem.devservers.celery_worker` (the benchmarks use it too); re-exported for the tests."""

from pbem.devservers.celery_worker import CeleryWorkerError, pbem_environment, CeleryWorker  # noqa: F401
