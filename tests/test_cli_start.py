"""The command line starts without loading what its commands use (README, "Benchmarks": ``pbem bench
cli``): its commands are imported only when run (``pbem.cli.lazy``), and a group lists them from its
table, whose short help must be each command's own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from pbem.cli import COMMANDS, main
from pbem.cli.lazy import Lazy, LazyGroup

#: What ``pbem --help`` must not import (module name prefixes).
HEAVY = ("sqlalchemy", "celery", "jinja2", "pbem.services", "pbem.engine")
#: What a command that lists rows must not import: the workers, the bots, the mail templates' machinery,
#: Alembic (``pbem.db.revisions`` tells whether the database is migrated) and, on SQLite, psycopg
#: (``pbem.db.arrays`` imports it when a process first works on PostgreSQL). The CPU of a fresh ``pbem
#: game list`` is ``pbem bench cli``'s figure.
NOT_FOR_READING = ("celery", "kombu", "workers", "pbem.bots", "pbem.engine", "jinja2", "babel", "pbem.mail.compose",
                   "pbem.services.app", "alembic", "psycopg", "pbem.db.migrate")


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def imported(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str],
                                                                                    list[str]]:
    """Run ``pbem ARGS`` under ``python -X importtime``: the process, and every module it imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "from pbem.cli import main; main()", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)
    modules = [line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:") and not line.rstrip().endswith("package")]
    return done, modules


@pytest.mark.parametrize("args", [["--help"], ["game", "--help"], ["mail", "--help"]])
def test_help_imports_none_of_the_commands(tmp_path: Path, args: list[str]) -> None:
    done, modules = imported(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert {"click", "pbem.cli", "pbem.cli.lazy"} <= set(modules)  # the import log was read
    assert [m for m in modules if _within(m, HEAVY)] == []
    assert "Commands:" in done.stdout


def test_help_lists_every_command_with_its_short_help(tmp_path: Path) -> None:
    done, _ = imported(["--help"], tmp_path)
    listed = done.stdout.partition("Commands:")[2].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == sorted(COMMANDS)
    for line in listed:
        if line.strip():
            name, _, shown = line.strip().partition(" ")
            words = shown.strip().removesuffix("...").split()
            assert words and COMMANDS[name].help.split()[: len(words)] == words, line


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    directory = tmp_path_factory.mktemp("cli-start")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PBEM_")}
    env |= {"PBEM_DATA_DIR": str(directory), "PBEM_DATABASE_URL": f"sqlite:///{directory / 'pbem.db'}"}
    done = subprocess.run([sys.executable, "-c", "from pbem.cli import main; main()", "db", "upgrade"], cwd=directory,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    yield directory, env


@pytest.mark.parametrize("args", [["game", "list"], ["mail", "list"]])
def test_a_listing_loads_no_worker_bot_nor_template(migrated: tuple[Path, dict[str, str]], args: list[str]) -> None:
    directory, env = migrated
    done, modules = imported(args, directory, env)
    assert done.returncode == 0, done.stderr
    assert "pbem.services.database" in modules  # it did read the database through the services
    assert [m for m in modules if _within(m, NOT_FOR_READING)] == []


def lazy_entries(group: LazyGroup, path: str = "") -> Iterator[tuple[str, Lazy, click.Command]]:
    for name, entry in group.lazy.items():
        command = group.get_command(click.Context(group), name)
        assert command is not None
        yield f"{path}{name}", entry, command
        if isinstance(command, LazyGroup):
            yield from lazy_entries(command, f"{path}{name} ")


def test_every_tables_short_help_is_the_commands_own() -> None:
    entries = list(lazy_entries(main))
    assert {"game list", "mail list", "serve", "bench"} <= {path for path, _, _ in entries}
    for path, entry, command in entries:
        assert command.name == path.split()[-1], entry.target
        assert entry.help == command.get_short_help_str(limit=10_000), path


def test_a_command_runs_once_loaded(tmp_path: Path) -> None:
    done, modules = imported(["dns", "--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pbem.mail.signing" in modules and "Print the DNS records" in done.stdout  # dns.py's import
