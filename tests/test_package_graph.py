"""The import graph between the project's packages points one way (docs/architecture.md, Layers).

Every import in every module counts, lazy ones inside functions included: the engine imports
nothing of the project; ``protocol``, ``results`` and ``botkit`` only what is below them; the
harness (``arena`` outside the engine) anything but ``results``; only the edges, the CLI and
the server, import everything.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
PROJECT = ("arena", "protocol", "results", "botkit")

# Where each layer may reach inside the project (a prefix allows its submodules).
ALLOWED = {
    "arena/engine": ("arena.engine",),
    "protocol": ("protocol", "arena.engine"),
    "results": ("results", "arena.engine"),
    "botkit": ("botkit", "protocol", "arena.engine"),
}
# The edges of the CLI and the server may import everything; the harness anything but results.
EDGES = ("arena/cli.py", "arena/commands", "arena/server")


def imports(path: Path) -> Iterator[str]:
    """The project modules ``path`` imports (relative imports resolved)."""
    module = ".".join(path.relative_to(REPO).with_suffix("").parts)
    package = module.removesuffix(".__init__") if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names = [base]
        else:
            continue
        yield from (name for name in names if name.split(".")[0] in PROJECT)


def modules(folder: str) -> list[Path]:
    return sorted(p for p in (REPO / folder).rglob("*.py") if "__pycache__" not in p.parts)


def layer_of(path: Path) -> str | None:
    rel = path.relative_to(REPO).as_posix()
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if rel.startswith(layer + "/"):
            return layer
    return None


def is_edge(path: Path) -> bool:
    rel = path.relative_to(REPO).as_posix()
    return any(rel == e or rel.startswith(e + "/") for e in EDGES)


def within(name: str, prefixes: tuple[str, ...] | set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_pure_layers_import_only_downwards() -> None:
    wrong = [f"{path.relative_to(REPO)} imports {name}"
             for folder in ALLOWED for path in modules(folder) if (layer := layer_of(path))
             for name in imports(path) if not within(name, ALLOWED[layer])]
    assert wrong == []


def test_the_harness_never_imports_results() -> None:
    wrong = [f"{path.relative_to(REPO)} imports {name}" for path in modules("arena")
             if not is_edge(path) and layer_of(path) is None
             for name in imports(path) if within(name, ("results",))]
    assert wrong == [], "a package cycle: the CLI passes the harness what it needs of results (arena/sink.py)"



def test_the_walk_sees_lazy_and_relative_imports() -> None:
    # The checks above are only as good as imports(): it finds each kind of import.
    assert "arena.engine.cards" in set(imports(REPO / "results" / "report" / "model.py"))
    assert "results.store" in set(imports(REPO / "results" / "verify.py"))  # "from .store import ..."
    assert "results.store" in set(imports(REPO / "arena" / "commands" / "deals.py"))  # inside a function
