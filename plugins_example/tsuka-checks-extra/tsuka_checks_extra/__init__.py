"""Extra check types for tsuka: JSON Schema, tool-argument schemas, word and sentence ranges, parallel tool calls."""

from tsuka_checks_extra.counts import SentenceCount, ToolCallCount, WordCountRange, count_sentences
from tsuka_checks_extra.schema import JsonSchema, ToolArgsSchema

__all__ = ["JsonSchema", "SentenceCount", "ToolArgsSchema", "ToolCallCount", "WordCountRange", "count_sentences"]
