"""Another revision of pbem, installed beside this checkout's, for ``pbem bench e2e --compare REV``.

REV is checked out with ``git worktree add`` in a temporary directory and installed (a wheel,
``--no-deps``) into a venv that holds **this checkout's** ``requirements/test.txt``, installed as
``./dev`` installs it (``pip install --require-hashes -r``): both sides then run the same library
versions, and a difference in speed is pbem's own.  Only where REV refuses those pins (``pip check``
reports a requirement of REV's not met, or REV's ``pbem.bench.e2e`` does not import, or its
``pbem bench e2e --help`` fails) does the venv fall back: to REV's own ``requirements/test.txt``
if it has one, else to this lock file with REV's dependencies resolved over it by pip (which changes
only the packages REV refuses); it says which and why.

The venv is self-contained (REV is installed as a wheel, not editable), so it is kept for reruns
under the user's cache directory, keyed by REV's commit, the lock file's content and the Python
version; the worktree is removed once the venv is built (or kept with ``keep``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

import pbem

__all__ = ["CACHE_DIR", "Installed", "checkout_root", "clean_environment", "describe", "install_rev",
           "resolve_commit"]

Echo = Callable[[str], None]

#: Where REV's venvs are kept between runs (``$XDG_CACHE_HOME/pbem/bench-compare``).
CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pbem" / "bench-compare"
_LOCK = Path("requirements") / "test.txt"
_DONE = ".pbem-compare-ready"  # written last: a venv without it was interrupted and is rebuilt


@dataclass(frozen=True)
class Installed:
    python: Path  # REV's venv's interpreter
    note: str  # how its libraries were chosen, printed before the runs


def checkout_root() -> Path:
    """The git checkout this pbem is imported from (an editable install's source tree)."""
    root = Path(pbem.__file__).resolve().parents[1]
    found = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True,
                           text=True)
    if found.returncode != 0 or Path(found.stdout.strip()) != root or not (root / _LOCK).is_file():
        raise click.ClickException(f"--compare needs pbem installed from a git checkout with {_LOCK} "
                                   f"(pbem is imported from {root})")
    return root


def resolve_commit(root: Path, rev: str) -> str:
    found = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                           capture_output=True, text=True)
    if found.returncode != 0:
        raise click.ClickException(f"{rev!r} is not a commit of {root}")
    return found.stdout.strip()


def describe(root: Path, commit: str) -> str:
    """``abbreviated hash, date, subject`` of a commit, cut at 100 characters."""
    text = _git(root, "log", "-1", "--format=%h, %cs, %s", commit).strip()
    return text if len(text) <= 100 else text[:99] + "…"


def clean_environment() -> dict[str, str]:
    """This process's environment for a side's run: no PYTHONPATH (each side imports its own pbem
    only), and Python's output unbuffered (a run's lines are streamed as they are printed)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def install_rev(root: Path, commit: str, echo: Echo, keep: bool = False) -> Installed:
    """REV's venv (from the cache, or built now), checked as described in the module's docstring."""
    lock = root / _LOCK
    extras = _bench_extras()
    key = hashlib.sha256(lock.read_bytes() + repr((platform.python_version(), extras)).encode()).hexdigest()[:16]
    venv = CACHE_DIR / f"{commit[:12]}-{key}"
    python = venv / "bin" / "python"
    if (venv / _DONE).is_file():
        return Installed(python, (venv / _DONE).read_text().strip() + f" (cached in {venv})")
    work = Path(tempfile.mkdtemp(prefix="pbem-compare-rev-"))
    tree = work / "tree"
    echo(f"building REV's venv in {venv} (kept for reruns; the worktree in {tree})")
    _git(root, "worktree", "add", "--detach", str(tree), commit)
    try:
        note = _build(venv, tree, lock, extras, echo)
        (venv / _DONE).write_text(note + "\n")
        return Installed(python, note + f" (built in {venv})")
    finally:
        if keep:
            echo(f"REV's worktree kept in {tree}: `git worktree remove --force {tree}` when done")
        else:
            _git(root, "worktree", "remove", "--force", str(tree))
            _git(root, "worktree", "prune")
            shutil.rmtree(work, ignore_errors=True)


def _build(venv: Path, tree: Path, lock: Path, extras: Sequence[str], echo: Echo) -> str:
    _fresh_venv(venv, lock, extras)
    _pip(venv, "install", "--no-deps", "--no-build-isolation", str(tree))
    refused = _refusal(venv)
    if not refused:
        return f"libraries: this checkout's {_LOCK}, REV installed with --no-deps"
    echo(f"REV refuses this checkout's {_LOCK}:\n{refused}")
    own = tree / _LOCK
    _fresh_venv(venv, own if own.is_file() else lock, extras)
    if own.is_file():
        _pip(venv, "install", "--no-deps", "--no-build-isolation", str(tree))
        note = f"libraries: REV's own {_LOCK} (REV refused this checkout's)"
    else:
        before = _freeze(venv)
        _pip(venv, "install", "--no-build-isolation", str(tree))
        changed = sorted(p for p in set(_freeze(venv)) - set(before) if not p.startswith("pbem"))
        note = (f"libraries: this checkout's {_LOCK} but for what REV's dependencies refused "
                f"(REV has no {_LOCK}; pip changed: {', '.join(changed) or 'nothing'})")
    refused = _refusal(venv)
    if refused:
        raise click.ClickException(f"REV does not run even with its own libraries:\n{refused}")
    echo(note)
    return note


def _fresh_venv(venv: Path, requirements: Path, extras: Sequence[str]) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    _pip(venv, "install", "--require-hashes", "-r", str(requirements))
    if extras:
        _pip(venv, "install", *extras)


def _bench_extras() -> list[str]:
    """The ``bench`` extra's py-spy at this environment's version, where this environment has it
    (``pbem bench e2e --profile`` samples with it)."""
    try:
        return [f"py-spy=={importlib.metadata.version('py-spy')}"]
    except importlib.metadata.PackageNotFoundError:
        return []


def _refusal(venv: Path) -> str:
    """Why REV cannot run in this venv ('' when it can)."""
    python = str(venv / "bin" / "python")
    checks = ([python, "-m", "pip", "check"], [python, "-c", "import pbem.bench.e2e"],
              [python, "-c", "from pbem.cli import main; main()", "bench", "e2e", "--help"])
    with tempfile.TemporaryDirectory() as neutral:  # not a checkout: each import finds the venv's pbem
        for argv in checks:
            done = subprocess.run(argv, capture_output=True, text=True, cwd=neutral, env=clean_environment())
            if done.returncode != 0:
                return f"  {' '.join(argv[1:])}: exit {done.returncode}\n{(done.stdout + done.stderr)[-2000:]}"
    return ""


def _freeze(venv: Path) -> list[str]:
    return _run([str(venv / "bin" / "python"), "-m", "pip", "freeze"]).splitlines()


def _pip(venv: Path, *args: str) -> None:
    _run([str(venv / "bin" / "python"), "-m", "pip", "--quiet", *args])


def _git(root: Path, *args: str) -> str:
    return _run(["git", "-C", str(root), *args])


def _run(argv: Sequence[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, env=clean_environment())
    if done.returncode != 0:
        raise click.ClickException(f"{' '.join(argv)} failed (exit {done.returncode}):\n"
                                   f"{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout
