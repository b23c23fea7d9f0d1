"""What each side of a comparison was measured with, and every difference between the two, one phrase each.

A run records its settings (``maxTokens``, temperature, seed, backend options, repeats) and each level the
sampling its backend sent; a profile records the sampling, the backend and the provider. A score that moved
between two sides measured differently may have moved for that reason: the comparison says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tsuka_core.storage.history_query import StoredRun
from tsuka_core.storage.profile import Profile

__all__ = ["differences", "profile_settings", "run_settings"]

_SAMPLING = ("maxTokens", "temperature", "seed", "topK", "repeatPenalty")
_RUN = ("maxTokens", "temperature", "seed", "backendOptions", "repeats", "modelPath")


def run_settings(run: StoredRun) -> dict[str, Any]:
    """A recorded run's settings: its backend and server, what it was asked with, its levels' sampling."""
    found: dict[str, Any] = {"backend": run.backend, "provider": run.provider}
    found.update({k: run.options[k] for k in _RUN if run.options.get(k) is not None})
    for level in run.levels:
        sampling = level.extra.get("sampling")
        if isinstance(sampling, Mapping):
            found.update({k: v for k, v in sampling.items() if k in _SAMPLING and v is not None})
            break
    return found


def profile_settings(profile: Profile) -> dict[str, Any]:
    """A stored profile's settings: backend, provider, repeats and the sampling it recorded."""
    found: dict[str, Any] = {k: profile.found(k) for k in ("backend", "provider") if profile.found(k) is not None}
    if profile.repeats:
        found["repeats"] = profile.repeats
    sampling = profile.found("sampling")
    if isinstance(sampling, Mapping):
        found.update({k: v for k, v in sampling.items() if k in _SAMPLING and v is not None})
    return found


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """``maxTokens 512 → 24`` for each setting both sides record and that differs (one side's alone is unknown)."""
    return [f"{key} {_shown(a[key])} → {_shown(b[key])}" for key in a if key in b and a[key] != b[key]]


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
