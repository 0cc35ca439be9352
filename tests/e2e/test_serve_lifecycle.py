"""``pbem serve`` starting and stopping: SIGTERM stops every process of it each time, and a
second serve whose ports are taken fails cleanly before it starts a worker or beat.

Real processes on 127.0.0.1 (``Served`` from the smoke test); every wait has a generous
deadline and nothing is timed.
"""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import pytest

from tests.e2e.test_serve_smoke import Served
from tests.harness.waiting import wait_for

pytestmark = pytest.mark.slow

RUNS = 3


def test_sigterm_stops_serve_and_every_process_of_it_each_time(tmp_path: Path) -> None:
    """Three starts and SIGTERMs in a row (as ``docker stop`` or systemd send it): each time serve
    exits 0 and its whole process group (worker, its pool, beat) is gone."""
    for run in range(RUNS):
        base = tmp_path / f"run{run}"
        base.mkdir()
        served = Served(base)
        try:
            served.wait_ready()
            assert served.group_processes(), "serve's worker and beat run in its process group"
            served.process.send_signal(signal.SIGTERM)
            assert served.process.wait(120) == 0, served.log()[-3000:]
            wait_for(lambda: not served.group_processes(), timeout=60, message=f"run {run}: no process left")
            assert "pbem serve: stopped" in served.log()
            assert "killing it" not in served.log(), served.log()[-3000:]
        finally:
            served.stop()


def test_a_second_serve_on_taken_ports_fails_cleanly_before_starting_anything(tmp_path: Path) -> None:
    """A second serve on the same data directory and ports exits with a message naming
    PBEM_SMTP_LISTEN, no traceback, no worker or beat of its own; the first one carries on. The same
    with only the web port taken names PBEM_WEB_LISTEN."""
    (tmp_path / "first").mkdir()
    first = Served(tmp_path / "first")
    try:
        first.wait_ready()

        second = Served(tmp_path, data_dir=first.data_dir, smtp_port=first.smtp_port,
                        web_port=first.web_port, name="second")
        assert second.process.wait(120) != 0
        text = second.log()
        assert "PBEM_SMTP_LISTEN" in text and f"127.0.0.1:{first.smtp_port}" in text, text
        assert "Traceback" not in text, text
        assert "Celery worker pid" not in text and "celery" not in text.lower(), text
        wait_for(lambda: not second.group_processes(), timeout=60, message="nothing left of the second serve")

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free_smtp = probe.getsockname()[1]
        third = Served(tmp_path, data_dir=first.data_dir, smtp_port=free_smtp, web_port=first.web_port,
                       name="third")
        assert third.process.wait(120) != 0
        text = third.log()
        assert "PBEM_WEB_LISTEN" in text and f"127.0.0.1:{first.web_port}" in text, text
        assert "Traceback" not in text and "celery" not in text.lower(), text

        # The first serve still runs and answers on its ports.
        assert first.process.poll() is None
        with socket.create_connection(("127.0.0.1", first.smtp_port), timeout=20) as conn:
            assert conn.recv(3) == b"220"
        first.process.send_signal(signal.SIGTERM)
        assert first.process.wait(120) == 0, first.log()[-3000:]
    finally:
        first.stop()
