"""A profile store with valid and stale profiles for gating tests, judged against the installed suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tsuka_core.storage.store import BENCHMARK_VERSION
from tsuka_core.suite.loading import default_suite_path, suite_hash


def profile(model: str, effort: str, tier: str, *, stale: bool = False) -> dict[str, Any]:
    """A stored profile, valid for the installed suite unless ``stale``."""
    return {
        "model": model,
        "reasoningEffort": effort,
        "tier": tier,
        "benchmarkVersion": BENCHMARK_VERSION,
        "testsHash": "00000000" if stale else suite_hash(default_suite_path()),
    }


def write_store(path: Path) -> Path:
    """``m``: medium at low (recommended), large at xhigh, stale large at medium; ``s``: small at none."""
    profiles = [
        profile("m", "low", "medium"),
        profile("m", "xhigh", "large"),
        profile("m", "medium", "large", stale=True),
        profile("s", "none", "small"),
    ]
    data = {
        "profiles": {f"{p['model']}@{p['reasoningEffort']}": p for p in profiles},
        "recommendations": {"m": "low", "s": "none"},
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
