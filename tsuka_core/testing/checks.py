"""Judge one answer with one check type, the way a run judges it, and build a registry from plugin modules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tsuka_core.errors import SuiteError
from tsuka_core.judge.answer import Answer
from tsuka_core.judge.checks import CheckType
from tsuka_core.judge.checks import run_check as _judge
from tsuka_core.judge.outcome import Outcome
from tsuka_core.plugins.manager import LoadedPlugin, discover
from tsuka_core.plugins.registry import Registry, load_registry
from tsuka_core.suite.testfile import check_params

__all__ = ["judge", "registry_of", "run_check"]


def registry_of(*plugins: object, builtins: bool = True) -> Registry:
    """A registry of ``plugins`` (modules or objects with hook implementations), without entry points or globals.

    With ``builtins`` (the default) tsuka's own check types, backends and
    suites are registered too, as they are in a run. Each plugin is named
    after its module (``tsuka_checks_extra.plugin``).
    """
    loaded = discover(env="", use_environ=False) if builtins else []
    for plugin in plugins:
        name = str(getattr(plugin, "__name__", type(plugin).__name__))
        loaded.append(LoadedPlugin(name, name.split(".", maxsplit=1)[0].replace("_", "-"), "test", plugin))
    return Registry.from_plugins(loaded)


def judge(check: CheckType[Any], answer: Answer | str) -> Outcome:
    """Evaluate a built check on ``answer``; a time-out or an exception becomes ``errored``, as in a run."""
    return _judge(check, answer if isinstance(answer, Answer) else Answer(answer))


def run_check(
    check_type: str | type[CheckType[Any]],
    params: Mapping[str, Any] | None,
    answer: Answer | str,
    *,
    registry: Registry | None = None,
) -> Outcome:
    """Judge ``answer`` with one check of ``check_type`` (a registered name or a class) and its ``params``.

    ``params`` are the check's keys besides ``type`` and ``weight``, validated
    as a suite validates them: invalid ones raise :class:`~tsuka_core.SuiteError`
    with one line per problem, worded as ``tsuka validate`` words them (``word_count:
    value: required by check type 'word_count'``). ``answer`` is an
    :class:`~tsuka_core.Answer` or its text. An exception in ``evaluate`` is an
    ``errored`` outcome, as in a run.
    """
    cls = check_type
    if isinstance(check_type, str):
        registry = registry or load_registry()
        found = registry.check_type(check_type)
        if found is None:
            known = ", ".join(sorted(registry.check_types))
            raise SuiteError([f"unknown check type {check_type!r} (registered: {known}){registry.missing_hint()}"])
        cls = found
    assert not isinstance(cls, str)
    validated, problems = check_params(cls, params or {})
    if validated is None:
        raise SuiteError([f"{cls.name}: {line}" for line in problems])
    return judge(cls(validated), answer)
