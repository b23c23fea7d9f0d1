"""One benchmark run from options to stored profiles: backend, models, sweep, store."""

from __future__ import annotations

import asyncio
import difflib
import os
import urllib.request
from collections.abc import Awaitable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from tsuka_core.backends.apikey import key_or_none
from tsuka_core.backends.base import Backend, BackendConfig, check_options
from tsuka_core.backends.clientpool import spread_client
from tsuka_core.engine.serverprep import MAX_SLOT_CONCURRENCY, concurrency_for, prepare, without_secrets
from tsuka_core.engine.sweep import ModelSweep, QuietObserver, SweepObserver, sweep_models
from tsuka_core.errors import StoreError, UsageError
from tsuka_core.masking import mask_text
from tsuka_core.plugins.registry import Registry
from tsuka_core.run.profiles import stored_profiles
from tsuka_core.run.replicas import ReplicaSet, replica_set
from tsuka_core.run.resume import answers_kept, take_up
from tsuka_core.storage.cache import CachingBackend, cache_stats, served_from_cache
from tsuka_core.storage.recorder import RunInfo, RunRecorder, safe_options
from tsuka_core.storage.store import ProfileStore, profile_key
from tsuka_core.storage.suite_sections import suite_of
from tsuka_core.suite.model import Suite
from tsuka_core.suite.shard import Shard, shard_suite
from tsuka_core.terms import EFFORTS, Effort
from tsuka_core.urls import url_secrets

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
    shard: Shard | None = None
    """Measure only this shard's tests and store no profile: the history keeps them for ``tsuka merge``."""
    resume: bool | None = None
    """Replay the answers a run cut short kept (``run.resume``): None when the newest run of the history is the
    same measurement and did not finish; True whatever ran last; False never."""


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

    @property
    def ok(self) -> bool:
        """True when every requested level was measured and stored."""
        return not self.failed and self.write_error is None


def choose_backend(name: str | None, config: BackendConfig) -> str:
    """The backend to use: the named one, else ``openai`` when a base URL is set, else ``embedded``."""
    if name:
        return name
    if config.base_url or os.environ.get("OPENAI_BASE_URL"):
        return "openai"
    return "embedded"


def make_client(concurrency: int, timeout: float, proxy: str | None = None) -> httpx.AsyncClient:
    """The run's one HTTP client: stock httpx clients of a few kept connections each, one per few requests in flight.

    Every connection is kept and reused for the whole run, so a run at
    concurrency ``j`` opens about ``j`` connections (``backends.clientpool``).
    It takes the proxies of ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
    ``NO_PROXY`` and the CA bundle of ``SSL_CERT_FILE`` from the environment;
    ``proxy``, when given, carries every request instead. A proxy URL httpx
    cannot use is a :class:`UsageError`. ``concurrency`` is a hint only: members
    are opened as requests need them.
    """
    del concurrency
    try:
        return spread_client(httpx.Timeout(timeout, connect=min(timeout, 30.0)), proxy)
    except (ValueError, ImportError, httpx.InvalidURL) as exc:  # a bad URL or scheme, SOCKS without socksio
        where = "--proxy" if proxy else "HTTP_PROXY, HTTPS_PROXY or ALL_PROXY"
        secrets = [s for url in [proxy, *urllib.request.getproxies().values()] if url for s in url_secrets(url)]
        raise UsageError(f"the proxy of {where} cannot be used: {mask_text(str(exc), secrets)}") from None


async def list_models(
    registry: Registry, name: str | None, config: BackendConfig, proxy: str | None = None
) -> tuple[str, list[str], list[str]]:
    """The backend's provider, the models it can reach (what ``tsuka run all`` would measure) and what was said.

    A listed name that holds a secret the run sends is left out, and that is said, as for ``tsuka run all``.
    """
    async with make_client(1, config.timeout, proxy) as client:
        backend = make_backend(registry, choose_backend(name, config), config, client)
        try:
            listed = without_secrets(backend, await backend.list_models())
            return backend.provider, listed, backend.take_notes()
        finally:
            await backend.aclose()


def make_backend(registry: Registry, name: str, config: BackendConfig, client: httpx.AsyncClient) -> Backend:
    """Instantiate the backend called ``name``; an unknown name is a one-line error with a suggestion.

    Without an API key in ``config``, the key is read from the variable the
    backend declares in ``api_key_env``, if it declares one and it is set.
    """
    cls = registry.backend(name)
    if cls is None:
        close = difflib.get_close_matches(name, list(registry.backends), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown backend {name!r}{hint} ('tsuka backends' lists them){registry.missing_hint()}")
    check_options(cls, config.options)
    if config.api_key is None and cls.api_key_env:
        key = key_or_none(cls.api_key_env)
        config = replace(config, api_key=key, api_key_from=cls.api_key_env if key else config.api_key_from)
    return cls(config, client)


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
        kept: list[ModelSweep] = []
        sweeping = False
        if options.shard is not None:
            observer.note(_shard_note(options.shard, suite))
        try:
            prepared = await prepare(backend, options.models, observer, model_check=options.model_check)
            models, facts = prepared.models, prepared.facts
            # A replica set's slots already count each replica's own concurrency.
            concurrency, said = concurrency_for(None if isinstance(asked, ReplicaSet) else options.concurrency, facts)
            if isinstance(asked, ReplicaSet):
                said = asked.places_note()
            if said:
                observer.note(said)
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
                    suite if options.shard is None else shard_suite(suite, options.shard),
                    models,
                    options.efforts,
                    concurrency=concurrency,
                    repeats=options.repeats,
                    observer=observer,
                    on_model=keep,
                    facts=facts,
                    listed=prepared.listed,
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


def _shard_note(shard: Shard, suite: Suite) -> str:
    held = len(shard_suite(suite, shard).tests)
    return (
        f"shard {shard}: {held} of the suite's {len(suite.tests)} tests; no profile is stored until "
        "'tsuka merge' combines the shards' histories"
    )


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
        **({"shard": str(options.shard)} if options.shard is not None else {}),
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
        stored=stored,
        recommended=report.recommendations.get(name),
        notes=swept.notes,
        cached=cached,
        name=name,
        endpoint=options.endpoint,
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
    profiles, recommendations = stored_profiles(swept.levels, name, options.endpoint)
    if options.shard is not None:
        return  # a shard's levels are partial: only the history keeps them, until 'tsuka merge'
    if profiles or recommendations:
        store.update(profiles, recommendations, suite_of(next(iter(profiles.values()), None)))
    report.profiles.update(profiles)
    report.recommendations.update(recommendations)
