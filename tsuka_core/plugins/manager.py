"""Build the plugin manager: the hook specs, then every plugin found through the entry-point group."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from tsuka_core.errors import PluginError
from tsuka_core.plugins import hookspecs

__all__ = ["BUILTIN_DISTRIBUTION", "LOAD_ENV", "LoadedPlugin", "discover", "new_plugin_manager"]

BUILTIN_DISTRIBUTION = "tsuka"
"""The distribution that ships the built-in plugins; it always loads."""
LOAD_ENV = "TSUKA_LOAD_PLUGINS"
"""Comma-separated distribution names to load besides the built-ins; set but empty means built-ins only."""


@dataclass(frozen=True)
class LoadedPlugin:
    """One plugin as loaded: where it came from and the object registered."""

    entry_point: str
    distribution: str
    version: str
    plugin: Any = field(compare=False, repr=False)

    @property
    def key(self) -> str:
        """The name the plugin is registered under: ``distribution:entry_point``."""
        return f"{self.distribution}:{self.entry_point}"


def new_plugin_manager() -> pluggy.PluginManager:
    """An empty plugin manager that knows tsuka's hook specs."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _wanted(env: str | None) -> set[str] | None:
    if env is None:
        return None
    return {name.strip().lower().replace("_", "-") for name in env.split(",") if name.strip()}


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def _entry_points(group: str) -> list[tuple[metadata.EntryPoint, str, str]]:
    """The entry points of ``group`` with their distribution's name and version, as ``importlib.metadata`` finds them.

    The standard call parses every installed distribution's entry points; with
    hundreds installed that was tens of milliseconds of each start. A file that
    does not even contain ``[group]`` is skipped unparsed; of two distributions
    of one name that both have the group, only the first on ``sys.path`` counts.
    Each distribution's metadata is parsed once, for its name and version both.
    """
    header = f"[{group}]"
    found: list[tuple[metadata.EntryPoint, str, str]] = []
    names: set[str] = set()
    for dist in metadata.distributions():
        text = dist.read_text("entry_points.txt")
        if not text or header not in text:
            continue
        meta = dist.metadata
        name = meta["Name"] or "unknown"
        if _normal(name) not in names:
            names.add(_normal(name))
            found.extend((ep, name, meta["Version"] or "?") for ep in dist.entry_points if ep.group == group)
    return found


def discover(env: str | None = None, *, use_environ: bool = True) -> list[LoadedPlugin]:
    """Import every plugin of the ``tsuka`` entry-point group that is allowed to load.

    ``env`` (default: the ``TSUKA_LOAD_PLUGINS`` variable) limits the
    distributions loaded besides the built-ins. A plugin that fails to import
    raises :class:`PluginError` naming its distribution and entry point.
    """
    if env is None and use_environ:
        env = os.environ.get(LOAD_ENV)
    wanted = _wanted(env)
    loaded: list[LoadedPlugin] = []
    seen: set[str] = set()
    for ep, dist_name, version in sorted(_entry_points(hookspecs.PROJECT), key=lambda f: (f[0].value, f[0].name)):
        normal = _normal(dist_name)
        if wanted is not None and normal != BUILTIN_DISTRIBUTION and normal not in wanted:
            continue
        key = f"{normal}:{ep.name}"
        if key in seen:  # the same distribution seen twice on sys.path
            continue
        seen.add(key)
        try:
            obj = ep.load()
        except Exception as exc:
            raise PluginError(
                f"plugin {ep.name!r} of distribution {dist_name!r} failed to import: "
                f"{type(exc).__name__}: {exc}; set {LOAD_ENV} to the plugins to load without it"
            ) from exc
        loaded.append(LoadedPlugin(ep.name, dist_name, version, obj))
    if wanted:
        missing = wanted - {_normal(p.distribution) for p in loaded} - {BUILTIN_DISTRIBUTION}
        if missing:
            raise PluginError(f"{LOAD_ENV} names {', '.join(sorted(missing))}, which provide no tsuka plugin")
    return loaded
