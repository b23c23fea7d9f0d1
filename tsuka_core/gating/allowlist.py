"""Tier gating: which of a caller's tools a model may see, decided by its valid stored profile only."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, cast

from tsuka_core.errors import UsageError
from tsuka_core.gating.tiermap import TierMap
from tsuka_core.gating.toolcap import NO_CAP, TOLERANCE, ToolCap, cap_note, tolerance_value, tool_cap
from tsuka_core.gating.toolnames import check_tool_names, raw_tool_name
from tsuka_core.judge.scoring import tier_rank
from tsuka_core.storage.profile import Profile
from tsuka_core.storage.store import ProfileStore, StoreData, profile_key
from tsuka_core.terms import EFFORTS, TIERS, Effort, Tier

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Decision",
    "EffortSource",
    "GateResult",
    "HiddenTool",
    "allowed_tools",
    "gate_tools",
    "required_tier",
    "tool_count_tolerance",
]

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
class Decision:
    """One tool's verdict: the tier it needs, what said so, and whether the model may see it."""

    name: str
    required_tier: Tier
    source: str
    """``requiredTier field``, ``tier map pattern "..."``, or ``default``."""
    visible: bool
    over_tolerance: bool = False
    """Dropped although its tier allows it: the model's ``toolCountTolerance`` was reached."""


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
    visible: tuple[Any, ...]
    """The tools the model may see, as given, in the given order."""
    hidden: tuple[HiddenTool, ...]
    notes: tuple[str, ...] = ()
    """What the caller must be told: an unprofiled model, an unknown ``requiredTier``."""
    decisions: tuple[Decision, ...] = ()
    """Every tool's verdict, in the given order."""
    cap: ToolCap = NO_CAP
    """The tool-count cap applied (``gating.toolcap``): its limit, and why when it is the safe side."""

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


def requirement(tool: object, tiers: TierMap | None) -> tuple[Tier, str, str | None]:
    """The tier ``tool`` needs, what said so, and a note if its ``requiredTier`` is unknown (its name is valid).

    A ``requiredTier`` on the tool comes first, then the tier map; without either a tool needs ``small``
    when no tier map is given (the contract's default) and ``large`` when one is (unlisted means unknown).
    """
    if isinstance(tool, Mapping):
        needed, note = required_tier(tool)
        function = tool.get("function")
        if "requiredTier" in tool or (isinstance(function, Mapping) and "requiredTier" in function):
            return needed, "requiredTier field", note
    if tiers is None:
        return "small", "default", None
    name = raw_tool_name(tool)
    tier, key = tiers.lookup(name if isinstance(name, str) else "")
    return (tier, f"tier map pattern {json.dumps(key)}", None) if key is not None else (tier, "default", None)


def gate_tools(
    tools: Sequence[Any],
    model: str,
    store: StoreData | ProfileStore,
    suite_hash: str | Callable[[str | None], str],
    effort: Effort | None = None,
    tiers: TierMap | None = None,
    floor: Tier | None = None,
) -> GateResult:
    """Split ``tools`` into those ``model`` may see and those hidden, by its valid profile at the effort.

    ``floor`` (opt-in) is the lowest tier offered any tool at all: a model below it (an unprofiled one counts
    as small) sees none, whatever each tool needs.

    A profile with ``toolCountTolerance`` N lets the model see at most N tools: of those its tier allows, the
    ones needing the lowest tier first, then in the given order.
    The effort is ``effort`` when given, else the model's stored recommendation. Without a valid profile
    the model counts as ``small``; its name is never used to guess a tier. ``suite_hash`` is the hash the
    profile must carry, or a function giving it for the suite the profile names (``suite.identity.SuiteHashes``:
    the suite the profile was measured with). A tool without a valid name (``gating.toolnames``) is a UsageError.
    """
    names = check_tool_names(tools)
    data = store.read() if isinstance(store, ProfileStore) else store
    used, source = _resolve_effort(data, model, effort)
    profile, status = _profile(data, model, used, suite_hash)
    profiled = profile is not None
    tier: Tier = profile.tier if profile is not None and profile.tier is not None else "small"
    subject = model if used is None else profile_key(model, used)
    standing = tier if profiled else "unprofiled (treated as small)"
    notes = [] if profiled else [f"{subject} is unprofiled ({status}); treated as small"]
    visible: list[Any] = []
    hidden: list[HiddenTool] = []
    decisions: list[Decision] = []
    below_floor = floor is not None and tier_rank(tier) < tier_rank(floor)
    if below_floor:
        notes.append(f"{subject} is {standing}, below the floor {floor}: it is offered no tool at all")
    for name, tool in zip(names, tools, strict=True):
        needed, said_by, note = requirement(tool, tiers)
        if note:
            notes.append(f"{name}: {note}")
        if below_floor:
            needed, said_by = max((needed, cast("Tier", floor)), key=tier_rank), f"the floor {floor}"
        shown = tier_rank(tier) >= tier_rank(needed)
        decisions.append(Decision(name, needed, said_by, shown))
        if shown:
            visible.append(tool)
        elif below_floor:
            hidden.append(HiddenTool(name, needed, f"{name}: {subject} is below the floor {floor} ({standing})"))
        else:
            hidden.append(HiddenTool(name, needed, f"{name} needs tier {needed}; {subject} is {standing}"))
    cap = tool_cap(data, model, used, suite_hash)
    if cap.limit is not None and len(visible) > cap.limit:
        visible, decisions = _within_tolerance(visible, decisions, cap.limit, subject, hidden)
    if cap.limit is not None and (cap.safe_side or any(d.over_tolerance for d in decisions)):
        notes.append(cap_note(cap, subject, len(hidden)))
    return GateResult(
        model, used, source, tier, profiled, status, tuple(visible), tuple(hidden), tuple(notes), tuple(decisions), cap
    )


def tool_count_tolerance(profile: Profile | Mapping[str, Any] | None) -> int | None:
    """The profile's ``toolCountTolerance`` when it is a whole number of at least 1 (``8.0`` is 8); None otherwise.

    This reads one profile; what gating does with a value that is missing, damaged or stale is
    :func:`~tsuka_core.gating.toolcap.tool_cap`'s rule.
    """
    if profile is None:
        return None
    value = profile.get(TOLERANCE) if isinstance(profile, Mapping) else profile.found(TOLERANCE)
    return tolerance_value(value)


def _within_tolerance(
    visible: list[Any], decisions: list[Decision], limit: int, subject: str, hidden: list[HiddenTool]
) -> tuple[list[Any], list[Decision]]:
    """The first ``limit`` visible tools, lowest required tier first then in the given order; the rest hidden."""
    shown = [i for i, d in enumerate(decisions) if d.visible]
    kept = set(sorted(shown, key=lambda i: (tier_rank(decisions[i].required_tier), i))[:limit])
    by_position = dict(zip(shown, visible, strict=True))
    decided: list[Decision] = []
    for i, verdict in enumerate(decisions):
        if verdict.visible and i not in kept:
            verdict = replace(verdict, visible=False, over_tolerance=True)  # noqa: PLW2901
            why = f"{verdict.name} is over {subject}'s tool-count tolerance of {limit}"
            hidden.append(HiddenTool(verdict.name, verdict.required_tier, why))
        decided.append(verdict)
    return [by_position[i] for i in shown if i in kept], decided


def allowed_tools(
    model: str,
    tools: Sequence[Any],
    effort: Effort | None = None,
    profiles: str | Path | None = None,
    tiers: Mapping[str, str] | str | Path | None = None,
    suite: str | Path | None = None,
    floor: str | None = None,
) -> list[Any]:
    """The tools ``model`` may see at ``effort`` (default: its recommended effort), in the given order.

    A profile with a ``toolCountTolerance`` keeps at most that many (lowest required tier first, then order).
    A tool is an OpenAI tool schema, an MCP tool, an object with ``.name`` (a LangChain tool) or a bare
    name; the same objects come back. ``tiers`` maps names or fnmatch globs to tiers (a mapping, or a
    JSON or TOML file). The profiles of ``suite`` count (default: the default suite's). Without a valid
    profile at that effort the model counts as ``small``. The store is
    ``profiles``, else the one ``TSUKA_PROFILES`` names, else ``models_profile.json`` here, as for the commands.
    A tool whose name no tool API accepts (``storage.toolnames``) is a UsageError, never passed through.
    ``floor`` (opt-in: ``small``, ``medium`` or ``large``) offers a model below that tier no tool at all.
    """
    from pathlib import Path

    from tsuka_core.gating.tiermap import load_tier_map
    from tsuka_core.storage.store import store_path
    from tsuka_core.suite.identity import DEFAULT_SUITE, SuiteHashes, suite_label

    tier_map = (
        None if tiers is None else TierMap.parse(tiers) if isinstance(tiers, Mapping) else load_tier_map(Path(tiers))
    )
    hashes = SuiteHashes(None if suite is None else Path(suite))
    path = store_path(profiles)
    label = DEFAULT_SUITE if suite is None else suite_label(Path(suite))
    data = ProfileStore(path).read().for_suite(label)
    result = gate_tools(tools, model, data, hashes, effort, tier_map, _floor(floor))
    return list(result.visible)


def _floor(value: str | None) -> Tier | None:
    if value is None:
        return None
    known = next((t for t in TIERS if t == value), None)
    if known is None:
        raise UsageError(f"unknown floor {value!r}; use one of {', '.join(TIERS)}")
    return known


def _resolve_effort(data: StoreData, model: str, effort: str | None) -> tuple[Effort | None, EffortSource]:
    if effort is not None:
        known = next((e for e in EFFORTS if e == effort), None)
        if known is None:
            raise UsageError(f"unknown effort {effort!r}; use one of {', '.join(EFFORTS)}")
        return known, "explicit"
    recommended = data.recommendation(model)
    return (recommended, "recommendation") if recommended else (None, "none")


def _profile(
    data: StoreData, model: str, effort: Effort | None, suite_hash: str | Callable[[str | None], str]
) -> tuple[Profile | None, str]:
    """The valid profile of ``model`` at ``effort`` and ``valid``, or None and why there is none."""
    if effort is None:
        return None, f"no effort given and no recommendation stored for {model}"
    key = profile_key(model, effort)
    profile = data.profiles.get(key)
    if profile is None:
        return None, f"no profile stored for {key}"
    valid, status = profile.status(suite_hash if isinstance(suite_hash, str) else suite_hash(profile.suite))
    mislabelled = profile.mislabelled(key) if valid else None
    if mislabelled is not None:
        return None, f"mislabelled: the profile {mislabelled}"
    return (profile if valid else None), status


_EFFORT_SOURCES = {"explicit": "effort given", "recommendation": "recommended effort", "none": "no effort"}


def explain(result: GateResult) -> list[str]:
    """One line per tool: kept or dropped, the tier it needs and what said so, the model's tier and its source."""
    if result.profiled:
        how = _EFFORT_SOURCES[result.effort_source]
        standing = f"{result.subject} is {result.tier} (profile {result.subject}, {how})"
    else:
        standing = f"{result.subject} is small (unprofiled: {result.profile_status})"
    cap = result.cap
    over = f"; over the tool-count tolerance ({result.subject} keeps at most {cap.limit} tools)"
    lines = [
        f"{'keep' if d.visible else 'drop'} {d.name}: needs {d.required_tier} ({d.source}); {standing}"
        + (over if d.over_tolerance else "")
        for d in result.decisions
    ]
    if cap.limit is None:
        return [*lines, f"tool-count cap: none ({result.subject} has no {TOLERANCE} stored)"]
    why = f"the safe side, {cap.reason}" if cap.reason else f"its {TOLERANCE}, {cap.source}"
    return [*lines, f"tool-count cap: {cap.limit} ({why})"]
