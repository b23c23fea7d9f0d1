"""Rescoring: judge the current suite's checks against the answers a recorded run got, without asking any model.

Each test is replayed through the real runner with a backend that answers
only from the recording: a request must equal, message for message and tool
for tool, the one recorded at that step, or the test needs a live run. A run
made with ``--repeats`` is replayed run by run: run K of a test is answered
from run K's recording, so the levels keep each run's score, the mean and the
spread. Profiles are written for the current suite hash only when every
request of every level was answered from the recording.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import httpx

from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse, ServerFacts
from tsuka_core.engine.confidence import with_confidence
from tsuka_core.engine.measured import with_effort_effective
from tsuka_core.engine.record import record_of
from tsuka_core.engine.results import LevelResult, TestResult
from tsuka_core.engine.runner import run_test
from tsuka_core.engine.sweep import level_result
from tsuka_core.errors import RequestError, StoreError, WriteFailedError
from tsuka_core.record.level import LevelRecord
from tsuka_core.run.profiles import stored_profiles
from tsuka_core.storage.history_query import StoredLevel, StoredRun, StoredTest, load_run
from tsuka_core.storage.recorder import RunInfo, RunRecorder
from tsuka_core.storage.store import ProfileStore
from tsuka_core.storage.suite_sections import suite_of
from tsuka_core.suite.model import Suite, Test
from tsuka_core.terms import Effort

__all__ = [
    "NeedsLiveRun",
    "ReplayBackend",
    "RescoreResult",
    "judge_recording",
    "rescore_run",
    "store_rescored",
    "tests_needing_live_run",
]


class NeedsLiveRun(RequestError):  # noqa: N818  (a condition, not a failure)
    """A request the recording cannot answer: it changed, or was never answered."""


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


class ReplayBackend(Backend):
    """Answers each request of one recorded test with the answer recorded for the same request at that step."""

    name: ClassVar[str] = "replay"

    def __init__(
        self,
        level: StoredLevel,
        test: StoredTest | None,
        run: StoredRun,
        client: httpx.AsyncClient,
        *,
        absent: str = "it is new, or renamed",
    ) -> None:
        """Answer from ``test`` (one recorded run of one test); ``absent`` says why there is none when it is None."""
        super().__init__(BackendConfig(), client)
        self._level, self._test, self._run, self._absent = level, test, run, absent
        self._sent = 0

    @property
    def provider(self) -> str:
        """The provider the recorded level's answers came from."""
        return self._level.provider or self._run.provider

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """What the recorded level stored beside its scores, and the run its answers come from."""
        del model, effort
        return {**_backend_facts(self._level.record), "rescoredFrom": self._run.id}

    async def list_models(self) -> list[str]:
        """Only the recorded model."""
        return [self._level.model]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The recorded answer of this step; NeedsLiveRun when the request is not the recorded one."""
        index, self._sent = self._sent, self._sent + 1
        run = f"run {self._run.id}"
        if self._test is None:
            raise NeedsLiveRun(f"{run} has no answers for this test ({self._absent})")
        steps = [s for s in self._test.steps if s.sent and s.response is not None]
        if index >= len(steps) or steps[index].index != index:
            raise NeedsLiveRun(f"{run} has no answer for request {index} of this test")
        recorded = steps[index]
        if recorded.cut:
            raise NeedsLiveRun(f"the answer to request {index} in {run} was too large to keep whole")
        if _canonical([dict(m) for m in request.messages]) != _canonical(list(recorded.messages)):
            raise NeedsLiveRun(
                f"request {index} differs from the one in {run} (a prompt, tool result or system changed)"
            )
        if _canonical([dict(t) for t in request.tools]) != _canonical(list(self._test.tools)):
            raise NeedsLiveRun(f"the tools of this test differ from those in {run}")
        assert recorded.response is not None
        return recorded.response


def _backend_facts(record: LevelRecord) -> dict[str, Any]:
    """What the recorded level's backend said beside its scores, as its record keeps it: the sampling, the chat
    template and compute of an in-process model, and any fact of a plugin backend's own (those named like a
    record field among them, which the new record keeps apart again)."""
    stored = record.stored()
    found = {name: stored.get(name) for name in ("sampling", "chatTemplate", "compute")}
    own = {**(record.backend_extra or {}), **(record.model_extra or {})}
    return {**own, **{k: v for k, v in found.items() if v is not None}}


def _replay_class(name: str) -> type[ReplayBackend]:
    return type("ReplayBackend", (ReplayBackend,), {"name": name})


@dataclass
class RescoreResult:
    """What a rescore found: every level judged again, what it wrote, and what needs a live run."""

    source: StoredRun
    suite: Suite
    levels: list[LevelResult] = field(default_factory=list)
    live: dict[str, list[str]] = field(default_factory=dict)
    """``model@effort`` -> ``test: why`` for each test the recording cannot answer."""
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    recommendations: dict[str, str] = field(default_factory=dict)
    history_run: int | None = None

    @property
    def ok(self) -> bool:
        """True when every request of every level came from the recording."""
        return not self.live


async def _rescore_level(run: StoredRun, level: StoredLevel, suite: Suite, client: httpx.AsyncClient) -> LevelResult:
    """Every run of every test of the suite, each replayed from the same run of the recording."""
    cls = _replay_class(level.backend or run.backend)
    recorded = {(t.name, t.repeat): t for t in level.tests}
    applied = level.record.effort_applied is not False
    effort: Effort | None = level.effort if applied else None  # type: ignore[assignment]
    results: list[TestResult] = []
    for test in suite.tests:
        runs = len(level.runs_of(test.name))
        absent = f"only {runs} of its {level.repeats} runs were recorded" if runs else "it is new, or renamed"
        for repeat in range(1, level.repeats + 1):
            backend = cls(level, recorded.get((test.name, repeat)), run, client, absent=absent)
            results.append(await run_test(backend, test, level.model, effort, repeat=repeat))
    stored_effort: Effort = level.effort  # type: ignore[assignment]
    replay = cls(level, None, run, client)
    facts = ServerFacts.from_profile(level.record.server)  # what the server said when the answers were got
    return level_result(replay, suite, level.model, stored_effort, applied, results, level.repeats, facts)


async def _rescore_levels(run: StoredRun, suite: Suite) -> list[LevelResult]:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"a rescore never sends requests (it tried {request.url})")

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        levels = [await _rescore_level(run, level, suite, client) for level in run.levels]
    by_model: dict[str, list[int]] = {}
    for index, recorded in enumerate(run.levels):
        by_model.setdefault(recorded.name or recorded.model, []).append(index)
    for indexes in by_model.values():  # effortEffective, judged from the same answers as the live run did
        for index, level in zip(indexes, with_effort_effective([levels[i] for i in indexes]), strict=True):
            levels[index] = level
    return with_confidence(levels)


def _tested_at(run: StoredRun) -> datetime:
    moment = (run.finished_at or run.started_at).replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(moment)
    except ValueError:
        return datetime.now(UTC)


def rescore_run(
    history: Path, ref: str | int | StoredRun, suite: Suite, store_path: Path, *, write: bool = True
) -> RescoreResult:
    """Judge ``suite`` against the answers of run ``ref`` (or the run loaded); store the profiles when every
    answer was recorded.

    The store is read first, so a corrupt store stops the rescore before
    anything is judged. With ``write=False`` nothing is stored or recorded.
    """
    store = ProfileStore(store_path)
    store.read()
    run = ref if isinstance(ref, StoredRun) else load_run(history, ref)
    result = judge_recording(run, suite)
    if result.ok and write:
        store_rescored(result, store, history)
    return result


def judge_recording(run: StoredRun, suite: Suite) -> RescoreResult:
    """Every level of ``run`` judged again with ``suite`` from its recorded answers; what needs a live run noted."""
    result = RescoreResult(run, suite, asyncio.run(_rescore_levels(run, suite)))
    for recorded, level in zip(run.levels, result.levels, strict=True):
        missing = _needing_live_run(level)
        if missing:
            result.live[recorded.key] = missing
    return result


def _needing_live_run(level: LevelResult) -> list[str]:
    """``test: why`` for each test of ``level`` the recording could not answer.

    A test of which only some runs failed, or whose runs failed for different
    reasons, gets one ``test (run K of N): why`` per failed run instead.
    """
    lines: list[str] = []
    for group in level.per_test:
        failed = [r for r in group.runs if r.status == "error"]
        if len(failed) == len(group.runs) and len({r.error for r in failed}) == 1:
            lines.append(f"{group.test.name}: {failed[0].error}")
        else:
            lines.extend(f"{level.run_label(r)}: {r.error}" for r in failed)
    return lines


def store_rescored(
    result: RescoreResult,
    store: ProfileStore,
    history: Path,
    *,
    kind: str = "rescore",
    options: Mapping[str, Any] | None = None,
) -> None:
    """Store every level under the key its run stored it as, with the endpoint in its provider as the run had it.

    The levels are recorded in ``history`` as a run of ``kind`` (a rescore
    names its source run; a merge, whose sources are in other files, gives
    its ``options`` instead).
    """
    moment = _tested_at(result.source)
    by_model: dict[str, list[LevelResult]] = {}
    for recorded, scored in zip(result.source.levels, result.levels, strict=True):
        # measured when and where the source run was: the store and the history get the same record
        level = replace(scored, tested_at=moment, endpoint=recorded.endpoint)
        by_model.setdefault(recorded.name or level.model, []).append(level)
    for model, levels in by_model.items():
        if not all(level.complete for level in levels):
            raise ValueError(f"{model}: a level with errored tests cannot be stored")
        profiles, recommendations = stored_profiles(levels, model)
        result.profiles.update(profiles)
        result.recommendations.update(recommendations)
    try:
        store.update(result.profiles, result.recommendations, suite_of(next(iter(result.profiles.values()), None)))
    except StoreError as exc:
        raise WriteFailedError(f"{_said(exc)}; no profile was stored, and the {kind} was not recorded") from exc
    try:
        result.history_run = _record(result, history, by_model, kind, options)
    except StoreError as exc:
        stored = ", ".join(result.profiles)
        raise WriteFailedError(
            f"{_said(exc)}; the profiles were stored in {store.path} ({stored}), but the {kind} is not recorded "
            f"in {history}"
        ) from exc


def _said(exc: StoreError) -> str:
    return str(exc).removesuffix("; nothing was written").removesuffix("; what was written before is kept")


def _record(
    result: RescoreResult,
    history: Path,
    by_model: Mapping[str, Sequence[LevelResult]],
    kind: str,
    options: Mapping[str, Any] | None,
) -> int:
    run = result.source
    info = RunInfo(
        suite_path=str(result.suite.path),
        suite_hash=result.suite.hash,
        backend=run.backend,
        provider=run.provider,
        models=list(by_model),
        efforts=list(run.efforts),
        options=dict(run.options if options is None else options),
        kind=kind,
        source_run=run.id if options is None else None,
    )
    recorder = RunRecorder(history, info)
    try:
        for model, levels in by_model.items():
            stored = [level.effort for level in levels]
            recommended = result.recommendations.get(model)
            records = [record_of(level) for level in levels]
            recorder.record_levels(levels, records, stored=stored, recommended=recommended, name=model)
    except StoreError:
        with suppress(StoreError):  # a run left half written is marked so, never taken for a whole one
            recorder.finish("failed")
        raise
    recorder.finish("ok")
    return recorder.run_id


def tests_needing_live_run(result: RescoreResult) -> list[Test]:
    """The tests of the suite that some level could not rescore (in any run), in suite order."""
    names = {t.test.name for level in result.levels for t in level.tests if t.status == "error"}
    return [t for t in result.suite.tests if t.name in names]
