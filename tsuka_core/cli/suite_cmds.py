"""Commands about suites: suites, validate, schema (``hash`` lives apart, to stay light)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from tsuka_core.cli.display import console, suite_table
from tsuka_core.cli.loaded import loaded_registry
from tsuka_core.cli.suite_param import SUITE_TYPE
from tsuka_core.errors import SuiteError
from tsuka_core.run.projectfile import project_schema
from tsuka_core.suite.loading import load_suite
from tsuka_core.suite.schema import suite_schema
from tsuka_core.terms import CATEGORIES

__all__: list[str] = []

SUITE = click.argument("suite", required=False, type=SUITE_TYPE)


@click.command()
@SUITE
def validate(suite: Path | None) -> None:
    """Check every test file of SUITE (default: the installed suite) and print its hash.

    Lists the tests (file, name, category, weight, steps, checks), then the
    suite hash. An invalid suite prints every problem, one line each naming
    the file and the JSON location, and exits 2.
    """

    loaded = load_suite(suite)
    out = console()
    out.print(suite_table(loaded))
    for warning in loaded.warnings:
        click.echo(f"warning: {warning}", err=True)
    out.print(f"{len(loaded.tests)} tests, suite hash [bold]{loaded.hash}[/bold]")


@click.command()
def suites() -> None:
    """List every registered suite: name, distribution, tests per category, hash and folder.

    Any of these names is what --suite takes; a suite that does not load shows
    its first problem instead of its counts.
    """

    registry = loaded_registry()
    table = Table(title="registered suites", title_justify="left")
    for column in ("suite", "distribution", *CATEGORIES, "hash", "folder"):
        table.add_column(column, justify="right" if column in CATEGORIES else "left", overflow="fold")
    for name, entry in sorted(registry.suites.items()):
        try:
            loaded = load_suite(entry.path, registry)
        except SuiteError as exc:
            table.add_row(name, entry.distribution, f"invalid: {exc}", "", "", "", str(entry.path))
            continue
        counts = [str(len(loaded.by_category(c))) for c in CATEGORIES]
        table.add_row(name, entry.distribution, *counts, loaded.hash, str(entry.path))
    console().print(table)
    for note in registry.notes:
        click.echo(f"note: {note}", err=True)


@click.command()
@click.option("--config", "project", is_flag=True, help="Print the schema of the project file (tsuka.toml) instead.")
def schema(project: bool) -> None:
    """Print the JSON Schema of a test file, including every installed check type's parameters.

    Point an editor at it to validate test files while you write them:

    \b
      tsuka schema > tsuka-test.schema.json
    """
    if project:
        click.echo(json.dumps(project_schema(), indent=2, ensure_ascii=False))
        return

    click.echo(json.dumps(suite_schema(loaded_registry()), indent=2, ensure_ascii=False))
