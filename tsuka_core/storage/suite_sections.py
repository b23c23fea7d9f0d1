"""Where each suite's profiles sit in the store: the default suite's in ``profiles``, others' in ``suiteProfiles``.

The TypeScript TSUKA reads ``profiles`` (keyed ``model@effort``) and
``recommendations``, and keeps top-level keys it does not know. So the default
suite's profiles stay there, and a profile measured with another suite goes
beside them, where TSUKA does not look::

    "suiteProfiles": {"extended": {"m@none": {...}}},
    "suiteRecommendations": {"extended": {"m": "none"}}

A store written before profiles were kept per suite may hold another suite's
profile in ``profiles`` (a later run replaced the default suite's entry with
it): :func:`upgrade` moves it under its suite, never over a profile already there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsuka_core.suite.identity import DEFAULT_SUITE

__all__ = ["SUITE_PROFILES", "SUITE_RECOMMENDATIONS", "place", "sections", "suite_of", "upgrade"]

SUITE_PROFILES = "suiteProfiles"
"""The top-level key of other suites' profiles: suite -> ``model@effort`` -> profile."""
SUITE_RECOMMENDATIONS = "suiteRecommendations"
"""The top-level key of other suites' recommended efforts: suite -> model -> effort."""


def suite_of(entry: object) -> str:
    """The suite a stored profile names: its ``suite`` when a non-empty string, else the default suite."""
    named = entry.get("suite") if isinstance(entry, Mapping) else None
    return named if isinstance(named, str) and named else DEFAULT_SUITE


def sections(raw: Mapping[str, Any]) -> dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Each suite's profiles and recommendations as stored, the default suite first (parts checked as objects)."""
    found = {DEFAULT_SUITE: (raw.get("profiles", {}), raw.get("recommendations", {}))}
    others, recommended = raw.get(SUITE_PROFILES, {}), raw.get(SUITE_RECOMMENDATIONS, {})
    for suite in [*others, *(s for s in recommended if s not in others)]:
        if suite != DEFAULT_SUITE:
            found[suite] = (others.get(suite, {}), recommended.get(suite, {}))
    return found


def upgrade(raw: dict[str, Any]) -> list[str]:
    """Move each profile of ``profiles`` that names another suite under that suite; the keys moved, as ``suite: key``.

    A profile already stored under that suite and key is kept, and the older
    entry left where it was. A model's recommendation follows its profiles
    when the default suite keeps none of them. ``raw`` is changed in place.
    """
    profiles = raw.get("profiles")
    if not isinstance(profiles, dict):
        return []
    moved: list[str] = []
    for key, entry in list(profiles.items()):
        suite = suite_of(entry)
        if suite == DEFAULT_SUITE:
            continue
        target = raw.setdefault(SUITE_PROFILES, {}).setdefault(suite, {})
        if key not in target:
            target[key] = profiles.pop(key)
            moved.append(f"{suite}: {key}")
            _move_recommendation(raw, key.rpartition("@")[0], suite)
    return moved


def _move_recommendation(raw: dict[str, Any], model: str, suite: str) -> None:
    """Move ``model``'s recommendation to ``suite`` when the default suite keeps no profile of it."""
    recommendations = raw.get("recommendations")
    if not isinstance(recommendations, dict) or model not in recommendations:
        return
    if any(key.rpartition("@")[0] == model for key in raw.get("profiles", {})):
        return
    _section(raw, SUITE_RECOMMENDATIONS, suite).setdefault(model, recommendations.pop(model))


def place(
    raw: dict[str, Any], profiles: Mapping[str, Mapping[str, Any]], recommendations: Mapping[str, str], suite: str
) -> None:
    """Put ``profiles`` (each where the suite it names says) and ``suite``'s ``recommendations`` into ``raw``."""
    raw.setdefault("profiles", {})  # TSUKA expects both, even when only other suites' profiles are stored
    raw.setdefault("recommendations", {})
    for key, profile in profiles.items():
        named = suite_of(profile)
        where = raw.setdefault("profiles", {}) if named == DEFAULT_SUITE else _section(raw, SUITE_PROFILES, named)
        where[key] = profile
    if recommendations:
        where = raw.setdefault("recommendations", {}) if suite == DEFAULT_SUITE else None
        (where if where is not None else _section(raw, SUITE_RECOMMENDATIONS, suite)).update(recommendations)


def _section(raw: dict[str, Any], top: str, suite: str) -> dict[str, Any]:
    part: dict[str, Any] = raw.setdefault(top, {}).setdefault(suite, {})
    return part
