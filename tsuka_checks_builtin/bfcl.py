"""BFCL's non-live categories as tsuka suites, converted from the installed ``bfcl-eval`` package's own data.

Nothing of BFCL is copied into tsuka: with ``bfcl-eval`` installed (``pip install
--no-deps bfcl-eval``: its data and checker, without the SDKs it pulls in), each
category's questions and possible answers are read from the package and written,
once per BFCL version, as test files in tsuka's cache; the plugin registers them
as the suites ``bfcl-simple``, ``bfcl-multiple``, ``bfcl-parallel``,
``bfcl-parallel-multiple`` and ``bfcl-irrelevance``. Each test asks BFCL's
question with BFCL's functions and judges the answer with ``tool_calls_match``
written as BFCL's AST checker judges (accepted values, optional arguments, no
argument beyond the expected ones, BFCL's string normalisation, types as
declared), or with ``tool_not_called`` for irrelevance.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import re
import shutil
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "CACHE_ENV",
    "CATEGORIES",
    "bfcl_data",
    "bfcl_suites",
    "cache_root",
    "converted",
    "expected_call",
    "schema_of",
    "test_of",
]

CACHE_ENV = "TSUKA_CACHE"
"""Where tsuka keeps what it makes from installed data (default: ``$XDG_CACHE_HOME/tsuka``, else ``~/.cache/tsuka``)."""

CATEGORIES: Mapping[str, str] = {
    "bfcl-simple": "simple_python",
    "bfcl-multiple": "multiple",
    "bfcl-parallel": "parallel",
    "bfcl-parallel-multiple": "parallel_multiple",
    "bfcl-irrelevance": "irrelevance",
}
"""tsuka's suite name -> BFCL's category (its data file is ``BFCL_v4_<category>.json``)."""

_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}
"""BFCL's type names that JSON Schema spells otherwise (``any``: no type)."""
_MAX_DICTS = 64
"""The most accepted values one dict argument expands into; more are cut there."""
_NAME = re.compile(r"[^A-Za-z0-9_-]")
FORMAT = 1
"""How tests are converted; raised when the conversion changes, so that a cached suite is written again."""


def cache_root() -> Path:
    """The folder :data:`CACHE_ENV` names, else ``$XDG_CACHE_HOME/tsuka``, else ``~/.cache/tsuka``."""
    named = os.environ.get(CACHE_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "tsuka"


def bfcl_data() -> Path | None:
    """The ``data`` folder of the installed ``bfcl-eval`` package, or None when it is not installed."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    return folder if folder.is_dir() else None


def tool_name(name: str) -> str:
    """A BFCL function name as OpenAI-compatible servers take it (``math.factorial`` -> ``math_factorial``)."""
    return _NAME.sub("_", name)[:64]


def schema_of(parameters: Any) -> Any:
    """BFCL's parameter schema as JSON Schema: ``dict`` -> object, ``float`` -> number, ``tuple`` -> array."""
    if isinstance(parameters, list):
        return [schema_of(p) for p in parameters]
    if not isinstance(parameters, Mapping):
        return parameters
    kind = parameters.get("type")
    converted = {k: schema_of(v) for k, v in parameters.items() if not (k == "type" and isinstance(v, str))}
    if isinstance(kind, str):
        mapped = _TYPES.get(kind, kind)
        if mapped is not None:
            converted["type"] = mapped
    return converted


def _tool(function: Mapping[str, Any]) -> dict[str, Any]:
    body = {"name": tool_name(str(function["name"])), "description": str(function.get("description", ""))}
    body["parameters"] = schema_of(function.get("parameters", {"type": "dict", "properties": {}}))
    return {"type": "function", "function": body}


def _dicts(possible: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every concrete dict a BFCL possible dict stands for: each key one of its values, ``""`` meaning absent."""
    keys = list(possible)
    choices = [list(possible[k]) if isinstance(possible[k], list) else [possible[k]] for k in keys]
    found: list[dict[str, Any]] = []
    for picked in itertools.islice(itertools.product(*choices), _MAX_DICTS):
        found.append({k: v for k, v in zip(keys, picked, strict=True) if v != ""})
    return found


def _accepted(value: Any) -> list[Any]:
    """The concrete values one BFCL possible value stands for (a dict or a list of dicts, expanded)."""
    if isinstance(value, Mapping):
        return _dicts(value)
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return [list(c) for c in itertools.islice(itertools.product(*(_dicts(v) for v in value)), _MAX_DICTS)]
    return [value]


def expected_call(ground_truth: Mapping[str, Any]) -> dict[str, Any]:
    """One BFCL ground-truth call ``{function: {param: [values]}}`` as an expected call of ``tool_calls_match``."""
    ((name, params),) = ground_truth.items()
    accept: dict[str, list[Any]] = {}
    optional: list[str] = []
    for param, values in params.items():
        if "" in values:
            optional.append(param)
        concrete = [c for v in values if v != "" for c in _accepted(v)]
        if concrete:
            accept[param] = concrete
    call: dict[str, Any] = {"name": tool_name(name), "accept": accept}
    if optional:
        call["optional"] = optional
    return call


def test_of(question: Mapping[str, Any], answer: Mapping[str, Any] | None) -> dict[str, Any]:
    """One BFCL entry (its question, and its possible answer unless irrelevant) as a tsuka test file."""
    turn = question["question"][0]
    system = "\n".join(str(m["content"]) for m in turn if m.get("role") == "system")
    prompt = "\n".join(str(m["content"]) for m in turn if m.get("role") != "system")
    if answer is None:
        checks: list[dict[str, Any]] = [{"type": "tool_not_called"}]
    else:
        calls = [expected_call(c) for c in answer["ground_truth"]]
        checks = [{"type": "tool_calls_match", "calls": calls, "only_named": True, "normalize": True}]
    test: dict[str, Any] = {
        "name": str(question["id"]),
        "description": f"BFCL {question['id']}",
        "category": "toolCalling",
        "tools": [_tool(f) for f in question["function"]],
    }
    if system:
        test["system"] = system
    return {**test, "prompt": prompt, "checks": checks}


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


MANIFEST = ".converted"
"""Written last into a converted folder: its test files, so a folder cut short or changed is converted again."""


def write_suite(data: Path, category: str, folder: Path) -> None:
    """Write BFCL's ``category`` as test files into ``folder`` (replaced whole, never half-written)."""
    name = f"BFCL_v4_{category}.json"
    answers = {} if category == "irrelevance" else {r["id"]: r for r in _rows(data / "possible_answer" / name)}
    partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    files: dict[str, int] = {}
    for index, question in enumerate(_rows(data / name)):
        test = test_of(question, answers.get(question["id"]) if answers else None)
        file = partial / f"{index:04d}_{question['id']}.json"
        file.write_text(json.dumps(test, ensure_ascii=False), "utf-8")
        files[file.name] = file.stat().st_size
    (partial / MANIFEST).write_text(json.dumps(files), "utf-8")
    if converted(folder):
        shutil.rmtree(partial, ignore_errors=True)  # another process wrote it first: keep theirs
        return
    shutil.rmtree(folder, ignore_errors=True)  # a folder cut short or changed: replaced whole
    partial.rename(folder)


def converted(folder: Path) -> bool:
    """Whether ``folder`` holds a whole conversion: every file its manifest lists, each of the size written."""
    try:
        files = json.loads((folder / MANIFEST).read_text("utf-8"))
        found = {entry.name: entry.stat().st_size for entry in os.scandir(folder) if entry.name.endswith(".json")}
    except (OSError, ValueError):
        return False
    return isinstance(files, dict) and files == found


def bfcl_suites(cache: Path) -> dict[str, Path]:
    """Each BFCL suite's folder, written into ``cache`` for the installed BFCL version when not there whole.

    A folder cut short or changed by hand is converted again. A cache that cannot be written leaves BFCL's suites
    out, with a warning naming the folder (``tsuka suites`` shows it).
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
    for suite, category in CATEGORIES.items():
        folder = root / category
        if not converted(folder):
            try:
                write_suite(data, category, folder)
            except OSError as exc:
                warnings.warn(
                    f"BFCL's suites are left out: {folder} cannot be written ({exc.strerror or exc}); set "
                    f"{CACHE_ENV} to a folder tsuka may write",
                    UserWarning,
                    stacklevel=2,
                )
                return {}
        found[suite] = folder
    return found
