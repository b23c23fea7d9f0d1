"""The installed plugins' registry as commands use it: each plugin that failed to import is told once, on stderr."""

from __future__ import annotations

import click

from tsuka_core.plugins.manager import LOAD_ENV
from tsuka_core.plugins.registry import Registry, load_registry

__all__ = ["loaded_registry"]

_told: set[str] = set()


def loaded_registry() -> Registry:
    """The registry of every installed plugin; a plugin that failed to import is one line on stderr.

    The command goes on without it: a name only that plugin provides is then
    an unknown name, whose error names the plugin again.
    """
    registry = load_registry()
    for failed in registry.failed:
        line = (
            f"tsuka: warning: {failed.line()}; its check types, backends and suites are missing "
            f"('tsuka plugins' lists it; {LOAD_ENV} loads the others without it)"
        )
        if line not in _told:
            _told.add(line)
            click.echo(line, err=True)
    return registry
