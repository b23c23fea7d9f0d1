"""Commands that read the run history: runs, show and rescore (and report, from its own module)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.text import Text

    from tsuka_core.storage.history_query import StoredLevel, StoredRun, StoredTest

from dataclasses import replace

from rich.table import Table
from rich.text import Text

from tsuka_core.cli.display import console, level_summary, mean_and_spread, run_scores
from tsuka_core.cli.exits import FAILED
from tsuka_core.cli.level_head import HeadOf, level_head, no_tier_reason
from tsuka_core.cli.loaded import loaded_registry
from tsuka_core.cli.options import history_db_option, profiles_option
from tsuka_core.cli.suite_param import SUITE_TYPE
from tsuka_core.cli.transcript import check_lines, requests_sent, transcript
from tsuka_core.engine.results import UNMEASURED
from tsuka_core.errors import UsageError
from tsuka_core.run.rescore import rescore_run, tests_needing_live_run
from tsuka_core.run.rescore_suite import check_fits, judged_with, recorded_suite
from tsuka_core.storage.history import default_history_path
from tsuka_core.storage.history_query import StoredTestRuns, list_runs, load_run
from tsuka_core.suite.loading import load_suite
from tsuka_core.textsafe import one_line


def _history_options(func: Any) -> Any:
    func = history_db_option()(func)
    return profiles_option("Profile store (or TSUKA_PROFILES); the history is found beside it.")(func)


def _history_path(history_db: Path | None, profiles: Path) -> Path:

    return history_db or default_history_path(profiles)


# --- tsuka runs -----------------------------------------------------------------------------------------------------


def _tiers(levels: Iterable[StoredLevel]) -> str:
    shown = []
    for level in levels:
        star = "*" if level.recommended else ""
        shown.append(f"{level.key} {level.tier}{star}")
    return ", ".join(shown)


@click.command()
@_history_options
@click.option("-n", "--limit", type=click.IntRange(min=1), default=20, show_default=True, help="How many runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def runs(history_db: Path | None, profiles: Path, limit: int, as_json: bool) -> None:
    """List the recorded runs, newest first: when, what, against which server, and the tier of each level.

    A * marks each model's recommended effort; a run made with --repeats N
    shows "repeats N" beside its kind.
    """

    path = _history_path(history_db, profiles)
    found = list_runs(path, limit)
    if as_json:
        rows = [
            {
                "id": run.id,
                "kind": run.kind,
                "status": run.status,
                "startedAt": run.started_at,
                "finishedAt": run.finished_at,
                "backend": run.backend,
                "provider": run.provider,
                "testsHash": run.suite_hash,
                "suite": run.suite_path,
                "sourceRun": run.source_run,
                "levels": [
                    {
                        "key": lv.key,
                        "name": lv.name,
                        "endpoint": lv.endpoint,
                        "tier": lv.tier,
                        "recommended": lv.recommended,
                        "repeats": lv.repeats,
                    }
                    for lv in levels
                ],
            }
            for run, levels in found
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title=str(path), title_justify="left")
    for column in ("run", "started", "kind", "status", "backend", "suite", "levels"):
        table.add_column(column, overflow="fold")
    for run, levels in found:
        kind = run.kind + (f" of {run.source_run}" if run.source_run is not None else "")
        kind += f", repeats {run.repeats}" if run.repeats > 1 else ""
        table.add_row(
            str(run.id),
            run.started_at,
            kind,
            run.status,
            f"{run.backend} {run.provider}",
            run.suite_hash,
            _tiers(levels),
        )
    out = console()
    if not found:
        out.print(f"no runs recorded in {path}")
        return
    out.print(table)


# --- tsuka show -----------------------------------------------------------------------------------------------------


def _partial(options: Mapping[str, Any]) -> str | None:
    """What picked part of the suite in a recorded run's settings, or None for the whole suite."""
    parts = [f"shard {options['shard']}"] if options.get("shard") else []
    if isinstance(options.get("tests"), list):
        parts.append("--test " + " ".join(str(t) for t in options["tests"]))
    if options.get("limit") is not None:
        parts.append(f"--limit {options['limit']}")
    return ", ".join(parts) or None


def _level_lines(level: StoredLevel, *, every_check: bool, partial: str | None = None) -> Iterable[Text | str]:
    """The level's head as its record says (``cli.level_head``), then each test's score with its checks.

    With repeats, each test's mean, spread and runs. A level recorded by an older tsuka (a history of layout 4
    or before) shows what its record holds: no confidence, speed figures or failure kinds, which it never kept.
    """
    where = f"  endpoint {level.endpoint} ({level.backend} at {level.provider})" if level.endpoint else ""
    measured = level.tier != UNMEASURED
    categories = {test.category for test in level.tests}
    no_tier = no_tier_reason(level.complete, partial, categories)
    head = HeadOf(level.key, level.tier, level.complete, measured, level.recommended, where, no_tier)
    yield from level_head(level.record, head)
    for group in level.per_test:
        if level.repeats == 1 and len(group.runs) == 1:
            yield from _single_lines(group.runs[0], every_check=every_check)
            continue
        yield Text(f"    {group.name:<28} {mean_and_spread(group)}  runs {run_scores(group.runs)}")
        for test in group.runs:
            prefix = f"run {test.repeat}: "
            if test.status != "ok":
                yield Text(f"      {prefix}ERROR  {one_line(str(test.error))}", style="red")
            for step in test.steps:
                yield from check_lines(step, every_check=every_check, indent="      ", prefix=prefix)


def _single_lines(test: StoredTest, *, every_check: bool) -> Iterable[Text | str]:

    if test.status != "ok":
        yield Text(f"    {test.name:<28} ERROR  {one_line(str(test.error))}", style="red")
        return
    yield Text(f"    {test.name:<28} {test.score:.2f}")
    for step in test.steps:
        yield from check_lines(step, every_check=every_check, indent="      ")


def _pick_level(run: StoredRun, key: str) -> StoredLevel:

    level = run.level(key)
    if level is None:
        known = ", ".join(lv.key for lv in run.levels) or "none"
        raise UsageError(f"run {run.id} has no level {key!r} (it has: {known})")
    return level


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.argument("level_key", metavar="[MODEL@EFFORT]", required=False)
@click.argument("test_name", metavar="[TEST]", required=False)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    metavar="K",
    help="With TEST, of a run made with --repeats: only run K of that test (default: every run).",
)
@click.option(
    "--request",
    is_flag=True,
    help=(
        "With TEST: each step's request as sent, as JSON (the messages and the tools offered), after the "
        "transcript; for the embedded model, also the prompt as its chat template rendered it."
    ),
)
@_history_options
def show(
    run_ref: str,
    level_key: str | None,
    test_name: str | None,
    repeat: int | None,
    request: bool,
    history_db: Path | None,
    profiles: Path,
) -> None:
    """Show a recorded run (RUN is its number, 'last', or 'last~N' for the N-th run before the last).

    \b
    tsuka show RUN                      every level: tier and its confidence, scores, failed checks
    tsuka show RUN MODEL@EFFORT         that level: every check and its detail
    tsuka show RUN MODEL@EFFORT TEST    that test's transcript, with each check's outcome
    tsuka show RUN MODEL@EFFORT TEST --request   and each request as sent (JSON)

    Of a run made with --repeats, a level shows each test's mean score, the
    spread of its runs' scores and each run's score, and a check's line names
    the run it comes from; a test's transcript shows every run in turn, headed
    "run K of N" (--repeat K shows only run K).
    """

    if repeat is not None and test_name is None:
        raise UsageError("--repeat picks one run of a test: give MODEL@EFFORT and TEST too")
    if request and test_name is None:
        raise UsageError("--request shows one test's requests: give MODEL@EFFORT and TEST too")
    run = load_run(_history_path(history_db, profiles), run_ref)
    lines: list[Text | str] = [
        f"run {run.id} ({run.kind}, {run.status}) {run.started_at}: {run.backend} at {run.provider}, "
        f"suite {run.suite_path} ({run.suite_hash})"
    ]
    partial = _partial(run.options)
    if level_key is None:
        for level in run.levels:
            lines.extend(["", *_level_lines(level, every_check=False, partial=partial)])
    elif test_name is None:
        lines.extend(["", *_level_lines(_pick_level(run, level_key), every_check=True, partial=partial)])
    else:
        lines.extend(_test_transcripts(run, _pick_level(run, level_key), test_name, repeat, request=request))
    _print(lines, soft_wrap=request)


def _test_transcripts(
    run: StoredRun, level: StoredLevel, name: str, repeat: int | None, *, request: bool = False
) -> Iterable[Text | str]:
    """One test's transcript; with repeats, every run (or run ``repeat``) in turn, each headed ``run K of N``;
    with ``request``, each step's request as sent after it."""

    runs = level.runs_of(name)
    if not runs:
        raise UsageError(f"{level.key} of run {run.id} has no test {name!r}")
    chosen = [t for t in runs if repeat is None or t.repeat == repeat]
    if not chosen:
        raise UsageError(f"{name} was run {len(runs)} time(s) at {level.key} of run {run.id}: there is no run {repeat}")
    first = runs[0]
    if level.repeats == 1 and len(runs) == 1:
        yield f"{level.key} {name} ({first.category}): {_outcome(first)}"
        yield ""
        yield from transcript(first)
        if request:
            yield from requests_sent(first)
        return
    mean = mean_and_spread(StoredTestRuns(runs))
    yield f"{level.key} {name} ({first.category}): mean {mean} over {len(runs)} runs: {run_scores(runs)}"
    for test in chosen:
        yield ""
        yield Text(f"══ run {test.repeat} of {level.repeats}: {_outcome(test)}", style="bold")
        yield from transcript(test)
        if request:
            yield from requests_sent(test)


def _outcome(test: StoredTest) -> str:
    return "ERROR " + (test.error or "") if test.status != "ok" else f"score {test.score:.2f}"


def _print(lines: Iterable[Text | str], *, soft_wrap: bool = False) -> None:
    """Print lines as plain text: a model's answer holding ``[bold]`` is shown, never read as markup; with
    ``soft_wrap``, long lines are left whole for the terminal to wrap (JSON printed stays JSON)."""

    texts = (Text(line) if isinstance(line, str) else line for line in lines)
    console().print(*texts, sep="\n", soft_wrap=soft_wrap)


# --- tsuka rescore --------------------------------------------------------------------------------------------------


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--suite", type=SUITE_TYPE, help="Suite: a registered name or a folder (default: the one RUN was measured with)."
)
@_history_options
@click.option("--dry-run", is_flag=True, help="Show the new scores; store and record nothing.")
def rescore(run_ref: str, suite: Path | None, history_db: Path | None, profiles: Path, dry_run: bool) -> None:
    """Judge a suite's current checks against the answers of a recorded run, asking no model.

    RUN is judged with the suite it was measured with (its recorded folder, or
    the registered suite of that name when the folder is gone); --suite
    judges it with another. A suite holding none of RUN's tests is refused.

    Every test is replayed from RUN's recorded answers (RUN is a number, or
    'last'). When every request of every level is one the run recorded, the
    levels are stored as profiles for the current suite hash and the rescore
    is recorded as a run of its own. When a test's requests changed (its prompt,
    tool results, system message or tools) or it is new, nothing is stored and
    the tests that need a live run are named.

    A run made with --repeats is replayed run by run: run K of each test is
    judged on the answers of run K, and the profiles keep each test's mean,
    spread and runs as a live run writes them. A test with fewer recorded runs
    than the level's repeats needs a live run.

    Exit status: 0 when stored (or --dry-run), 1 when some test needs a live run.
    """

    registry = loaded_registry()
    path = _history_path(history_db, profiles)
    run = load_run(path, run_ref)
    loaded = load_suite(suite if suite is not None else recorded_suite(run), registry)
    check_fits(run, loaded, given=suite is not None)
    result = rescore_run(path, run, loaded, profiles, write=not dry_run)
    lines: list[Text | str] = [judged_with(run, loaded, given=suite is not None)]
    for recorded, level in zip(result.source.levels, result.levels, strict=True):
        lines.extend(["", *level_summary(replace(level, model=recorded.name or level.model))])  # named as stored
    _print(lines)
    if not result.ok:
        needed = tests_needing_live_run(result)
        click.echo(f"\nNothing stored: {len(needed)} test(s) need a live run ('tsuka run'):")
        for key, problems in result.live.items():
            for problem in problems:
                click.echo(f"  {key} {problem}")
        raise SystemExit(FAILED)
    if result.profiles:
        click.echo(f"\nStored {len(result.profiles)} profile(s) for suite {loaded.hash} in {profiles}, asking no model")
        click.echo(f"Recorded as run {result.history_run} in {path}")
    elif dry_run:
        click.echo("\n--dry-run: nothing stored")
