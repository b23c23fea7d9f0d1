"""The package layout: small modules, dependencies pointing one way, no import cycles."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tsuka_core", "tsuka_checks_builtin")

# The layers of tsuka_core, lowest first: a module may import from its own layer and the ones before it.
LAYERS = (
    ("terms", "errors", "textsafe", "urls", "secret_search", "masking", "timestamps", "deprecated"),
    ("record",),
    ("judge",),
    ("backends",),
    ("plugins",),
    ("suite",),
    ("engine",),
    ("storage",),
    ("compare",),
    ("gating",),
    ("report",),
    ("run",),
    ("testing",),
    ("cli", "__main__"),
)
MAX_LINES = 400
MAX_TOP_LEVEL_MODULES = 12


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """Every tsuka module ``path`` imports, at any depth (functions and TYPE_CHECKING blocks included)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                target = full if full in modules else node.module
                if target in modules:
                    yield target
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    # The facade imports nothing at run time (its names are loaded lazily from the stub).
    return {m: {t for t in _imports(p, modules) if t not in (m, "tsuka_core")} for m, p in modules.items()}


def _layer(module: str) -> int:
    parts = module.split(".")
    for index, names in enumerate(LAYERS):
        if len(parts) > 1 and parts[0] == "tsuka_core" and parts[1] in names:
            return index
    raise AssertionError(f"{module} belongs to no layer of tests/test_layout.py")


def test_no_import_cycle() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(node) :], node]))
        if node in done:
            return
        for target in sorted(graph[node]):
            visit(target, [*path, node])
        done.add(node)

    for module in sorted(graph):
        visit(module, [])


def test_dependencies_point_one_way() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if module.startswith("tsuka_core.")
        for target in targets
        if target.startswith("tsuka_core.") and _layer(target) > _layer(module)
    ]
    assert not wrong, "\n".join(wrong)


def test_modules_are_small() -> None:
    long = {m: n for m, p in _modules().items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_core_has_few_top_level_modules() -> None:
    top = sorted(p.name for p in (ROOT / "tsuka_core").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def _documented_layers() -> list[tuple[str, ...]]:
    """The layer box of docs/architecture.md, lowest first: each box's package (``engine/``) or leaf modules."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    box = text.split("## The layers", 1)[1].split("```", 2)[1]
    cells: list[str] = []
    for line in map(str.strip, box.splitlines()):
        if line.startswith(("┌", "├")):
            cells.append("")  # a border opens the next box
        elif line.startswith("│") and cells:
            cells[-1] += " " + line.strip("│")
    rows = []
    for cell in cells:
        words = cell.split()
        if words and words[0].endswith("/"):
            rows.append((words[0].rstrip("/"),))
        else:
            rows.append(tuple(w.removesuffix(".py") for w in words if w.endswith(".py")))
    return rows[::-1]


def test_the_documented_layers_are_the_ones_held() -> None:
    """docs/architecture.md's box lists the layers in the order this file holds, and every leaf module in its row."""
    documented = _documented_layers()
    held = [tuple(n for n in names if n != "__main__") for names in LAYERS]
    assert documented[1:] == held[1:]
    assert set(documented[0]) == set(held[0]), "the leaves row of the box names every leaf module"


def test_storage_imports_only_the_engines_result_types() -> None:
    """storage/ keeps and reads back: the records it writes are built above it (run/), never by engine logic here."""
    wrong = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if module.startswith("tsuka_core.storage")
        for target in targets
        if target.startswith("tsuka_core.engine") and target != "tsuka_core.engine.results"
    ]
    assert not wrong, "\n".join(wrong)
