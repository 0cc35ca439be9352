"""``pbem serve`` as a user runs it: one command, a temp data dir, real ports.

Mail goes in over SMTP, the worker (a real Celery worker on the embedded SQLite
broker) processes it and the answer lands in the dev mailbox; then the whole
process group stops cleanly on SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import smtplib
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from sqlalchemy import select

from pbem.bench.procstat import descendants
from pbem.db.models import InboundMessage, InboundStatus, OutboundMessage, OutboundStatus
from pbem.db.session import make_engine, make_session_factory
from pbem.serve import ROOT_WARNING
from tests.harness.celery_worker import pbem_environment
from tests.harness.ports import free_port
from tests.harness.waiting import wait_for

pytestmark = pytest.mark.slow

DOMAIN = "hearts.test"


class Served:
    """A ``pbem serve`` process in its own process group, logging to a file; its workers and beat
    each lead a process group of their own."""

    def __init__(self, tmp_path: Path, *, data_dir: Path | None = None, smtp_port: int | None = None,
                 web_port: int | None = None, name: str = "serve", extra_env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.data_dir = data_dir or tmp_path / "data"
        self.smtp_port, self.web_port = smtp_port or free_port(), web_port or free_port()
        self.log_file = tmp_path / f"{name}.log"
        env = pbem_environment(
            {
                "PBEM_DATA_DIR": str(self.data_dir),
                "PBEM_MAIL_DOMAIN": DOMAIN,
                "PBEM_SMTP_LISTEN": f"127.0.0.1:{self.smtp_port}",
                "PBEM_WEB_LISTEN": f"127.0.0.1:{self.web_port}",
                **(extra_env or {}),
            }
        )
        with open(self.log_file, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from pbem.cli import main; main()", "serve", *args],
                env=env,
                cwd=tmp_path,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: what a terminal's Ctrl-C reaches
            )
        self._child_groups: set[int] = set()

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")

    def wait_ready(self) -> None:
        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"pbem serve exited early:\n{self.log()[-4000:]}")
            text = self.log()
            return "Ctrl-C stops everything" in text and " ready." in text

        wait_for(ready, timeout=60, interval=0.1, message="pbem serve and its worker ready")

    def groups(self) -> list[int]:
        """serve's process group and those of its processes, every one seen so far (a restarted
        worker leads a new one)."""
        if self.process.poll() is None:
            for pid in descendants(self.process.pid):
                try:
                    self._child_groups.add(os.getpgid(pid))
                except ProcessLookupError:
                    pass
        return sorted({self.process.pid, *self._child_groups})

    def group_processes(self) -> list[str]:
        """The processes still running in any of ``groups()``."""
        found = subprocess.run(["pgrep", "-g", ",".join(map(str, self.groups())), "-a"],
                               capture_output=True, text=True, check=False).stdout
        # Zombies (already exited, waiting for init to reap them) are not running.
        return [line for line in found.splitlines() if "<defunct>" not in line]

    def stop(self) -> None:
        """Kill what is left (a test that failed before stopping serve cleanly)."""
        groups = self.groups()
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process.poll() is None:
            self.process.wait(10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(tmp_path)
    try:
        yield server
    finally:
        server.stop()  # only if a test failed before stopping it cleanly


def test_serve_takes_mail_processes_it_answers_and_stops(served: Served) -> None:
    served.wait_ready()
    text = served.log()
    assert f"SMTP on 127.0.0.1:{served.smtp_port}" in text
    assert str(served.data_dir / "devmail") in text
    # Links follow PBEM_WEB_LISTEN when PBEM_BASE_URL is not set.
    assert f"(links use http://127.0.0.1:{served.web_port})" in text
    # Run as root (as CI runs), the worker's "superuser privileges" warning is not printed.
    assert ROOT_WARNING not in text

    with urllib.request.urlopen(f"http://127.0.0.1:{served.web_port}/healthz", timeout=10) as answer:
        assert answer.status == 200

    raw = (f"From: Alice <alice@a.test>\r\nTo: new@{DOMAIN}\r\nSubject: Hearts?\r\n"
           "Message-ID: <serve-1@a.test>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
           "new game\r\nplayers: bob@b.test\r\nbots: 2\r\n").encode()
    with smtplib.SMTP("127.0.0.1", served.smtp_port, timeout=20) as client:
        assert client.sendmail("alice@a.test", [f"new@{DOMAIN}"], raw) == {}

    engine = make_engine(f"sqlite:///{served.data_dir / 'pbem.db'}", sqlite_begin="DEFERRED")
    sessions = make_session_factory(engine)
    try:
        def processed() -> InboundMessage | None:
            with sessions() as session:
                row = session.scalars(select(InboundMessage)).one()
                return row if row.status is not InboundStatus.PENDING else None

        wait_for(processed, timeout=60, message="the worker to process the mail")

        def all_sent() -> list[OutboundMessage]:
            with sessions() as session:
                rows = list(session.scalars(select(OutboundMessage)))
                return rows if rows and all(r.status is OutboundStatus.SENT for r in rows) else []

        outbound = wait_for(all_sent, timeout=60, message="the answers sent")
    finally:
        engine.dispose()
    mailbox = served.data_dir / "devmail"
    files = sorted(mailbox.glob("*.eml"))
    assert [f.name for f in files] == [f"{row.id:010d}.eml" for row in sorted(outbound, key=lambda r: r.id)]
    answer = message_from_bytes(files[0].read_bytes(), policy=policy.default)
    assert answer["Delivered-To"] == "alice@a.test"

    served.groups()  # seen while they run
    served.process.send_signal(signal.SIGTERM)  # as docker stop would
    assert served.process.wait(60) == 0, served.log()[-3000:]
    wait_for(lambda: not served.group_processes(), timeout=30, message="no process left")
    assert "pbem serve: stopped" in served.log()


def test_ctrl_c_stops_every_process(served: Served) -> None:
    served.wait_ready()
    assert len(served.groups()) == 4, "serve's group, and one for each of its two workers and beat"
    os.killpg(served.process.pid, signal.SIGINT)  # what the terminal sends on Ctrl-C
    assert served.process.wait(60) == 0, served.log()[-3000:]
    wait_for(lambda: not served.group_processes(), timeout=30, message="no process left")
