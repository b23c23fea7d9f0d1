"""``tsuka merge``: the shards of one measurement made into one store and one history run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click
from rich.text import Text

from tsuka_core.cli.display import console, level_summary
from tsuka_core.cli.exits import FAILED
from tsuka_core.cli.options import history_db_option, profiles_option
from tsuka_core.cli.suite_param import SUITE_TYPE
from tsuka_core.plugins.registry import load_registry
from tsuka_core.run.merge import merge_shards
from tsuka_core.storage.history import default_history_path
from tsuka_core.suite.loading import load_suite


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--suite", type=SUITE_TYPE, help="The suite the shards measured (default: the installed suite).")
@history_db_option()
@profiles_option("Profile store (or TSUKA_PROFILES) to store the merged profiles in; the history beside it.")
def merge(sources: tuple[Path, ...], suite: Path | None, history_db: Path | None, profiles: Path) -> None:
    """Merge the shards of one measurement ('tsuka run --shard I/N') into one store and one history run.

    Each SOURCE is a shard's folder (its .tsuka/history.sqlite is read) or
    history file; the last run of each is taken. They must be shards 1/N to
    N/N of the same suite, models, efforts and settings. Their answers are
    judged again with the whole suite, so scores, intervals and tiers are
    those of one unsharded run with the same answers.

    \b
    Example (after a CI matrix of four shards put their folders in shards/):
      tsuka merge shards/1 shards/2 shards/3 shards/4 --suite benchmarks

    Exit status: 0 when merged and stored, 1 when some test has no recorded
    answer in any shard, 2 when the sources are not the shards of one run.
    """

    loaded = load_suite(suite, load_registry())
    history = history_db or default_history_path(profiles)
    merged = merge_shards(list(sources), loaded, profiles, history)
    result = merged.result
    out = console()
    lines: list[Text | str] = [Text(f"merge of {len(merged.sources)} shards: " + "; ".join(merged.sources), "dim")]
    for recorded, level in zip(result.source.levels, result.levels, strict=True):
        lines.extend(["", *level_summary(replace(level, model=recorded.name or level.model))])
    out.print(*lines, sep="\n")
    if not result.ok:
        click.echo("\nNothing stored: some tests have no recorded answer in any shard:")
        for key, problems in result.live.items():
            for problem in problems:
                click.echo(f"  {key} {problem}")
        raise SystemExit(FAILED)
    click.echo(f"\nStored {len(result.profiles)} profile(s) for suite {loaded.hash} in {profiles}")
    click.echo(f"Recorded as run {result.history_run} in {history}")
