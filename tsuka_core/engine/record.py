"""A measured level as its one record (``record.LevelRecord``): what the profile store and the history both keep.

Every value goes through the record's own bounds on the way in, the same the
readers apply: a figure out of range (a rate of 10^16 tokens per second from a
server's timings, say) is left out of the record as "not reported", and
:func:`out_of_range` says which, so that no reader ever finds it as damage.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from tsuka_core.backends.base import BackendConfig
from tsuka_core.engine.confidence import level_confidence
from tsuka_core.engine.results import LevelResult, TestResult
from tsuka_core.judge.scoring import all_categories
from tsuka_core.masking import masked_options
from tsuka_core.record.level import BENCHMARK_VERSION, LevelRecord
from tsuka_core.suite.identity import suite_label
from tsuka_core.timestamps import format_tested_at

__all__ = ["APART", "NOT_REPORTED", "level_record", "out_of_range", "record_of", "sent_limit", "sent_settings"]

APART = "backendExtra"
"""Where a backend's extra fields that bear the name of a record field are kept, never replacing it."""

FROM_BACKEND = ("sampling", "rescoredFrom", "chatTemplate", "compute")
"""Record fields a backend's ``profile_extra`` gives: the sampling it sent, the run a replay answers from, the
chat template an in-process model was rendered with and the threads it computed with."""

NOT_REPORTED: Mapping[str, Any] = {"tokensPerSecond": 0, "avgCompletionTokens": 0}
"""What a field TSUKA requires holds when the figure measured was out of range: 0, its "not reported"."""


def sent_settings(config: BackendConfig, tests: Sequence[TestResult] = ()) -> dict[str, Any]:
    """The record fields every backend's requests were sent with: ``sampling`` set by the user, ``backendOptions``.

    Without ``--max-tokens``, ``maxTokens`` is the limit the answers say their requests sent
    (``ChatResponse.token_limit``) when they all sent the same one: recorded by the engine, whatever the backend.
    """
    sent = sent_limit(tests)
    limit = config.max_tokens if config.max_tokens is not None else sent
    sampling = {"maxTokens": limit, "temperature": config.temperature, "seed": config.seed}
    fields: dict[str, Any] = {"sampling": {k: v for k, v in sampling.items() if v is not None}}
    if config.options:
        fields["backendOptions"] = masked_options(config.options)
    return fields


def sent_limit(tests: Sequence[TestResult]) -> int | None:
    """The completion token limit every answered request of ``tests`` sent, when they agree; else None."""
    limits = {s.response.token_limit for t in tests for s in t.steps if s.response is not None}
    return next(iter(limits)) if len(limits) == 1 else None


def level_record(level: LevelResult, tested_at: datetime | None = None) -> LevelRecord:
    """The record of ``level``, complete or not; out-of-range figures left out (:func:`out_of_range` names them).

    Read it with :func:`record_of`, which builds it once per level. ``tested_at`` replaces the moment the
    level was measured (``level.tested_at``); ``level.extra`` keys named like a record field are kept apart,
    under :data:`APART`; ``level.endpoint``, the project file's endpoint that answered, leads the provider
    (``local http://127.0.0.1:8080/v1``).
    """
    endpoint = level.endpoint
    provider = level.provider or level.backend
    values: dict[str, Any] = {
        "model": level.model,
        "provider": f"{endpoint} {provider}" if endpoint else provider,
        "tier": level.tier,
        "scores": dict(all_categories(level.scores)),
        "tokensPerSecond": level.tokens_per_second,
        "testedAt": format_tested_at(tested_at or level.tested_at),
        "benchmarkVersion": BENCHMARK_VERSION,
        "testsHash": level.suite_hash,
        "testResults": _test_results(level),
        "reasoningEffort": level.effort,
        "avgCompletionTokens": level.avg_completion_tokens,
        "backend": level.backend,
        "effortApplied": level.effort_applied,
    }
    if level.suite_path:
        values["suite"] = suite_label(Path(level.suite_path))
    if level.repeats > 1:
        values["repeats"] = level.repeats
    if level.usage_estimated:
        values["usageEstimated"] = True
    values.update(_settings(level))
    values.update(level.measured)
    values.update(level_confidence(level).as_profile())
    extra = {k: v for k, v in level.extra.items() if k not in FROM_BACKEND}
    clashing = {k: v for k, v in extra.items() if k in values or k == APART or k in LevelRecord.stored_names()}
    values.update({k: v for k, v in extra.items() if k not in clashing})
    values.update({k: level.extra[k] for k in FROM_BACKEND if k != "sampling" and k in level.extra})
    if clashing:  # a backend's (or a hand-edited history's) field named like one of the record's own: kept apart
        values[APART] = clashing
    record = LevelRecord.parse(values)
    left_out = dict(record.damaged)
    if not left_out:
        return record
    kept = {
        k: NOT_REPORTED[k] if k in left_out else v for k, v in values.items() if k not in left_out or k in NOT_REPORTED
    }
    return LevelRecord.parse(kept).leaving_out(left_out)


_KEPT = "_tsuka_record"
"""Where :func:`record_of` keeps a level's record, beside the level's fields (as ``functools.cached_property``
keeps a value)."""


def record_of(level: LevelResult) -> LevelRecord:
    """The level's one record, built the first time it is asked for and kept with the level: the out-of-range
    check, the store, the history and the summary read this one. A changed level (``dataclasses.replace``) is a
    new object, whose record is its own."""
    kept = level.__dict__.get(_KEPT)
    if not isinstance(kept, LevelRecord):
        kept = level_record(level)
        level.__dict__[_KEPT] = kept  # a frozen dataclass: its cache, not a field
    return kept


def out_of_range(record: LevelRecord) -> list[str]:
    """``tokensPerSecond 1e+16`` for each figure the record left out as out of range, or of the wrong kind."""
    return [f"{name} {_shown(value)}" for name, value in record.left_out.items()]


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _settings(level: LevelResult) -> dict[str, Any]:
    """The sampling every request was sent with: what the user set, then what the backend says it sent."""
    fields = dict(level.settings)
    backend_sampling = level.extra.get("sampling")
    if isinstance(backend_sampling, Mapping):
        merged = {**fields.get("sampling", {}), **backend_sampling}
        fields["sampling"] = {k: v for k, v in merged.items() if v is not None}  # None: left to the server
    return fields


def _test_results(level: LevelResult) -> list[dict[str, Any]]:
    """``{name, category, score}`` per test; with repeats, the mean score, its ``spread`` and each run's score."""
    entries: list[dict[str, Any]] = []
    for group in level.per_test:
        entry: dict[str, Any] = {"name": group.test.name, "category": group.test.category, "score": group.score}
        if level.repeats > 1:
            entry["spread"] = group.spread
            entry["runs"] = group.scores
        entries.append(entry)
    return entries
