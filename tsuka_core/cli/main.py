"""The root command group; sub-commands are added from their own modules."""

from __future__ import annotations

import click

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="tsuka", prog_name="tsuka")
def cli() -> None:
    """Measure what a language model can really do.

    tsuka runs a folder of declarative tests (instruction following, JSON
    output, tool calling) against a model, at several reasoning-effort levels,
    scores each category, derives a capability tier (small / medium / large)
    and stores the result as a profile that goes stale when the tests change.

    \b
    Start here:
      tsuka validate            check the default suite and print its hash
      tsuka checks              list every check type a test may use
      tsuka run all             measure every model the backend can reach
    """


def main() -> None:
    """Run the ``tsuka`` command."""
    from tsuka_core.cli import commands  # noqa: F401  (registers the sub-commands)

    cli(prog_name="tsuka")
