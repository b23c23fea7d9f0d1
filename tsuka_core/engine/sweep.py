"""Measure models at effort levels: every test of every level, concurrently, into LevelResults."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from tsuka_core.backends.base import Backend, EffortRejected, ServerFacts
from tsuka_core.backends.budget import BodyBudget
from tsuka_core.backends.http import MAX_BODY_BYTES
from tsuka_core.engine.confidence import with_confidence
from tsuka_core.engine.first_request import FirstAlone, ModelRefused
from tsuka_core.engine.measured import effort_effective, measured_fields, repeats_identical, with_effort_effective
from tsuka_core.engine.metrics import avg_completion_tokens, tokens_per_second
from tsuka_core.engine.record import out_of_range, record_of, sent_settings
from tsuka_core.engine.reliability import reliability_fields
from tsuka_core.engine.results import LevelResult, TestResult, group_runs
from tsuka_core.engine.runner import run_test
from tsuka_core.engine.scorecards import scorecard_fields
from tsuka_core.engine.taskgroups import all_or_none
from tsuka_core.engine.toolcount import toolcount_fields
from tsuka_core.judge.scoring import category_score, tier_for
from tsuka_core.suite.model import Suite, Test
from tsuka_core.terms import CATEGORIES, EFFORTS, Effort

__all__ = ["ModelSweep", "QuietObserver", "SweepObserver", "level_result", "sweep_models", "tool_support_note"]


T = TypeVar("T")


class SweepObserver(Protocol):
    """What a sweep reports while it runs (the CLI's progress display is one)."""

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """A level of ``total`` tests begins."""

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """One test of a level finished (in completion order)."""

    def note(self, message: str) -> None:
        """Something the user must be told (an effort the server refused, say)."""


@dataclass
class QuietObserver:
    """An observer that shows nothing and keeps the notes: what a program gets when it passes none."""

    notes: list[str] = field(default_factory=list)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Ignored."""

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """Ignored."""

    def note(self, message: str) -> None:
        """Kept in :attr:`notes`."""
        self.notes.append(message)


@dataclass
class ModelSweep:
    """One model's levels as measured in this sweep, and its notes."""

    model: str
    levels: list[LevelResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stopped: str | None = None
    """Why the model was not measured at all (the server refused it outright), on one line, without its name."""


def level_result(
    backend: Backend,
    suite: Suite,
    model: str,
    effort: Effort,
    applied: bool,
    tests: Sequence[TestResult],
    repeats: int = 1,
    facts: ServerFacts | None = None,
    endpoint: str | None = None,
) -> LevelResult:
    """Score one level's test results into a LevelResult (errored tests count 0 and mark it incomplete).

    With repeats, ``tests`` holds every run and a test counts with the mean of its runs' scores.
    """
    per_test = group_runs(tests)
    scores = {
        c: category_score([(t.test.weight, t.score) for t in per_test if t.test.category == c]) for c in CATEGORIES
    }
    extra = backend.profile_extra(model, effort if applied else None)
    return LevelResult(
        model=model,
        effort=effort,
        effort_applied=applied,
        tests=tuple(tests),
        scores=scores,
        tier=tier_for(scores),
        tokens_per_second=tokens_per_second(tests),
        avg_completion_tokens=avg_completion_tokens(tests),
        usage_estimated=any(t.usage_estimated for t in tests),
        suite_hash=suite.hash,
        suite_path=str(suite.path),
        provider=backend.provider,
        backend=backend.name,
        extra=extra,
        repeats=repeats,
        measured=measured_fields(tests, facts, backend.server_timing_names)
        | reliability_fields(per_test)
        | toolcount_fields(per_test)
        | scorecard_fields(suite, tests),
        settings=sent_settings(backend.config, tests),
        endpoint=endpoint,
    )


def tool_support_note(model: str, facts: ServerFacts | None) -> str | None:
    """What to say before the tool tests when the server says the model's chat template has no tool support."""
    if facts is None or facts.supports_tools is not False:
        return None
    return (
        f"{model}: the server says its chat template does not support tools (chat_template_caps.supports_tools "
        "is false): tool calling is measured without server tool support; to give it tools, start llama-server "
        "with --jinja and a template that renders them (--chat-template-file FILE, or --chat-template chatml)"
    )


INTERRUPTED = "not answered: the run was interrupted (the same command again asks it)"
"""The error of a test a run cut short never got to: the level it belongs to is recorded, never stored."""


class _Sweeper:
    def __init__(
        self,
        backend: Backend,
        suite: Suite,
        limiter: asyncio.Semaphore,
        observer: SweepObserver,
        on_model: Callable[[ModelSweep], Awaitable[None]],
        repeats: int,
        facts: Mapping[str, ServerFacts],
        listed: Collection[str],
        endpoint: str | None = None,
    ) -> None:
        self.backend, self.suite, self.limiter = backend, suite, limiter
        self.observer, self.on_model, self.repeats = observer, on_model, repeats
        self.facts, self.listed, self.endpoint = facts, listed, endpoint
        self.gates: dict[str, FirstAlone] = {}
        self.done: dict[tuple[str, Effort | None], list[TestResult]] = {}
        """Each running level's finished tests, so that an interrupted level is recorded with what it got."""
        self.budget = BodyBudget.for_bodies(MAX_BODY_BYTES)
        """Large answers read and judged at once, for every model and level of the sweep together."""

    def gate(self, model: str) -> FirstAlone:
        """The limiter of ``model``'s requests: the first goes alone unless the backend listed the model."""
        if model not in self.gates:
            self.gates[model] = FirstAlone(self.limiter, first_alone=model not in self.listed)
        return self.gates[model]

    async def level(self, model: str, effort: Effort | None) -> LevelResult:
        label: Effort = effort or "none"
        self.observer.level_started(model, label, effort is not None, len(self.suite.tests) * self.repeats)

        finished = self.done.setdefault((model, effort), [])

        async def one(test: Test, repeat: int) -> TestResult:
            result = await run_test(self.backend, test, model, effort, self.gate(model), repeat, self.budget)
            finished.append(result)
            self.observer.test_done(model, label, result)
            return result

        runs = [one(test, repeat) for test in self.suite.tests for repeat in range(1, self.repeats + 1)]
        tests = await all_or_none(runs)  # a refused effort (or a cancel) ends the level: no run may still go out
        self._say_notes(model)
        return self._scored(model, effort, tests)

    def _say_notes(self, model: str) -> None:
        """Say what the backend noted (the threads a model loaded with, a template it lacks) as soon as known."""
        for note in self.backend.take_notes(model):
            self.observer.note(f"{model}: {note}")

    def _scored(self, model: str, effort: Effort | None, tests: Sequence[TestResult]) -> LevelResult:
        """The level of ``model`` at ``effort`` (None: not applied, stored as none) from its tests' results."""
        label: Effort = effort or "none"
        facts = self.facts.get(model)
        applied = effort is not None
        return level_result(self.backend, self.suite, model, label, applied, tests, self.repeats, facts, self.endpoint)

    async def model(self, model: str, efforts: Sequence[Effort]) -> ModelSweep:
        swept = ModelSweep(model)
        try:
            await self._sweep(swept, efforts)
        except* ModelRefused as group:
            swept.stopped = f"stopped after the first answer, no further request sent: {group.exceptions[0]}"
            await self._keep(swept, [])
        return swept

    async def _sweep(self, swept: ModelSweep, efforts: Sequence[Effort]) -> ModelSweep:
        model = swept.model
        tools_note = tool_support_note(model, self.facts.get(model))
        if tools_note and any(test.tools for test in self.suite.tests):
            swept.notes.append(tools_note)
            self.observer.note(tools_note)
        if not self.backend.applies_effort:
            note = f"{model}: backend {self.backend.name!r} cannot apply efforts; measured once, stored as none"
            return await self._once(swept, note)
        ignored = await self._effort_ignored(model)
        self._say_notes(model)
        if ignored:
            return await self._once(swept, f"{model}: {ignored}; measured once without it, as none")
        rejected: list[EffortRejected] = []
        try:
            levels = await self._levels(swept, efforts)
        except* EffortRejected as group:
            rejected = [e for e in group.exceptions if isinstance(e, EffortRejected)]
        if rejected:
            note = (
                f"{model}: the server refused the effort parameter ({rejected[0]}); measured once without it, as none"
            )
            return await self._once(swept, note)
        await self._keep(swept, self._effort_effect(swept, levels))
        return swept

    def _sampling_effect(self, swept: ModelSweep, levels: list[LevelResult]) -> None:
        """Say so when repeats at a temperature above 0 all came back identical: pass^k then measures nothing."""
        temperature = self.backend.config.temperature
        same = [level.effort for level in levels if repeats_identical(level)]
        if not same or not temperature:
            return
        note = (
            f"{swept.model}: --repeats {self.repeats} at --temperature {temperature:g} gave identical answers run "
            f"after run at {', '.join(same)}: the server does not sample (llama-server started with --top-k 1 or "
            "--temp 0, or a seed it reuses); pass^k and the spread measure nothing until it does"
        )
        swept.notes.append(note)
        self.observer.note(note)

    def _effort_effect(self, swept: ModelSweep, levels: list[LevelResult]) -> list[LevelResult]:
        """The levels with ``effortEffective`` recorded; a note when the effort changed no answer at all."""
        if effort_effective(levels) is False:
            note = (
                f"{swept.model}: every level gave identical answers and token counts: "
                "the server appears to ignore the effort setting"
            )
            swept.notes.append(note)
            self.observer.note(note)
        return with_effort_effective(levels)

    async def _effort_ignored(self, model: str) -> str | None:
        """The backend's reason to measure ``model`` once; a failure to tell is said, and efforts are sent."""
        try:
            return await self.backend.effort_ignored(model)
        except Exception as exc:  # a backend plugin's bug or an unreachable server: sweep as usual, say so
            self.observer.note(
                f"{model}: backend {self.backend.name!r} could not tell whether efforts apply "
                f"({type(exc).__name__}: {exc}); sweeping the levels as usual"
            )
            return None

    async def _levels(self, swept: ModelSweep, efforts: Sequence[Effort]) -> list[LevelResult]:
        tasks: list[asyncio.Task[LevelResult]] = []
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self.level(swept.model, effort)) for effort in efforts]
        except asyncio.CancelledError:
            # Interrupted: keep every level that finished; one cut short is recorded with the tests it finished,
            # the others marked unanswered, so it is never stored as a profile.
            finished = [t for t in tasks if t.done() and not t.cancelled() and t.exception() is None]
            done = [t.result() for t in finished]
            cut = [e for e, t in zip(efforts, tasks, strict=False) if t not in finished]
            await self._keep(swept, done + [p for e in cut if (p := self._cut_short(swept.model, e)) is not None])
            raise
        return [task.result() for task in tasks]

    def _cut_short(self, model: str, effort: Effort | None) -> LevelResult | None:
        """The level of ``model`` at ``effort`` as far as it got when the run was interrupted; None when nowhere."""
        finished = self.done.get((model, effort)) or []
        if not finished:
            return None
        got = {(r.test.name, r.repeat) for r in finished}
        unanswered = [
            TestResult(test, "error", 0.0, (), INTERRUPTED, repeat)
            for test in self.suite.tests
            for repeat in range(1, self.repeats + 1)
            if (test.name, repeat) not in got
        ]
        return self._scored(model, effort, [*finished, *unanswered])

    async def _keep(self, swept: ModelSweep, levels: list[LevelResult]) -> None:
        self._sampling_effect(swept, levels)
        # Each level's confidence is computed here, once, off the loop: the profile and the summary read it.
        swept.levels = await asyncio.to_thread(with_confidence, levels) if levels else levels
        for level in swept.levels:
            left_out = out_of_range(record_of(level))
            if left_out:
                note = f"{level.model}@{level.effort}: out of range, stored as not reported: {', '.join(left_out)}"
                swept.notes.append(note)
                self.observer.note(note)
        await self.on_model(swept)

    async def _once(self, swept: ModelSweep, note: str) -> ModelSweep:
        swept.notes.append(note)
        self.observer.note(note)
        try:
            level = await self.level(swept.model, None)
        except asyncio.CancelledError:
            cut = self._cut_short(swept.model, None)
            await self._keep(swept, [cut] if cut is not None else [])
            raise
        await self._keep(swept, [level])
        return swept


async def sweep_models(
    backend: Backend,
    suite: Suite,
    models: Sequence[str],
    efforts: Sequence[Effort] = EFFORTS,
    *,
    concurrency: int = 4,
    repeats: int = 1,
    observer: SweepObserver,
    on_model: Callable[[ModelSweep], Awaitable[None]],
    facts: Mapping[str, ServerFacts] | None = None,
    listed: Collection[str] = (),
    endpoint: str | None = None,
) -> list[ModelSweep]:
    """Run the suite for every model at every effort, at most ``concurrency`` requests at once.

    With ``repeats`` above 1 every test runs that many times at each level, as
    independent conversations; a level scores each test with its runs' mean.

    A model's levels are handed to ``on_model`` once all of them are measured
    (or, when the sweep is cancelled, those that finished), so an effort the
    server refuses half-way never leaves a level recorded as applied. Results
    come back in model order, levels in effort order. ``facts`` (what the
    server said about each model) are stored with its profiles; ``endpoint``, the project file's endpoint
    that answers, leads each level's provider.

    A model's first request goes alone, so that a server refusing the model
    (401, 403, 404) costs one request; a model in ``listed`` (named by the
    backend's own model list, which the server answered) starts at full
    concurrency.
    """
    ordered = [e for e in EFFORTS if e in efforts]
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    limiter = asyncio.Semaphore(max(1, concurrency))
    sweeper = _Sweeper(backend, suite, limiter, observer, on_model, repeats, facts or {}, frozenset(listed), endpoint)
    # One model's failure (an unwritable history, say) ends the sweep: the others stop here and now,
    # each keeping what it finished, rather than being cancelled unawaited at the loop's shutdown.
    return await all_or_none([sweeper.model(m, ordered) for m in models])
