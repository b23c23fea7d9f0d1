"""Names ``tsuka_core`` exported in 0.1 that are no longer public: each still resolves, with a DeprecationWarning.

The policy (docs/plugins.md, "Compatibility"): a public name that is renamed
or removed keeps working for at least one minor release, and its warning
names what to use instead. These were deprecated in 0.2.0; their removal, first
planned for 0.3.0, is in 0.4.0, so that plugins written for 0.2 keep loading
with 0.3.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = ["DEPRECATED_IN", "OLD_NAMES", "REMOVED_IN", "resolve"]

DEPRECATED_IN = "0.2.0"
"""The release that deprecated these aliases."""
REMOVED_IN = "0.4.0"
"""The release that drops them."""

_INTERNAL = "internal now; no public replacement"

OLD_NAMES: dict[str, tuple[str, str]] = {
    "describe": ("judge.checks", "the first line of inspect.getdoc(cls)"),
    "run_check": ("judge.checks", "tsuka_core.testing.judge(check, answer) or tsuka_core.testing.run_check"),
    "Status": ("judge.outcome", "Outcome.status (a str: passed, failed or errored)"),
    "category_score": ("judge.scoring", _INTERNAL),
    "round_half_up": ("judge.scoring", _INTERNAL),
    "score_checks": ("judge.scoring", _INTERNAL),
    "test_score": ("judge.scoring:score_checks", _INTERNAL),
    "tier_for": ("judge.scoring", _INTERNAL),
    "tier_rank": ("judge.scoring", "tsuka_core.TIERS.index(tier)"),
    "Category": ("terms", "str (one of tsuka_core.CATEGORIES)"),
    "Tier": ("terms", "str (one of tsuka_core.TIERS)"),
    "UsageError": ("errors", "tsuka_core.TsukaError"),
    "hookspec": ("plugins.hookspecs", "tsuka_core.hookimpl (plugins implement hooks; they do not declare them)"),
    "LoadedPlugin": ("plugins.manager", "tsuka_core.testing.registry_of(plugin_module)"),
    "discover": ("plugins.manager", "tsuka_core.load_registry"),
    "Registered": ("plugins.registry", "tsuka_core.Registry"),
    "Check": ("suite.model", "tsuka_core.Suite (its tests' steps' checks)"),
    "Step": ("suite.model", "tsuka_core.Suite (its tests' steps)"),
    "Test": ("suite.model", "tsuka_core.Suite (its tests)"),
    "default_suite_path": ("suite.loading", "tsuka_core.load_suite(None)"),
    "CheckResult": ("engine.results", "tsuka_core.testing.CheckVerdict (in TestVerdict.checks)"),
    "StepResult": ("engine.results", "tsuka_core.testing.CheckVerdict (in TestVerdict.checks)"),
    "TestResult": ("engine.results", "tsuka_core.testing.TestVerdict (what testing.run_test_file returns)"),
    "LevelResult": ("engine.results", "tsuka_core.RunReport"),
    "run_test": ("engine.runner", "tsuka_core.testing.run_test_file"),
    "ModelSweep": ("engine.sweep", "tsuka_core.run_benchmark"),
    "sweep_models": ("engine.sweep", "tsuka_core.run_benchmark"),
    "avg_completion_tokens": ("engine.metrics", _INTERNAL),
    "tokens_per_second": ("engine.metrics", _INTERNAL),
    "BENCHMARK_VERSION": ("storage.store", "tsuka_core.ProfileStore"),
    "StoreData": ("storage.store", "tsuka_core.ProfileStore"),
    "default_store_path": ("storage.store", "tsuka_core.RunOptions.store_path"),
    "dumps_store": ("storage.layout", "tsuka_core.ProfileStore"),
    "profile_from_level": ("run.profiles", "tsuka_core.run_benchmark"),
    "profile_key": ("storage.store", "tsuka_core.ProfileStore"),
    "profile_status": ("storage.store", "tsuka_core.ProfileStore"),
    "recommend": ("run.profiles", "tsuka_core.RunReport.recommendations"),
    "GateResult": ("gating.allowlist", "what tsuka_core.gate_tools returns"),
    "HiddenTool": ("gating.allowlist", "what tsuka_core.gate_tools returns"),
    "required_tier": ("gating.allowlist", "tsuka_core.allowed_tools"),
}
"""Old name: (``module[:attribute]`` under tsuka_core where it lives now, what to use instead)."""


def resolve(name: str, stacklevel: int = 3) -> Any:
    """The object an 0.1 name stands for, after a DeprecationWarning naming its replacement.

    Raises AttributeError for a name that was never public.
    """
    if name not in OLD_NAMES:
        raise AttributeError(f"module 'tsuka_core' has no attribute {name!r}")
    where, instead = OLD_NAMES[name]
    module, _, attribute = where.partition(":")
    now = f"tsuka_core.{module}.{attribute or name}"
    if instead == _INTERNAL:
        instead = f"it is internal now ({now}, which may change in any release) and has no public replacement"
    else:
        instead = f"use {instead}"
    warnings.warn(
        f"tsuka_core.{name} is deprecated since tsuka {DEPRECATED_IN} and removed in {REMOVED_IN}; {instead}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return getattr(importlib.import_module(f"tsuka_core.{module}"), attribute or name)
