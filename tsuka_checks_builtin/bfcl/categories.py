"""BFCL's categories as tsuka names them: each suite's BFCL category, how it is judged, and its language."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["CATEGORIES", "MULTI_TURN", "SINGLE_TURN", "Category", "by_suite"]


@dataclass(frozen=True)
class Category:
    """One BFCL category as a tsuka suite."""

    suite: str
    """tsuka's suite name: ``bfcl-`` and BFCL's name with dashes (``bfcl-simple`` is ``simple_python``)."""
    name: str
    """BFCL's name; its data file is ``BFCL_v4_<name>.json``."""
    judged: Literal["ast", "irrelevance", "relevance", "multi_turn"]
    """``ast``: the calls against the possible answers; ``irrelevance``: no call; ``relevance``: some call;
    ``multi_turn``: the state and results after each turn."""
    language: Literal["python", "java", "javascript"] = "python"
    live: bool = False

    @property
    def calls(self) -> Literal["one", "all"]:
        """``one``: exactly one call is wanted (simple and multiple); ``all``: every possible answer's call."""
        return "all" if "parallel" in self.name else "one"


_ALL = (
    Category("bfcl-simple", "simple_python", "ast"),
    Category("bfcl-simple-java", "simple_java", "ast", "java"),
    Category("bfcl-simple-javascript", "simple_javascript", "ast", "javascript"),
    Category("bfcl-multiple", "multiple", "ast"),
    Category("bfcl-parallel", "parallel", "ast"),
    Category("bfcl-parallel-multiple", "parallel_multiple", "ast"),
    Category("bfcl-irrelevance", "irrelevance", "irrelevance"),
    Category("bfcl-live-simple", "live_simple", "ast", live=True),
    Category("bfcl-live-multiple", "live_multiple", "ast", live=True),
    Category("bfcl-live-parallel", "live_parallel", "ast", live=True),
    Category("bfcl-live-parallel-multiple", "live_parallel_multiple", "ast", live=True),
    Category("bfcl-live-irrelevance", "live_irrelevance", "irrelevance", live=True),
    Category("bfcl-live-relevance", "live_relevance", "relevance", live=True),
)

SINGLE_TURN: tuple[Category, ...] = _ALL
"""Every single-turn category, non-live first, in BFCL's score table's order."""

MULTI_TURN: tuple[Category, ...] = (
    Category("bfcl-multi-turn-base", "multi_turn_base", "multi_turn"),
    Category("bfcl-multi-turn-miss-func", "multi_turn_miss_func", "multi_turn"),
    Category("bfcl-multi-turn-miss-param", "multi_turn_miss_param", "multi_turn"),
    Category("bfcl-multi-turn-long-context", "multi_turn_long_context", "multi_turn"),
)
"""BFCL's four multi-turn categories: every call executed against BFCL's own classes."""

CATEGORIES: Mapping[str, str] = {c.suite: c.name for c in (*_ALL, *MULTI_TURN)}
"""tsuka's suite name -> BFCL's category name."""


def by_suite(suite: str) -> Category | None:
    """The category registered as ``suite``."""
    return next((c for c in (*_ALL, *MULTI_TURN) if c.suite == suite), None)
