"""Commands that talk to a backend: run and models."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from tsuka_core.cli.ci_files import ci_files_always, write_ci_files
from tsuka_core.cli.loaded import loaded_registry
from tsuka_core.cli.options import effort_choice, history_db_option, profiles_option, tier_choice
from tsuka_core.cli.progress import make_progress
from tsuka_core.cli.project_run import endpoint_plan, project_options
from tsuka_core.cli.run_summary import print_records, print_report
from tsuka_core.cli.scorecard_cmd import print_tables
from tsuka_core.cli.suite_param import SUITE_TYPE
from tsuka_core.errors import UsageError
from tsuka_core.gating.min_tier import below_tier
from tsuka_core.run.backend import list_models
from tsuka_core.run.config import ServerSettings
from tsuka_core.run.plan import measure
from tsuka_core.run.report_json import report_json
from tsuka_core.run.scorecards import scorecard_tables
from tsuka_core.run.session import RunOptions, RunReport
from tsuka_core.run.stopping import exit_status, run_stoppable, signal_name
from tsuka_core.storage.history import default_history_path
from tsuka_core.storage.layout import dumps_store
from tsuka_core.storage.store import ProfileStore
from tsuka_core.suite.loading import load_suite
from tsuka_core.suite.selection import Selection
from tsuka_core.suite.shard import parse_shard
from tsuka_core.terms import EFFORTS

if TYPE_CHECKING:
    from tsuka_core.terms import Effort

__all__: list[str] = []


def finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """An option callback refusing ``nan`` and ``inf`` (they pass click's range checks)."""

    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value!r} is not a finite number.", ctx, param)
    return value


def backend_options(func: Any) -> Any:
    """The options that pick and configure a backend, shared by run and models."""
    options = [
        click.option(
            "-b", "--backend", help="Backend name ('tsuka backends'); default: openai with a base URL, else embedded."
        ),
        click.option(
            "--base-url",
            multiple=True,
            help="Server base URL, e.g. http://127.0.0.1:8080/v1 (or OPENAI_BASE_URL). Given again to tsuka run, the "
            "replicas of one server: requests are spread over them, -j places each (docs/scaling.md).",
        ),
        click.option(
            "--api-key-env",
            metavar="NAME",
            help="The environment variable holding the API key (default: the one the backend declares, "
            "OPENAI_API_KEY for openai).",
        ),
        click.option(
            "--proxy",
            metavar="URL",
            help="Send every request through this proxy (default: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY).",
        ),
        click.option(
            "--model-path",
            type=click.Path(path_type=Path, dir_okay=False),
            help="A GGUF file for the embedded backend.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            callback=finite,
            default=300.0,
            show_default=True,
            help="Seconds per request.",
        ),
        click.option(
            "--retries", type=click.IntRange(min=0), default=3, show_default=True, help="Retries of a failed request."
        ),
        click.option(
            "--option",
            "backend_option",
            multiple=True,
            metavar="KEY=VALUE",
            help="Backend setting (repeatable); 'tsuka backends' lists each backend's keys, others are refused.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def ci_options(func: Any) -> Any:
    """The options that record a run, reuse answers and serve CI (``docs/history-and-reports.md``)."""
    options = [
        click.option(
            "--history/--no-history",
            default=True,
            show_default=True,
            help="Record the run (every request, answer and check) in the run history.",
        ),
        history_db_option(),
        click.option(
            "--cache/--no-cache",
            default=False,
            show_default=True,
            help="Answer requests seen before from the response cache in the history file.",
        ),
        click.option(
            "--resume/--no-resume",
            default=None,
            help="Reuse the answers a run cut short kept (default: when the history's newest run is this same "
            "measurement and did not finish); --no-resume asks every request again.",
        ),
        click.option(
            "--junit",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Write a JUnit XML file: a test case per MODEL@EFFORT and test.",
        ),
        click.option(
            "--json-file",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Write the --json result to this file (--json alone prints it).",
        ),
        click.option(
            "--min-tier",
            type=tier_choice,
            help="Exit 3 when a model is below this tier at its recommended effort.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def history_options(values: dict[str, Any], profiles: Path) -> dict[str, Any]:
    """The RunOptions fields that --history, --history-db and --cache set."""

    path: Path = values.get("history_db") or default_history_path(profiles)
    return {
        "history_path": path if values.get("history", True) else None,
        "cache_path": path if values.get("cache") else None,
        "resume": values.get("resume"),
    }


def finish_ci(report: Any, values: dict[str, Any], profiles: Path, *, to_stderr: bool) -> None:
    """Say where the run was recorded, write the CI files asked for, and exit 1 or 3 when the run says so."""

    levels = [level for swept in report.sweeps for level in swept.levels]
    print_records(report, history_options(values, profiles)["history_path"], to_stderr=to_stderr)
    if values.get("junit") or values.get("json_file"):
        write_ci_files(values, levels, report_json(report), report.write_error)
    if not report.ok:
        raise SystemExit(1)
    minimum = values.get("min_tier")
    if not minimum:
        return

    below = below_tier(levels, report.recommendations, minimum, [s.model for s in report.sweeps])
    for line in below:
        click.echo(f"tsuka: below --min-tier: {line}", err=True)
    if below:
        raise SystemExit(3)


def interrupted(report: Any, profiles: Path, values: dict[str, Any], signum: int | None) -> None:
    """Say what an interrupted run kept, write the CI files saying it was interrupted, and exit 130 (143, 129)."""

    kept = ", ".join(report.profiles)
    said = f"kept {len(report.profiles)} complete level(s) in {profiles}: {kept}" if kept else "nothing was stored"
    by = f" by {signal_name(signum)}" if signum is not None else ""
    kept_answers = (
        "; the answers they got are kept: run the same command again to resume" if values.get("history", True) else ""
    )
    line = f"interrupted{by}; {said}; levels still running were not stored{kept_answers}"
    click.echo(f"tsuka: {line}", err=True)
    if values.get("junit") or values.get("json_file"):
        levels = [level for swept in report.sweeps for level in swept.levels]
        write_ci_files(values, levels, {**report_json(report), "interrupted": True, "error": line}, line)
    raise SystemExit(exit_status(signum))


@click.command()
@project_options
@click.argument("models", nargs=-1)
@backend_options
@click.option(
    "-e",
    "--effort",
    "efforts",
    multiple=True,
    type=effort_choice,
    help="Effort level to measure (repeatable; default: all four).",
)
@click.option("--suite", type=SUITE_TYPE, help="Suite: a registered name or a folder (default: the installed suite).")
@profiles_option()
@click.option(
    "-j",
    "--concurrency",
    type=click.IntRange(min=1, max=1024),
    default=None,
    help="Requests in flight at once  [default: the server's slots where it reports them, else 4]",
)
@click.option(
    "-n",
    "--repeats",
    type=click.IntRange(min=1, max=100),
    default=1,
    show_default=True,
    help="Run each test N times; a test scores the mean of its runs, and the profile keeps the spread and "
    "pass^k, the chance that k tries all pass (bypasses --cache).",
)
@click.option("--temperature", type=float, callback=finite, help="Sampling temperature (sent only when given).")
@click.option("--seed", type=int, help="Sampling seed (sent only when given).")
@click.option(
    "--model-check/--no-model-check",
    default=True,
    show_default=True,
    help="Refuse a model name the server does not list; --no-model-check for a gateway serving unlisted ones.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    help="Completion token limit per request (default: the backend's; 2048 for openai, 512 for embedded), "
    "recorded in each profile's sampling.",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Measure only shard I of N (tests split by name); the history keeps it for 'tsuka merge'.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help="Measure only the first N tests (after --test): a quick partial run, recorded, never stored as a profile.",
)
@click.option(
    "-k",
    "--test",
    "tests",
    multiple=True,
    metavar="PATTERN",
    help="Measure only the tests whose name matches PATTERN (a glob, or a part of the name; repeatable); a partial "
    "run, recorded, never stored as a profile.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON on stdout (the summary goes to stderr)."
)
@ci_options
@ci_files_always
def run(
    models: tuple[str, ...],
    efforts: tuple[str, ...],
    suite: Path | None,
    profiles: Path,
    concurrency: int | None,
    repeats: int,
    as_json: bool,
    **values: Any,
) -> None:
    """Measure MODELS (default: all) at each effort level and store their profiles.

    Every test of the suite runs once per model and effort level ('none',
    'low', 'medium', 'xhigh'; restrict with -e). Each complete level is stored
    as MODEL@EFFORT in the profile store, with each model's recommended effort:
    the cheapest level that reaches the highest tier measured.

    \b
    Examples:
      tsuka run all                                   embedded model, no server
      tsuka run all --base-url http://127.0.0.1:8080/v1
      tsuka run qwen3:8b -b openai -e none -e medium -j 8
      tsuka run all --temperature 0.7 --repeats 5       how much do answers vary?
      tsuka run                                       every endpoint of tsuka.toml at once

    Exit status: 0 when every level was measured and stored, 1 when some level
    or endpoint could not be (it is named, and an earlier profile for it is
    kept), 2 for bad input, 3 when --min-tier is given and a model is below it.
    """

    registry = loaded_registry()
    loaded = load_suite(suite, registry)
    for warning in loaded.warnings:
        click.echo(f"warning: {warning}", err=True)
    shard = parse_shard(values["shard"]) if values.get("shard") else None
    selection = Selection(shard, values.get("limit"), tuple(values.get("tests") or ()))
    selection.apply(loaded)  # a pattern that picks no test is refused before anything starts
    if shard is not None and values.get("history") is False:
        raise UsageError("--shard with --no-history would keep nothing: a shard's results live in its history")
    if values.get("resume") and values.get("history") is False:
        raise UsageError("--resume with --no-history has nothing to resume from: kept answers live in the history")
    if shard is not None and values.get("min_tier"):
        raise UsageError(
            "--shard with --min-tier would fail every shard: a shard stores no profile and so has no tier; "
            "give --min-tier to 'tsuka merge', which judges the whole run"
        )
    if selection.partial and values.get("min_tier"):
        raise UsageError("--limit or --test with --min-tier: a partial run stores no profile and so has no tier")
    server = ServerSettings.of(values)
    options = RunOptions(
        selection=selection,
        models=models,
        backend=values.get("backend"),
        config=server.config(),
        efforts=cast("tuple[Effort, ...]", tuple(efforts)) or EFFORTS,
        store_path=profiles,
        concurrency=concurrency,
        repeats=repeats,
        proxy=values.get("proxy"),
        model_check=values.get("model_check", True),
        replicas=server.replicas,
        **history_options(values, profiles),
    )
    plan = endpoint_plan(server, options, models)
    with make_progress() as progress:
        report, signum = run_stoppable(measure(options, loaded, registry, progress, plan))
    if report.interrupted:
        interrupted(report, profiles, values, signum)

    print_report(report, profiles, to_stderr=as_json)
    if loaded.scorecard is not None:
        _scorecards(report, loaded.scorecard.name, profiles, to_stderr=as_json)
    if report.write_error:
        click.echo(f"tsuka: error: {report.write_error}", err=True)
    if as_json:
        click.echo(dumps_store(report_json(report)), nl=False)
    finish_ci(report, values, profiles, to_stderr=as_json)


def _scorecards(report: RunReport, name: str, profiles: Path, *, to_stderr: bool) -> None:
    """The scorecard's table for each level stored, from the store (every suite of it measured so far)."""
    data = ProfileStore(profiles).read()
    registry = loaded_registry()
    keys = [key.rsplit("@", 1) for key in report.profiles]
    tables = [table for model, effort in keys for table in scorecard_tables(data, registry, model, effort, name)]
    print_tables(tables, stderr=to_stderr)


@click.command()
@backend_options
def models(**values: Any) -> None:
    """List the models the backend can reach (what 'tsuka run all' would measure)."""
    server = ServerSettings.of(values)
    if server.replicas:
        raise UsageError("--base-url: give one server to list its models (its replicas serve the same ones)")
    config = server.config()
    provider, names, notes = asyncio.run(
        list_models(loaded_registry(), values.get("backend"), config, values.get("proxy"))
    )
    click.echo(f"# {provider}", err=True)
    for said in notes:
        click.echo(f"note: {said}", err=True)
    for name in names:
        click.echo(name)
