"""Commands about a suite: validate, hash, schema."""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["COMMANDS"]

SUITE = click.argument("suite", required=False, type=click.Path(path_type=Path, file_okay=False))


@click.command()
@SUITE
def validate(suite: Path | None) -> None:
    """Check every test file of SUITE (default: the installed suite) and print its hash.

    Lists the tests (file, name, category, weight, steps, checks), then the
    suite hash. An invalid suite prints every problem, one line each naming
    the file and the JSON location, and exits 2.
    """
    from tsuka_core.cli.display import console, suite_table
    from tsuka_core.suite.loading import load_suite

    loaded = load_suite(suite)
    out = console()
    out.print(suite_table(loaded))
    for warning in loaded.warnings:
        click.echo(f"warning: {warning}", err=True)
    out.print(f"{len(loaded.tests)} tests, suite hash [bold]{loaded.hash}[/bold]")


@click.command("hash")
@SUITE
def hash_(suite: Path | None) -> None:
    """Print the suite hash of SUITE (default: the installed suite), as profiles record it."""
    from tsuka_core.suite.loading import default_suite_path, suite_hash

    click.echo(suite_hash(suite if suite is not None else default_suite_path()))


@click.command()
@click.option("--config", "project", is_flag=True, help="Print the schema of the project file (tsuka.toml) instead.")
def schema(project: bool) -> None:
    """Print the JSON Schema of a test file, including every installed check type's parameters.

    Point an editor at it to validate test files while you write them:

    \b
      tsuka schema > tsuka-test.schema.json
    """
    if project:
        from tsuka_core.cli.projectfile import project_schema

        click.echo(json.dumps(project_schema(), indent=2, ensure_ascii=False))
        return
    from tsuka_core.plugins.registry import load_registry
    from tsuka_core.suite.schema import suite_schema

    click.echo(json.dumps(suite_schema(load_registry()), indent=2, ensure_ascii=False))


COMMANDS = [validate, hash_, schema]
