"""How ``tsuka run`` uses the project file: its values under the flags, ``--show-config``, one sweep of endpoints."""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click
from click.core import ParameterSource

if TYPE_CHECKING:
    from tsuka_core.cli.projectfile import Endpoint, Project
    from tsuka_core.engine.sweep import SweepObserver
    from tsuka_core.plugins.registry import Registry
    from tsuka_core.session import RunOptions, RunReport
    from tsuka_core.suite.model import Suite

__all__ = ["endpoint_plan", "project_options", "run_endpoints"]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_PROJECT = "tsuka.project"
_FILE_KEYS = (
    "suite",
    "profiles",
    "efforts",
    "concurrency",
    "timeout",
    "retries",
    "repeats",
    "temperature",
    "max_tokens",
    "history",
    "junit",
    "json_file",
    "min_tier",
)
"""Top-level keys of the file that set the ``tsuka run`` option of the same name."""


def project_options(func: F) -> F:
    """Add ``--config`` and ``--show-config``; put the file's values under the flags the user gave."""

    @click.option(
        "--config",
        "config_file",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Project file (default: tsuka.toml here, else [tool.tsuka] of pyproject.toml).",
    )
    @click.option("--show-config", is_flag=True, help="Print the settings the run would use (secrets masked) and exit.")
    @functools.wraps(func)
    def wrapper(config_file: Path | None, show_config: bool, **kwargs: Any) -> Any:
        from tsuka_core.cli.projectfile import load_project

        ctx = click.get_current_context()
        project = load_project(config_file)
        ctx.meta[_PROJECT] = project
        if project is not None:
            merge(ctx, project, kwargs)
        if show_config:
            click.echo(json.dumps(shown(ctx, project, kwargs), indent=2, default=str))
            ctx.exit(0)
        return func(**kwargs)

    return cast("F", wrapper)


def from_command_line(ctx: click.Context, name: str) -> bool:
    """True when the user gave option ``name`` on the command line."""
    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.PROMPT)


def merge(ctx: click.Context, project: Project, values: dict[str, Any]) -> None:
    """Set each option the file holds unless the command line gave it (the file wins over defaults and variables)."""
    from tsuka_core.cli.projectfile import PATH_KEYS

    data = project.data
    for key in _FILE_KEYS:
        value = getattr(data, key)
        if value is None or from_command_line(ctx, key):
            continue
        if key in PATH_KEYS:
            value = project.resolve(value)
        elif key == "efforts":
            value = tuple(value)
        values[key] = value


def shown(ctx: click.Context, project: Project | None, values: dict[str, Any]) -> dict[str, Any]:
    """The merged settings as JSON, with every secret masked."""
    from tsuka_core.common import redact_url
    from tsuka_core.storage.recorder import safe_options

    settings = {key: list(v) if isinstance(v, tuple) else v for key, v in values.items()}
    if settings.get("base_url"):
        settings["base_url"] = redact_url(str(settings["base_url"]))
    pairs = dict(item.partition("=")[::2] for item in values.get("backend_option") or ())
    settings["backend_option"] = [f"{k}={v}" for k, v in safe_options(pairs).items()]
    endpoints = []
    for endpoint in project.data.endpoints if project else []:
        item = endpoint.model_dump()
        item["base_url"] = redact_url(endpoint.base_url) if endpoint.base_url else None
        item["options"] = safe_options(endpoint.options)
        if endpoint.api_key_env:
            item["api_key"] = "***" if os.environ.get(endpoint.api_key_env) else "(not set)"
        endpoints.append(item)
    return {"file": str(project.path) if project else None, "run": settings, "endpoints": endpoints}


def endpoint_plan(base: RunOptions, models: Sequence[str]) -> list[tuple[Endpoint, RunOptions]]:
    """One RunOptions per endpoint of the project file, or none when the command line names its own server."""
    ctx = click.get_current_context()
    project: Project | None = ctx.meta.get(_PROJECT)
    if project is None or not project.data.endpoints:
        return []
    if any(m != "all" for m in models) or any(from_command_line(ctx, k) for k in ("base_url", "backend", "model_path")):
        return []
    plan = []
    for endpoint in project.data.endpoints:
        pairs = {**base.config.options, **{k: _text(v) for k, v in endpoint.options.items()}}
        config = replace(base.config, base_url=endpoint.base_url, options=pairs)
        efforts = base.efforts
        if endpoint.efforts and not from_command_line(ctx, "efforts"):
            efforts = tuple(endpoint.efforts)
        concurrency = base.concurrency
        if endpoint.concurrency and not from_command_line(ctx, "concurrency"):
            concurrency = endpoint.concurrency
        wanted = () if endpoint.models == "all" else tuple(endpoint.models)
        options = replace(
            base, models=wanted, backend=endpoint.backend, config=config, efforts=efforts, concurrency=concurrency
        )
        plan.append((endpoint, replace(options, endpoint=endpoint.name)))
    return plan


def _text(value: str | int | float | bool) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


async def run_endpoints(
    plan: list[tuple[Endpoint, RunOptions]], suite: Suite, registry: Registry, observer: SweepObserver
) -> RunReport:
    """Measure every endpoint at once, each with its own backend, client and concurrency; one merged report.

    Each endpoint's models are listed first so that a model name two endpoints
    serve is stored as ``NAME:model``. An endpoint that fails is named in the
    report's failures; the others go on.
    """
    from tsuka_core.errors import TsukaError
    from tsuka_core.session import run_benchmark

    listed, stopped = await _gathered([_models_of(options, registry) for _, options in plan])
    if stopped:
        from tsuka_core.session import RunReport

        return RunReport("", "", suite, interrupted=True)
    counts = Counter(m for names in listed if isinstance(names, list) for m in set(names))
    failed: list[str] = []
    runs = []
    for (endpoint, options), names in zip(plan, listed, strict=True):
        if isinstance(names, BaseException):
            if _cancelled(names):
                continue
            if not isinstance(names, TsukaError | OSError):
                raise names
            failed.append(f"endpoint {endpoint.name}: {names}")
            continue
        clash = {m: f"{endpoint.name}:{m}" for m in names if counts[m] > 1}
        if clash:
            observer.note(f"endpoint {endpoint.name}: {', '.join(clash)} also served elsewhere; stored as NAME:model")
        runs.append(
            (endpoint, replace(options, models=tuple(names), config=_keyed(endpoint, options), store_names=clash))
        )
    reports, stopped = await _gathered([run_benchmark(options, suite, registry, observer) for _, options in runs])
    merged = _merged(suite, [(e.name, r) for (e, _), r in zip(runs, reports, strict=True)], failed)
    merged.interrupted = merged.interrupted or stopped
    return merged


async def _gathered(jobs: Sequence[Coroutine[Any, Any, T]]) -> tuple[list[T | BaseException], bool]:
    """Every job's result or exception, and whether the run was stopped (Ctrl-C) while they ran.

    A stop cancels every job; each keeps what it completed, and the caller
    reports the run as interrupted rather than ending with a traceback.
    """
    import asyncio

    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        return list(await asyncio.gather(*tasks, return_exceptions=True)), False
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is None or current.uncancel() > 0:
            raise
        return list(await asyncio.gather(*tasks, return_exceptions=True)), True


def _cancelled(exc: BaseException) -> bool:
    import asyncio

    return isinstance(exc, asyncio.CancelledError)


def _keyed(endpoint: Endpoint, options: RunOptions) -> Any:
    """The endpoint's backend configuration with its API key read from the variable it names."""
    from tsuka_core.errors import UsageError

    if not endpoint.api_key_env:
        return options.config
    key = os.environ.get(endpoint.api_key_env)
    if not key:
        raise UsageError(f"endpoint {endpoint.name}: environment variable {endpoint.api_key_env} is not set")
    return replace(options.config, api_key=key)


async def _models_of(options: RunOptions, registry: Registry) -> list[str]:
    from tsuka_core.session import choose_backend, make_backend, make_client

    if options.models:
        return list(options.models)
    async with make_client(1, options.config.timeout, options.proxy) as client:
        backend = make_backend(registry, choose_backend(options.backend, options.config), options.config, client)
        try:
            return await backend.list_models()
        finally:
            await backend.aclose()


def _merged(suite: Suite, reports: list[tuple[str, RunReport | BaseException]], failed: list[str]) -> RunReport:
    from tsuka_core.errors import TsukaError
    from tsuka_core.session import RunReport

    merged = RunReport("", "", suite, failed=list(failed))
    backends, providers = [], []
    for name, report in reports:
        if isinstance(report, BaseException):
            if _cancelled(report):
                merged.interrupted = True
                continue
            if not isinstance(report, TsukaError | OSError):
                raise report
            merged.failed.append(f"endpoint {name}: {report}")
            continue
        backends.append(report.backend)
        providers.append(f"{name} {report.provider}")
        merged.sweeps += report.sweeps
        merged.profiles.update(report.profiles)
        merged.recommendations.update(report.recommendations)
        merged.failed += report.failed
        merged.interrupted = merged.interrupted or report.interrupted
        if merged.history_run is None:
            merged.history_run = report.history_run
    merged.backend = ", ".join(dict.fromkeys(backends))
    merged.provider = ", ".join(providers)
    return merged
