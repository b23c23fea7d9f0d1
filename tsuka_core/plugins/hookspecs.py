"""The plugin contract: the markers plugins use and every hook tsuka calls.

A plugin is a module (or object) with functions marked ``@tsuka_core.hookimpl``,
made known through an entry point in the group ``tsuka``::

    [project.entry-points.tsuka]
    my_checks = "my_package.plugin"

Each hook receives a ``register`` callback and calls it once per thing it adds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from tsuka_core.backends.base import Backend
    from tsuka_core.judge.checks import CheckType
    from tsuka_core.judge.environment import ToolEnvironment
    from tsuka_core.judge.scorecard import Scorecard

__all__ = [
    "HOOKSPEC_VERSION",
    "PROJECT",
    "RegisterBackend",
    "RegisterCheckType",
    "RegisterScorecard",
    "RegisterSuite",
    "RegisterToolEnvironment",
    "hookimpl",
    "hookspec",
]

PROJECT = "tsuka"
"""The pluggy project name, and the entry-point group plugins are found in."""

HOOKSPEC_VERSION = 2
"""The version of the hooks below; raised when a hook is added or changes, so a plugin can check what it gets.

Version 1: ``register_check_types``, ``register_backends`` and ``register_suites``.
Version 2 (tsuka 0.3): ``register_scorecards`` and ``register_tool_environments``.
"""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

RegisterCheckType = Callable[["type[CheckType[Any]]"], None]
RegisterBackend = Callable[["type[Backend]"], None]
RegisterSuite = Callable[[str, "Traversable"], None]
RegisterScorecard = Callable[["type[Scorecard]"], None]
RegisterToolEnvironment = Callable[["type[ToolEnvironment[Any]]"], None]


@hookspec
def register_check_types(register: RegisterCheckType) -> None:
    """Add check types: call ``register(cls)`` once for each :class:`~tsuka_core.CheckType` subclass.

    The class's ``name`` is the ``type`` used in test files; it must be unique
    across every installed plugin. Its ``params_model`` validates a check's
    keys when a suite loads. Example::

        @tsuka_core.hookimpl
        def register_check_types(register):
            register(SentenceCount)
    """


@hookspec
def register_backends(register: RegisterBackend) -> None:
    """Add backends: call ``register(cls)`` once for each :class:`~tsuka_core.Backend` subclass.

    The class's ``name`` is what ``tsuka run --backend`` takes; it must be
    unique across every installed plugin. Example::

        @tsuka_core.hookimpl
        def register_backends(register):
            register(OllamaBackend)
    """


@hookspec
def register_suites(register: RegisterSuite) -> None:
    """Add suites: call ``register(name, folder)`` once for each folder of test files the plugin ships.

    ``name`` is what ``--suite`` takes; it must be unique across every
    installed plugin. ``folder`` is a folder on disk, usually package data::

        @tsuka_core.hookimpl
        def register_suites(register):
            register("extra", importlib.resources.files("my_package") / "suites" / "extra")
    """


@hookspec
def register_scorecards(register: RegisterScorecard) -> None:
    """Add scorecards: call ``register(cls)`` once for each :class:`~tsuka_core.Scorecard` subclass (since 2).

    A scorecard gives the figures a benchmark's own report gives for the suites it ``knows`` (BFCL's score
    table for the ``bfcl-*`` suites): ``figures`` for each level measured, kept in its record, and ``rows``,
    the table ``tsuka scorecard`` prints from them. Its ``name`` must be unique. Example::

        @tsuka_core.hookimpl
        def register_scorecards(register):
            register(MyBenchmarkScorecard)
    """


@hookspec
def register_tool_environments(register: RegisterToolEnvironment) -> None:
    """Add tool environments: call ``register(cls)`` once for each :class:`~tsuka_core.ToolEnvironment` subclass
    (since 2).

    A multi-turn test names one in ``environment.type``; its ``config_model`` validates the test's
    ``environment.config``, and the model's calls really execute in it, in a worker process. Its ``name`` must be
    unique. Example::

        @tsuka_core.hookimpl
        def register_tool_environments(register):
            register(ShoppingCart)
    """
