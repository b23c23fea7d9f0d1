"""Read a folder of test files into a validated Suite, and compute its hash."""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from tsuka_core.errors import SuiteError
from tsuka_core.judge.jsontools import loads_strict
from tsuka_core.suite.model import Suite, Test
from tsuka_core.terms import CATEGORIES

if TYPE_CHECKING:
    from tsuka_core.plugins.registry import Registry

__all__ = [
    "DEFAULT_SUITE",
    "MAX_TEST_FILE_BYTES",
    "default_suite_path",
    "load_suite",
    "registered_folders",
    "resolve_suite",
    "suite_files",
    "suite_hash",
    "suite_label",
]

DEFAULT_SUITE = "default"
"""What a profile's ``suite`` says when it was measured with the suite installed with tsuka."""
MAX_TEST_FILE_BYTES = 4 * 1024 * 1024
"""A test file larger than this is refused (a test is a prompt and some checks)."""


def default_suite_path() -> Path:
    """The default suite: installed with the other built-in suites (``tsuka_checks_builtin/suites/default``),
    or the project's ``benchmarks/`` folder in a source tree.

    Found without importing the built-in plugin, so that hashing a suite loads no plugin.
    """
    spec = importlib.util.find_spec("tsuka_checks_builtin")
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        installed = Path(location) / "suites" / "default"
        if installed.is_dir():
            return installed
    return Path(__file__).resolve().parents[2] / "benchmarks"


def resolve_suite(value: str | Path, registry: Registry | None = None) -> Path:
    """The folder ``value`` names: an existing folder is itself, else it is a registered suite's name.

    ``resolve_suite("extended")`` is the folder of the built-in ``extended`` suite, wherever it is installed.
    Raises :class:`SuiteError` (one line, with the closest registered names) when it is neither.
    """
    from tsuka_core.plugins.registry import load_registry

    if Path(value).is_dir():
        return Path(value)
    registry = registry or load_registry()
    suites = registry.suites
    name = str(value)
    if name in suites:
        return suites[name].path
    close = difflib.get_close_matches(name, list(suites), n=3)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    known = ", ".join(sorted(suites)) or "none"
    why = f"no such folder and no such registered suite (registered: {known}){hint}{registry.missing_hint()}"
    raise SuiteError([f"suite {name!r}: {why}"])


def suite_label(path: Path, registry: Registry | None = None) -> str:
    """What a profile stores as its ``suite``: the name of a registered suite (``default`` for the installed
    one, ``extended``...) whose folder it is, else the folder's full path."""
    resolved = Path(path).resolve()
    if resolved == default_suite_path().resolve():
        return DEFAULT_SUITE
    return next((name for name, folder in registered_folders(registry).items() if folder == resolved), str(resolved))


def registered_folders(registry: Registry | None) -> dict[str, Path]:
    """Each registered suite's folder (resolved), by name."""
    from tsuka_core.plugins.registry import load_registry

    return {name: suite.path.resolve() for name, suite in (registry or load_registry()).suites.items()}


def suite_files(folder: Path) -> list[Path]:
    """Every ``*.json`` file directly inside ``folder``, in file-name (code-point) order."""
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.name.endswith(".json") and p.is_file()), key=lambda p: p.name)


def suite_hash(folder: Path) -> str:
    """The suite hash: MD5 over each file's name then its bytes, in order; 8 hex digits, or ``none``."""
    files = suite_files(Path(folder))
    if not files:
        return "none"
    digest = hashlib.md5(usedforsecurity=False)
    for path in files:
        digest.update(path.name.encode("utf-8"))
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()[:8]


def _read(path: Path) -> tuple[bytes, str | None]:
    """The file's bytes, or the reason it cannot be a test file."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_TEST_FILE_BYTES + 1)
            size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        return b"", f"{path.name}: cannot be read: {exc.strerror or exc}"
    if len(raw) > MAX_TEST_FILE_BYTES:
        return b"", f"{path.name}: {size} bytes, over the {MAX_TEST_FILE_BYTES} byte limit for a test file"
    return raw, None


def _parse(name: str, raw: bytes) -> tuple[object, str | None]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, f"{name}: not UTF-8 (byte {exc.start})"
    try:
        return loads_strict(text), None
    except json.JSONDecodeError as exc:
        return None, f"{name}: line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"
    except ValueError as exc:
        return None, f"{name}: not valid JSON: {exc}"


def load_suite(folder: Path | str | None = None, registry: Registry | None = None) -> Suite:
    """Load and validate every test file of ``folder``: a suite folder or a registered suite's name
    (:func:`resolve_suite`; default: the installed default suite).

    Raises :class:`SuiteError` listing every problem of every file when any is
    invalid; a suite with a category lacking tests loads with a warning. The
    hash is made from the very bytes parsed (each file is read once), so it
    always describes the tests loaded, even when a file changes meanwhile.
    """
    from tsuka_core.plugins.registry import load_registry  # the check types: only loading needs them, not hashing
    from tsuka_core.suite.testfile import parse_test

    registry = registry or load_registry()
    path = default_suite_path() if folder is None else resolve_suite(folder, registry)
    files = suite_files(path)
    if not files:
        raise SuiteError([f"{path}: holds no *.json test files"])
    problems: list[str] = []
    tests: list[Test] = []
    names: dict[str, str] = {}
    digest = hashlib.md5(usedforsecurity=False)
    for file in files:
        raw, problem = _read(file)
        digest.update(file.name.encode("utf-8") + raw)
        data, problem = (None, problem) if problem else _parse(file.name, raw)
        if problem:
            problems.append(problem)
            continue
        test, found = parse_test(file.name, data, registry)
        problems.extend(found)
        if test is None:
            continue
        if test.name in names:
            problems.append(f"{file.name}: name: {test.name!r} is already the name of {names[test.name]}")
        names[test.name] = file.name
        tests.append(test)
    if problems:
        raise SuiteError(problems)
    warnings = tuple(
        f"{path}: no test in category {c!r}: it scores 0, so the tier cannot rise above small"
        for c in CATEGORIES
        if not any(t.category == c for t in tests)
    ) + tuple(hint for test in tests if (hint := _advice(test)) is not None)
    name = suite_label(path, registry)
    return Suite(path, tuple(tests), digest.hexdigest()[:8], warnings, name, registry.scorecard_of(name))


def _advice(test: Test) -> str | None:
    """The first hint a check of ``test`` gives its author (``CheckType.advice``), standing at the check's place."""
    checks = [c for step in test.steps for c in step.checks]
    for index, check in enumerate(checks):
        others = [c.type for c in checks[:index] + checks[index + 1 :]]
        try:
            said = check.impl.advice(others)
        except Exception:  # a plugin's hint that fails is no hint: the suite still loads
            continue
        if said:
            return f"{test.file}: {check.location} {said}"
    return None
