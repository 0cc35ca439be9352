"""The worker's entry point: ``celery -A workers.worker worker`` (and ``beat``).

The one module that does work at import time, because that is how Celery finds
its app: it builds the Settings from the environment and the app from them.
``pbem worker`` and ``pbem beat`` run exactly this.
"""

import os

from pbem.config import Settings
from workers.app import embedded_broker_file, make_celery

settings = Settings.from_env(os.environ)
_broker_file = embedded_broker_file(settings)
if _broker_file is not None:
    _broker_file.parent.mkdir(parents=True, exist_ok=True)
app = make_celery(settings)
