"""One benchmark run from options to stored profiles: backend, models, sweep, store."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from tsuka_core.backends.base import Backend, BackendConfig, ServerFacts
from tsuka_core.engine.record import record_of
from tsuka_core.engine.serverprep import MAX_SLOT_CONCURRENCY, concurrency_for, prepare
from tsuka_core.engine.sweep import ModelSweep, QuietObserver, SweepObserver, sweep_models
from tsuka_core.errors import StoreError
from tsuka_core.plugins.registry import Registry
from tsuka_core.run.backend import choose_backend, list_models, make_backend, make_client
from tsuka_core.run.profiles import stored_profiles
from tsuka_core.run.replicas import ReplicaSet, replica_set
from tsuka_core.run.resume import answers_kept, take_up
from tsuka_core.storage.cache import CachingBackend, cache_stats, served_from_cache
from tsuka_core.storage.recorder import RunInfo, RunRecorder, safe_options
from tsuka_core.storage.store import ProfileStore, profile_key
from tsuka_core.storage.suite_sections import suite_of
from tsuka_core.suite.model import Suite
from tsuka_core.suite.selection import Selection
from tsuka_core.suite.shard import Shard
from tsuka_core.terms import EFFORTS, Effort

# choose_backend, list_models, make_backend and make_client live in run.backend; imported from here they still work.
__all__ = ["RunOptions", "RunReport", "choose_backend", "list_models", "make_backend", "make_client", "run_benchmark"]


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs besides the suite and the registry."""

    models: Sequence[str] = ()
    """Model names; empty (or ``all``) means every model the backend can reach."""
    backend: str | None = None
    config: BackendConfig = field(default_factory=BackendConfig)
    efforts: Sequence[Effort] = EFFORTS
    store_path: Path = Path("models_profile.json")
    concurrency: int | None = None
    """Requests in flight at once; None: the server's slots where it reports them, else 4."""
    history_path: Path | None = None
    """The run history file (``tsuka_core.storage.history``) to record the run in; None records nothing."""
    cache_path: Path | None = None
    """Answer requests seen before from this history file's response cache, and keep new answers; None: no cache."""
    repeats: int = 1
    """How many times to run each test at each level; above 1 the response cache is bypassed."""
    proxy: str | None = None
    """The HTTP proxy every request goes through; None: the proxy variables of the environment (HTTP_PROXY...)."""
    endpoint: str | None = None
    """The project file's endpoint this run measures: its name is recorded in each profile's provider."""
    store_names: Mapping[str, str] = field(default_factory=dict)
    """A model's name in the store when not its own (``NAME:model`` when two endpoints serve that model)."""
    model_check: bool = True
    """Refuse a model name the server does not list; False for a gateway serving models it does not list."""
    replicas: Sequence[str] = ()
    """Base URLs of replicas serving the same models (``config.base_url`` unused then): requests spread over them,
    ``concurrency`` being each replica's."""
    selection: Selection = field(default_factory=Selection)
    """Which tests to measure (a shard, the first N, names); a partial run stores no profile: the history keeps
    its levels (a shard's for ``tsuka merge``)."""
    shard: Shard | None = None
    """Deprecated since 0.3.0 (removed in 0.4.0): ``selection=Selection(shard=...)``; still honoured."""
    resume: bool | None = None
    """Replay the answers a run cut short kept (``run.resume``): None when the newest run of the history is the
    same measurement and did not finish; True whatever ran last; False never."""

    def __post_init__(self) -> None:
        """Take a deprecated ``shard`` into ``selection``, with a DeprecationWarning naming the new form."""
        if self.shard is not None:
            warnings.warn(
                "RunOptions(shard=...) is deprecated since tsuka 0.3.0 and goes in 0.4.0: "
                "use RunOptions(selection=Selection(shard=...))",
                DeprecationWarning,
                stacklevel=3,
            )
            object.__setattr__(self, "selection", replace(self.selection, shard=self.shard))


@dataclass
class RunReport:
    """What a run measured, stored and could not measure.

    Its repr leaves out the suite and the results: ``asyncio.run`` formats the
    main task's result when it ends, which for a full repr took seconds at
    2,000 tests.
    """

    backend: str
    provider: str
    suite: Suite = field(repr=False)
    sweeps: list[ModelSweep] = field(default_factory=list, repr=False)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    """The profiles written to the store, by ``model@effort`` key, exactly as written."""
    recommendations: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    """One line per level that could not be measured, naming it and the cause."""
    history_run: int | None = None
    """The id of this run in the run history, when it was recorded."""
    cache: dict[str, int] | None = None
    """``{"hits": n, "misses": n}`` of the response cache, when it was used."""
    interrupted: bool = False
    """True when the run was cancelled (Ctrl-C): ``profiles`` holds the complete levels stored before it stopped."""
    write_error: str | None = None
    """Why the run stopped when the store or the history could not be written (a full disk, say): ``profiles``
    holds exactly what was stored before it."""
    base_url_from_env: bool = False
    """The server's URL came from ``OPENAI_BASE_URL`` (not ``--base-url``): the run's header says so."""
    partial: str | None = None
    """What picked part of the suite (``--limit 2``...): its levels give no tier; None for the whole suite."""

    @property
    def ok(self) -> bool:
        """True when every requested level was measured and stored."""
        return not self.failed and self.write_error is None


async def run_benchmark(
    options: RunOptions,
    suite: Suite,
    registry: Registry,
    observer: SweepObserver | None = None,
    recorder: RunRecorder | None = None,
) -> RunReport:
    """Measure the requested models at the requested efforts and store each complete level.

    The store is read first, so a corrupt store stops the run before any model
    is asked anything. Each model's complete levels and its recommendation are
    written as soon as that model is done. With ``recorder``, the levels go
    into that history run, which its owner ends (one run across endpoints);
    else, with ``options.history_path``, into a run of their own. Without
    ``observer`` nothing is shown (a :class:`QuietObserver` keeps the notes).
    """
    observer = QuietObserver() if observer is None else observer
    store = ProfileStore(options.store_path)
    store.read()
    store.check_writable()
    name = choose_backend(options.backend, options.config)
    pool = options.concurrency or MAX_SLOT_CONCURRENCY  # the sweep keeps to the chosen concurrency
    async with make_client(pool, options.config.timeout, options.proxy) as client:
        asked = _backend(registry, name, options, client, observer)
        backend = answers_kept(
            asked, options.history_path, options.cache_path, options.repeats, options.resume, observer.note
        )
        report = RunReport(backend.name, backend.provider, suite)
        report.base_url_from_env = bool(getattr(asked, "base_url_from_env", False))
        report.partial = options.selection.label()
        kept: list[ModelSweep] = []
        sweeping = False
        said = options.selection.note(suite)
        if said:
            observer.note(said)
        try:
            prepared = await prepare(backend, options.models, observer, model_check=options.model_check)
            models, facts = prepared.models, prepared.facts
            concurrency = _concurrency(asked, options, facts, observer)
            options = replace(options, concurrency=concurrency)
            history = recorder or await _new_history(options, suite, backend, models, observer)
            report.history_run = history.run_id if history is not None else None

            async def keep(swept: ModelSweep) -> None:
                await asyncio.to_thread(_store_model, store, swept, report, options)
                kept.append(swept)
                if history is not None:
                    await asyncio.to_thread(
                        _record_model,
                        history,
                        swept,
                        report,
                        served_from_cache(backend),
                        options,
                    )

            sweeping = True
            report.sweeps = await _recorded(
                history if recorder is None else None,
                report,
                sweep_models(
                    backend,
                    options.selection.apply(suite),
                    models,
                    options.efforts,
                    concurrency=concurrency,
                    repeats=options.repeats,
                    observer=observer,
                    on_model=keep,
                    facts=facts,
                    listed=prepared.listed,
                    endpoint=options.endpoint,
                ),
            )
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is None or task.uncancel() > 0:
                raise
            report.interrupted = True  # the sweep stored every level that had completed; say so, do not crash
        except StoreError as exc:
            if not sweeping:
                raise  # nothing was measured yet: the store or the history could not be opened
            # A write failed (a full disk): the run ends here, and says exactly what the store holds from it.
            report.sweeps = list(kept)
            report.write_error = _stopped_by_write(exc, report)
        finally:
            report.cache = cache_stats(backend)
            await backend.aclose()
            if isinstance(backend, CachingBackend) and backend.store.problem:
                observer.note(backend.store.problem)
    return report


def _concurrency(asked: Backend, options: RunOptions, facts: Mapping[str, ServerFacts], observer: SweepObserver) -> int:
    """Requests in flight, said when the server's slots or a replica set chose it."""
    # A replica set's slots already count each replica's own concurrency.
    concurrency, said = concurrency_for(None if isinstance(asked, ReplicaSet) else options.concurrency, facts)
    if isinstance(asked, ReplicaSet):
        said = asked.places_note()
    if said:
        observer.note(said)
    return concurrency


async def _new_history(
    options: RunOptions, suite: Suite, backend: Backend, models: Sequence[str], observer: SweepObserver
) -> RunRecorder | None:
    """The run's own history run (none without a history), after taking up a run of it cut short."""
    if options.history_path is None:
        return None
    info = run_info(options, suite, backend, models)
    if isinstance(backend, CachingBackend) and not backend.read:
        await asyncio.to_thread(take_up, backend, options.history_path, info, observer.note)
    return await asyncio.to_thread(RunRecorder, options.history_path, info)


def _backend(
    registry: Registry, name: str, options: RunOptions, client: httpx.AsyncClient, observer: SweepObserver
) -> Backend:
    """The run's backend: one server's, or a :class:`ReplicaSet` over ``options.replicas``."""
    if not options.replicas:
        return make_backend(registry, name, options.config, client)
    members = [make_backend(registry, name, replace(options.config, base_url=url), client) for url in options.replicas]
    return replica_set(members, options.concurrency, observer.note)


def run_info(options: RunOptions, suite: Suite, backend: Backend, models: Sequence[str]) -> RunInfo:
    """What the history records about a live run: what was asked of which server, and how."""
    return RunInfo(
        suite_path=str(suite.path),
        suite_hash=suite.hash,
        backend=backend.name,
        provider=backend.provider,
        models=list(models),
        efforts=list(options.efforts),
        options=run_settings(options),
    )


def run_settings(options: RunOptions) -> dict[str, Any]:
    """How a live run asks its server, as the history records it (credentials masked)."""
    config = options.config
    return {
        "concurrency": options.concurrency,
        "timeout": config.timeout,
        "retries": config.retries,
        "maxTokens": config.max_tokens,
        "temperature": config.temperature,
        "seed": config.seed,
        "modelPath": config.model_path,
        "backendOptions": safe_options(config.options),
        "cache": options.cache_path is not None and options.repeats == 1,
        "repeats": options.repeats,
        **options.selection.recorded(),
    }


def _record_model(
    history: RunRecorder, swept: ModelSweep, report: RunReport, cached: frozenset[int], options: RunOptions
) -> None:
    """Write one model of a live run to the history as the store now holds it."""
    name = options.store_names.get(swept.model, swept.model)
    prefix = f"{name}@"
    stored = [key.removeprefix(prefix) for key in report.profiles if key.startswith(prefix)]
    history.record_levels(
        swept.levels,
        [record_of(level) for level in swept.levels],
        stored=stored,
        recommended=report.recommendations.get(name),
        notes=swept.notes,
        cached=cached,
        name=name,
    )


def _stopped_by_write(exc: StoreError, report: RunReport) -> str:
    """One line: the write that failed, that the run stopped, and the profiles stored before it."""
    said = str(exc).removesuffix("; nothing was written").removesuffix("; what was written before is kept")
    stored = ", ".join(report.profiles)
    kept = f"stored before it: {stored}" if stored else "no profile was stored"
    return f"{said}; the run stopped there, {kept}"


async def _recorded(
    history: RunRecorder | None, report: RunReport, sweep: Awaitable[list[ModelSweep]]
) -> list[ModelSweep]:
    """Await the sweep; mark the recorded run ok, failed or interrupted once it ends."""
    try:
        sweeps = await sweep
    except StoreError:
        if history is not None:
            with suppress(StoreError):  # the history may be what could not be written
                await asyncio.to_thread(history.finish, "failed")
        raise
    except BaseException:
        if history is not None:
            await asyncio.to_thread(history.finish, "interrupted")
        raise
    if history is not None:
        await asyncio.to_thread(history.finish, "ok" if report.ok else "failed")
    return sweeps


def _store_model(store: ProfileStore, swept: ModelSweep, report: RunReport, options: RunOptions) -> None:
    name = options.store_names.get(swept.model, swept.model)
    if swept.stopped:
        report.failed.append(f"{name}: {swept.stopped}")
    for level in swept.levels:
        if not level.complete:
            causes = "; ".join(level.errors[:3])
            report.failed.append(f"{profile_key(name, level.effort)} not stored: {causes}")
    profiles, recommendations = stored_profiles(swept.levels, name)
    if options.selection.partial:
        return  # a partial run's levels: only the history keeps them (a shard's until 'tsuka merge')
    if profiles or recommendations:
        store.update(profiles, recommendations, suite_of(next(iter(profiles.values()), None)))
    report.profiles.update(profiles)
    report.recommendations.update(recommendations)
