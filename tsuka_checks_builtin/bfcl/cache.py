"""Converting the installed bfcl-eval's data into tsuka suites, once per BFCL version, in tsuka's cache.

Nothing of BFCL is copied into tsuka: with ``bfcl-eval`` installed (``pip install
--no-deps bfcl-eval``: its data and checker, without the SDKs it pulls in), each
category's entries are written as test files into ``TSUKA_CACHE`` the first time
they are needed, a folder per category that ends with a manifest of its files
(written last). A folder that does not match its manifest (cut short, changed by
hand) is converted again, replaced whole; a cache that cannot be written leaves
BFCL's suites out with a warning naming the folder.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tsuka_checks_builtin.bfcl.categories import Category
from tsuka_checks_builtin.cachedir import CACHE_ENV, MANIFEST, cache_root, converted, forget_others, write_folder

__all__ = [
    "CACHE_ENV",
    "FORMAT",
    "MANIFEST",
    "bfcl_data",
    "cache_root",
    "converted",
    "rows",
    "suites_in",
    "write_suite",
]

FORMAT = 3
"""How tests are converted; raised when the conversion changes, so that a cached suite is written again."""
Convert = Callable[[Category, Mapping[str, Any], Mapping[str, Any] | None], dict[str, Any]]
"""How one entry (its question and possible answer) becomes a test file."""


def bfcl_data() -> Path | None:
    """The ``data`` folder of the installed ``bfcl-eval`` package, or None when it is not installed."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    return folder if folder.is_dir() else None


def rows(path: Path) -> Iterator[dict[str, Any]]:
    """The entries of one of BFCL's data files (a JSON object per line)."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def write_suite(data: Path, category: Category, folder: Path, convert: Convert) -> None:
    """Write BFCL's ``category`` as test files into ``folder`` (replaced whole, never half-written)."""
    name = f"BFCL_v4_{category.name}.json"
    answer_file = data / "possible_answer" / name
    answers = {r["id"]: r for r in rows(answer_file)} if answer_file.is_file() else {}
    tests = (
        (f"{index:04d}_{question['id']}.json", convert(category, question, answers.get(question["id"])))
        for index, question in enumerate(rows(data / name))
    )
    write_folder(folder, tests)


def suites_in(cache: Path, categories: Sequence[Category], convert: Convert) -> dict[str, Path]:
    """Each category's suite folder in ``cache``, for the installed BFCL version, converted when not there whole.

    Empty without bfcl-eval; a cache that cannot be written leaves BFCL's suites out, with a UserWarning.
    """
    data = bfcl_data()
    if data is None:
        return {}
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("bfcl-eval")
    except PackageNotFoundError:
        release = "unknown"
    root = cache / f"bfcl-{release}-{FORMAT}"
    found: dict[str, Path] = {}
    for category in categories:
        folder = root / category.name
        if not (data / f"BFCL_v4_{category.name}.json").is_file():
            continue  # a BFCL version without this category
        if not converted(folder):
            forget_others(cache, "bfcl-", root)
            try:
                write_suite(data, category, folder, convert)
            except OSError as exc:
                warnings.warn(
                    f"BFCL's suites are left out: {folder} cannot be written ({exc.strerror or exc}); set "
                    f"{CACHE_ENV} to a folder tsuka may write",
                    UserWarning,
                    stacklevel=2,
                )
                return {}
            except (ValueError, KeyError, TypeError, SyntaxError) as exc:
                warnings.warn(f"{category.suite} is left out: an entry of BFCL {release} cannot be converted "
                              f"({type(exc).__name__}: {exc})", UserWarning, stacklevel=2)  # fmt: skip
                continue
        found[category.suite] = folder
    return found
