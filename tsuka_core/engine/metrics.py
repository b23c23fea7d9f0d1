"""Speed and length of a level's answers: completion tokens, generation and prompt speed, reasoning tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsuka_core.backends.base import ChatResponse, SpeedSource
from tsuka_core.backends.plausible import rate
from tsuka_core.engine.results import TestResult, group_runs
from tsuka_core.judge.scoring import round_half_up

__all__ = ["Speed", "avg_completion_tokens", "avg_reasoning_tokens", "level_speed", "speed_of", "tokens_per_second"]


@dataclass(frozen=True)
class Speed:
    """How fast a level's answers came: generation, prompt processing, first token, and where the time came from."""

    tokens_per_second: float
    """Completion tokens per second of generation, one decimal half-up; 0 without time."""
    source: SpeedSource
    """``server``: the server's own timings; ``stream``: first to last streamed token; ``wall``: request time."""
    prompt_tokens_per_second: float | None = None
    """Prompt tokens processed per second, where the server timed it."""
    time_to_first_token_ms: float | None = None
    """Mean milliseconds to the first token, where known."""


def _responses(tests: Sequence[TestResult]) -> list[ChatResponse]:
    return [s.response for t in tests for s in t.steps if s.response is not None]


def avg_completion_tokens(tests: Sequence[TestResult]) -> int:
    """Mean over tests of each test's mean completion tokens per request, rounded half-up to an integer.

    A test run several times counts once, with the requests of all its runs.
    Tests that sent no request are left out; 0 when none sent any.
    """
    pooled = ([c for run in group.runs for c in run.completion_tokens] for group in group_runs(tests))
    means = [sum(tokens) / len(tokens) for tokens in pooled if tokens]
    if not means:
        return 0
    return int(round_half_up(sum(means) / len(means), 0))


def avg_reasoning_tokens(tests: Sequence[TestResult]) -> int | None:
    """Mean reasoning tokens per request over the requests whose server counted them; None when none did."""
    counted = [r.reasoning_tokens for r in _responses(tests) if r.reasoning_tokens is not None]
    return int(round_half_up(sum(counted) / len(counted), 0)) if counted else None


def level_speed(tests: Sequence[TestResult]) -> Speed:
    """The level's speed from the best source every answer has: the server's timings, the stream, else wall time.

    Wall time counts the time a request waited for a free slot at the server,
    so it depends on how many requests were in flight; the other two do not.
    """
    return speed_of(_responses(tests))


def speed_of(responses: Sequence[ChatResponse]) -> Speed:
    """:func:`level_speed` of the answers themselves (as the history keeps them)."""
    timed = [r for r in responses if r.generation_ms is not None]
    if responses and len(timed) == len(responses):
        source: SpeedSource = "server" if all(r.speed_source == "server" for r in timed) else "stream"
        generated = sum(r.completion_tokens if r.generated_tokens is None else r.generated_tokens for r in timed)
        found = _rate(generated, sum(r.generation_ms or 0.0 for r in timed))
        if found is not None:
            return Speed(found, source, _prompt_rate(responses), _first_token_ms(responses))
    wall = _rate(sum(r.completion_tokens for r in responses), sum(r.duration for r in responses) * 1000)
    return Speed(wall or 0.0, "wall", _prompt_rate(responses), _first_token_ms(responses))


def tokens_per_second(tests: Sequence[TestResult]) -> float:
    """Completion tokens per second of generation (see :func:`level_speed`), one decimal half-up; 0 without time."""
    return level_speed(tests).tokens_per_second


def _rate(tokens: int, ms: float) -> float | None:
    """Tokens per second, one decimal half-up; None without time, or past the bound (``plausible.rate``)."""
    found = rate(tokens, ms)
    return None if found is None else round_half_up(found, 1)


def _prompt_rate(responses: Sequence[ChatResponse]) -> float | None:
    timed = [r for r in responses if r.prompt_ms is not None and r.prompt_processed is not None]
    return _rate(sum(r.prompt_processed or 0 for r in timed), sum(r.prompt_ms or 0.0 for r in timed))


def _first_token_ms(responses: Sequence[ChatResponse]) -> float | None:
    known = [r.first_token_ms for r in responses if r.first_token_ms is not None]
    return round_half_up(sum(known) / len(known), 1) if known else None
