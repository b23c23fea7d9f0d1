"""The built-in plugin is a plugin like any other: it imports only tsuka_core's public names, and no deprecated one.

What it must take from inside tsuka_core is listed here by name, each with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tsuka_core
from tsuka_core.deprecated import OLD_NAMES

ROOT = Path(__file__).resolve().parents[1] / "tsuka_checks_builtin"

INTERNAL_ALLOWED = {
    ("tsuka_core.backends.embedded", "EmbeddedBackend"): "the built-in backends live in tsuka_core",
    ("tsuka_core.backends.openai", "OpenAIBackend"): "the built-in backends live in tsuka_core",
    ("tsuka_core.judge.textcalls", "text_tool_call"): "a call written in text, as the engine's fault kinds read it",
    ("tsuka_core.suite.identity", "DEFAULT_SUITE"): "the default suite's registered name, which the store uses",
    ("tsuka_core.suite.loading", "default_suite_path"): "the default suite: in a source tree, benchmarks/",
    ("tsuka_core.suite.loading", "suite_files"): "a suite folder's test files, as loading finds them",
}
"""(module, name) -> why the built-in plugin may import it although it is not public."""


def imports() -> list[tuple[str, str, str]]:
    """Every ``from tsuka_core... import name`` in the built-in plugin: (file, module, name)."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tsuka_core":
                found += [(path.name, node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("tsuka_core.") for a in node.names), path
    return found


def test_the_built_in_plugin_imports_only_public_names_and_its_allow_list() -> None:
    found = imports()
    assert found  # the walk sees the plugin's imports
    wrong = [
        f"{file}: {module}.{name}"
        for file, module, name in found
        if (module == "tsuka_core" and name not in tsuka_core.__all__)
        or (module != "tsuka_core" and (module, name) not in INTERNAL_ALLOWED)
    ]
    assert wrong == []


def test_the_built_in_plugin_uses_no_deprecated_name() -> None:
    assert [name for _file, module, name in imports() if module == "tsuka_core" and name in OLD_NAMES] == []


def test_every_allowed_internal_name_is_still_used() -> None:
    used = {(module, name) for _file, module, name in imports()}
    assert set(INTERNAL_ALLOWED) <= used
