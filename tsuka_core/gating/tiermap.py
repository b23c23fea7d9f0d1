"""Tier maps: the tier each tool needs, by exact name or fnmatch glob, read from a JSON or TOML object."""

from __future__ import annotations

import heapq
import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import translate
from functools import cached_property
from pathlib import Path
from typing import Any

from tsuka_core.errors import UsageError
from tsuka_core.gating.toolnames import NAME_CHARS, NAME_RULE, TOOL_NAME, raw_tool_name, shown_name
from tsuka_core.terms import TIERS, Tier

__all__ = ["GLOB_CHARS", "TierMap", "load_tier_map", "tool_name"]

GLOB_CHARS = frozenset("*?[")
"""A key holding one of these is a glob; any other key is an exact tool name."""

_KEY = re.compile(f"[*?\\[\\]!{NAME_CHARS}]+")
"""A key a tool name could match: name characters and fnmatch's own (``[!...]`` negates a class)."""


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
            _check_key(key, origin)
            if tier is None:
                raise UsageError(f"{origin}: {key}: tier {json.dumps(value)} is not one of {', '.join(TIERS)}")
            entries[key] = tier
        return cls(entries)

    def lookup(self, name: str) -> tuple[Tier, str | None]:
        """The tier ``name`` needs and the key that decided it (None: unlisted, so ``large``).

        An exact name beats any glob; among globs the longest wins, and of equally long ones the first listed.
        A name that is not a valid tool name is a UsageError: no glob may match across what a name cannot hold.
        """
        if not TOOL_NAME.fullmatch(name):
            raise UsageError(f"tool name {shown_name(name)} is not valid; {NAME_RULE}")
        if name in self.entries:
            return self.entries[name], name
        best = self._globs.best(name)
        return ("large", None) if best is None else (self.entries[best], best)

    @cached_property
    def _globs(self) -> _Globs:
        return _Globs(self.entries)


class _Globs:
    """A tier map's globs, most specific first, found by their literal prefix or suffix, each compiled once when tried.

    fnmatch caches 32,768 compiled patterns: a bigger map recompiled every glob on every lookup. Here a
    lookup tries only the globs whose literal start (else literal end) ``name`` has, and those with neither.
    """

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = sorted((k for k in keys if GLOB_CHARS.intersection(k)), key=len, reverse=True)
        self.by_prefix: dict[str, list[int]] = {}
        self.by_suffix: dict[str, list[int]] = {}
        self.rest: list[int] = []
        for rank, key in enumerate(self.keys):
            self._bucket(key).append(rank)
        self.compiled: dict[int, Callable[[str], re.Match[str] | None]] = {}

    def best(self, name: str) -> str | None:
        """The most specific glob matching ``name`` (a valid tool name), or None."""
        ends = range(1, len(name) + 1)
        buckets = [self.by_prefix.get(name[:end], []) for end in ends]
        buckets += [self.by_suffix.get(name[-end:], []) for end in ends]
        for rank in heapq.merge(self.rest, *(bucket for bucket in buckets if bucket)):
            if self._matcher(rank)(name):
                return self.keys[rank]
        return None

    def _bucket(self, glob: str) -> list[int]:
        prefix = _START.split(glob, maxsplit=1)[0]
        if prefix:
            return self.by_prefix.setdefault(prefix, [])
        suffix = _END.split(glob)[-1]
        return self.by_suffix.setdefault(suffix, []) if suffix else self.rest

    def _matcher(self, rank: int) -> Callable[[str], re.Match[str] | None]:
        matcher = self.compiled.get(rank)
        if matcher is None:
            matcher = self.compiled[rank] = re.compile(translate(self.keys[rank])).match
        return matcher


_START = re.compile(r"[*?\[]")
"""Where a glob's literal start ends: every name it matches begins with the text before."""
_END = re.compile(r"[*?\[\]]")
"""Where a glob's literal end begins (after its last ``*``, ``?`` or class): every match ends with what follows."""


def _check_key(key: str, origin: str) -> None:
    """A key that no valid tool name could match is refused: an exact name must be one, a glob made of name parts."""
    glob = bool(GLOB_CHARS.intersection(key))
    if (glob and _KEY.fullmatch(key)) or (not glob and TOOL_NAME.fullmatch(key)):
        return
    what = "glob" if glob else "name"
    raise UsageError(
        f"{origin}: the {what} {shown_name(key)} can never match a tool; {NAME_RULE} (a glob adds * ? [ ] !)"
    )


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
    """A tool's name (see :func:`~tsuka_core.gating.toolnames.raw_tool_name`), or ``tool #N`` when it has none."""
    name = raw_tool_name(tool)
    return name if isinstance(name, str) and name else f"tool #{index + 1}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
