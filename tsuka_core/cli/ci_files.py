"""The files CI reads (``--junit``, ``--json-file``): their folders made first, and written however a run ends."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from tsuka_core.errors import TsukaError, UsageError
from tsuka_core.report.junit import write_junit
from tsuka_core.storage.files import make_folders
from tsuka_core.storage.layout import dumps_store

__all__ = ["check_ci_paths", "ci_files_always", "output_folder", "write_ci_files"]

F = TypeVar("F", bound=Callable[..., Any])

_WRITTEN = "tsuka.ci_files_written"
_OPTIONS = (("junit", "--junit"), ("json_file", "--json-file"))


def check_ci_paths(values: Mapping[str, Any]) -> None:
    """Raise UsageError now, before any request, when ``--junit`` or ``--json-file`` could not be written."""

    for key, option in _OPTIONS:
        path: Path | None = values.get(key)
        if path is None:
            continue
        folder = Path(path).parent
        output_folder(option, Path(path))
        if not os.access(folder, os.W_OK | os.X_OK) or (Path(path).exists() and not os.access(path, os.W_OK)):
            raise UsageError(f"{option} {path}: cannot write there (permission denied); nothing was run")


def output_folder(option: str, path: Path) -> None:
    """Create the missing folders of the file ``option`` names; UsageError when they cannot be."""

    try:
        make_folders(path.parent)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot create its folder ({exc.strerror or exc})") from None


def write_ci_files(values: Mapping[str, Any], levels: Sequence[Any], data: Any, error: str | None = None) -> None:
    """Write the JUnit XML of ``levels`` and the JSON ``data`` where asked; ``error`` says why the run ended early."""
    context = click.get_current_context(silent=True)
    if context is not None:
        context.meta[_WRITTEN] = True
    if values.get("junit"):
        write_junit(values["junit"], levels, error)
    if values.get("json_file"):
        Path(values["json_file"]).write_text(dumps_store(data), encoding="utf-8")


def ci_files_always(command: F) -> F:
    """Wrap a command: check the CI files' folders first, and write the files with the cause when it fails.

    The command writes them itself when it ends normally or interrupted (with
    :func:`write_ci_files`); anything else that ends it (an unreachable server,
    a damaged store, a bad suite, a second Ctrl-C) is written here, then raised.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **values: Any) -> Any:
        check_ci_paths(values)
        try:
            return command(*args, **values)
        except BaseException as exc:
            context = click.get_current_context(silent=True)
            if context is None or not context.meta.get(_WRITTEN):
                _write_failure(values, _cause(exc))
            raise

    return wrapper  # type: ignore[return-value]


def _cause(exc: BaseException) -> str:

    if isinstance(exc, TsukaError):
        return str(exc)
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, SystemExit):
        return f"stopped (exit status {exc.code})"
    return f"{type(exc).__name__}: {exc}"


def _write_failure(values: Mapping[str, Any], cause: str) -> None:
    if not (values.get("junit") or values.get("json_file")):
        return
    data = {"error": cause, "profiles": {}, "recommendations": {}, "failed": [cause], "notes": [], "levels": []}
    try:
        write_ci_files(values, [], data, cause)
    except OSError as exc:
        click.echo(f"tsuka: cannot write the CI files ({exc.strerror or exc})", err=True)
