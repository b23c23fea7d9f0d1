"""How ``tsuka run`` reads the project file: its values under the flags, ``--show-config``, a plan per endpoint."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click
from click.core import ParameterSource

from tsuka_core.backends.apikey import key_is_set
from tsuka_core.run import plan
from tsuka_core.run.projectfile import PATH_KEYS, load_project
from tsuka_core.storage.recorder import safe_options
from tsuka_core.urls import redact_url

if TYPE_CHECKING:
    from tsuka_core.run.config import ServerSettings
    from tsuka_core.run.projectfile import Project
    from tsuka_core.run.session import RunOptions

__all__ = ["endpoint_plan", "project_options"]

F = TypeVar("F", bound=Callable[..., Any])

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
    "model_check",
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

    settings = {key: _without_credentials(list(v) if isinstance(v, tuple) else v) for key, v in values.items()}
    pairs = dict(item.partition("=")[::2] for item in values.get("backend_option") or ())
    settings["backend_option"] = [f"{k}={v}" for k, v in safe_options(pairs).items()]
    endpoints = []
    for endpoint in project.data.endpoints if project else []:
        item = endpoint.model_dump()
        item["base_url"] = redact_url(endpoint.base_url) if endpoint.base_url else None
        item["options"] = safe_options(endpoint.options)
        if endpoint.api_key_env:
            item["api_key"] = "***" if key_is_set(endpoint.api_key_env) else "(not set)"
        endpoints.append(item)
    return {"file": str(project.path) if project else None, "run": settings, "endpoints": endpoints}


def _without_credentials(value: Any) -> Any:
    """A setting with every URL in it shown without its credentials (``--base-url``, ``--proxy``...)."""
    if isinstance(value, list):
        return [_without_credentials(item) for item in value]
    return redact_url(value) if isinstance(value, str) and "://" in value else value


def endpoint_plan(server: ServerSettings, base: RunOptions, models: Sequence[str]) -> list[plan.EndpointRun]:
    """One run per endpoint of the project file, or none when the command line names its own server."""

    ctx = click.get_current_context()
    given = [
        key
        for key in ("efforts", "concurrency", "model_check", *plan.ENDPOINT_OVERRIDES)
        if from_command_line(ctx, key)
    ]
    return plan.endpoint_plan(server, base, ctx.meta.get(_PROJECT), models, given)
