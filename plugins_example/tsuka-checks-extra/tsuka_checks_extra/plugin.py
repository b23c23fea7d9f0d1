"""The plugin module the ``tsuka`` entry point names: it registers every check type of this package."""

from __future__ import annotations

# docs:start hookimpl
import tsuka_core
from tsuka_checks_extra.counts import SentenceCount, ToolCallCount, WordCountRange
from tsuka_checks_extra.schema import JsonSchema, ToolArgsSchema

CHECK_TYPES = (JsonSchema, ToolArgsSchema, WordCountRange, SentenceCount, ToolCallCount)


@tsuka_core.hookimpl
def register_check_types(register: tsuka_core.RegisterCheckType) -> None:
    """Register the five check types of tsuka-checks-extra."""
    for check_type in CHECK_TYPES:
        register(check_type)


# docs:end hookimpl
