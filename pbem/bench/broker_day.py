"""The embedded broker's file after a simulated day of an idle ``pbem serve``: ``python -m pbem.bench.broker_day``.

Beat queues a sweep every ``PBEM_SWEEP_SECONDS`` (15 s) and a tick every ``PBEM_TICK_SECONDS``
(60 s): 7,200 tasks a day on a server nobody plays on.  This publishes that day's tasks as beat
does (``send_task`` of pbem's app, with their expiry) to a fresh ``broker.db``, each taken and
acknowledged as a worker's consumer does it (a kombu consumer on Celery's queue, through the same
transport), and prints the file's size and rows at the end: with ``workers.embedded_broker``
(what ``pbem serve`` runs) and with kombu's own SQLAlchemy transport, which keeps every delivered
message.  Nothing is timed; the figures are sizes.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from kombu import Connection

from pbem.config import Settings
from workers.app import TICK, make_celery
from workers.embedded_broker import MESSAGE_TABLE
from workers.queueing import SWEEP

__all__ = ["day_of_tasks", "run"]

DAY_S = 24 * 3600


def day_of_tasks(sweep_seconds: float, tick_seconds: float, seconds: float = DAY_S) -> list[tuple[str, float]]:
    """(task name, expiry in seconds) of every task beat queues in ``seconds``, in the order queued."""
    due = [(n * sweep_seconds, SWEEP, sweep_seconds) for n in range(int(seconds // sweep_seconds))]
    due += [(n * tick_seconds, TICK, tick_seconds) for n in range(int(seconds // tick_seconds))]
    return [(name, expires) for _, name, expires in sorted(due)]


def simulate(directory: Path, transport: str, tasks: list[tuple[str, float]]) -> tuple[int, int]:
    """Publish and consume ``tasks`` through ``transport`` on ``directory/broker.db``; (bytes, rows)."""
    broker_file = directory / "broker.db"
    settings = Settings.from_env({
        "PBEM_DATA_DIR": str(directory), "PBEM_MAIL_DOMAIN": "hearts.test", "PBEM_SECRET_KEY": "bench",
        "PBEM_BROKER_URL": f"sqla+sqlite:///{broker_file}",
    })
    app = make_celery(settings)
    app.conf.broker_transport = transport
    with app.connection_for_write() as producer, Connection(app.conf.broker_url, transport=transport) as consumer:
        queue = consumer.SimpleQueue(app.conf.task_default_queue)
        for name, expires in tasks:
            app.send_task(name, expires=expires, connection=producer)
            queue.get(timeout=30).ack()
        queue.close()
    with sqlite3.connect(broker_file) as db:
        rows = int(db.execute(f"SELECT count(*) FROM {MESSAGE_TABLE}").fetchone()[0])
    return broker_file.stat().st_size, rows


def run(*, hours: float = 24, sweep_seconds: float = 15, tick_seconds: float = 60,
        echo: Callable[[str], None] = print) -> None:
    tasks = day_of_tasks(sweep_seconds, tick_seconds, hours * 3600)
    echo(f"broker.db after {hours:g} h of an idle pbem serve: {len(tasks)} tasks (a sweep every "
         f"{sweep_seconds:g} s, a tick every {tick_seconds:g} s), each published and acknowledged")
    for label, transport in (("workers.embedded_broker (pbem serve)", "workers.embedded_broker:Transport"),
                             ("kombu's SQLAlchemy transport", "sqlalchemy")):
        with tempfile.TemporaryDirectory(prefix="pbem-broker-day-") as directory:
            size, rows = simulate(Path(directory), transport, tasks)
        echo(f"  {label:<40} {size / 1024:9.0f} KiB  {rows:6d} rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=24)
    parser.add_argument("--sweep-seconds", type=float, default=15)
    parser.add_argument("--tick-seconds", type=float, default=60)
    options = parser.parse_args()
    run(hours=options.hours, sweep_seconds=options.sweep_seconds, tick_seconds=options.tick_seconds)


if __name__ == "__main__":
    main()
