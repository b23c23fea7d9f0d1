"""What `tsuka run` prints when it ends: each level's summary, then what was stored and recommended."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.text import Text

from tsuka_core.cli.display import console, level_summary, tier_text
from tsuka_core.run.session import RunReport

__all__ = ["print_records", "print_report"]


def _from_env(report: RunReport) -> str:
    """`` (from OPENAI_BASE_URL)`` when the run's server came from that variable, not --base-url."""
    return " (from OPENAI_BASE_URL)" if report.base_url_from_env else ""


def print_report(report: RunReport, store_path: Path, *, to_stderr: bool = False) -> None:
    """Print every level's summary, the recommendations, what was stored and what failed."""
    out = console(stderr=to_stderr)
    suite = report.suite.name or str(report.suite.path)
    lines: list[Text | str] = [Text(f"backend {report.backend} at {report.provider}{_from_env(report)}, "
                                    f"suite {suite} ({report.suite.hash})", "dim")]  # fmt: skip
    for swept in report.sweeps:
        for level in swept.levels:
            lines.append("")
            lines.extend(level_summary(level, report.partial))
    lines.append("")
    # One print of every line: rich has a fixed cost per print call, and a run can have thousands of lines.
    out.print(*lines, sep="\n")
    said_live = to_stderr or (sys.stdout.isatty() and sys.stderr.isatty())  # the progress said each note already
    for swept in report.sweeps:
        for note in () if said_live else swept.notes:
            out.print(Text.assemble(("note:", "yellow"), f" {note}"))
        best = report.recommendations.get(swept.model)
        if best:
            level = next(lv for lv in swept.levels if lv.effort == best)
            out.print(
                "Recommendation: ",
                Text(f"{swept.model} at effort "),
                Text(best, "bold"),
                " (tier ",
                tier_text(level.tier),
                ")",
                sep="",
            )
    if report.profiles:
        out.print(Text(f"Stored {len(report.profiles)} profile(s) in {store_path}: {', '.join(report.profiles)}"))
    for failure in report.failed:
        out.print(Text.assemble(("not measured:", "red"), f" {failure}"))


def print_records(report: RunReport, history: Path | None, *, to_stderr: bool) -> None:
    """Say where ``tsuka run`` recorded the run (in ``history``) and what the response cache served."""
    out = console(stderr=to_stderr)
    if report.cache is not None:
        hits, misses = report.cache["hits"], report.cache["misses"]
        out.print(f"Cache: {hits} answer(s) reused, {misses} asked of the model")
    if report.history_run is not None:
        run = report.history_run
        out.print(f"Recorded as run {run} in {history} ('tsuka show {run}', 'tsuka report')")
