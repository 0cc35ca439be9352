"""Read-only commands run where no server's data is leave nothing behind (no ``var/secret_key``);
a command that writes still keeps the development secret in the data directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from pbem.cli import main
from pbem.cli.settings import READ_ONLY_COMMANDS

ARGUMENTS = {"game show": ["1"], "game check": ["1"], "mail show": ["1"], "player export": ["a@b.test"]}


def pbem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PBEM_")}
    return subprocess.run([sys.executable, "-c", "from pbem.cli import main; main()", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_every_read_only_command_exists() -> None:
    for path in READ_ONLY_COMMANDS:
        command: click.Command = main
        for name in path.split():
            assert isinstance(command, click.Group), path
            found = command.get_command(click.Context(command), name)
            assert found is not None, f"pbem {path} is no command"
            command = found


@pytest.mark.parametrize("path", sorted(READ_ONLY_COMMANDS))
def test_a_read_only_command_in_the_wrong_directory_writes_nothing(tmp_path: Path, path: str) -> None:
    done = pbem(tmp_path, *path.split(), *ARGUMENTS.get(path, []))
    assert "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [], (done.stdout, done.stderr)


def test_a_command_that_writes_keeps_the_development_secret(tmp_path: Path) -> None:
    done = pbem(tmp_path, "db", "upgrade")
    assert done.returncode == 0, done.stderr
    secret = (tmp_path / "var" / "secret_key").read_text()
    # A read-only command where the secret exists reads it (nothing new is written).
    assert pbem(tmp_path, "game", "list").returncode == 0
    assert (tmp_path / "var" / "secret_key").read_text() == secret
    assert sorted(p.name for p in (tmp_path / "var").iterdir() if not p.name.startswith("pbem.db")) == ["secret_key"]
