"""The ``tsuka compare`` command: two runs or profiles side by side, as text, as JSON, or as a CI gate."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tsuka_core.cli.ci_files import output_folder
from tsuka_core.cli.compare_text import comparison_lines, details_lines, print_lines
from tsuka_core.cli.exits import REGRESSED
from tsuka_core.cli.legacy_json import LegacyJsonFileCommand
from tsuka_core.cli.options import history_db_option, profiles_option
from tsuka_core.compare.compute import compare as compare_sides
from tsuka_core.compare.sides import load_side
from tsuka_core.errors import UsageError
from tsuka_core.storage.history import default_history_path
from tsuka_core.storage.layout import dumps_store

if TYPE_CHECKING:
    from tsuka_core.compare.model import Comparison

__all__ = ["compare"]


@click.command(cls=LegacyJsonFileCommand)
@click.argument("ref_a", metavar="A")
@click.argument("ref_b", metavar="B")
@click.option("--details", is_flag=True, help="Show the answers of each changed test of a run, A's then B's.")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 3 when a tier dropped or a category score dropped beyond noise (a CI gate).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the comparison as JSON on stdout, the text going to stderr (its structure is in docs/compare.md).",
)
@click.option(
    "--json-file",
    "json_path",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="Also write the comparison as JSON to FILE. The old form '--json FILE' still works, with a warning.",
)
@click.option(
    "--common-tests",
    is_flag=True,
    help="Compare sides measured with different suites on the tests both have (matched by name).",
)
@history_db_option()
@profiles_option("Profile store (or TSUKA_PROFILES); the history is found beside it.")
def compare(
    ref_a: str,
    ref_b: str,
    details: bool,
    fail_on_regression: bool,
    as_json: bool,
    json_path: Path | None,
    common_tests: bool,
    history_db: Path | None,
    profiles: Path,
) -> None:
    """Compare two measurements of the same tests: A is the before, B the after.

    A and B are recorded runs (a number, 'last', or 'last~N' for the N-th run
    before the last) or stored profiles (MODEL@EFFORT, or MODEL alone for the
    profile of its recommended effort). Levels are paired by model@effort;
    when each side holds one model (two models compared), by effort; a side
    with a single level is paired with the other's single level.

    \b
    tsuka compare last~1 last                  the run before the last, and the last
    tsuka compare qwen-7b@low qwen-7b-q4@low   two stored profiles
    tsuka compare 12 14 --details              with the answers of each changed test
    tsuka compare qwen-7b@low last --fail-on-regression --json-file cmp.json   in CI
    tsuka compare 3 4 --common-tests           after a suite edit (4 a 'tsuka rescore' of 3)

    For each paired level: each side's tier; each category's score, the
    difference (B - A) with its 95% interval from a paired bootstrap over the
    common tests, and whether it is beyond noise (the interval excludes 0); the
    smallest category drop that could be beyond noise with the tests compared; the
    tests that went from pass to fail and from fail to pass, with the checks
    that flipped. A test passes when every check of every run passed.

    Sides measured with different suites are refused unless --common-tests:
    then only the tests both have are compared, and category scores and tiers
    are recomputed on them for both sides. Sides with no test in common are refused.
    """

    if json_path is not None:
        _check_writable(json_path)
    history = history_db or default_history_path(profiles)
    side_a = load_side(ref_a, history, profiles)
    side_b = load_side(ref_b, history, profiles)
    found = compare_sides(side_a, side_b, common_tests=common_tests)
    lines = list(comparison_lines(found))
    if details:
        lines.extend(details_lines(found, side_a, side_b))
    print_lines(lines, stderr=as_json)
    if as_json:
        click.echo(dumps_store(found.to_json()), nl=False)
    if json_path is not None:
        _write_json(json_path, found, stderr=as_json)
    if fail_on_regression:
        _say_blind(found)
    if fail_on_regression and found.has_regression:
        click.echo(f"tsuka: {len(found.regressions())} regression(s) (--fail-on-regression)", err=True)
        raise SystemExit(REGRESSED)


def _say_blind(found: Comparison) -> None:
    """Say on stderr where --fail-on-regression cannot see a category drop, so nobody trusts a blind gate."""

    if found.only_tier_drops_fail:
        click.echo(
            "tsuka: --fail-on-regression can only fire on a tier drop here: with these tests no category drop "
            "could be beyond noise (add tests or --repeats; see docs/compare.md)",
            err=True,
        )
        return
    for level in found.levels:
        blind = [c.category for c in level.categories if c.blind]
        if blind:
            click.echo(
                f"tsuka: {level.label}: no drop of {', '.join(blind)} could be beyond noise with these tests; "
                "there --fail-on-regression fires only on a tier drop",
                err=True,
            )


def _check_writable(path: Path) -> None:
    """Raise UsageError before anything is read when ``--json-file FILE`` could not be written."""

    folder = path.parent
    output_folder("--json-file", path)
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"--json-file {path}: cannot write there (permission denied)")


def _write_json(path: Path, found: Comparison, *, stderr: bool) -> None:

    try:
        path.write_text(dumps_store(found.to_json()), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--json-file {path}: cannot write it ({exc.strerror or exc})") from None
    click.echo(f"Wrote {path}", err=stderr)
