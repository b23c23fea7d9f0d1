"""Which of a suite's tests a run measures: all, one shard, the first N, or those a name pattern picks.

A run of fewer than all the suite's tests is partial: its levels are recorded
in the history (and shown as partial), never stored as profiles, since a
profile stands for the whole suite its hash names.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tsuka_core.errors import UsageError
from tsuka_core.suite.model import Suite
from tsuka_core.suite.shard import Shard

__all__ = ["Selection"]

_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class Selection:
    """The tests a run measures: ``names`` (patterns, any may match), then ``shard``, then the first ``limit``."""

    shard: Shard | None = None
    limit: int | None = None
    names: tuple[str, ...] = ()
    """A test is picked when its name is one of these, matches one as a glob (``*?[``), or holds one that names
    no test of the suite exactly (``-k json`` picks every test with ``json`` in its name)."""

    @property
    def partial(self) -> bool:
        """True unless every test is measured."""
        return self.shard is not None or self.limit is not None or bool(self.names)

    def apply(self, suite: Suite) -> Suite:
        """``suite`` with only the selected tests, in suite order; its hash stays the whole suite's.

        A UsageError when no test is left, naming what picked none.
        """
        exact = {t.name for t in suite.tests}
        picked = [t for t in suite.tests if not self.names or any(_matches(t.name, p, exact) for p in self.names)]
        tests = [t for t in picked if self.shard is None or self.shard.holds(t.name)]
        if self.limit is not None:
            tests = tests[: self.limit]
        if self.names and not tests:
            close = ", ".join(t.name for t in suite.tests[:5])
            raise UsageError(f"--test {' '.join(self.names)!r} picks no test of {suite.path} (its first: {close})")
        return replace(suite, tests=tuple(tests))

    def note(self, suite: Suite) -> str | None:
        """What a run of this selection measures, and that it stores no profile; None for the whole suite."""
        if not self.partial:
            return None
        held = len(self.apply(suite).tests)
        said = ", ".join(self._parts())
        tail = "'tsuka merge' combines the shards' histories" if self.shard else "the whole suite is measured"
        return f"{said}: {held} of the suite's {len(suite.tests)} tests; no profile is stored until {tail}"

    def label(self) -> str | None:
        """What picks the tests (``--limit 2``, ``shard 1/3, --test tool_*``); None for the whole suite."""
        return ", ".join(self._parts()) if self.partial else None

    def _parts(self) -> Sequence[str]:
        parts = [f"shard {self.shard}"] if self.shard else []
        parts += [f"--test {' '.join(self.names)}"] if self.names else []
        return [*parts, *([f"--limit {self.limit}"] if self.limit is not None else [])]

    def recorded(self) -> dict[str, Any]:
        """The selection as the history keeps it among a run's settings (nothing for the whole suite)."""
        found: dict[str, Any] = {}
        if self.shard is not None:
            found["shard"] = str(self.shard)
        if self.limit is not None:
            found["limit"] = self.limit
        if self.names:
            found["tests"] = list(self.names)
        return found


def _matches(name: str, pattern: str, names: frozenset[str] | set[str]) -> bool:
    if _GLOB & set(pattern):
        return fnmatch.fnmatchcase(name, pattern)
    return name == pattern if pattern in names else pattern in name
