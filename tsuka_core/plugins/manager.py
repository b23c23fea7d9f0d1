"""Build the plugin manager: the hook specs, then every plugin found through the entry-point group."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from tsuka_core.errors import PluginError
from tsuka_core.plugins import hookspecs
from tsuka_core.plugins.moved import import_hint, warn_internal_imports

__all__ = [
    "BUILTIN_DISTRIBUTION",
    "LOAD_ENV",
    "FailedPlugin",
    "LoadedPlugin",
    "discover",
    "new_plugin_manager",
    "note_line",
    "said",
]

BUILTIN_DISTRIBUTION = "tsuka"
"""The distribution that ships the built-in plugins; it always loads."""
LOAD_ENV = "TSUKA_LOAD_PLUGINS"
"""Comma-separated distribution names to load besides the built-ins; set but empty means built-ins only."""
SLOW_IMPORT_SECONDS = 3.0
"""After this long importing one plugin, a line on stderr names it (the import is still waited for)."""


@dataclass(frozen=True)
class LoadedPlugin:
    """One plugin as loaded: where it came from and the object registered."""

    entry_point: str
    distribution: str
    version: str
    plugin: Any = field(compare=False, repr=False)
    warned: tuple[str, ...] = field(default=(), compare=False)
    """The warnings its import raised (a deprecated name it uses, say), kept rather than raised (``said``)."""

    @property
    def key(self) -> str:
        """The name the plugin is registered under: ``distribution:entry_point``."""
        return f"{self.distribution}:{self.entry_point}"


@dataclass(frozen=True)
class FailedPlugin:
    """A plugin whose module raised while it was imported: what it is and why, on one line."""

    entry_point: str
    distribution: str
    version: str
    error: str
    """The exception, ``RuntimeError: ...``, on one line."""

    def line(self) -> str:
        """``plugin 'x' of distribution 'y' failed to import: RuntimeError: ...``."""
        return f"plugin {self.entry_point!r} of distribution {self.distribution!r} failed to import: {self.error}"


def new_plugin_manager() -> pluggy.PluginManager:
    """An empty plugin manager that knows tsuka's hook specs."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _wanted(env: str | None) -> set[str] | None:
    if env is None:
        return None
    return {_normal(name.strip()) for name in env.split(",") if name.strip()}


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def discover(
    env: str | None = None, *, use_environ: bool = True, failed: list[FailedPlugin] | None = None
) -> list[LoadedPlugin]:
    """Import every plugin of the ``tsuka`` entry-point group that is allowed to load.

    ``env`` (default: the ``TSUKA_LOAD_PLUGINS`` variable) limits the
    distributions loaded besides the built-ins; of two copies of one
    distribution on ``sys.path`` the first counts, as ``importlib.metadata``
    has it. A plugin that fails to import raises :class:`PluginError` naming
    its distribution and entry point; with a ``failed`` list it is added there
    instead, and the others load (the built-ins' failure is raised always).
    """
    if env is None and use_environ:
        env = os.environ.get(LOAD_ENV)
    wanted = _wanted(env)
    loaded: list[LoadedPlugin] = []
    for ep in sorted(metadata.entry_points(group=hookspecs.PROJECT), key=lambda ep: (ep.value, ep.name)):
        dist_name = (ep.dist.name if ep.dist else None) or "unknown"  # metadata without a Name reads as None
        version = (ep.dist.version if ep.dist else None) or "?"
        if wanted is not None and _normal(dist_name) not in wanted | {BUILTIN_DISTRIBUTION}:
            continue
        try:
            with said() as warned:
                obj = _load(ep, dist_name)
                if dist_name != BUILTIN_DISTRIBUTION:
                    warn_internal_imports(obj, f"plugin {ep.name!r} of distribution {dist_name!r}")
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}".splitlines()[0] + import_hint(exc)
            broken = FailedPlugin(ep.name, dist_name, version, why)
            if failed is None or dist_name == BUILTIN_DISTRIBUTION:
                raise PluginError(f"{broken.line()}; set {LOAD_ENV} to the plugins to load without it") from exc
            failed.append(broken)
            continue
        loaded.append(LoadedPlugin(ep.name, dist_name, version, obj, tuple(warned)))
    if wanted:
        found = {p.distribution for p in loaded} | {f.distribution for f in failed or []}
        missing = wanted - {_normal(name) for name in found} - {BUILTIN_DISTRIBUTION}
        if missing:
            raise PluginError(f"{LOAD_ENV} names {', '.join(sorted(missing))}, which provide no tsuka plugin")
    return loaded


@contextlib.contextmanager
def said() -> Iterator[list[str]]:
    """Every warning raised inside, kept as one line each instead of raised, whatever the warning filters say.

    A plugin's warnings belong to that plugin: one installed plugin's deprecated import must not fail the
    strict-warning tests of another, nor end a command run with ``PYTHONWARNINGS=error`` (``Registry.notes``).
    """
    lines: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield lines
    lines.extend(dict.fromkeys(note_line(w.category, w.message) for w in caught))


def note_line(category: type[Warning], message: Warning | str) -> str:
    """One warning as a note: ``UserWarning: the first line of its message``."""
    return f"{category.__name__}: {message}".splitlines()[0]


def _load(ep: metadata.EntryPoint, dist_name: str) -> Any:
    """``ep.load()``; if it takes longer than :data:`SLOW_IMPORT_SECONDS`, one line on stderr says which plugin hangs.

    Nothing can stop an import that hangs, so the line is what a user sees
    instead of a command that froze without a word.
    """
    timer = threading.Timer(SLOW_IMPORT_SECONDS, _say_slow, (ep, dist_name))
    timer.daemon = True
    timer.start()
    try:
        return ep.load()
    finally:
        timer.cancel()


def _say_slow(ep: metadata.EntryPoint, dist_name: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr closed: nothing to say it on
        sys.stderr.write(
            f"tsuka: plugin {ep.name!r} (module {ep.module}, distribution {dist_name!r}) is still importing after "
            f"{SLOW_IMPORT_SECONDS:g} s; waiting for it (set {LOAD_ENV} to the plugins to load without it)\n"
        )
        sys.stderr.flush()
