"""A level's per-answer speed figures as serving benchmarks report them: p50 and p95, each with source and formula.

``speedFigures`` in a profile holds, for the answers of a level, the time to
the first token, the decode and prefill speeds and the end-to-end latency,
each as the median (``p50``) and the slow tail (``p95``: for a time, 95% of
answers took at most this long; for a speed, 95% of answers were at least this
fast, i.e. the 5th percentile of the speeds), with how many answers it rests
on, where it came from and its formula. docs/measurement.md maps the names to
llama-bench's, vLLM's and guidellm's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tsuka_core.backends.base import ChatResponse
from tsuka_core.backends.plausible import rate
from tsuka_core.engine.metrics import speed_of
from tsuka_core.engine.results import TestResult
from tsuka_core.judge.scoring import round_half_up
from tsuka_core.record.facts import SpeedFigure

__all__ = [
    "FORMULAS",
    "TIMING_FIELDS",
    "TOKENS_PER_SECOND",
    "figures_line",
    "figures_of",
    "percentile",
    "speed_figures",
]

FORMULAS: dict[tuple[str, str], str] = {
    ("timeToFirstTokenMs", "stream"): "arrival of the first generated token - request sent (queue wait included)",
    ("timeToFirstTokenMs", "server"): "{prompt_ms} (the server's prompt time; queue wait excluded)",
    ("decodeTokensPerSecond", "stream"): "(completion_tokens - 1) / (arrival of the last token - of the first)",
    ("decodeTokensPerSecond", "server"): "{generated_tokens} / {generation_ms}",
    ("prefillTokensPerSecond", "stream"): "prompt_tokens / time to first token",
    ("prefillTokensPerSecond", "server"): "{prompt_processed} / {prompt_ms}",
    ("latencyMs", "wall"): "end of the answer - request sent (the successful attempt)",
}
"""Each figure's formula, by the source it was measured from; a server's timings are named as the backend's
``server_timing_names`` says (else by their ``ChatResponse`` names)."""
TIMING_FIELDS = ("generated_tokens", "generation_ms", "prompt_processed", "prompt_ms")
"""The ``ChatResponse`` fields a server's timings fill."""

_Value = Callable[[ChatResponse], float | None]


def _ttft(r: ChatResponse) -> float | None:
    return r.first_token_ms


def _decode(r: ChatResponse) -> float | None:
    if r.generation_ms is not None and r.generated_tokens:
        return rate(r.generated_tokens, r.generation_ms)
    return None


def _prefill(r: ChatResponse) -> float | None:
    if r.prompt_ms is not None and r.prompt_processed:
        return rate(r.prompt_processed, r.prompt_ms)
    return None


def _latency(r: ChatResponse) -> float | None:
    return r.duration * 1000 if r.duration > 0 else None


_TIMED: tuple[tuple[str, _Value, bool], ...] = (
    ("timeToFirstTokenMs", _ttft, False),
    ("decodeTokensPerSecond", _decode, True),
    ("prefillTokensPerSecond", _prefill, True),
)
"""The figures the server's timings or the stream give: name, value of one answer, whether higher is better."""


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` (not empty), linearly interpolated between the nearest ranks."""
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def speed_figures(tests: Sequence[TestResult], timing_names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The level's figures, each from the answers that have it; a figure no answer has is left out.

    The time to the first token, decode and prefill speed come from the same
    source as ``tokensPerSecond`` (the server's timings or the stream); with
    wall time only, just the latency is given. ``timing_names``: the backend's ``server_timing_names``.
    """
    return figures_of([s.response for t in tests for s in t.steps if s.response is not None], timing_names)


def figures_of(responses: Sequence[ChatResponse], timing_names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """:func:`speed_figures` of the answers themselves (as the history keeps them)."""
    source = speed_of(responses).source
    names = {field: (timing_names or {}).get(field, field) for field in TIMING_FIELDS}
    figures: dict[str, Any] = {}
    if source != "wall":
        for name, value, faster_is_higher in _TIMED:
            found = [v for r in responses if r.speed_source == source and (v := value(r)) is not None]
            if found:
                figures[name] = _figure(name, source, found, faster_is_higher, names)
    latencies = [v for r in responses if (v := _latency(r)) is not None]
    if latencies:
        figures["latencyMs"] = _figure("latencyMs", "wall", latencies, False, names)
    return figures


def _figure(
    name: str, source: str, values: Sequence[float], faster_is_higher: bool, names: Mapping[str, str]
) -> dict[str, Any]:
    tail = 0.05 if faster_is_higher else 0.95
    return {
        "p50": round_half_up(percentile(values, 0.5), 1),
        "p95": round_half_up(percentile(values, tail), 1),
        "answers": len(values),
        "source": source,
        "formula": FORMULAS[(name, source)].format_map(names),
    }


TOKENS_PER_SECOND = {
    "server": "generated tokens over generation time, from the server's own timings (queue wait excluded)",
    "stream": "tokens after the first over the time from the first to the last, from the stream",
    "wall": "completion tokens over the summed request time (queue wait and prompt included)",
}
"""What a level's ``tokensPerSecond`` is, by its ``speedSource``."""

_SHOWN = (
    ("timeToFirstTokenMs", "TTFT", "ms"),
    ("decodeTokensPerSecond", "decode", "tok/s"),
    ("prefillTokensPerSecond", "prefill", "tok/s"),
    ("latencyMs", "latency", "ms"),
)


def figures_line(figures: Mapping[str, SpeedFigure] | None) -> str | None:
    """The figures on one line, p50/p95 each, with what a streamed figure includes; None when there are none.

    ``p50/p95: TTFT 406.0/520.3 ms, decode 49.9/45.1 tok/s, prefill 1,180.0/900.2 tok/s, latency ...; TTFT and
    prefill include time queued at the server`` (the last part for figures measured on a stream). Read
    leniently: a figure stored damaged is left out.
    """
    parts = []
    queued = False
    for name, label, unit in _SHOWN:
        figure = (figures or {}).get(name)
        if figure is None:
            continue
        p50, p95 = figure.p50, figure.p95
        if p50 is None or p95 is None or not (math.isfinite(p50) and math.isfinite(p95)):
            continue
        parts.append(f"{label} {p50:,.1f}/{p95:,.1f} {unit}")
        queued = queued or (figure.source == "stream" and name != "decodeTokensPerSecond")
    if not parts:
        return None
    caveat = "; TTFT and prefill include time queued at the server" if queued else ""
    return f"p50/p95: {', '.join(parts)}{caveat}"
