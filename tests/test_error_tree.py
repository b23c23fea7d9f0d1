"""Every exception tsuka defines is in errors.py's tree: a caller catching TsukaError catches what tsuka raises."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import tsuka_checks_builtin
import tsuka_core
from tsuka_core.errors import TsukaError

OUTSIDE = {
    "tsuka_core.judge.jsontools._OverBudget": (
        "a BaseException on purpose: json-repair's `except Exception` cannot eat it"
    ),
}
"""Exception classes left outside the tree, each with its reason."""


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in (tsuka_core, tsuka_checks_builtin):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue  # importing it runs the command line
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                    found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_is_a_tsuka_error() -> None:
    classes = _exception_classes()
    assert len(classes) >= 15, sorted(classes)  # the walk found the tree, not nothing
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, TsukaError))
    assert outside == sorted(OUTSIDE)


def test_an_unreadable_file_is_both_a_tsuka_error_and_an_os_error() -> None:
    from tsuka_core.storage.files import UnreadableFileError

    error = UnreadableFileError(21, "a folder")
    assert isinstance(error, OSError)
    assert isinstance(error, TsukaError)
    assert str(error) == "a folder"


def test_an_api_key_is_read_from_the_environment_in_one_module() -> None:
    """backends/apikey.py reads every key (the default variable, --api-key-env, a project file's api_key_env)."""
    import re
    from pathlib import Path

    reading = re.compile(r"^.*\bkey\b.*environ(?:\.get\(|\[)", re.IGNORECASE | re.MULTILINE)
    root = Path(tsuka_core.__file__).parent
    readers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if reading.search(p.read_text("utf-8")))
    assert readers == ["backends/apikey.py"]
