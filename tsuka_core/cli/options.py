"""Options several commands share, defined once: the profile store, the history file, efforts and tiers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tsuka_core.terms import EFFORTS, HISTORY_ENV, PROFILES_ENV, TIERS

__all__ = ["effort_choice", "history_db_option", "profiles_option", "tier_choice"]

F = TypeVar("F", bound=Callable[..., Any])

effort_choice = click.Choice(EFFORTS)
"""An effort level, as the commands take it."""

tier_choice = click.Choice(TIERS)
"""A tier, as the commands take it."""


def profiles_option(help_text: str = f"Profile store (or {PROFILES_ENV}).") -> Callable[[F], F]:
    """The ``--profiles`` option: the profile store, from the environment or ``models_profile.json``.

    Resolved as ``allowed_tools()`` resolves it (``storage.store.store_path``): an empty value is the default,
    ``~`` is expanded.
    """
    return click.option(
        "--profiles",
        type=click.Path(path_type=Path, dir_okay=False),
        envvar=PROFILES_ENV,
        default="models_profile.json",
        show_default=True,
        help=help_text,
        callback=_store_path,
    )


def _store_path(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path:
    del ctx, param
    from tsuka_core.storage.store import store_path

    return store_path(value)


def history_db_option() -> Callable[[F], F]:
    """The ``--history-db`` option: the run history file, by default beside the profile store."""
    return click.option(
        "--history-db",
        type=click.Path(path_type=Path, dir_okay=False),
        envvar=HISTORY_ENV,
        help=f"Run history file (or {HISTORY_ENV}); default: .tsuka/history.sqlite beside the profile store.",
    )
