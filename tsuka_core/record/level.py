"""The one record of a measured level: every field the profile store and the history keep, typed and bounded.

The engine builds it (``engine.record``), the store writes it as a profile, the
history keeps it beside the level's tests, and every reader (the gate, compare,
merge, rescore, the report, ``tsuka profiles``) reads it back through the same
type, field by field (:class:`~tsuka_core.record.lenient.Lenient`). A field's
docstring is its meaning in docs/profiles.md, which ``tools/profiledoc.py``
writes from this class; a new stored field is declared here and set where it is
measured.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import PrivateAttr, StrictBool, StrictInt, field_validator

from tsuka_core.record.lenient import (
    Count,
    Interval,
    Lenient,
    Millis,
    Number,
    Rate,
    Share,
    Tokens,
    interval_or_none,
    is_share,
)
from tsuka_core.terms import Tier

__all__ = ["BENCHMARK_VERSION", "TSUKA_FIELDS", "LevelRecord", "TestRuns"]

BENCHMARK_VERSION = 5
"""This engine's benchmark version; profiles of any other version are stale."""

TSUKA_FIELDS = (
    "model",
    "provider",
    "tier",
    "scores",
    "tokensPerSecond",
    "testedAt",
    "benchmarkVersion",
    "testsHash",
    "testResults",
    "reasoningEffort",
    "avgCompletionTokens",
)
"""The fields the TypeScript TSUKA writes and reads, in its order; every other field is tsuka's own."""


class TestRuns(Lenient):
    """One test of a level: its name, category and score (the mean of its runs), and with repeats each run."""

    __test__: ClassVar[bool] = False  # not a pytest class

    name: str | None = None
    """The test's name."""
    category: str | None = None
    """``instruction``, ``json`` or ``toolCalling`` (or a plugin's category)."""
    score: Share | None = None
    """The score the level counted, 0 to 1, rounded half up to two decimals: with repeats, the mean of ``runs``."""
    spread: Share | None = None
    """With repeats: the population standard deviation of the runs' scores."""
    runs: list[Share] | None = None
    """With repeats: each run's score, in repeat order."""

    @property
    def usable(self) -> bool:
        """Whether it has what a comparison needs: a name, a category and a numeric score."""
        return self.name is not None and self.category is not None and self.score is not None

    @property
    def run_scores(self) -> tuple[float, ...]:
        """Each run's score; the score alone when ``runs`` is absent, empty or damaged."""
        if self.runs:
            return tuple(float(r) for r in self.runs)
        return () if self.score is None else (float(self.score),)


class LevelRecord(Lenient):
    """One model at one effort as measured: TSUKA's fields, then tsuka's own; every field may be absent or damaged."""

    model: str | None = None
    """The model's name, as the backend knows it."""
    provider: str | None = None
    """Where the model was reached: the server's base URL (any user name, password or key in it removed), or the
    backend's name when there is no URL (``embedded``)."""
    tier: Tier | None = None
    """``small``, ``medium`` or ``large``, from the three category scores; an entry without one is not a profile."""
    scores: dict[str, Share] | None = None
    """``instruction``, ``json``, ``toolCalling``: each category's score, 0 to 1, rounded half up to two decimals
    (a category whose score is not a number from 0 to 1 is left out when read)."""
    tokens_per_second: Rate | None = None
    """Completion tokens per second of generation, one decimal: from the server's own timings or the streamed
    tokens when every answer has them, else the summed request durations (``speedSource`` says which); 0 when no
    figure could be believed."""
    tested_at: str | None = None
    """When the level was measured: ISO 8601 in UTC, with milliseconds and ``Z``."""
    benchmark_version: Number | None = None
    """The engine's benchmark version, ``5`` for tsuka (the TypeScript benchmark writes ``4``); any other makes the
    profile stale."""
    tests_hash: str | None = None
    """The hash of the suite the model was measured with (8 hex digits); another than the suite's hash now makes
    the profile stale."""
    test_results: list[TestRuns] | None = None
    """One ``{"name", "category", "score"}`` per test, in suite order; with repeats also ``spread`` and ``runs``."""
    reasoning_effort: str | None = None
    """The level: ``none``, ``low``, ``medium`` or ``xhigh``."""
    avg_completion_tokens: Tokens | None = None
    """The mean, over tests, of each test's mean completion tokens per request."""

    backend: str | None = None
    """The backend that measured it (``openai``, ``embedded``, or a plugin's)."""
    effort_applied: StrictBool | None = None
    """``false`` when the level could not be applied and the model was measured once without any effort parameter
    (the profile is then always ``@none``)."""
    suite: str | None = None
    """The suite measured with: a registered suite's name when its folder was the one measured (``default``,
    ``extended``, a plugin's), else the folder's full path."""
    repeats: StrictInt | None = None
    """Present when each test ran more than once (``--repeats N``): how many times."""
    usage_estimated: StrictBool | None = None
    """Present only when ``true``: the server sent no token usage, and token figures were estimated from text."""
    sampling: dict[str, Any] | None = None
    """The limits and sampling every request was sent with: ``maxTokens``, ``temperature``, ``seed``, and what the
    backend adds (``topK``, ``topP``, ``repeatPenalty``...); a setting left to the server is absent."""
    backend_options: dict[str, Any] | None = None
    """Present when ``--option`` (or a project file's ``options``) set any: the backend options, secret values
    masked."""
    speed_source: Literal["server", "stream", "wall"] | None = None
    """Where ``tokensPerSecond`` came from: ``server`` (the server's own timings), ``stream`` (streamed tokens over
    their time) or ``wall`` (each request's whole duration, time queued at the server included)."""
    prompt_tokens_per_second: Rate | None = None
    """Present when known: prompt tokens per second of prompt processing, one decimal."""
    time_to_first_token_ms: Millis | None = None
    """Present when known: the mean milliseconds to an answer's first token, one decimal."""
    speed_figures: dict[str, dict[str, Any]] | None = None
    """Per figure (``timeToFirstTokenMs``, ``decodeTokensPerSecond``, ``prefillTokensPerSecond``, ``latencyMs``):
    ``p50`` and ``p95`` over the level's answers, ``answers``, ``source`` and ``formula``."""
    avg_reasoning_tokens: Tokens | None = None
    """Present when the server counts reasoning tokens apart: their mean per request."""
    tool_calls_in_text: Count | None = None
    """Present when the suite has tools: how many answers wrote a tool call into their text that the server did
    not turn into ``tool_calls``."""
    answer_faults: dict[str, Count] | None = None
    """Present when any failed answer had a plain cause: counts by failure kind (only kinds that occurred);
    readers take an absent kind as 0."""
    server: dict[str, Any] | None = None
    """Present when the server said anything about itself: ``kind``, ``version``, ``modelFile``, ``slots``,
    ``supportsTools``, ``supportsParallelToolCalls``, ``supportsReasoningEffort``, each only when given."""
    tool_calling_server_support: StrictBool | None = None
    """Present only when ``false``: the server said the model's chat template does not support tools."""
    pass_hat_k: dict[str, list[Share]] | None = None
    """Present with ``--repeats N`` above 1: per category, pass^1 .. pass^N (docs/reliability.md), unrounded."""
    flaky_tests: list[str] | None = None
    """Present with ``passHatK``: the tests that passed some runs and failed others."""
    tool_count_scores: dict[str, Share] | None = None
    """Present when the suite offers one task with different numbers of tools: the tool score at each count."""
    tool_count_tolerance: Number | None = None
    """With ``toolCountScores``: the largest count up to which every count scores within 0.1 of the one-tool
    score; ``tsuka gate`` offers at most that many tools (docs/gating.md)."""
    effort_effective: StrictBool | None = None
    """Present when two or more levels had the effort applied: ``false`` when every level gave identical answers."""
    rescored_from: Count | None = None
    """Present when the level was judged again from a recorded run's answers: that run's number."""
    intervals: dict[str, Interval | None] | None = None
    """The 95% interval of each category score, ``[lo, hi]``, from a seeded bootstrap over the level's tests; a
    category's malformed interval reads as None."""
    tier_confidence: Share | None = None
    """The share of bootstrap resamples that give the measured ``tier``; under 0.8 the tier is borderline."""
    backend_extra: dict[str, Any] | None = None
    """Present when a backend (or a hand-edited history) gave a fact named like one of the record's own fields:
    those facts, kept apart, never replacing the record's."""

    _left_out: dict[str, Any] = PrivateAttr(default_factory=dict)

    @classmethod
    def stored_names(cls) -> frozenset[str]:
        """Every field's stored (camelCase) name."""
        return frozenset(str(info.alias) for info in cls.model_fields.values())

    def leaving_out(self, figures: Mapping[str, Any]) -> LevelRecord:
        """This record, remembering ``figures`` (stored name -> value) as left out when it was written."""
        self._left_out = dict(figures)
        return self

    @property
    def left_out(self) -> Mapping[str, Any]:
        """What the writer left out as out of range or of the wrong kind (never stored), by stored name."""
        return self._left_out

    @field_validator("scores", mode="before")
    @classmethod
    def _numeric_scores(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: v for k, v in value.items() if is_share(v)}
        return value

    @field_validator("intervals", mode="before")
    @classmethod
    def _each_interval(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: interval_or_none(v) for k, v in value.items()}
        return value

    @property
    def is_profile(self) -> bool:
        """Whether the entry is a profile at all: an object with a known tier."""
        return self.is_object and self.tier is not None

    def status(self, suite_hash: str) -> tuple[bool, str]:
        """Whether it may be used with the suite hashed ``suite_hash``, and why not.

        ``(True, "valid")``; ``(False, "stale: ...")`` naming what differs; ``(False, "not a profile")``.
        """
        if not self.is_profile:
            return False, "not a profile"
        reasons: list[str] = []
        if self.benchmark_version != BENCHMARK_VERSION:
            version = self.found("benchmarkVersion")
            shown = "missing" if version is None else json.dumps(version)
            reasons.append(f"benchmarkVersion {shown}, this engine is {BENCHMARK_VERSION}")
        if self.tests_hash != suite_hash:
            stored = self.found("testsHash")
            shown = "missing" if stored is None else str(stored)
            reasons.append(f"suite changed (testsHash {shown}, suite now {suite_hash})")
        if reasons:
            return False, "stale: " + "; ".join(reasons)
        return True, "valid"

    def stored(self) -> dict[str, Any]:
        """The record as JSON: the fields set, TSUKA's in its order, then tsuka's own, then any other key kept."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
