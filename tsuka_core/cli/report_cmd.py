"""`tsuka report`: a recorded run, or the comparison of two runs or profiles, as one self-contained HTML page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from tsuka_core.cli.options import history_db_option, profiles_option
from tsuka_core.compare.compute import compare
from tsuka_core.compare.sides import load_side
from tsuka_core.errors import UsageError
from tsuka_core.report.compare_html import write_comparison
from tsuka_core.report.compare_page import page_of
from tsuka_core.report.html import write_report
from tsuka_core.storage.files import make_folders
from tsuka_core.storage.history import default_history_path
from tsuka_core.storage.history_query import load_run

__all__ = ["report"]


@click.command()
@click.argument("run_ref", metavar="[RUN]", required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The HTML file to write.  [default: report.html; compare.html with --compare]",
)
@click.option(
    "--compare",
    "compare_refs",
    nargs=2,
    metavar="A B",
    help="Write the comparison page of A and B instead: runs (a number, 'last', 'last~1') or profiles (MODEL@EFFORT).",
)
@click.option(
    "--common-tests",
    is_flag=True,
    help="With --compare: compare sides measured with different suites on the tests both have (matched by name).",
)
@profiles_option("Profile store (or TSUKA_PROFILES); the history is found beside it.")
@history_db_option()
def report(
    run_ref: str | None,
    output: Path | None,
    compare_refs: tuple[str, str] | None,
    common_tests: bool,
    history_db: Path | None,
    profiles: Path,
) -> None:
    """Write a recorded run (default: the last) as one self-contained HTML page.

    Per model: the tier at each effort and the recommendation; category scores,
    completion tokens and tokens per second by effort as charts; per test, every
    check's outcome and the transcript on demand. The page fetches nothing and
    runs no script, so it opens from file:// and can be attached to a CI job.

    With --compare A B, the page compares two runs or profiles (A the before,
    B the after) as 'tsuka compare' does: per paired level, each side's tier,
    each category's scores and their difference with its 95% interval (beyond
    noise or not), and the tests that went from pass to fail and from fail to
    pass with the checks that flipped.

    \b
    tsuka report --compare last~1 last -o cmp.html
    tsuka report --compare 3 4 --common-tests -o cmp.html
    """

    history = history_db or default_history_path(profiles)
    if compare_refs:
        if run_ref is not None:
            raise UsageError(f"give RUN or --compare A B, not both (RUN {run_ref!r} was given)")
        _comparison_page(output or Path("compare.html"), compare_refs, history, profiles, common_tests=common_tests)
        return
    if common_tests:
        raise UsageError("--common-tests goes with --compare A B")
    _run_page(output or Path("report.html"), run_ref or "last", history)


def _run_page(output: Path, ref: str, history: Path) -> None:
    """Write the page of the run ``ref`` names to ``output``."""

    run = load_run(history, ref)
    _writing(output, lambda: write_report(output, run))
    click.echo(f"Wrote {output} (run {run.id}, {len(run.levels)} level(s))")


def _comparison_page(output: Path, refs: tuple[str, str], history: Path, store: Path, *, common_tests: bool) -> None:
    """Write the comparison page of the two sides ``refs`` names to ``output``."""

    a, b = (load_side(ref, history, store) for ref in refs)
    comparison = compare(a, b, common_tests=common_tests)
    _writing(output, lambda: write_comparison(output, page_of(comparison)))
    sides = f"{comparison.side_a.label} against {comparison.side_b.label}"
    click.echo(f"Wrote {output} ({sides}, {len(comparison.levels)} level(s) compared)")


def _writing(output: Path, write: Callable[[], None]) -> None:
    """Run ``write`` once ``output``'s folders exist; a file that cannot be written is one line, not a traceback."""

    try:
        make_folders(output.parent)
        write()
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from exc
