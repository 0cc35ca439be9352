"""The import graph of ``pbem/`` and ``workers/`` keeps to the layer table of docs/architecture.md.

The graph is built with ``ast`` from the sources, imports inside functions and under
``TYPE_CHECKING`` included, so an edge cannot hide in a late import. It fails on an edge outside
the table, on a cycle, on an import of another module's private name, and on a function-level
import of a project module (late imports are left to third-party packages: optional ones, and
psycopg, which ``pbem.db.arrays`` imports in one function, only in a process that works on PostgreSQL).

The one import made at run time on purpose is the command line's: a lazy group (``pbem.cli.lazy``)
imports a command's module when the command runs. Its table names each command as
``Lazy("module:attribute", …)``; each entry is read here as an import edge of the module that holds
the table, so the layer rules hold for lazily loaded commands too (docs/architecture.md).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from pbem.cli import main
from pbem.cli.lazy import LazyGroup

ROOT = Path(__file__).resolve().parents[1]

#: (module prefix, layer), the longest prefix first where they nest.
LAYERS: tuple[tuple[str, str], ...] = (
    ("pbem.engine", "engine"),
    ("pbem.bots", "bots"),
    ("pbem.mail", "mail"),
    ("pbem.db", "db"),
    ("pbem.services", "services"),
    ("pbem.smtp", "front"),
    ("pbem.web", "front"),
    ("pbem.cli", "front"),
    ("pbem.serve", "front"),
    ("workers", "front"),
    ("pbem.config", "base"),
    ("pbem.resources", "base"),
    ("pbem.bench", "tools"),
    ("pbem.sim", "tools"),
    ("pbem.devservers", "tools"),
    ("pbem", "base"),  # the package itself (its __init__)
)
#: What each layer may import besides itself and the base (docs/architecture.md).
ALLOWED: dict[str, frozenset[str]] = {
    "engine": frozenset(),
    "bots": frozenset({"engine"}),
    "mail": frozenset({"engine"}),
    "db": frozenset({"engine"}),
    "services": frozenset({"engine", "bots", "mail", "db"}),
    "front": frozenset({"services", "mail", "db"}),
    "base": frozenset(),
    "tools": frozenset({"engine", "bots", "mail", "db", "services", "front", "tools"}),
}
#: Fronts that start the others, and the one small interface through which every front queues.
STARTERS = ("pbem.serve", "pbem.cli")
QUEUEING = ("workers.queueing", "workers.app", "workers")
#: The command line is the operator's way into the tools (``pbem bench``, ``pbem simulate``).
TOOL_USERS = ("pbem.cli",)


def layer_of(module: str) -> str:
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def project_modules() -> dict[str, Path]:
    found = {}
    for path in sorted([*ROOT.glob("pbem/**/*.py"), *ROOT.glob("workers/**/*.py")]):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = project_modules()


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    late: bool  # inside a function
    names: tuple[str, ...]


def _project(name: str) -> bool:
    return name == "pbem" or name.startswith(("pbem.", "workers"))


def edges_of(module: str, path: Path) -> Iterator[Edge]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    yield from edges_in(module, path.read_text(encoding="utf-8"), package)


def edges_in(module: str, source: str, package: str) -> Iterator[Edge]:
    tree = ast.parse(source)

    def visit(node: ast.AST, late: bool) -> Iterator[Edge]:
        for child in ast.iter_child_nodes(node):
            inner = late or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if _project(alias.name):
                        yield Edge(module, _known(alias.name), child.lineno, late, ())
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*anchor, *([child.module] if child.module else [])])
                if not _project(base):
                    continue
                names = tuple(alias.name for alias in child.names)
                submodules = [f"{base}.{name}" for name in names if f"{base}.{name}" in MODULES]
                for target in submodules or [base]:
                    yield Edge(module, _known(target), child.lineno, late, names)
            elif _is_lazy_entry(child):
                target, _, attribute = child.args[0].value.partition(":")
                yield Edge(module, _known(target), child.lineno, False, (attribute,))
            yield from visit(child, inner)

    yield from visit(tree, False)


def _is_lazy_entry(node: ast.AST) -> bool:
    """``Lazy("module:attribute", help)``: an entry of a lazy group's table (``pbem.cli.lazy``)."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Lazy"
            and bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str))


def _known(target: str) -> str:
    """The project module an import names (``pbem.engine.Rules`` -> ``pbem.engine``)."""
    while target not in MODULES and "." in target:
        target = target.rpartition(".")[0]
    return target


EDGES = [edge for module, path in MODULES.items() for edge in edges_of(module, path)]


def allowed(edge: Edge) -> bool:
    source, target = layer_of(edge.source), layer_of(edge.target)
    if target == "base" or source == target and source != "front":
        return True
    if source == "front" and target == "front":
        same_front = edge.source.split(".")[:2] == edge.target.split(".")[:2]
        return same_front or _within(edge.source, STARTERS) or _within(edge.target, QUEUEING)
    if target == "tools":
        return source == "tools" or _within(edge.source, TOOL_USERS)
    return target in ALLOWED[source]


def test_every_project_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_keep_to_the_layer_table() -> None:
    outside = sorted({f"{e.source} -> {e.target} (line {e.line})" for e in EDGES if not allowed(e)})
    assert outside == []


def test_no_function_level_import_of_a_project_module() -> None:
    late = sorted(f"{e.source}:{e.line} imports {e.target}" for e in EDGES if e.late)
    assert late == []


def test_no_import_of_another_modules_private_name() -> None:
    private = sorted(f"{e.source}:{e.line} imports {name} from {e.target}" for e in EDGES
                     for name in e.names if name.startswith("_") and not name.startswith("__")
                     and e.target != e.source)
    assert private == []


def test_every_lazy_command_is_an_edge() -> None:
    """Each entry of every lazy table reachable from ``pbem`` names a project module and is among
    the edges read from the sources (so no table escapes the checks above)."""
    read = {(e.source, e.target, e.names) for e in EDGES}
    found = []

    def walk(group: LazyGroup) -> None:
        assert group.callback is not None
        for name, entry in group.lazy.items():
            assert entry.module in MODULES, f"{entry.target} names no module of pbem"
            found.append((group.callback.__module__, entry.module, (entry.attribute,)))
            command = group.get_command(click.Context(group), name)
            if isinstance(command, LazyGroup):
                walk(command)

    walk(main)
    assert len(found) > 20
    assert [entry for entry in found if entry not in read] == []


def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for edge in EDGES:
        if edge.target != edge.source and edge.target in graph:
            graph[edge.source].add(edge.target)
    cycles = _cycles(graph)
    assert cycles == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


@pytest.mark.parametrize("edge, verdict", [
    (Edge("pbem.engine.state", "pbem.db.models", 1, False, ()), False),
    (Edge("pbem.mail.render", "pbem.services.app", 1, False, ()), False),
    (Edge("pbem.web.game", "pbem.engine", 1, False, ()), False),
    (Edge("pbem.smtp.handler", "pbem.web.app", 1, False, ()), False),
    (Edge("pbem.services.games", "pbem.bench.e2e", 1, False, ()), False),
    (Edge("pbem.web.game", "pbem.services.game_views", 1, False, ()), True),
    (Edge("pbem.web.app", "workers.queueing", 1, False, ()), True),
    (Edge("pbem.serve", "pbem.smtp.server", 1, False, ()), True),
])
def test_the_table_itself(edge: Edge, verdict: bool) -> None:
    """The checker refuses what the table forbids (so the tests above can fail)."""
    assert allowed(edge) is verdict


@pytest.mark.parametrize("entry, verdict", [
    ('"pbem.engine.state:GameState"', False),
    ('"pbem.services.operator_games:list_games"', True),
    ('"pbem.bench.cli_start:run"', True),
])
def test_a_lazy_entry_is_an_edge(entry: str, verdict: bool) -> None:
    """A lazy table's entry is read as an import of its module, and judged like one."""
    source = f'COMMANDS = {{"x": Lazy({entry}, "Help.")}}\n'
    (edge,) = edges_in("pbem.cli.table", source, "pbem.cli")
    target, _, attribute = entry.strip('"').partition(":")
    assert edge == Edge("pbem.cli.table", target, 1, False, (attribute,))
    assert allowed(edge) is verdict


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
