"""A plugin that reaches inside tsuka_core: a moved module is named with its new place, an internal one warned of."""

from __future__ import annotations

import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from tsuka_core.plugins.moved import MOVED, import_hint, warn_internal_imports


def test_a_module_of_0_1_that_moved_is_named_with_where_it_lives_now() -> None:
    with pytest.raises(ModuleNotFoundError) as caught:
        import tsuka_core.checks  # type: ignore[import-not-found]  # noqa: F401
    assert import_hint(caught.value) == (
        "; tsuka_core.checks moved to tsuka_core.judge.checks in 0.2 (import public names from tsuka_core: docs/api.md)"
    )
    for old, new in MOVED.items():
        assert old not in sys.modules, old
        if new.startswith("tsuka_core.") and " " not in new:
            __import__(new)  # each new place exists


def test_a_public_name_asked_of_the_wrong_module_says_to_import_it_from_tsuka_core() -> None:
    with pytest.raises(ImportError) as caught:
        from tsuka_core.backends.openai import request_json_nope  # type: ignore[attr-defined]  # noqa: F401
    assert import_hint(caught.value) == ""
    with pytest.raises(ImportError) as caught:
        from tsuka_core.engine.runner import CheckType  # type: ignore[attr-defined]  # noqa: F401
    assert import_hint(caught.value) == "; CheckType is public: import it from tsuka_core"


def test_a_plugin_importing_an_internal_module_is_warned_with_the_public_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "tsuka_anthropic_old"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "plugin.py").write_text(
        textwrap.dedent(
            """
            from tsuka_core import hookimpl
            from tsuka_core.backends.http import request_json
            from tsuka_core.engine.metrics import tokens_per_second
            from tsuka_core.testing import run_check
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from tsuka_anthropic_old import plugin  # type: ignore[import-not-found]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_internal_imports(plugin, "plugin 'anthropic' of distribution 'tsuka-anthropic'")
    said = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert said == [
        "plugin 'anthropic' of distribution 'tsuka-anthropic' imports request_json from tsuka_core.backends.http "
        "(plugin.py), an internal module that may move in any release; import it from tsuka_core",
        "plugin 'anthropic' of distribution 'tsuka-anthropic' imports tokens_per_second from tsuka_core.engine.metrics "
        "(plugin.py), an internal module that may move in any release; it is not public (docs/api.md lists what is)",
    ]


def test_the_example_plugins_import_nothing_internal() -> None:
    from tsuka_core.plugins.moved import internal_imports

    root = Path(__file__).resolve().parents[1] / "plugins_example"
    for package in ("tsuka_checks_extra", "tsuka_backend_ollama"):
        folder = next(root.glob(f"*/{package}"))
        monkeypatch_path = str(folder.parent)
        sys.path.insert(0, monkeypatch_path)
        try:
            __import__(f"{package}.plugin")
            assert internal_imports(package) == [], package
        finally:
            sys.path.remove(monkeypatch_path)
