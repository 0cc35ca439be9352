"""The worker's entry point: ``celery -A workers.worker worker`` (and ``beat``).

The one module that does work at import time, because that is how Celery finds
its app: it builds the Settings from the environment and the app from them.
``pbem worker`` and ``pbem beat`` run exactly this.

Each pool process compiles every mail template when it starts
(``worker_process_init``), so the first moves after a start do not pay for it
(about a second of CPU per process, instead of ~100 ms on each of the first
mails of each kind and language), then moves what it holds so far out of the
garbage collector's sight (``gc.freeze``).

Celery's two routine lines per task at INFO ("Task … received", "Task … succeeded in …") are
dropped for the task of every move, ``pbem.process_inbound``: at a hundred moves a second they
were about a quarter of Celery's own CPU per task, and they say less than pbem's own line per
move ("outbound … sent").  Its failures and retries are still logged (WARNING and above), and
the other tasks (sweep, tick, send_mail: a few a minute) keep their "succeeded" line, which
says what they did.  "received" lines are off for every task: Celery then skips them before
making the record (a filtered line still cost the consumer ~50 µs a task, mostly in
``findCaller``), and beat already logs each task it sends.
"""

import gc
import logging
import os
from typing import Any

from celery.signals import worker_process_init

from pbem.config import Settings
from workers.app import embedded_broker_file, make_celery
from workers.queueing import PROCESS_INBOUND

settings = Settings.from_env(os.environ)
# Beat keeps its schedule file in the data directory (``beat_schedule_filename``) and cannot start
# without it; the embedded broker's SQLite file may live elsewhere.
settings.data_dir.mkdir(parents=True, exist_ok=True)
_broker_file = embedded_broker_file(settings)
if _broker_file is not None:
    _broker_file.parent.mkdir(parents=True, exist_ok=True)
app = make_celery(settings)



def _not_routine_move_line(record: logging.LogRecord) -> bool:
    """False for Celery's INFO lines about a ``pbem.process_inbound`` task."""
    args = record.args
    return not (record.levelno == logging.INFO and isinstance(args, dict)
                and args.get("name") == PROCESS_INBOUND)


logging.getLogger("celery.app.trace").addFilter(_not_routine_move_line)
# Read by Celery when the consumer starts (``isEnabledFor(INFO)``): its "received" lines are not made.
logging.getLogger("celery.worker.strategy").setLevel(logging.WARNING)


@worker_process_init.connect
def _compile_templates(**_kwargs: Any) -> None:
    try:
        app.services().composer.renderer.preload()
    except OSError:  # templates unreadable: the tasks will say so when they need them
        logging.getLogger("pbem.worker").exception("could not compile the mail templates")
    # Everything made so far (modules, the app, the compiled templates) lives as long as the
    # process: out of the cyclic collector's sight, its full collections stay short.
    gc.freeze()
