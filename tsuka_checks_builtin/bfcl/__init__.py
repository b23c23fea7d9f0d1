"""BFCL's categories as tsuka suites, converted from the installed ``bfcl-eval`` package's own data.

With ``bfcl-eval`` installed, every single-turn category is a suite
(``bfcl-simple``, ``bfcl-simple-java``, ``bfcl-simple-javascript``,
``bfcl-multiple``, ``bfcl-parallel``, ``bfcl-parallel-multiple``,
``bfcl-irrelevance`` and the six ``bfcl-live-*``), each test named by its BFCL id,
asking BFCL's question with the tools BFCL's function-calling handler sends
(``tools``) and judged as BFCL's AST checker judges (``single``); the suites are
written once per BFCL version into tsuka's cache (``cache``).
"""

from __future__ import annotations

from pathlib import Path

from tsuka_checks_builtin.bfcl.cache import CACHE_ENV, FORMAT, MANIFEST, bfcl_data, cache_root, converted, rows
from tsuka_checks_builtin.bfcl.cache import suites_in as _suites_in
from tsuka_checks_builtin.bfcl.categories import CATEGORIES, SINGLE_TURN, Category, by_suite
from tsuka_checks_builtin.bfcl.single import expected_call, test_of
from tsuka_checks_builtin.bfcl.tools import schema_of, tool_name, tool_of

__all__ = [
    "CACHE_ENV",
    "CATEGORIES",
    "FORMAT",
    "MANIFEST",
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
    """Each BFCL suite's folder, written into ``cache`` for the installed BFCL version when not there whole."""
    return _suites_in(cache, SINGLE_TURN, test_of)
