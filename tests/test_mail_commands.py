"""The mail commands' home: one module per family under ``pbem.services.commands``, found through
the registry of ``pbem.services.requests``, and a services layer that imports in one direction."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import typing
from pathlib import Path

import pbem.services.commands as commands
from pbem.mail.reading import commands as cmd
from pbem.services import inbound, requests

SERVICES = Path(inbound.__file__).parent
#: Answered to a seat as an unknown command: they belong to other addresses (``new@``, ``invite+…``).
NOT_SEAT_COMMANDS = {cmd.Accept, cmd.Decline, cmd.NewGame}
#: Services modules still importing project modules inside functions, and why: the command line
#: (to become the ``pbem.cli`` front) and the lazily built composer and relay of ``Services``.
LATE_IMPORTS_LEFT = {"cli.py", "app.py"}


def test_every_seat_command_has_a_registered_handler() -> None:
    readable = set(typing.get_args(cmd.Command))
    assert set(requests.SEAT_COMMANDS) == readable - NOT_SEAT_COMMANDS


def test_every_command_module_is_registered_by_the_package() -> None:
    found = {f"{commands.__name__}.{m.name}" for m in pkgutil.iter_modules(commands.__path__)}
    assert found == set(commands.COMMAND_MODULES)
    handlers = {handler.__module__ for handler, _ in requests.SEAT_COMMANDS.values()}
    assert handlers == found  # each module registers, and only they do


def _imports(path: Path) -> list[tuple[str, list[str], bool]]:
    """(module, names, inside a function) of each import of a services module, resolved."""
    package = ["pbem", "services"] + list(path.relative_to(SERVICES).parent.parts)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.append((module, [a.name for a in node.names], id(node) in inside))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], id(node) in inside) for a in node.names]
    return out


def _module_name(path: Path) -> str:
    parts = ["pbem", "services", *path.relative_to(SERVICES).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_services_import_in_one_direction() -> None:
    paths = sorted(SERVICES.rglob("*.py"))
    names = {_module_name(p) for p in paths}
    graph: dict[str, set[str]] = {}
    problems = []
    for path in paths:
        me = _module_name(path)
        for module, imported, late in _imports(path):
            targets = {module} | {f"{module}.{n}" for n in imported if f"{module}.{n}" in names}
            graph.setdefault(me, set()).update(t for t in targets if t in names and t != me)
            if module.startswith("pbem"):
                problems += [f"{me} imports the private {module}.{n}" for n in imported
                             if n.startswith("_") and n != "__future__"]
                if late and path.name not in LATE_IMPORTS_LEFT:
                    problems.append(f"{me} imports {module} inside a function")
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                problems.append("cycle: " + " -> ".join(trail[trail.index(nxt):] + [node, nxt]))
            elif nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for name in sorted(names):
        if name not in state:
            visit(name, [])
    assert problems == []


def test_only_the_dispatcher_imports_the_commands() -> None:
    for path in sorted(SERVICES.glob("*.py")):
        uses = {m for m, _, _ in _imports(path) if m.startswith(commands.__name__)}
        assert not uses or path.name == "inbound.py", path.name


def test_command_modules_import_cleanly_on_their_own() -> None:
    for name in commands.COMMAND_MODULES:
        importlib.import_module(name)
