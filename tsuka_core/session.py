"""One benchmark run from options to stored profiles: backend, models, sweep, store."""

from __future__ import annotations

import asyncio
import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tsuka_core.backends.base import EFFORTS, Backend, BackendConfig, Effort
from tsuka_core.errors import BackendError, UsageError
from tsuka_core.model import Suite
from tsuka_core.registry import Registry
from tsuka_core.store import ProfileStore, profile_from_level, profile_key, recommend
from tsuka_core.sweep import ModelSweep, SweepObserver, sweep_models

__all__ = ["RunOptions", "RunReport", "choose_backend", "make_backend", "make_client", "run_benchmark"]


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs besides the suite and the registry."""

    models: Sequence[str] = ()
    """Model names; empty (or ``all``) means every model the backend can reach."""
    backend: str | None = None
    config: BackendConfig = field(default_factory=BackendConfig)
    efforts: Sequence[Effort] = EFFORTS
    store_path: Path = Path("models_profile.json")
    concurrency: int = 4


@dataclass
class RunReport:
    """What a run measured, stored and could not measure."""

    backend: str
    provider: str
    suite: Suite
    sweeps: list[ModelSweep] = field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The profiles written to the store, by ``model@effort`` key, exactly as written."""
    recommendations: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    """One line per level that could not be measured, naming it and the cause."""

    @property
    def ok(self) -> bool:
        """True when every requested level was measured and stored."""
        return not self.failed


def choose_backend(name: str | None, config: BackendConfig) -> str:
    """The backend to use: the named one, else ``openai`` when a base URL is set, else ``embedded``."""
    if name:
        return name
    if config.base_url or os.environ.get("OPENAI_BASE_URL"):
        return "openai"
    return "embedded"


def make_client(concurrency: int, timeout: float) -> httpx.AsyncClient:
    """The run's one HTTP client, its pool sized to the concurrency."""
    limits = httpx.Limits(max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency))
    return httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(timeout, connect=min(timeout, 30.0)))


def make_backend(registry: Registry, name: str, config: BackendConfig, client: httpx.AsyncClient) -> Backend:
    """Instantiate the backend called ``name``; an unknown name is a one-line error with a suggestion."""
    cls = registry.backend(name)
    if cls is None:
        close = difflib.get_close_matches(name, list(registry.backends), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown backend {name!r}{hint} ('tsuka backends' lists them)")
    return cls(config, client)


async def _resolve_models(backend: Backend, models: Sequence[str]) -> list[str]:
    wanted = [m for m in models if m != "all"]
    if wanted and len(wanted) == len(models):
        return list(dict.fromkeys(wanted))
    found = await backend.list_models()
    if not found:
        raise BackendError(f"backend {backend.name!r} at {backend.provider} lists no models")
    return list(dict.fromkeys([*found, *wanted]))


async def run_benchmark(options: RunOptions, suite: Suite, registry: Registry, observer: SweepObserver) -> RunReport:
    """Measure the requested models at the requested efforts and store each complete level.

    The store is read first, so a corrupt store stops the run before any model
    is asked anything. Each model's complete levels and its recommendation are
    written as soon as that model is done.
    """
    store = ProfileStore(options.store_path)
    store.read()
    name = choose_backend(options.backend, options.config)
    async with make_client(options.concurrency, options.config.timeout) as client:
        backend = make_backend(registry, name, options.config, client)
        report = RunReport(backend.name, backend.provider, suite)
        try:
            models = await _resolve_models(backend, options.models)

            async def keep(swept: ModelSweep) -> None:
                await asyncio.to_thread(_store_model, store, swept, report)

            report.sweeps = await sweep_models(
                backend,
                suite,
                models,
                options.efforts,
                concurrency=options.concurrency,
                observer=observer,
                on_model=keep,
            )
        finally:
            await backend.aclose()
    return report


def _store_model(store: ProfileStore, swept: ModelSweep, report: RunReport) -> None:
    complete = [level for level in swept.levels if level.complete]
    for level in swept.levels:
        if not level.complete:
            causes = "; ".join(level.errors[:3])
            report.failed.append(f"{level.model}@{level.effort} not stored: {causes}")
    profiles = {profile_key(level.model, level.effort): profile_from_level(level) for level in complete}
    best = recommend(complete)
    recommendations = {swept.model: best} if best else {}
    if profiles or recommendations:
        store.update(profiles, recommendations)
    report.profiles.update(profiles)
    report.recommendations.update(recommendations)
