"""Metrics of every process kind, summed in one scrape (README, "Metrics and logs").

Real processes on 127.0.0.1, sharing one metrics directory as the processes of one host do: a
Celery worker on Redis whose prefork pool processes are replaced after every task
(``--max-tasks-per-child=1``) and one of which is killed, the SMTP front (``pbem smtp``, which
serves the host's metrics on ``PBEM_METRICS_LISTEN``), gunicorn with two workers
(``-c python:pbem.web.gunicorn_conf``), PostgreSQL and an SMTP sink as the relay.  A person plays
their pass by mail through the SMTP front, strangers' mails arrive through the webhook on both
gunicorn workers (one held busy by an unfinished request while the other answers), and one scrape
reads every sum as the database and the sink count them.
"""

from __future__ import annotations

import os
import signal
import smtplib
import socket
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from email.utils import make_msgid
from pathlib import Path

import pytest
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from pbem.db.models import InboundMessage, InboundStatus, Move, OutboundMessage, OutboundStatus
from pbem.db.session import make_engine, make_session_factory
from pbem.web.signatures import raw_signature
from tests.e2e.pipeline import pbem_command, redis_db
from tests.harness.celery_worker import CeleryWorker, pbem_environment
from tests.harness.players import Received, reply_bytes
from tests.harness.ports import free_port
from tests.harness.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.postgres]

DOMAIN = "hearts.test"
ANA = "ana@players.test"
SECRET = "metrics-webhook-secret"
BIN = Path(sys.executable).parent


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
    return sorted(set(found))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def webhook_request(port: int, raw: bytes, sender: str, recipient: str, *, earlier: int = 0) -> bytes:
    timestamp = str(int(time.time()) - earlier)
    head = (f"POST /inbound/raw HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: message/rfc822\r\n"
            f"Content-Length: {len(raw)}\r\nX-Pbem-Timestamp: {timestamp}\r\n"
            f"X-Pbem-Signature: {raw_signature(SECRET, timestamp, raw)}\r\n"
            f"X-Pbem-Mail-From: <{sender}>\r\nX-Pbem-Rcpt-To: {recipient}\r\nConnection: close\r\n\r\n")
    return head.encode() + raw


def answer_of(connection: socket.socket) -> bytes:
    chunks = []
    while chunk := connection.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def stranger_mail(n: int) -> bytes:
    return (f"From: stranger{n}@elsewhere.test\r\nTo: help@{DOMAIN}\r\nSubject: hello {n}\r\n"
            f"Message-ID: {make_msgid(domain='elsewhere.test')}\r\n\r\nhelp\r\n").encode()


def per_process(directory: Path, metric: str, label: str) -> dict[int, float]:
    """``metric``'s samples with ``label`` in them, summed per process, from the files."""
    found: dict[int, float] = defaultdict(float)
    for path in directory.glob("counter_*.db"):
        pid = int(path.stem.rsplit("_", 1)[1])
        for key, value, _timestamp, _pos in MmapedDict.read_all_values_from_file(str(path)):
            if key.startswith(f'["{metric}"') and label in key:
                found[pid] += value
    return dict(found)


def test_one_scrape_sums_the_pool_processes_the_smtp_front_and_two_gunicorn_workers(
        pg_migrated_url, redis_url, smtp_sink, tmp_path):
    smtp_sink.clear()
    smtp_port, web_port, metrics_port = free_port(), free_port(), free_port()
    metrics_dir = tmp_path / "metrics"
    env = {
        "PBEM_DATABASE_URL": pg_migrated_url,
        "PBEM_BROKER_URL": redis_db(redis_url, 9),
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_MAIL_DOMAIN": DOMAIN,
        "PBEM_SECRET_KEY": "metrics-secret",
        "PBEM_SMTP_LISTEN": f"127.0.0.1:{smtp_port}",
        "PBEM_WEB_LISTEN": f"127.0.0.1:{web_port}",
        "PBEM_WEBHOOK_SECRET": SECRET,
        "PBEM_RELAY_HOST": smtp_sink.host,
        "PBEM_RELAY_PORT": str(smtp_sink.port),
        "PBEM_METRICS_DIR": str(metrics_dir),
    }
    worker = CeleryWorker(env, concurrency=2, extra_args=["--max-tasks-per-child=1"], log_dir=tmp_path)
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], extra: dict[str, str], log_name: str) -> subprocess.Popen[bytes]:
        with open(tmp_path / log_name, "wb") as log:
            process = subprocess.Popen(argv, env=pbem_environment(env | extra), cwd=tmp_path,
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        started.append(process)
        return process

    engine = make_engine(pg_migrated_url)
    session_factory = make_session_factory(engine)
    try:
        smtp = start(pbem_command("smtp"), {"PBEM_METRICS_LISTEN": f"127.0.0.1:{metrics_port}"}, "smtp.log")
        web = start([str(BIN / "gunicorn"), "-c", "python:pbem.web.gunicorn_conf", "--workers", "2",
                     "--bind", f"127.0.0.1:{web_port}", "pbem.web.wsgi:app"], {}, "web.log")
        worker.start()

        def listening(port: int) -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_for(lambda: listening(smtp_port) and listening(metrics_port), timeout=60,
                 message="the SMTP front and its metrics")
        wait_for(lambda: listening(web_port) and len(children(web.pid)) == 2, timeout=60,
                 message="gunicorn and its two workers")
        web_workers = children(web.pid)

        # A game made on the command line; its first mails are sent by a pool process.
        subprocess.run(pbem_command("game", "new", "--player", ANA, "--bots", "3", "--seed", "metrics"),
                       env=pbem_environment(env), check=True, capture_output=True, timeout=120)
        first = wait_for(lambda: next((m for m in smtp_sink.messages if m.rcpt_tos == (ANA,)), None),
                         timeout=60, message="Ana's first mail")
        with session_factory() as session:
            moves_by_cli = session.scalar(select(func.count()).select_from(Move))
        asked = Received.parse(first.raw)
        assert asked.decision == "pass"

        # Her pass, by mail through the SMTP front; a mail for another domain refused at RCPT.
        with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as client:
            client.sendmail(ANA, [asked.reply_to], reply_bytes(asked, sender=ANA, body=" ".join(asked.hand[:3])))
            with pytest.raises(smtplib.SMTPRecipientsRefused):
                client.sendmail(ANA, ["someone@elsewhere.test"], b"Subject: x\r\n\r\nx\r\n")

        # Strangers' mails through the webhook: one request held unfinished keeps a worker busy
        # (gunicorn's sync workers serve one connection at a time) while the other answers two.
        held_bytes = webhook_request(web_port, stranger_mail(0), "stranger0@elsewhere.test", f"help@{DOMAIN}")
        held = socket.create_connection(("127.0.0.1", web_port), timeout=30)
        held.sendall(held_bytes[:40])
        answers = []
        for n in (1, 2):
            with socket.create_connection(("127.0.0.1", web_port), timeout=30) as connection:
                connection.sendall(webhook_request(web_port, stranger_mail(n), f"stranger{n}@elsewhere.test",
                                                   f"help@{DOMAIN}"))
                answers.append(answer_of(connection))
        held.sendall(held_bytes[40:])
        answers.append(answer_of(held))
        held.close()
        again = stranger_mail(9)
        for earlier in (0, 1):  # delivered again (another timestamp: not a replay) is a duplicate
            with socket.create_connection(("127.0.0.1", web_port), timeout=30) as connection:
                connection.sendall(webhook_request(web_port, again, "stranger9@elsewhere.test", f"help@{DOMAIN}",
                                                   earlier=earlier))
                answers.append(answer_of(connection))
        assert all(answer.startswith(b"HTTP/1.1 200") for answer in answers), answers

        def settled() -> bool:
            with session_factory() as session:
                waiting = session.scalar(select(func.count()).select_from(InboundMessage).where(
                    InboundMessage.status.in_((InboundStatus.PENDING, InboundStatus.PROCESSING))))
                unsent = session.scalar(select(func.count()).select_from(OutboundMessage).where(
                    OutboundMessage.status != OutboundStatus.SENT))
                received = session.scalar(select(func.count()).select_from(InboundMessage))
                sent = session.scalar(select(func.count()).select_from(OutboundMessage))
            return waiting == 0 and unsent == 0 and received == 5 and len(smtp_sink.messages) >= sent

        wait_for(settled, timeout=120, message="every mail processed and every mail written at the relay")

        # One pool process killed: the worker forks another.
        pool_before = wait_for(lambda: pids if len(pids := worker.pool_pids()) == 2 else None, timeout=60,
                               message="two pool processes")
        os.kill(pool_before[0], signal.SIGKILL)

        def pool_whole() -> bool:
            pids = worker.pool_pids()
            return (not alive(pool_before[0]) and len(pids) == 2 and pool_before[0] not in pids
                    # each pool process up: counted in pbem_processes (its own file)
                    and all((metrics_dir / f"gauge_livesum_{pid}.db").exists() for pid in pids))

        wait_for(pool_whole, timeout=60, message="the pool made whole again")

        with session_factory() as session:
            moves = session.scalar(select(func.count()).select_from(Move))
            sent = session.scalar(select(func.count()).select_from(OutboundMessage))
        samples = scrape(metrics_port)

        def value(name: str, **labels: str) -> float:
            return samples.get((name, tuple(sorted(labels.items()))), 0.0)

        assert value("pbem_mail_received_total", front="smtp", outcome="stored") == 1
        assert value("pbem_mail_received_total", front="smtp", outcome="refused") == 1
        assert value("pbem_mail_received_total", front="webhook", outcome="stored") == 4
        assert value("pbem_mail_received_total", front="webhook", outcome="duplicate") == 1
        assert moves > moves_by_cli
        assert value("pbem_moves_applied_total", kind="pass") >= 1
        assert sum(v for (name, _), v in samples.items() if name == "pbem_moves_applied_total") == moves - moves_by_cli
        assert value("pbem_mail_sent_total") == sent == len(smtp_sink.messages)
        assert value("pbem_mail_failed_total") == 0 and value("pbem_mail_retried_total") == 0
        assert value("pbem_reply_seconds_count") == 1  # Ana's reply; the strangers get no answer
        assert value("pbem_processes", kind="smtp") == 1
        assert value("pbem_processes", kind="web") == 2
        assert value("pbem_processes", kind="worker") == 3  # the main process and its two pool processes
        assert value("pbem_database_up") == 1
        assert value("pbem_inbound_pending") == 0 and value("pbem_outbound_pending") == 0

        # The sums came from many processes: both gunicorn workers counted webhook mails, and the
        # pool processes that sent the mails (the first ones, then Ana's reply's) have all been
        # replaced since, their counts kept.
        webhook_by_pid = per_process(metrics_dir, "pbem_mail_received", '"webhook"')
        assert set(web_workers) <= {pid for pid, n in webhook_by_pid.items() if n > 0}, webhook_by_pid
        senders = {pid for pid, n in per_process(metrics_dir, "pbem_mail_sent", "").items() if n > 0}
        assert len(senders) >= 2 and not senders & {smtp.pid, worker.pid, *worker.pool_pids()}, senders
        # One line per move in the worker's log, with its game, seat, mail and latency.
        log = worker.log_text()
        assert log.count(" after its 250") == moves - moves_by_cli, log[-3000:]
    finally:
        worker.stop()
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        engine.dispose()
