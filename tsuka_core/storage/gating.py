"""Tier gating: which of a caller's tools a model may see, decided by its valid stored profile only."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tsuka_core.errors import UsageError
from tsuka_core.judge.scoring import tier_rank
from tsuka_core.storage.store import ProfileStore, StoreData, profile_key, profile_status
from tsuka_core.terms import EFFORTS, TIERS, Effort, Tier

__all__ = ["EffortSource", "GateResult", "HiddenTool", "gate_tools", "required_tier"]

EffortSource = Literal["explicit", "recommendation", "none"]
"""Where the effort came from: the caller, the stored recommendation, or nowhere (none stored)."""


@dataclass(frozen=True)
class HiddenTool:
    """A tool the model may not see, and why."""

    name: str
    required_tier: Tier
    reason: str
    """One line, e.g. ``write_file needs tier large; model-x@none is medium``."""


@dataclass(frozen=True)
class GateResult:
    """The outcome of gating one model's tools."""

    model: str
    effort: Effort | None
    """The effort whose profile was used; None when none was given and none is recommended."""
    effort_source: EffortSource
    tier: Tier
    """The tier of the valid profile, or ``small`` when the model is unprofiled."""
    profiled: bool
    """True when a valid profile (this engine's version, this suite's hash) was found."""
    profile_status: str
    """``valid``, or why no valid profile was used (``no profile stored for m@low``, ``stale: ...``)."""
    visible: tuple[Mapping[str, Any], ...]
    """The tools the model may see, as given, in the given order."""
    hidden: tuple[HiddenTool, ...]
    notes: tuple[str, ...] = ()
    """What the caller must be told: an unprofiled model, an unknown ``requiredTier``."""

    @property
    def subject(self) -> str:
        """``model@effort``, or the bare model name when no effort was found."""
        return self.model if self.effort is None else profile_key(self.model, self.effort)


def required_tier(tool: Mapping[str, Any]) -> tuple[Tier, str | None]:
    """The tier a tool requires (on the tool or inside ``function``; default small), and a note if unknown.

    An unknown value counts as ``large`` (the safe side); when both places carry one, the higher counts.
    """
    function = tool.get("function")
    places = [tool, function] if isinstance(function, Mapping) else [tool]
    found = [place["requiredTier"] for place in places if "requiredTier" in place]
    tiers: list[Tier] = []
    note = None
    for value in found:
        known = next((t for t in TIERS if t == value), None)
        if known is None:
            note = f"unknown requiredTier {json.dumps(value)}, treated as large (expected small, medium or large)"
            known = "large"
        tiers.append(known)
    return max(tiers, key=tier_rank, default="small"), note


def gate_tools(
    tools: Sequence[Mapping[str, Any]],
    model: str,
    store: StoreData | ProfileStore,
    suite_hash: str | Callable[[Mapping[str, Any]], str],
    effort: Effort | None = None,
) -> GateResult:
    """Split ``tools`` into those ``model`` may see and those hidden, by its valid profile at the effort.

    The effort is ``effort`` when given, else the model's stored recommendation. Without a valid profile
    the model counts as ``small``; its name is never used to guess a tier. ``suite_hash`` is the hash the
    profile must carry, or a function giving it for the profile (``storage.suites.SuiteHashes``: the suite
    the profile was measured with).
    """
    data = store.read() if isinstance(store, ProfileStore) else store
    used, source = _resolve_effort(data, model, effort)
    profiled, status = _profile(data, model, used, suite_hash)
    tier: Tier = data.profiles[profile_key(model, used)]["tier"] if profiled and used else "small"
    subject = model if used is None else profile_key(model, used)
    standing = tier if profiled else "unprofiled (treated as small)"
    notes = [] if profiled else [f"{subject} is unprofiled ({status}); treated as small"]
    visible: list[Mapping[str, Any]] = []
    hidden: list[HiddenTool] = []
    for index, tool in enumerate(tools):
        name = _tool_name(tool, index)
        needed, note = required_tier(tool)
        if note:
            notes.append(f"{name}: {note}")
        if tier_rank(tier) >= tier_rank(needed):
            visible.append(tool)
        else:
            hidden.append(HiddenTool(name, needed, f"{name} needs tier {needed}; {subject} is {standing}"))
    return GateResult(model, used, source, tier, profiled, status, tuple(visible), tuple(hidden), tuple(notes))


def _resolve_effort(data: StoreData, model: str, effort: str | None) -> tuple[Effort | None, EffortSource]:
    if effort is not None:
        known = next((e for e in EFFORTS if e == effort), None)
        if known is None:
            raise UsageError(f"unknown effort {effort!r}; use one of {', '.join(EFFORTS)}")
        return known, "explicit"
    recommended = data.recommendation(model)
    return (recommended, "recommendation") if recommended else (None, "none")


def _profile(
    data: StoreData, model: str, effort: Effort | None, suite_hash: str | Callable[[Mapping[str, Any]], str]
) -> tuple[bool, str]:
    if effort is None:
        return False, f"no effort given and no recommendation stored for {model}"
    key = profile_key(model, effort)
    if key not in data.profiles:
        return False, f"no profile stored for {key}"
    profile = data.profiles[key]
    wanted = suite_hash if isinstance(suite_hash, str) else suite_hash(profile)
    return profile_status(profile, wanted)


def _tool_name(tool: Mapping[str, Any], index: int) -> str:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
    return name if isinstance(name, str) and name else f"tool #{index + 1}"
