"""A folder that cannot be written to, even by root: for the tests of a store that cannot be written."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def without_file_privileges() -> list[str]:
    """A command prefix that makes permission bits bind even for root (which otherwise ignores them)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permission bits cannot be made to bind")
    caps = "-dac_override,-dac_read_search,-fowner"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


@contextmanager
def readonly_folder_holding(tmp_path: Path, store_text: str) -> Iterator[Path]:
    """A read-only folder ``ro`` in ``tmp_path`` holding ``models_profile.json`` with ``store_text``."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "models_profile.json").write_text(store_text, encoding="utf-8")
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)
