"""Shards of a suite: shard ``i/n`` holds the tests whose name hashes to ``i``, whatever else the suite holds.

A test's shard depends on its name alone (the first 8 bytes of the SHA-256 of
its UTF-8 name, modulo ``n``), so adding, removing or reordering other tests
never moves it, and every machine of a CI matrix computes the same split.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from tsuka_core.errors import UsageError
from tsuka_core.suite.model import Suite

__all__ = ["Shard", "parse_shard", "shard_suite"]

_FORM = re.compile(r"^\s*(\d{1,6})\s*/\s*(\d{1,6})\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``index`` from 1)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, name: str) -> bool:
        """True when the test called ``name`` belongs to this shard."""
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


def parse_shard(text: str) -> Shard:
    """``i/n`` (1 <= i <= n) as a Shard; anything else is a one-line UsageError."""
    found = _FORM.match(text)
    if found is None:
        raise UsageError(f"--shard {text!r}: write it as I/N, e.g. 1/4 for the first of four shards")
    index, count = int(found.group(1)), int(found.group(2))
    if not 1 <= index <= count:
        raise UsageError(f"--shard {text!r}: I must be from 1 to N (here N is {count})")
    return Shard(index, count)


def shard_suite(suite: Suite, shard: Shard) -> Suite:
    """``suite`` with only ``shard``'s tests, in suite order; its hash stays the whole suite's."""
    return replace(suite, tests=tuple(test for test in suite.tests if shard.holds(test.name)))
