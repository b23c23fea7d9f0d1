"""tsuka: measure what a language model can really do, and store it as a hash-guarded profile.

Every public name is importable from here; each is loaded on first use, so that
``import tsuka_core`` (and ``tsuka --help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tsuka_core.answer import (
        Answer,
        ToolCall,
        normalise_tool_call,
        parse_arguments,
        strip_reasoning,
    )
    from tsuka_core.backends.base import (
        EFFORTS,
        Backend,
        BackendConfig,
        ChatRequest,
        ChatResponse,
        Effort,
        EffortRejected,
        estimate_tokens,
        run_seed,
    )
    from tsuka_core.checks import (
        ArgParams,
        CheckParams,
        CheckType,
        NoParams,
        PathParams,
        RegexParams,
        describe,
        first_call_argument,
        json_at_path,
        run_check,
    )
    from tsuka_core.errors import (
        BackendError,
        PluginError,
        RequestError,
        StoreError,
        SuiteError,
        TsukaError,
        UsageError,
    )
    from tsuka_core.gating import (
        GateResult,
        HiddenTool,
        gate_tools,
        required_tier,
    )
    from tsuka_core.hookspecs import (
        RegisterBackend,
        RegisterCheckType,
        hookimpl,
        hookspec,
    )
    from tsuka_core.jsontools import (
        MISSING,
        ExtractedJson,
        JsonPath,
        extract_json,
        json_equal,
        json_type_name,
    )
    from tsuka_core.metrics import (
        avg_completion_tokens,
        tokens_per_second,
    )
    from tsuka_core.model import (
        CATEGORIES,
        Category,
        Check,
        Step,
        Suite,
        Test,
    )
    from tsuka_core.outcome import (
        Outcome,
        Status,
    )
    from tsuka_core.patterns import (
        Pattern,
        PatternTimeout,
    )
    from tsuka_core.plugins import (
        LoadedPlugin,
        discover,
    )
    from tsuka_core.registry import (
        Registered,
        Registry,
        load_registry,
    )
    from tsuka_core.results import (
        CheckResult,
        LevelResult,
        StepResult,
        TestResult,
    )
    from tsuka_core.runner import (
        run_test,
    )
    from tsuka_core.scoring import (
        TIERS,
        Tier,
        category_score,
        round_half_up,
        score_checks,
        tier_for,
        tier_rank,
    )
    from tsuka_core.session import (
        RunOptions,
        RunReport,
        run_benchmark,
    )
    from tsuka_core.store import (
        BENCHMARK_VERSION,
        ProfileStore,
        StoreData,
        default_store_path,
        dumps_store,
        profile_from_level,
        profile_key,
        profile_status,
        recommend,
    )
    from tsuka_core.suite import (
        default_suite_path,
        load_suite,
        suite_hash,
    )
    from tsuka_core.sweep import (
        ModelSweep,
        SweepObserver,
        sweep_models,
    )

_WHERE: dict[str, str] = {
    "Answer": "tsuka_core.answer",
    "ArgParams": "tsuka_core.checks",
    "BENCHMARK_VERSION": "tsuka_core.store",
    "Backend": "tsuka_core.backends.base",
    "BackendConfig": "tsuka_core.backends.base",
    "BackendError": "tsuka_core.errors",
    "CATEGORIES": "tsuka_core.model",
    "Category": "tsuka_core.model",
    "ChatRequest": "tsuka_core.backends.base",
    "ChatResponse": "tsuka_core.backends.base",
    "Check": "tsuka_core.model",
    "CheckParams": "tsuka_core.checks",
    "CheckResult": "tsuka_core.results",
    "CheckType": "tsuka_core.checks",
    "EFFORTS": "tsuka_core.backends.base",
    "Effort": "tsuka_core.backends.base",
    "EffortRejected": "tsuka_core.backends.base",
    "ExtractedJson": "tsuka_core.jsontools",
    "GateResult": "tsuka_core.gating",
    "HiddenTool": "tsuka_core.gating",
    "JsonPath": "tsuka_core.jsontools",
    "LevelResult": "tsuka_core.results",
    "LoadedPlugin": "tsuka_core.plugins",
    "MISSING": "tsuka_core.jsontools",
    "ModelSweep": "tsuka_core.sweep",
    "NoParams": "tsuka_core.checks",
    "Outcome": "tsuka_core.outcome",
    "PathParams": "tsuka_core.checks",
    "Pattern": "tsuka_core.patterns",
    "PatternTimeout": "tsuka_core.patterns",
    "PluginError": "tsuka_core.errors",
    "ProfileStore": "tsuka_core.store",
    "RegexParams": "tsuka_core.checks",
    "RegisterBackend": "tsuka_core.hookspecs",
    "RegisterCheckType": "tsuka_core.hookspecs",
    "Registered": "tsuka_core.registry",
    "Registry": "tsuka_core.registry",
    "RequestError": "tsuka_core.errors",
    "RunOptions": "tsuka_core.session",
    "RunReport": "tsuka_core.session",
    "Status": "tsuka_core.outcome",
    "Step": "tsuka_core.model",
    "StepResult": "tsuka_core.results",
    "StoreData": "tsuka_core.store",
    "StoreError": "tsuka_core.errors",
    "Suite": "tsuka_core.model",
    "SuiteError": "tsuka_core.errors",
    "SweepObserver": "tsuka_core.sweep",
    "TIERS": "tsuka_core.scoring",
    "Test": "tsuka_core.model",
    "TestResult": "tsuka_core.results",
    "Tier": "tsuka_core.scoring",
    "ToolCall": "tsuka_core.answer",
    "TsukaError": "tsuka_core.errors",
    "UsageError": "tsuka_core.errors",
    "avg_completion_tokens": "tsuka_core.metrics",
    "category_score": "tsuka_core.scoring",
    "default_store_path": "tsuka_core.store",
    "default_suite_path": "tsuka_core.suite",
    "describe": "tsuka_core.checks",
    "discover": "tsuka_core.plugins",
    "dumps_store": "tsuka_core.store",
    "estimate_tokens": "tsuka_core.backends.base",
    "extract_json": "tsuka_core.jsontools",
    "first_call_argument": "tsuka_core.checks",
    "gate_tools": "tsuka_core.gating",
    "hookimpl": "tsuka_core.hookspecs",
    "hookspec": "tsuka_core.hookspecs",
    "json_at_path": "tsuka_core.checks",
    "json_equal": "tsuka_core.jsontools",
    "json_type_name": "tsuka_core.jsontools",
    "load_registry": "tsuka_core.registry",
    "load_suite": "tsuka_core.suite",
    "normalise_tool_call": "tsuka_core.answer",
    "parse_arguments": "tsuka_core.answer",
    "profile_from_level": "tsuka_core.store",
    "profile_key": "tsuka_core.store",
    "profile_status": "tsuka_core.store",
    "recommend": "tsuka_core.store",
    "required_tier": "tsuka_core.gating",
    "round_half_up": "tsuka_core.scoring",
    "run_benchmark": "tsuka_core.session",
    "run_check": "tsuka_core.checks",
    "run_seed": "tsuka_core.backends.base",
    "run_test": "tsuka_core.runner",
    "strip_reasoning": "tsuka_core.answer",
    "suite_hash": "tsuka_core.suite",
    "sweep_models": "tsuka_core.sweep",
    "score_checks": "tsuka_core.scoring",
    "tier_for": "tsuka_core.scoring",
    "tier_rank": "tsuka_core.scoring",
    "tokens_per_second": "tsuka_core.metrics",
}

__all__ = [
    "BENCHMARK_VERSION",
    "CATEGORIES",
    "EFFORTS",
    "MISSING",
    "TIERS",
    "Answer",
    "ArgParams",
    "Backend",
    "BackendConfig",
    "BackendError",
    "Category",
    "ChatRequest",
    "ChatResponse",
    "Check",
    "CheckParams",
    "CheckResult",
    "CheckType",
    "Effort",
    "EffortRejected",
    "ExtractedJson",
    "GateResult",
    "HiddenTool",
    "JsonPath",
    "LevelResult",
    "LoadedPlugin",
    "ModelSweep",
    "NoParams",
    "Outcome",
    "PathParams",
    "Pattern",
    "PatternTimeout",
    "PluginError",
    "ProfileStore",
    "RegexParams",
    "RegisterBackend",
    "RegisterCheckType",
    "Registered",
    "Registry",
    "RequestError",
    "RunOptions",
    "RunReport",
    "Status",
    "Step",
    "StepResult",
    "StoreData",
    "StoreError",
    "Suite",
    "SuiteError",
    "SweepObserver",
    "Test",
    "TestResult",
    "Tier",
    "ToolCall",
    "TsukaError",
    "UsageError",
    "avg_completion_tokens",
    "category_score",
    "default_store_path",
    "default_suite_path",
    "describe",
    "discover",
    "dumps_store",
    "estimate_tokens",
    "extract_json",
    "first_call_argument",
    "gate_tools",
    "hookimpl",
    "hookspec",
    "json_at_path",
    "json_equal",
    "json_type_name",
    "load_registry",
    "load_suite",
    "normalise_tool_call",
    "parse_arguments",
    "profile_from_level",
    "profile_key",
    "profile_status",
    "recommend",
    "required_tier",
    "round_half_up",
    "run_benchmark",
    "run_check",
    "run_seed",
    "run_test",
    "score_checks",
    "strip_reasoning",
    "suite_hash",
    "sweep_models",
    "tier_for",
    "tier_rank",
    "tokens_per_second",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tsuka_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
