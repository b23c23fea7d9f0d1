"""``tsuka merge``: the shards of one measurement made into one store and one history run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import cast

import click
from rich.text import Text

from tsuka_core.cli.display import console, level_summary
from tsuka_core.cli.exits import FAILED
from tsuka_core.cli.options import history_db_option, profiles_option, tier_choice
from tsuka_core.cli.suite_param import SUITE_TYPE
from tsuka_core.gating.min_tier import below_tier
from tsuka_core.plugins.registry import load_registry
from tsuka_core.run.merge import merge_shards, shard_runs
from tsuka_core.run.rescore_suite import check_fits, recorded_suite
from tsuka_core.storage.history import default_history_path
from tsuka_core.suite.loading import load_suite
from tsuka_core.terms import Tier


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--suite", type=SUITE_TYPE, help="Judge with this suite (default: the suite the shards recorded, as rescore does)."
)
@click.option(
    "--replicas",
    is_flag=True,
    help="The shards measured replicas of one server at different URLs: merge them, listing every provider.",
)
@click.option(
    "--min-tier", type=tier_choice, help="Exit 3 when a merged model is below this tier at its recommended effort."
)
@history_db_option()
@profiles_option("Profile store (or TSUKA_PROFILES) to store the merged profiles in; the history beside it.")
def merge(
    sources: tuple[Path, ...],
    suite: Path | None,
    replicas: bool,
    min_tier: str | None,
    history_db: Path | None,
    profiles: Path,
) -> None:
    """Merge the shards of one measurement ('tsuka run --shard I/N') into one store and one history run.

    Each SOURCE is a shard's folder (its .tsuka/history.sqlite is read) or
    history file; the last run of each is taken, in any order. They must be
    shards 1/N to N/N of the same suite, models, efforts, settings, backend and
    server, each finished and holding only its own tests. Their answers are
    judged again with the whole suite (by default the one they recorded), so
    scores, intervals and tiers are those of one unsharded run with the same
    answers. Shards measured at different URLs of one server merge with
    --replicas (the profile names every provider).

    \b
    Example (after a CI matrix of four shards put their folders in shards/):
      tsuka merge shards/1 shards/2 shards/3 shards/4 --min-tier medium

    Exit status: 0 when merged and stored, 1 when nothing could be stored
    (some test has no recorded answer in any shard, or a write failed: the
    line says exactly what was kept), 2 when the sources are not the finished
    shards of one run, 3 when --min-tier is given and a model is below it.
    """

    registry = load_registry()
    runs = shard_runs(list(sources))
    given = suite is not None
    loaded = load_suite(suite if suite is not None else recorded_suite(runs[0][1]), registry)
    check_fits(runs[0][1], loaded, given=given)
    history = history_db or default_history_path(profiles)
    merged = merge_shards(runs, loaded, profiles, history, replicas=replicas)
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
    if min_tier:
        below = below_tier(result.levels, result.recommendations, cast("Tier", min_tier), list(result.recommendations))
        for line in below:
            click.echo(f"tsuka: below --min-tier: {line}", err=True)
        if below:
            raise SystemExit(3)
