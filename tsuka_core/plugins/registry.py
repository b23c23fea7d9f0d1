"""The only code that calls hooks: it turns loaded plugins into name-to-class (and name-to-suite) maps."""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pluggy

from tsuka_core.errors import PluginError
from tsuka_core.judge.checks import ROLES
from tsuka_core.plugins.manager import LOAD_ENV, FailedPlugin, LoadedPlugin, discover, new_plugin_manager, said

if TYPE_CHECKING:
    from tsuka_core.backends.base import Backend
    from tsuka_core.judge.checks import CheckType
    from tsuka_core.judge.environment import ToolEnvironment
    from tsuka_core.judge.scorecard import Scorecard

__all__ = ["Registered", "RegisteredSuite", "Registry", "load_registry"]

T = TypeVar("T")


@dataclass(frozen=True)
class Registered(Generic[T]):
    """A class a plugin registered, and the plugin that did."""

    cls: T
    plugin: LoadedPlugin

    @property
    def distribution(self) -> str:
        """The distribution that provides the class."""
        return self.plugin.distribution


@dataclass(frozen=True)
class RegisteredSuite:
    """A suite a plugin registered: its folder of test files, and the plugin that did."""

    path: Path
    plugin: LoadedPlugin

    @property
    def distribution(self) -> str:
        """The distribution that provides the suite."""
        return self.plugin.distribution


@dataclass
class Registry:
    """Every check type, backend and suite the loaded plugins registered, by name."""

    plugins: list[LoadedPlugin]
    check_types: dict[str, Registered[type[CheckType[Any]]]] = field(default_factory=dict)
    backends: dict[str, Registered[type[Backend]]] = field(default_factory=dict)
    suites: dict[str, RegisteredSuite] = field(default_factory=dict)
    scorecards: dict[str, Registered[type[Scorecard]]] = field(default_factory=dict)
    environments: dict[str, Registered[type[ToolEnvironment[Any]]]] = field(default_factory=dict)
    failed: list[FailedPlugin] = field(default_factory=list)
    """Installed plugins that failed to import: what they would register is missing."""
    notes: list[str] = field(default_factory=list)
    """What plugins warned of while importing or registering (``plugin KEY: UserWarning: ...``), kept, not raised:
    ``tsuka plugins`` lists them and an unknown name's error gives them."""

    @classmethod
    def from_plugins(cls, plugins: Iterable[LoadedPlugin], failed: Iterable[FailedPlugin] = ()) -> Registry:
        """Register ``plugins`` on a fresh plugin manager and collect what their hooks register.

        ``failed`` are plugins that did not import; names they would have
        registered are reported as possibly theirs (:meth:`missing_hint`).
        """
        plugins = list(plugins)
        pm = new_plugin_manager()
        for plugin in plugins:
            try:
                pm.register(plugin.plugin, name=plugin.key)
            except (pluggy.PluginValidationError, ValueError) as exc:
                raise PluginError(f"plugin {plugin.key} cannot be registered: {exc}") from exc
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin {pm.get_name(exc.plugin) or exc.plugin}: {exc}") from exc
        registry = cls(plugins, failed=list(failed))
        for plugin in plugins:
            others = [p.plugin for p in plugins if p is not plugin]
            try:
                with said() as warned:
                    registry._collect(pm, plugin, others)
                registry.notes += [f"plugin {plugin.key}: {line}" for line in (*plugin.warned, *warned)]
            except PluginError:
                raise
            except Exception as exc:
                raise PluginError(
                    f"plugin {plugin.entry_point!r} of distribution {plugin.distribution!r} failed while registering: "
                    f"{type(exc).__name__}: {exc}; set {LOAD_ENV} to the plugins to load without it"
                ) from exc
        return registry

    def _collect(self, pm: pluggy.PluginManager, plugin: LoadedPlugin, others: list[Any]) -> None:
        def adder(kind: str, table: dict[str, Registered[Any]]) -> Callable[[Any], None]:
            def register(cls: Any) -> None:
                name = getattr(cls, "name", None)
                if not isinstance(name, str) or not name:
                    raise PluginError(f"{plugin.key} registered {cls!r}, a {kind} without a name")
                if name in table:
                    first = table[name].plugin
                    raise PluginError(
                        f"{kind} {name!r} is registered twice: by {first.distribution} ({first.key}) "
                        f"and by {plugin.distribution} ({plugin.key}); uninstall one or limit {LOAD_ENV}"
                    )
                table[name] = Registered(cls, plugin)

            return register

        def register_suite(name: object, folder: object) -> None:
            if not isinstance(name, str) or not name:
                raise PluginError(f"{plugin.key} registered suite {folder!r} without a name")
            if not isinstance(folder, PathLike):
                raise PluginError(f"{plugin.key} registered suite {name!r} as {folder!r}, not a folder on disk")
            if name in self.suites:
                first = self.suites[name].plugin
                raise PluginError(
                    f"suite {name!r} is registered twice: by {first.distribution} ({first.key}) "
                    f"and by {plugin.distribution} ({plugin.key}); uninstall one or limit {LOAD_ENV}"
                )
            self.suites[name] = RegisteredSuite(Path(folder), plugin)

        add_check_type = adder("check type", self.check_types)

        def register_check_type(cls: Any) -> None:
            add_check_type(cls)
            _check_roles(plugin, cls)

        pm.subset_hook_caller("register_check_types", others)(register=register_check_type)
        pm.subset_hook_caller("register_backends", others)(register=adder("backend", self.backends))
        pm.subset_hook_caller("register_suites", others)(register=register_suite)
        pm.subset_hook_caller("register_scorecards", others)(register=adder("scorecard", self.scorecards))
        environments = adder("tool environment", self.environments)
        pm.subset_hook_caller("register_tool_environments", others)(register=environments)

    def check_type(self, name: str) -> type[CheckType[Any]] | None:
        """The check type called ``name``, or ``None``."""
        entry = self.check_types.get(name)
        return entry.cls if entry else None

    def backend(self, name: str) -> type[Backend] | None:
        """The backend called ``name``, or ``None``."""
        entry = self.backends.get(name)
        return entry.cls if entry else None

    def environment(self, name: str) -> type[ToolEnvironment[Any]] | None:
        """The tool environment called ``name``, or ``None``."""
        entry = self.environments.get(name)
        return entry.cls if entry else None

    def scorecard_of(self, suite: str) -> Scorecard | None:
        """A registered scorecard that knows the suite called ``suite`` (a registered name or a folder)."""
        return next((sc for entry in self.scorecards.values() if (sc := entry.cls()).knows(suite)), None)

    def missing_hint(self) -> str:
        """For an unknown name: what plugins said while loading, and ``; a plugin that failed to import may provide it
        (...)`` when one did; else ``""``."""
        said = [note for note in self.notes if "DeprecationWarning: " not in note]  # those say how to import
        hint = f"; plugins said: {'; '.join(said)}" if said else ""
        if not self.failed:
            return hint
        return f"{hint}; a plugin that failed to import may provide it ({'; '.join(f.line() for f in self.failed)})"

    def registered_by(self, plugin: LoadedPlugin) -> list[str]:
        """What one plugin registered, as ``check type NAME`` / ``backend NAME`` / ``suite NAME`` lines."""
        found = [f"check type {n}" for n, r in self.check_types.items() if r.plugin is plugin]
        found += [f"backend {n}" for n, r in self.backends.items() if r.plugin is plugin]
        found += [f"suite {n}" for n, s in self.suites.items() if s.plugin is plugin]
        found += [f"scorecard {n}" for n, r in self.scorecards.items() if r.plugin is plugin]
        found += [f"tool environment {n}" for n, r in self.environments.items() if r.plugin is plugin]
        return found


def _check_roles(plugin: LoadedPlugin, cls: Any) -> None:
    """A check type's ``roles`` are names from :data:`ROLES`: another kind is refused, an unknown name warned of."""
    roles = getattr(cls, "roles", None)
    if roles is None:
        return
    if not isinstance(roles, frozenset | set) or not all(isinstance(r, str) for r in roles):
        raise PluginError(
            f"{plugin.key} registered check type {cls.name!r} with roles {roles!r}: roles are a frozenset of names "
            f"({', '.join(ROLES)})"
        )
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        close = [m for name in unknown for m in difflib.get_close_matches(name, ROLES, n=1)]
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        warnings.warn(
            f"check type {cls.name!r} declares unknown role(s) {', '.join(map(repr, unknown))}{hint}, which mean "
            f"nothing to the engine; the roles are: {', '.join(ROLES)}",
            UserWarning,
            stacklevel=2,
        )


_cached: Registry | None = None


def load_registry(*, fresh: bool = False) -> Registry:
    """The registry of every installed plugin (loaded once per process unless ``fresh``).

    A plugin that fails to import does not stop the others: it is listed in
    :attr:`Registry.failed`, and an unknown name's error names it.
    """
    global _cached
    if _cached is None or fresh:
        failed: list[FailedPlugin] = []
        _cached = Registry.from_plugins(discover(failed=failed), failed)
    return _cached
