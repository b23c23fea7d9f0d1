"""``tsuka hash``: a suite's hash from its files' bytes, loading no check type, plugin or pydantic."""

from __future__ import annotations

from pathlib import Path

import click

from tsuka_core.cli.suite_param import SUITE_TYPE
from tsuka_core.suite.loading import default_suite_path, suite_hash

__all__ = ["hash_"]


@click.command("hash")
@click.argument("suite", required=False, type=SUITE_TYPE)
def hash_(suite: Path | None) -> None:
    """Print the suite hash of SUITE (default: the installed suite), as profiles record it."""
    click.echo(suite_hash(suite if suite is not None else default_suite_path()))
