"""tsuka: measure what a language model can really do, and store it as a hash-guarded profile."""

from tsuka_core.answer import Answer, ToolCall, normalise_tool_call, parse_arguments, strip_reasoning
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
from tsuka_core.hookspecs import RegisterBackend, RegisterCheckType, hookimpl, hookspec
from tsuka_core.jsontools import MISSING, ExtractedJson, JsonPath, extract_json, json_equal, json_type_name
from tsuka_core.model import CATEGORIES, Category, Check, Step, Suite, Test
from tsuka_core.outcome import Outcome, Status
from tsuka_core.patterns import Pattern, PatternTimeout
from tsuka_core.plugins import LoadedPlugin, discover
from tsuka_core.registry import Registered, Registry, load_registry
from tsuka_core.scoring import TIERS, Tier, category_score, round_half_up, test_score, tier_for, tier_rank
from tsuka_core.suite import default_suite_path, load_suite, suite_hash

__all__ = [
    "CATEGORIES",
    "MISSING",
    "TIERS",
    "Answer",
    "ArgParams",
    "BackendError",
    "Category",
    "Check",
    "CheckParams",
    "CheckType",
    "ExtractedJson",
    "JsonPath",
    "LoadedPlugin",
    "NoParams",
    "Outcome",
    "PathParams",
    "Pattern",
    "PatternTimeout",
    "PluginError",
    "RegexParams",
    "RegisterBackend",
    "RegisterCheckType",
    "Registered",
    "Registry",
    "RequestError",
    "Status",
    "Step",
    "StoreError",
    "Suite",
    "SuiteError",
    "Test",
    "Tier",
    "ToolCall",
    "TsukaError",
    "UsageError",
    "category_score",
    "default_suite_path",
    "describe",
    "discover",
    "extract_json",
    "first_call_argument",
    "hookimpl",
    "hookspec",
    "json_at_path",
    "json_equal",
    "json_type_name",
    "load_registry",
    "load_suite",
    "normalise_tool_call",
    "parse_arguments",
    "round_half_up",
    "run_check",
    "strip_reasoning",
    "suite_hash",
    "test_score",
    "tier_for",
    "tier_rank",
]
