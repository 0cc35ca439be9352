"""pbem's Celery side: the app factory, the tasks, and the helper fronts use to queue.

Fronts (SMTP, web, ``pbem mail inject``) only need ``make_celery`` and
``workers.queueing``: they queue tasks by name and never import the task code.
The worker process starts from ``workers.worker`` (``celery -A workers.worker``).
"""

from workers.app import make_celery

__all__ = ["make_celery"]
