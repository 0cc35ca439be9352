"""The lock files (requirements/serve.txt, requirements/test.txt) that `./dev`, the Dockerfile and CI
install from must still match pyproject.toml: every dependency pinned, at a version its specifier
allows, each pin with its hashes. README ("The two commands") says how to refresh them: `./dev lock`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
BUILD = [line for line in (ROOT / "requirements/build.in").read_text(encoding="utf-8").splitlines()
         if line.strip() and not line.startswith("#")]


def wanted(extras: tuple[str, ...]) -> list[Requirement]:
    lines = list(PYPROJECT["project"]["dependencies"]) + BUILD
    for extra in extras:
        lines += PYPROJECT["project"]["optional-dependencies"][extra]
    return [Requirement(line.split("#")[0].strip()) for line in lines]


def pins(path: Path) -> dict[str, tuple[str, int]]:
    """name -> (version, how many hashes) of a pip-compile lock file."""
    found: dict[str, tuple[str, int]] = {}
    text = path.read_text(encoding="utf-8")
    for block in re.split(r"\n(?=\S)", text):
        first = block.splitlines()[0]
        if first.startswith("#") or not first.strip():
            continue
        match = re.match(r"([A-Za-z0-9_.\-]+)==([^ ;\\]+)", first)
        assert match, f"{path.name}: not a pin: {first!r}"
        found[canonicalize_name(match[1])] = (match[2], block.count("--hash=sha256:"))
    return found


@pytest.mark.parametrize(("lock", "extras"), [("serve.txt", ()), ("test.txt", ("test",))])
def test_every_dependency_is_pinned_within_its_specifier_with_hashes(lock, extras):
    locked = pins(ROOT / "requirements" / lock)
    assert locked, f"{lock} pins nothing"
    for req in wanted(extras):
        name = canonicalize_name(req.name)
        assert name in locked, f"{req} is not in requirements/{lock}: run ./dev lock"
        version, _ = locked[name]
        assert req.specifier.contains(version, prereleases=True), (
            f"requirements/{lock} pins {name}=={version}, outside pyproject's {req}: run ./dev lock")
    unhashed = [name for name, (_, hashes) in locked.items() if not hashes]
    assert not unhashed, f"pins without hashes in {lock}: {unhashed}"


def test_the_test_lock_pins_the_shared_packages_as_the_serve_lock_does():
    serve, test = pins(ROOT / "requirements/serve.txt"), pins(ROOT / "requirements/test.txt")
    differ = {name: (serve[name][0], test[name][0]) for name in serve if name in test and serve[name][0] != test[name][0]}
    assert not differ, f"the two lock files disagree (run ./dev lock): {differ}"
