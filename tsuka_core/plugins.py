"""Build the plugin manager: the hook specs, then every plugin found through the entry-point group."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from tsuka_core import hookspecs
from tsuka_core.errors import PluginError

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


def _entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``, as ``importlib.metadata.entry_points(group=...)`` finds them, but cheaper.

    The standard call parses every installed distribution's entry points; with
    hundreds installed that was tens of milliseconds of each start. A file that
    does not even contain ``[group]`` is skipped unparsed; of two distributions
    of one name that both have the group, only the first on ``sys.path`` counts.
    """
    header = f"[{group}]"
    found: list[metadata.EntryPoint] = []
    names: set[str] = set()
    for dist in metadata.distributions():
        text = dist.read_text("entry_points.txt")
        if not text or header not in text:
            continue
        name = _normal(dist.metadata["Name"] or "")
        if name not in names:
            names.add(name)
            found.extend(ep for ep in dist.entry_points if ep.group == group)
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
    for ep in sorted(_entry_points(hookspecs.PROJECT), key=lambda e: (e.value, e.name)):
        dist = ep.dist
        meta = dist.metadata if dist is not None else None  # parsed once: name and version both come from it
        dist_name = meta["Name"] if meta is not None else "unknown"
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
        version = meta["Version"] if meta is not None else "?"
        loaded.append(LoadedPlugin(ep.name, dist_name, version, obj))
    if wanted:
        missing = wanted - {_normal(p.distribution) for p in loaded} - {BUILTIN_DISTRIBUTION}
        if missing:
            raise PluginError(f"{LOAD_ENV} names {', '.join(sorted(missing))}, which provide no tsuka plugin")
    return loaded
