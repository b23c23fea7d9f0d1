"""The profile fields this engine measures beyond the reference's: speed sources, server facts, answer kinds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from tsuka_core.backends.base import ServerFacts
from tsuka_core.engine.faults import FAULT_FIELDS
from tsuka_core.engine.metrics import avg_reasoning_tokens, level_speed
from tsuka_core.engine.results import TestResult

__all__ = ["measured_fields"]


def measured_fields(tests: Sequence[TestResult], facts: ServerFacts | None) -> dict[str, Any]:
    """``speedSource`` and what else is known of a level's answers and its server, as profile fields."""
    speed = level_speed(tests)
    fields: dict[str, Any] = {"speedSource": speed.source}
    optional = {
        "promptTokensPerSecond": speed.prompt_tokens_per_second,
        "timeToFirstTokenMs": speed.time_to_first_token_ms,
        "avgReasoningTokens": avg_reasoning_tokens(tests),
    }
    fields.update({name: value for name, value in optional.items() if value is not None})
    faults = Counter(s.fault for t in tests for s in t.steps if s.fault is not None)
    if any(t.test.tools for t in tests):
        fields["toolCallsInText"] = faults["in_text"]
    if faults:
        fields["answerFaults"] = {name: faults[kind] for kind, name in FAULT_FIELDS.items() if faults[kind]}
    server = facts.as_profile() if facts is not None else {}
    if server:
        fields["server"] = server
    if facts is not None and facts.supports_tools is False:
        fields["toolCallingServerSupport"] = False
    return fields
