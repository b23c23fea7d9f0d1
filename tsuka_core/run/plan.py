"""What one measurement runs: a run per endpoint of the project file, or the one run the options name."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from tsuka_core.run.endpoints import EndpointRun, run_endpoints

if TYPE_CHECKING:
    from tsuka_core.engine.sweep import SweepObserver
    from tsuka_core.plugins.registry import Registry
    from tsuka_core.run.config import ServerSettings
    from tsuka_core.run.projectfile import Project
    from tsuka_core.run.session import RunOptions, RunReport
    from tsuka_core.suite.model import Suite

__all__ = ["ENDPOINT_OVERRIDES", "EndpointRun", "endpoint_plan", "measure"]

ENDPOINT_OVERRIDES = ("base_url", "backend", "model_path")
"""Options that, given by the caller, name a server of their own: the project file's endpoints are not used."""


def endpoint_plan(
    server: ServerSettings,
    base: RunOptions,
    project: Project | None,
    models: Sequence[str],
    given: Collection[str] = (),
) -> list[EndpointRun]:
    """One run per endpoint of ``project``, or none when the caller names its own server or models.

    ``server`` holds the run's settings, each endpoint's own put over them; ``given`` holds the option names the
    caller set explicitly (``efforts``, ``concurrency``, ``base_url``...): those win over an endpoint's own values.
    """
    if project is None or not project.data.endpoints:
        return []
    if any(m != "all" for m in models) or any(key in given for key in ENDPOINT_OVERRIDES):
        return []
    plan = []
    for endpoint in project.data.endpoints:
        efforts = tuple(endpoint.efforts) if endpoint.efforts and "efforts" not in given else base.efforts
        concurrency = endpoint.concurrency if endpoint.concurrency and "concurrency" not in given else base.concurrency
        wanted = () if endpoint.models == "all" else tuple(endpoint.models)
        checked = endpoint.model_check if endpoint.model_check is not None and "model_check" not in given else None
        options = replace(
            base,
            models=wanted,
            backend=endpoint.backend,
            efforts=efforts,
            concurrency=concurrency,
            endpoint=endpoint.name,
        )
        if checked is not None:
            options = replace(options, model_check=checked)
        plan.append(EndpointRun(endpoint, server.for_endpoint(endpoint), options))
    return plan


async def measure(
    options: RunOptions,
    suite: Suite,
    registry: Registry,
    observer: SweepObserver,
    plan: Sequence[EndpointRun] = (),
) -> RunReport:
    """Measure what ``options`` names, or every endpoint of ``plan`` at once (one history run), into one report."""
    from tsuka_core.run.session import run_benchmark

    if plan:
        return await run_endpoints(list(plan), suite, registry, observer)
    return await run_benchmark(options, suite, registry, observer)
