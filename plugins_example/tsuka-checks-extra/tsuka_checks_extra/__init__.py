"""Extra check types for tsuka: JSON Schema, tool-argument schemas, word ranges, parallel tool calls."""

import tsuka_core

# docs:start hookspec-guard
if getattr(tsuka_core, "HOOKSPEC_VERSION", 0) < 1:  # 0.1 had no version
    raise ImportError("tsuka-checks-extra needs tsuka 0.2 or later (hook specs version 1)")
# docs:end hookspec-guard

from tsuka_checks_extra.counts import ToolCallCount, WordCountRange
from tsuka_checks_extra.schema import JsonSchema, ToolArgsSchema

__all__ = ["JsonSchema", "ToolArgsSchema", "ToolCallCount", "WordCountRange"]
