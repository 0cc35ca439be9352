"""``pbem web`` and ``gunicorn pbem.web.wsgi:app`` really serve the app over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.harness.ports import free_port
from tests.harness.waiting import wait_for

BIN = Path(sys.executable).parent


def healthz(port: int) -> dict | None:
    """The answer to /healthz, or None while the server is not answering yet (on a busy machine a
    worker still starting can accept the connection and answer late: a read timeout too)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
            return json.load(response)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


@pytest.mark.parametrize("entry", ["pbem web", "gunicorn wsgi"])
def test_the_web_front_serves_healthz(tmp_path: Path, sqlite_migrated_url: str, entry: str) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PBEM_DATA_DIR": str(tmp_path / "data"),
        "PBEM_DATABASE_URL": sqlite_migrated_url,
        "PBEM_WEB_LISTEN": f"127.0.0.1:{port}",
        "PBEM_SECRET_KEY": "serve-test-secret",
    }
    if entry == "pbem web":
        command = [str(BIN / "pbem"), "web", "--workers", "1", "--no-access-log"]
    else:
        command = [str(BIN / "gunicorn"), "--workers", "1", "--bind", f"127.0.0.1:{port}", "pbem.web.wsgi:app"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        answer = wait_for(lambda: process.poll() is None and healthz(port), timeout=90,
                          message=f"{entry} answering /healthz")
        assert answer == {"status": "ok", "database": "ok"}
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            output, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    assert process.returncode == 0, output.decode(errors="replace")
