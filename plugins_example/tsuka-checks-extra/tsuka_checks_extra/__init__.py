"""Extra check types for tsuka: JSON Schema, tool-argument schemas, word ranges, parallel tool calls; a scorecard."""

import tsuka_core

# docs:start hookspec-guard
if getattr(tsuka_core, "HOOKSPEC_VERSION", 0) < 2:  # 0.1 had no version; 2 brought scorecards
    raise ImportError("tsuka-checks-extra needs tsuka 0.3 or later (hook specs version 2)")
# docs:end hookspec-guard

from tsuka_checks_extra.counts import ToolCallCount, WordCountRange
from tsuka_checks_extra.schema import JsonSchema, ToolArgsSchema
from tsuka_checks_extra.scorecard import PassRate

__all__ = ["JsonSchema", "PassRate", "ToolArgsSchema", "ToolCallCount", "WordCountRange"]
