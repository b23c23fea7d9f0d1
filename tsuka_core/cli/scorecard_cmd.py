"""``tsuka scorecard``: a benchmark's own table (BFCL's, IFEval's) from the stored profiles of its suites."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click
from rich.table import Table

from tsuka_core.cli.display import console
from tsuka_core.cli.loaded import loaded_registry
from tsuka_core.cli.options import effort_choice, profiles_option
from tsuka_core.errors import UsageError
from tsuka_core.run.scorecards import ScorecardTable, scorecard_tables
from tsuka_core.storage.store import ProfileStore
from tsuka_core.terms import EFFORTS

__all__ = ["print_tables"]


def print_tables(tables: Sequence[ScorecardTable], *, stderr: bool = False) -> None:
    """Each table: its title and key, one row per figure (indented by depth), and the scorecard's notes."""
    out = console(stderr=stderr)
    for table in tables:
        shown = Table(title=f"{table.scorecard.title}: {table.key}", title_justify="left")
        for column, justify in (("", "left"), ("accuracy", "right"), ("of", "right")):
            shown.add_column(column, justify=justify)  # type: ignore[arg-type]
        for row in table.rows:
            figure = row.figure
            value, count = ("not measured", "") if figure is None else (f"{figure.value:.2%}", str(figure.count))
            shown.add_row("  " * row.depth + row.label, value, count)
        out.print(shown)
        for note in table.scorecard.notes():
            click.echo(f"note: {note}", err=True)


@click.command()
@click.argument("models", nargs=-1)
@click.option("-e", "--effort", "efforts", type=effort_choice, multiple=True, help="Effort (repeatable; default: all).")
@click.option("--name", help="Only this scorecard ('tsuka plugins' lists them: bfcl...).")
@profiles_option()
def scorecard(models: tuple[str, ...], efforts: tuple[str, ...], name: str | None, profiles: Path) -> None:
    """Print a benchmark's own table (BFCL's...) for MODELS from the stored profiles of its suites.

    Each registered scorecard combines the figures its suites' valid profiles hold for one model at one
    effort into the table its benchmark reports; a category whose suite was not measured (or whose profile is
    stale) shows as not measured.

    \b
    Example, after measuring BFCL's categories:
      tsuka run m --suite bfcl-simple -e none ...
      tsuka scorecard m -e none
    """
    registry = loaded_registry()
    if name is not None and name not in registry.scorecards:
        known = ", ".join(sorted(registry.scorecards)) or "none"
        raise UsageError(f"no scorecard {name!r} is registered (registered: {known})")
    data = ProfileStore(profiles).read()
    keys = [key for view in data.by_suite() for key in view.profiles]
    wanted = models or tuple(dict.fromkeys(key.rpartition("@")[0] for key in keys))
    tables = [
        table
        for model in wanted
        for effort in (efforts or EFFORTS)
        for table in scorecard_tables(data, registry, model, effort, name)
    ]
    if not tables:
        said = ", ".join(wanted) or "no model"
        raise UsageError(f"no valid profile of a scorecard's suite is stored for {said} in {profiles}")
    print_tables(tables)
