"""BFCL's categories as tsuka suites, converted from the installed ``bfcl-eval`` package's own data.

With ``bfcl-eval`` installed, every single-turn category is a suite
(``bfcl-simple``, ``bfcl-simple-java``, ``bfcl-simple-javascript``,
``bfcl-multiple``, ``bfcl-parallel``, ``bfcl-parallel-multiple``,
``bfcl-irrelevance`` and the six ``bfcl-live-*``), each test named by its BFCL id,
asking BFCL's question with the tools BFCL's function-calling handler sends
(``tools``) and judged as BFCL's AST checker judges (``single``); so is each
multi-turn category (``bfcl-multi-turn-base``, ``-miss-func``, ``-miss-param``,
``-long-context``), its calls executed against BFCL's own classes
(``environment``) and judged as BFCL's multi-turn checker judges (``multi``).
The suites are written once per BFCL version into tsuka's cache (``cache``).
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tsuka_checks_builtin.bfcl.cache import CACHE_ENV, FORMAT, MANIFEST, bfcl_data, cache_root, converted, rows
from tsuka_checks_builtin.bfcl.cache import suites_in as _suites_in
from tsuka_checks_builtin.bfcl.categories import CATEGORIES, MULTI_TURN, SINGLE_TURN, Category, by_suite
from tsuka_checks_builtin.bfcl.multi import multi_turn_test
from tsuka_checks_builtin.bfcl.single import expected_call, test_of
from tsuka_checks_builtin.bfcl.tools import schema_of, tool_name, tool_of

__all__ = [
    "CACHE_ENV",
    "CATEGORIES",
    "FORMAT",
    "MANIFEST",
    "MULTI_TURN",
    "SINGLE_TURN",
    "Category",
    "bfcl_data",
    "bfcl_suites",
    "by_suite",
    "cache_root",
    "converted",
    "expected_call",
    "rows",
    "schema_of",
    "test_of",
    "tool_name",
    "tool_of",
]


def bfcl_suites(cache: Path) -> dict[str, Path]:
    """Each BFCL suite's folder, written into ``cache`` for the installed BFCL version when not there whole.

    The multi-turn suites need what BFCL's classes import beyond bfcl-eval's own code (mpmath); without it they
    are left out, with a UserWarning saying what to install.
    """
    found = _suites_in(cache, SINGLE_TURN, test_of)
    missing = [name for name in _MULTI_TURN_NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        if bfcl_data() is not None:
            warnings.warn(f"BFCL's multi-turn suites are left out: its classes need {', '.join(missing)} "
                          f"(pip install {' '.join(missing)})", UserWarning, stacklevel=2)  # fmt: skip
        return found
    return found | _suites_in(cache, MULTI_TURN, _converted)


_MULTI_TURN_NEEDS = ("mpmath",)
"""What BFCL's multi-turn classes import that bfcl-eval installed with --no-deps lacks."""


def _converted(category: Category, question: Mapping[str, Any], answer: Mapping[str, Any] | None) -> dict[str, Any]:
    data = bfcl_data()
    assert data is not None
    return multi_turn_test(data, category, question, answer)
