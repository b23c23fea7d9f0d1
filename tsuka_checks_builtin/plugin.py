"""The single plugin module that registers every built-in check type, backend and suite."""

from __future__ import annotations

import warnings
from importlib.resources import files
from pathlib import Path

from tsuka_checks_builtin import (
    bfcl,
    calls,
    conform,
    counting,
    edges,
    environment,
    ifeval,
    instruction,
    language,
    layout,
    sentences,
    text,
    tools,
)
from tsuka_checks_builtin import json as json_checks
from tsuka_core import (
    RegisterBackend,
    RegisterCheckType,
    RegisterScorecard,
    RegisterSuite,
    RegisterToolEnvironment,
    hookimpl,
)

CHECK_TYPES = (
    text.WordCount,
    text.LineCount,
    sentences.SentenceCount,
    text.FirstWord,
    text.LastWord,
    text.Contains,
    text.NotContains,
    text.Regex,
    text.NotRegex,
    text.NotEmpty,
    json_checks.JsonValid,
    json_checks.JsonPathEquals,
    json_checks.JsonPathType,
    json_checks.JsonPathLength,
    tools.ToolCalled,
    tools.ToolNotCalled,
    tools.ToolArgEquals,
    tools.ToolArgRegex,
    tools.ToolCallCount,
    tools.ToolCallAt,
    tools.ToolArgAt,
    calls.ToolCallsMatch,
    conform.ToolArgsConform,
    counting.RegexCount,
    counting.LetterCount,
    counting.CapitalWordCount,
    layout.ParagraphCount,
    layout.ParagraphFirstWord,
    layout.ResponseCount,
    layout.Title,
    edges.StartsWith,
    edges.EndsWith,
    edges.WrappedIn,
    language.Language,
    language.LetterCase,
    instruction.Instruction,
    environment.StateMatches,
    environment.ResultsInclude,
)


@hookimpl
def register_check_types(register: RegisterCheckType) -> None:
    """Register the 38 built-in check types."""
    for check_type in CHECK_TYPES:
        register(check_type)


@hookimpl
def register_backends(register: RegisterBackend) -> None:
    """Register the built-in backends: an OpenAI-compatible server, and a model run in-process."""
    from tsuka_core.backends.embedded import EmbeddedBackend
    from tsuka_core.backends.openai import OpenAIBackend

    register(OpenAIBackend)
    register(EmbeddedBackend)


@hookimpl
def register_suites(register: RegisterSuite) -> None:
    """Register the default suite, the extended and toolcount suites, BFCL's when bfcl-eval is installed, and
    IFEval's when its data file is named (TSUKA_IFEVAL_DATA)."""
    from tsuka_core.suite.identity import DEFAULT_SUITE
    from tsuka_core.suite.loading import default_suite_path, suite_files

    register(DEFAULT_SUITE, default_suite_path())
    for name in ("extended", "toolcount"):
        folder = files("tsuka_checks_builtin") / "suites" / name
        if isinstance(folder, Path) and suite_files(folder):
            register(name, folder)
    try:
        converted = bfcl.bfcl_suites(bfcl.cache_root())
    except (OSError, ValueError, LookupError, TypeError, AttributeError) as exc:  # data of another shape
        warnings.warn(f"BFCL's suites are left out: its installed data cannot be converted ({exc!r})", stacklevel=2)
        converted = {}
    for name, folder in converted.items():
        register(name, folder)
    found = ifeval.ifeval_suite(bfcl.cache_root())
    if found is not None:
        register(ifeval.SUITE, found)


@hookimpl
def register_scorecards(register: RegisterScorecard) -> None:
    """Register BFCL's score table for the bfcl-* suites, and IFEval's four accuracies for the ifeval suite."""
    from tsuka_checks_builtin.bfcl.scorecard import BfclScorecard
    from tsuka_checks_builtin.ifeval.scorecard import IfevalScorecard

    register(BfclScorecard)
    register(IfevalScorecard)


@hookimpl
def register_tool_environments(register: RegisterToolEnvironment) -> None:
    """Register BFCL's multi-turn classes as the ``bfcl`` tool environment (used when bfcl-eval is installed)."""
    from tsuka_checks_builtin.bfcl.environment import BfclEnvironment

    register(BfclEnvironment)
