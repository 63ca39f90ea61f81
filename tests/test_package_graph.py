"""The import graph between the project's packages points one way (docs/architecture.md, Layers).

Every import in every module counts, lazy ones inside functions included. The harness still
imports ``results`` in one module; it is listed in ``HARNESS_INTO_RESULTS`` with what
they import, and the list may only shrink: an entry that no longer holds fails the test too,
so whoever removes such an import removes its entry.
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

# Harness modules that still import results (to go: the CLI will wire the runner to a results sink).
HARNESS_INTO_RESULTS = {
    "arena/runner.py": {"results.ratings", "results.store"},
}


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


def within(name: str, prefixes: tuple[str, ...] | set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_pure_layers_import_only_downwards() -> None:
    wrong = [f"{path.relative_to(REPO)} imports {name}"
             for folder in ALLOWED for path in modules(folder) if (layer := layer_of(path))
             for name in imports(path) if not within(name, ALLOWED[layer])]
    assert wrong == []


def test_the_harness_imports_results_only_where_listed() -> None:
    found: dict[str, set[str]] = {}
    for path in modules("arena"):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("arena/engine/") or any(rel == e or rel.startswith(e + "/") for e in EDGES):
            continue
        into = {name for name in imports(path) if within(name, ("results",))}
        if into:
            found[rel] = into
    assert found == HARNESS_INTO_RESULTS, (
        "the harness's imports of results changed: drop entries that no longer hold; a new one is "
        "a new package cycle (pass the harness what it needs from the CLI instead)")


def test_the_walk_sees_lazy_and_relative_imports() -> None:
    # The checks above are only as good as imports(): it finds each kind of import.
    assert "arena.engine.cards" in set(imports(REPO / "results" / "report" / "model.py"))
    assert "results.store" in set(imports(REPO / "results" / "verify.py"))  # "from .store import ..."
    assert "results.store" in set(imports(REPO / "arena" / "commands" / "deals.py"))  # inside a function
