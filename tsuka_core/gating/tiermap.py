"""Tier maps: the tier each tool needs, by exact name or fnmatch glob, read from a JSON or TOML object."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from tsuka_core.errors import UsageError
from tsuka_core.terms import TIERS, Tier

__all__ = ["GLOB_CHARS", "TierMap", "load_tier_map", "tool_name"]

GLOB_CHARS = frozenset("*?[")
"""A key holding one of these is a glob; any other key is an exact tool name."""


@dataclass(frozen=True)
class TierMap:
    """Tool name or glob → required tier; the most specific match wins, and an unlisted tool needs ``large``."""

    entries: Mapping[str, Tier]

    @classmethod
    def parse(cls, data: object, origin: str = "tier map") -> TierMap:
        """Check ``data`` is an object of non-empty names or globs to tiers; a bad entry is a UsageError."""
        if not isinstance(data, Mapping):
            raise UsageError(f"{origin}: expected an object of tool name or glob to tier, got {type(data).__name__}")
        entries: dict[str, Tier] = {}
        for key, value in data.items():
            tier = next((t for t in TIERS if t == value), None)
            if not isinstance(key, str) or not key:
                raise UsageError(f"{origin}: a key is not a non-empty tool name or glob: {key!r}")
            if tier is None:
                raise UsageError(f"{origin}: {key}: tier {json.dumps(value)} is not one of {', '.join(TIERS)}")
            entries[key] = tier
        return cls(entries)

    def lookup(self, name: str) -> tuple[Tier, str | None]:
        """The tier ``name`` needs and the key that decided it (None: unlisted, so ``large``).

        An exact name beats any glob; among globs the longest wins, and of equally long ones the first listed.
        """
        if name in self.entries:
            return self.entries[name], name
        globs = [k for k in self.entries if GLOB_CHARS.intersection(k) and fnmatchcase(name, k)]
        if not globs:
            return "large", None
        best = max(globs, key=len)
        return self.entries[best], best


def load_tier_map(path: Path) -> TierMap:
    """Read a tier map file: TOML when it ends in ``.toml``, else JSON; a bad file is a one-line UsageError."""
    from tsuka_core.storage.files import read_regular_file

    try:
        text = read_regular_file(path).decode("utf-8")
        data: Any = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: cannot read the tier map: {_one_line(exc)}") from exc
    return TierMap.parse(data, str(path))


def tool_name(tool: object, index: int = 0) -> str:
    """A tool's name: a string itself, an OpenAI ``function.name``, an MCP ``name``, or an object's ``.name``."""
    if isinstance(tool, str):
        return tool
    if isinstance(tool, Mapping):
        function = tool.get("function")
        name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
    else:
        name = getattr(tool, "name", None)
    return name if isinstance(name, str) and name else f"tool #{index + 1}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
