"""Where a plugin's import of tsuka_core's insides went: moved modules, public names, internal imports warned of.

A plugin should import what ``tsuka_core`` exports (docs/api.md). One that
imports a module below it depends on tsuka's own layout, which moves between
releases: :func:`import_hint` says where a module of 0.1 lives now when the
import fails, and :func:`warn_internal_imports` warns (DeprecationWarning)
when it still works, naming the public import to use instead.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from pathlib import Path

__all__ = ["MOVED", "import_hint", "internal_imports", "warn_internal_imports"]

MOVED: dict[str, str] = {
    "tsuka_core.answer": "tsuka_core.judge.answer",
    "tsuka_core.cache": "tsuka_core.storage.cache",
    "tsuka_core.checks": "tsuka_core.judge.checks",
    "tsuka_core.cli.report": "tsuka_core.cli.run_summary",
    "tsuka_core.history": "tsuka_core.storage.history",
    "tsuka_core.history_query": "tsuka_core.storage.history_query",
    "tsuka_core.hookspecs": "tsuka_core.plugins.hookspecs",
    "tsuka_core.htmlreport": "tsuka_core.report.html",
    "tsuka_core.htmlreport_css": "tsuka_core.report (its templates)",
    "tsuka_core.htmlreport_svg": "tsuka_core.report.svg",
    "tsuka_core.jsontools": "tsuka_core.judge.jsontools",
    "tsuka_core.junit": "tsuka_core.report.junit",
    "tsuka_core.metrics": "tsuka_core.engine.metrics",
    "tsuka_core.model": "tsuka_core.suite.model",
    "tsuka_core.outcome": "tsuka_core.judge.outcome",
    "tsuka_core.patterns": "tsuka_core.judge.patterns",
    "tsuka_core.registry": "tsuka_core.plugins.registry",
    "tsuka_core.rescore": "tsuka_core.run.rescore",
    "tsuka_core.results": "tsuka_core.engine.results",
    "tsuka_core.runner": "tsuka_core.engine.runner",
    "tsuka_core.scoring": "tsuka_core.judge.scoring",
    "tsuka_core.session": "tsuka_core.run.session",
    "tsuka_core.store": "tsuka_core.storage.store",
    "tsuka_core.sweep": "tsuka_core.engine.sweep",
    "tsuka_core.testfile": "tsuka_core.suite.testfile",
    "tsuka_core.backends.chatml": "tsuka_core.backends.embedded_model (internal)",
    "tsuka_core.docgen": "nowhere: the docs generators are tools/ scripts of the source tree",
    "tsuka_core.schema": "tsuka_core.suite.schema ('tsuka schema' prints it)",
}
"""Each module of tsuka_core 0.1 that is gone, and where its contents live now."""

_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")


def _public() -> frozenset[str]:
    import tsuka_core

    return frozenset(getattr(tsuka_core, "__all__", ()))


def import_hint(exc: BaseException) -> str:
    """What to add to a plugin's failed import: ``; tsuka_core.checks moved to ...``; empty when nothing is known."""
    if isinstance(exc, ModuleNotFoundError) and exc.name in MOVED:
        return f"; {exc.name} moved to {MOVED[exc.name]} in 0.2 (import public names from tsuka_core: docs/api.md)"
    found = _CANNOT_IMPORT.search(str(exc)) if isinstance(exc, ImportError) else None
    if found is not None and found[2].startswith("tsuka_core") and found[1] in _public():
        return f"; {found[1]} is public: import it from tsuka_core"
    return ""


def internal_imports(package: str) -> list[tuple[str, str, str]]:
    """Every ``from tsuka_core.X import name`` in the loaded modules of ``package``: (module file, X, name).

    ``tsuka_core.testing`` is public (the test kit) and is not listed.
    """
    found: list[tuple[str, str, str]] = []
    for name, module in list(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if (name != package and not name.startswith(package + ".")) or not source or not source.endswith(".py"):
            continue
        try:
            tree = ast.parse(Path(source).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and _internal(node.module):
                found += [(Path(source).name, str(node.module), alias.name) for alias in node.names]
    return found


def _internal(module: str | None) -> bool:
    return bool(module) and str(module).startswith("tsuka_core.") and not str(module).startswith("tsuka_core.testing")


def warn_internal_imports(plugin: object, label: str) -> None:
    """A DeprecationWarning for each internal import of the package ``plugin`` belongs to (``label`` names it)."""
    package = str(getattr(plugin, "__name__", "")).split(".", maxsplit=1)[0]
    if not package or package in ("tsuka_core", "tsuka_checks_builtin"):
        return
    public = _public()
    for file, module, name in internal_imports(package):
        instead = "import it from tsuka_core" if name in public else "it is not public (docs/api.md lists what is)"
        warnings.warn(
            f"{label} imports {name} from {module} ({file}), an internal module that may move in any release; "
            f"{instead}",
            DeprecationWarning,
            stacklevel=2,
        )
