"""One sweep across the project file's endpoints: every endpoint measured at once, recorded as one history run."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from tsuka_core.engine.taskgroups import each_outcome
from tsuka_core.errors import TsukaError, UsageError

if TYPE_CHECKING:
    from tsuka_core.engine.results import TestResult
    from tsuka_core.engine.sweep import ModelSweep, SweepObserver
    from tsuka_core.plugins.registry import Registry
    from tsuka_core.run.config import ServerSettings
    from tsuka_core.run.project_model import Endpoint
    from tsuka_core.run.session import RunOptions, RunReport
    from tsuka_core.storage.recorder import RunRecorder
    from tsuka_core.suite.model import Suite
    from tsuka_core.terms import Effort

__all__ = ["EndpointRun", "run_endpoints"]

T = TypeVar("T")


@dataclass(frozen=True)
class EndpointRun:
    """One endpoint of the project file as a run: its server settings (the run's with the endpoint's own) and the
    rest of the run's options."""

    endpoint: Endpoint
    settings: ServerSettings
    options: RunOptions
    """Everything but the server: its ``config`` is made from ``settings`` by :meth:`ready`."""

    def ready(self) -> RunOptions:
        """The endpoint's run options, its backend configuration made from its settings (its API key read: a
        UsageError naming the endpoint when the variable it names is not set)."""
        return replace(self.options, config=self.settings.config(), replicas=self.settings.replicas)


@dataclass(frozen=True)
class Listed:
    """An endpoint ready to measure: its run options, backend, provider and the models it serves."""

    endpoint: Endpoint
    options: RunOptions
    backend: str
    provider: str
    models: list[str]


async def run_endpoints(
    plan: list[EndpointRun], suite: Suite, registry: Registry, observer: SweepObserver
) -> RunReport:
    """Measure every endpoint at once, each with its own backend, client and concurrency; one report, one history run.

    Each endpoint's models are listed first so that a model name two endpoints
    serve is stored as ``NAME:model``. An endpoint whose key variable is not
    set, or that fails, is named in the report's failures; the others go on.
    When no endpoint has the key it needs, nothing runs (a UsageError).
    """
    from tsuka_core.run.session import RunReport

    failed: list[str] = []
    listed = await _ready(plan, registry, observer, failed)
    if listed is None:
        return RunReport("", "", suite, interrupted=True)
    recorder = await _recorder(listed, failed, suite)
    try:
        jobs = [_benchmark(item, suite, registry, observer, recorder) for item in listed]
        reports, stopped = await each_outcome(jobs)
        merged = _merged(suite, list(zip(listed, reports, strict=True)), failed)
        merged.interrupted = merged.interrupted or stopped
    except BaseException:
        await _finish(recorder, "interrupted")
        raise
    merged.history_run = recorder.run_id if recorder is not None else None
    await _finish(recorder, "interrupted" if merged.interrupted else "ok" if merged.ok else "failed")
    return merged


async def _ready(
    plan: list[EndpointRun], registry: Registry, observer: SweepObserver, failed: list[str]
) -> list[Listed] | None:
    """The endpoints that have their key and list their models, named; those that fail go to ``failed``.

    None when the run was stopped while listing.
    """
    keyed = []
    for run in plan:
        try:
            keyed.append((run.endpoint, run.ready()))
        except UsageError as exc:
            failed.append(str(exc))
    if not keyed:
        raise UsageError("no endpoint can run: " + "; ".join(failed))
    results, stopped = await each_outcome([_listed(endpoint, options, registry) for endpoint, options in keyed])
    if stopped:
        return None
    listed = []
    for (endpoint, _), result in zip(keyed, results, strict=True):
        if not isinstance(result, BaseException):
            listed.append(result)
        elif not _cancelled(result):
            failed.append(f"endpoint {endpoint.name}: {_failure(result)}")
    return _named(listed, observer)


def _benchmark(
    item: Listed, suite: Suite, registry: Registry, observer: SweepObserver, recorder: RunRecorder | None
) -> Coroutine[Any, Any, RunReport]:
    """The run of one listed endpoint, its levels going into the shared history run."""
    from tsuka_core.run.session import run_benchmark

    named = Named(observer, item.endpoint.name, item.options.store_names)
    return run_benchmark(item.options, suite, registry, named, recorder)


@dataclass(frozen=True)
class Named:
    """An endpoint's view of the one progress display: its models named as stored, its notes naming it."""

    inner: SweepObserver
    endpoint: str
    names: Mapping[str, str]

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """A level begins, shown under the model's stored name (``NAME:model`` on a clash)."""
        self.inner.level_started(self.names.get(model, model), effort, applied, total)

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """A test of a level finished."""
        self.inner.test_done(self.names.get(model, model), effort, result)

    def note(self, message: str) -> None:
        """A note, naming the endpoint it is about."""
        self.inner.note(f"endpoint {self.endpoint}: {message}")


async def _listed(endpoint: Endpoint, options: RunOptions, registry: Registry) -> Listed:
    """The endpoint's backend, provider and models: those the file names, else every model the server lists."""
    from tsuka_core.run.backend import choose_backend, make_backend, make_client

    async with make_client(1, options.config.timeout, options.proxy) as client:
        backend = make_backend(registry, choose_backend(options.backend, options.config), options.config, client)
        try:
            models = list(options.models) or await backend.list_models()
            return Listed(endpoint, options, backend.name, backend.provider, models)
        finally:
            await backend.aclose()


def _named(listed: Sequence[Listed], observer: SweepObserver) -> list[Listed]:
    """Each endpoint with its models' names in the store: ``NAME:model`` for a model another endpoint serves too."""
    counts = Counter(m for item in listed for m in set(item.models))
    named = []
    for item in listed:
        clash = {m: f"{item.endpoint.name}:{m}" for m in item.models if counts[m] > 1}
        if clash:
            observer.note(
                f"endpoint {item.endpoint.name}: {', '.join(clash)} also served elsewhere; stored as NAME:model"
            )
        options = replace(item.options, models=tuple(item.models), store_names=clash)
        named.append(replace(item, options=options))
    return named


async def _recorder(listed: Sequence[Listed], failed: Sequence[str], suite: Suite) -> RunRecorder | None:
    """The one history run every endpoint records into, or None without a history (or an endpoint to run)."""
    from tsuka_core.run.session import run_settings
    from tsuka_core.storage.recorder import RunInfo, RunRecorder, safe_options
    from tsuka_core.terms import EFFORTS
    from tsuka_core.urls import redact_url

    path = listed[0].options.history_path if listed else None
    if path is None:
        return None
    endpoints: dict[str, Any] = {}
    for item in listed:
        endpoints[item.endpoint.name] = {
            "backend": item.backend,
            "provider": redact_url(item.provider),
            "models": [item.options.store_names.get(m, m) for m in item.models],
            "efforts": list(item.options.efforts),
            "concurrency": item.options.concurrency,
            "backendOptions": safe_options(item.options.config.options),
        }
    settings = run_settings(listed[0].options)
    for key in ("concurrency", "backendOptions", "modelPath"):
        settings.pop(key, None)
    info = RunInfo(
        suite_path=str(suite.path),
        suite_hash=suite.hash,
        backend=", ".join(dict.fromkeys(item.backend for item in listed)),
        provider=", ".join(f"{item.endpoint.name} {redact_url(item.provider)}" for item in listed),
        models=list(dict.fromkeys(m for info in endpoints.values() for m in info["models"])),
        efforts=[e for e in EFFORTS if any(e in item.options.efforts for item in listed)],
        options={**settings, "endpoints": endpoints, "failedEndpoints": list(failed)},
    )
    return await asyncio.to_thread(RunRecorder, path, info)


async def _finish(recorder: RunRecorder | None, status: str) -> None:
    if recorder is not None:
        await asyncio.to_thread(recorder.finish, status)


def _cancelled(exc: BaseException) -> bool:
    return isinstance(exc, asyncio.CancelledError)


def _failure(exc: BaseException) -> str:
    """An endpoint's failure on one line; anything but a TsukaError or OSError is a bug and raised as is."""
    if not isinstance(exc, TsukaError | OSError):
        raise exc
    return str(exc)


def _merged(suite: Suite, reports: Sequence[tuple[Listed, RunReport | BaseException]], failed: list[str]) -> RunReport:
    """One report of every endpoint's: its sweeps and levels named as stored (``NAME:model`` on a clash)."""
    from tsuka_core.run.session import RunReport

    merged = RunReport("", "", suite, failed=list(failed))
    backends, providers = [], []
    for item, report in reports:
        name = item.endpoint.name
        if isinstance(report, BaseException):
            if _cancelled(report):
                merged.interrupted = True
            else:
                merged.failed.append(f"endpoint {name}: {_failure(report)}")
            continue
        backends.append(report.backend)
        providers.append(f"{name} {report.provider}")
        merged.sweeps += [_as_stored(swept, item.options.store_names) for swept in report.sweeps]
        merged.profiles.update(report.profiles)
        merged.recommendations.update(report.recommendations)
        merged.failed += report.failed
        merged.interrupted = merged.interrupted or report.interrupted
        if report.write_error:
            merged.write_error = "; ".join(filter(None, [merged.write_error, f"endpoint {name}: {report.write_error}"]))
    merged.backend = ", ".join(dict.fromkeys(backends))
    merged.provider = ", ".join(providers)
    return merged


def _as_stored(swept: ModelSweep, names: Mapping[str, str]) -> ModelSweep:
    """``swept`` with the model named as the store has it, so the summary, --min-tier and reports find its key."""
    name = names.get(swept.model)
    if name is None:
        return swept
    return replace(swept, model=name, levels=[replace(level, model=name) for level in swept.levels])
