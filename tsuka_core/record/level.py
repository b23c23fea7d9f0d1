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

from pydantic import Field, JsonValue, PrivateAttr, StrictBool, StrictInt, field_validator

from tsuka_core.record.facts import Compute, Sampling, ServerSaid, SpeedFigure
from tsuka_core.record.figures import ScorecardFigures
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

BENCHMARK_VERSION = 6
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
    """``instruction``, ``json``, ``toolCalling``: each category's score, 0 to 1, rounded half up to two decimals."""
    tokens_per_second: Rate | None = None
    """Completion tokens per second of generation, one decimal: from the server's own timings or the streamed
    tokens when every answer has them, else the summed request durations (``speedSource`` says which;
    [measurement.md](measurement.md)); 0 when the figure measured was out of range (the run says so)."""
    tested_at: str | None = None
    """When the profile was made: ISO 8601 in UTC, with milliseconds and ``Z``."""
    benchmark_version: Number | None = Field(default=None, json_schema_extra={"jsonType": "integer"})
    """The engine's benchmark version, ``6`` for tsuka (the TypeScript benchmark writes ``4``)."""
    tests_hash: str | None = None
    """The hash of the suite the model was measured with (8 hex digits)."""
    test_results: list[TestRuns] | None = None
    """One ``{"name", "category", "score"}`` per test, in suite order; ``score`` rounded half up to two decimals."""
    reasoning_effort: str | None = None
    """The level: ``none``, ``low``, ``medium`` or ``xhigh``."""
    avg_completion_tokens: Tokens | None = Field(default=None, json_schema_extra={"jsonType": "integer"})
    """The mean, over tests, of each test's mean completion tokens per request; 0 when out of range."""

    backend: str | None = None
    """The backend that measured it (``openai``, ``embedded``, or a plugin's)."""
    effort_applied: StrictBool | None = None
    """``false`` when the level could not be applied and the model was measured once without any effort parameter
    (the profile is then always ``@none``)."""
    usage_estimated: StrictBool | None = None
    """Present only when ``true``: the server sent no token usage, and the token figures were estimated from text
    length."""
    repeats: StrictInt | None = None
    """Present only when a level was measured with ``--repeats N`` above 1: how many times each test ran."""
    pass_hat_k: dict[str, list[Share]] | None = None
    """Present only with ``--repeats N`` above 1: per category with tests, the list pass^1 .. pass^N, each the
    weighted mean over the category's tests of C(c, k) / C(N, k) (c = runs that scored 1), unrounded; see
    [reliability.md](reliability.md)."""
    flaky_tests: list[str] | None = None
    """Present with ``passHatK``: the names of the tests that passed some runs and failed others."""
    tool_count_scores: dict[str, Share] | None = None
    """Present when the suite offers the same task with one tool and with more (the ``toolcount`` suite): the tool
    score at each number of tools, ``{"1": 1, "4": 1, "8": 0.9, ...}``."""
    tool_count_tolerance: Number | None = Field(default=None, json_schema_extra={"jsonType": "integer"})
    """With ``toolCountScores``: the largest count up to which every count scores within 0.1 of the one-tool score;
    ``tsuka gate`` offers at most that many tools ([gating.md](gating.md))."""
    suite: str | None = None
    """The suite measured with: the name of a registered suite when its folder was the one measured (``default``
    for the suite installed with tsuka, ``extended`` for ``--suite extended``, or a plugin's suite), else the
    folder's full path; ``tsuka profiles`` shows it, and ``tsuka profiles``, ``tier`` and ``gate`` judge the
    profile against it (see [Valid and stale](#valid-and-stale))."""
    sampling: Sampling | None = None
    """The limits and sampling every request was sent with, whatever the backend: ``maxTokens``, ``temperature``
    and ``seed`` when set (by an option, a project file, or the backend's own default), then what the backend
    says it sent (``topK``, ``topP``, ``repeatPenalty``...); a setting left to the server is absent.
    ``tsuka compare`` says when two sides differ in any of them."""
    chat_template: str | None = None
    """Present for a model run in-process (``embedded``): the chat template its requests were rendered with:
    ``model`` (its own), a tool template of tsuka's in the model's own turn format for a model whose own
    template renders no tools (``chatml-tools.jinja`` for ChatML, also for a file that carries no template;
    ``gemma-tools.jinja`` for Gemma's turns), or ``model, tools: chatml-tools.jinja`` (its own, but tool
    requests in tsuka's ChatML tool template). With ``--option chat_template=FILE``, ``model`` is that file's
    name. Served by llama-server with its own template, such a model gets llama.cpp's generic tool handling
    instead, and its ``toolCalling`` score can differ; the run says so."""
    compute: Compute | None = None
    """Present for a model run in-process (``embedded``): the CPU threads it computed with and why: ``threads``,
    ``cores`` (those the process may run on), ``busyCores`` (kept busy by other programs when the model loaded),
    ``load`` (the one-minute load average then), ``chosenBy`` (``free cores``, or ``option`` for ``--option
    threads=N``), ``parallel`` (answers decoded together: 1 unless ``--option parallel=N``). Speed depends on
    them; the answers do not, unless ``parallel`` is above 1 (llama.cpp's batched decoding is not
    batch-invariant)."""
    backend_options: dict[str, JsonValue] | None = None
    """Present when ``--option`` (or a project file's ``options``) set any: the backend options, ``stream``
    among them, with every secret value masked."""
    speed_source: Literal["server", "stream", "wall"] | None = None
    """Where ``tokensPerSecond`` came from: ``server`` (the server's own generation timings: llama.cpp
    ``timings``, Ollama ``eval_duration``), ``stream`` (the completion tokens after the first over the time from
    the first streamed token to the last), or ``wall`` (each request's whole duration, time queued at the server
    included)."""
    prompt_tokens_per_second: Rate | None = None
    """Present when known: prompt tokens per second of prompt processing, one decimal: from the server's timings
    (tokens served from its prompt cache left out), or streamed, prompt tokens over the time to the first token."""
    time_to_first_token_ms: Millis | None = None
    """Present when known: the mean milliseconds to an answer's first token (with server timings the prompt time,
    which leaves out time queued for a free slot; streamed, the arrival of the first token, queue included), one
    decimal."""
    speed_figures: dict[str, SpeedFigure] | None = None
    """Per figure (``timeToFirstTokenMs``, ``decodeTokensPerSecond``, ``prefillTokensPerSecond``,
    ``latencyMs``), ``p50`` and ``p95`` over the level's answers, ``answers``, ``source`` and ``formula``; only
    ``latencyMs`` when the speed is wall time ([measurement.md](measurement.md))."""
    avg_reasoning_tokens: Tokens | None = Field(default=None, json_schema_extra={"jsonType": "integer"})
    """Present when the server counts reasoning tokens apart (``usage.completion_tokens_details.reasoning_tokens``):
    their mean per request."""
    tool_calls_in_text: Count | None = None
    """Present when the suite has tools: how many answers wrote a tool call into their text (``<tool_call>…``,
    ``[TOOL_CALLS]``, a bare ``{"name", "arguments"}`` object) that the server did not turn into ``tool_calls``."""
    answer_faults: dict[str, Count] | None = None
    """Present when any failed answer had a plain cause: counts by failure kind (only kinds that occurred),
    ``thinkingOnly`` (no answer after reasoning), ``cutAtLimit`` (stopped at the token limit), ``abstained`` (no
    call where one was wanted), ``toolCallsInText``, ``invalidArguments`` (a malformed call), ``wrongTool``,
    ``missingArgument``, ``wrongArguments``, ``extraOrMissingCalls``; [contract.md](contract.md) says when each
    applies. Readers take an absent kind as 0."""
    server: ServerSaid | None = None
    """Present when the server said anything about itself: ``kind`` (``llama.cpp``, ``ollama``), ``version``
    (build), ``modelFile`` (path or digest), ``slots``, ``supportsTools``, ``supportsParallelToolCalls``,
    ``supportsReasoningEffort`` (the chat template's capabilities), each only when given."""
    tool_calling_server_support: StrictBool | None = None
    """Present only when ``false``: the server said the model's chat template does not support tools, so
    ``toolCalling`` was measured without server tool support."""
    effort_effective: StrictBool | None = None
    """Present when two or more levels were measured with the effort applied: ``false`` when every level gave
    identical answers and token counts (the server appears to ignore the effort), else ``true``."""
    rescored_from: Count | None = None
    """Present when ``tsuka rescore`` judged the level again from a recorded run's answers: that run's number."""
    intervals: dict[str, Interval | None] | None = None
    """The 95% interval of each category score, ``{"instruction": [lo, hi], "json": [lo, hi], "toolCalling":
    [lo, hi]}``, from a seeded bootstrap over the level's tests (see [contract.md](contract.md#5-scores-and-tiers));
    always holds the measured score; ``[1, 1]`` for a category whose tests all passed; shown by ``tsuka run``,
    ``tsuka profiles`` and ``tsuka report``."""
    tier_confidence: Share | None = None
    """The share (0 to 1, two decimals) of bootstrap resamples that give the measured ``tier``; under 0.8 the tier
    is borderline, and ``tsuka run``, ``tsuka profiles`` and ``tsuka report`` say so and advise ``--repeats`` or
    the extended suite."""
    scorecard: ScorecardFigures | None = None
    """Present for a suite a registered scorecard knows (BFCL's, IFEval): the scorecard's ``name`` and its
    ``figures`` for this level, each ``{"value": share, "count": items}``; ``tsuka scorecard`` combines the
    figures of every suite it knows into the benchmark's own table."""
    backend_extra: dict[str, JsonValue] | None = None
    """Present when a backend (or a hand-edited history) gave a fact named like one of the fields above: those
    facts, kept apart, never replacing the record's own."""

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
    def tool_scores_by_count(self) -> dict[int, float]:
        """``toolCountScores`` by the number of tools offered; a key that is not a count from 1 (``"0"``, ``"x"``,
        a digit of another script) is left out, whatever its score."""
        scores = self.tool_count_scores or {}
        counted = {int(n): float(s) for n, s in scores.items() if n.isascii() and n.isdigit()}
        return {n: s for n, s in counted.items() if n >= 1}

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

    def mislabelled(self, key: str) -> str | None:
        """Why the record does not belong under ``key`` (``model@effort``): its ``reasoningEffort`` names another
        level; None when it agrees or is absent. (Its ``model`` may differ: a project file's endpoint stores a
        model under a name of its own; the key says whose it is.)"""
        said, effort = self.found("reasoningEffort"), key.rpartition("@")[2]
        if said is not None and said != effort:
            return f"is stored under {json.dumps(key)} but its reasoningEffort says {json.dumps(said)[:40]}"
        return None

    def stored(self) -> dict[str, Any]:
        """The record as JSON: the fields set, TSUKA's in its order, then tsuka's own, then any other key kept."""
        return super().stored()
