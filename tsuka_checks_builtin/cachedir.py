"""Suites tsuka converts from installed or given data, kept in its cache: written whole, checked before use.

A converted folder ends with a manifest of its test files (written last); a
folder that does not match it (cut short, changed by hand) is converted again,
replaced whole, never half-written: the files go to a folder of their own that
is renamed into place.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV", "MANIFEST", "cache_root", "converted", "forget_others", "write_folder"]

CACHE_ENV = "TSUKA_CACHE"
"""Where tsuka keeps what it makes from installed data (default: ``$XDG_CACHE_HOME/tsuka``, else ``~/.cache/tsuka``)."""
MANIFEST = ".converted"
"""Written last into a converted folder: its test files, so a folder cut short or changed is converted again."""


def cache_root() -> Path:
    """The folder :data:`CACHE_ENV` names, else ``$XDG_CACHE_HOME/tsuka``, else ``~/.cache/tsuka``."""
    named = os.environ.get(CACHE_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "tsuka"


def write_folder(folder: Path, tests: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Write ``tests`` (file name, test) into ``folder``, replacing it whole; a folder another process wrote first
    is kept."""
    partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    files: dict[str, int] = {}
    for name, test in tests:
        file = partial / name
        file.write_text(json.dumps(test, ensure_ascii=False), "utf-8")
        files[file.name] = file.stat().st_size
    (partial / MANIFEST).write_text(json.dumps(files), "utf-8")
    if converted(folder):
        shutil.rmtree(partial, ignore_errors=True)
        return
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)


def converted(folder: Path) -> bool:
    """Whether ``folder`` holds a whole conversion: every file its manifest lists, each of the size written."""
    try:
        files = json.loads((folder / MANIFEST).read_text("utf-8"))
        found = {entry.name: entry.stat().st_size for entry in os.scandir(folder) if entry.name.endswith(".json")}
    except (OSError, ValueError):
        return False
    return isinstance(files, dict) and files == found


def forget_others(cache: Path, prefix: str, kept: Path) -> None:
    """Remove the cache's other ``prefix*`` folders, left by an earlier version or conversion (best effort)."""
    try:
        others = [p for p in cache.glob(f"{prefix}*") if p.is_dir() and p != kept and ".partial-" not in p.name]
    except OSError:
        return
    for folder in others:
        shutil.rmtree(folder, ignore_errors=True)
