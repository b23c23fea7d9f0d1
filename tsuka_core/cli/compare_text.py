"""How ``tsuka compare`` looks in a terminal: the sides, each paired level's table and changed tests, the answers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tsuka_core.cli.display import console, tier_text
from tsuka_core.cli.transcript import transcript
from tsuka_core.textsafe import one_line

if TYPE_CHECKING:
    from tsuka_core.compare.model import (
        CategoryDelta,
        Comparison,
        Direction,
        LevelComparison,
        PassHatKChange,
        SideInfo,
        TestChange,
    )
    from tsuka_core.compare.sides import Side, SideTest

__all__ = ["comparison_lines", "details_lines", "print_lines"]

_ARROWS: dict[Direction, str] = {"pass->fail": "pass → fail", "fail->pass": "fail → pass", "score": "score changed"}


def print_lines(lines: Iterable[RenderableType], *, stderr: bool = False) -> None:
    """Print each line or table (on stderr if asked); a plain string is shown as it is, never read as markup."""
    console(stderr).print(*(Text(line) if isinstance(line, str) else line for line in lines), sep="\n")


def _side(info: SideInfo) -> str:
    when = f", {info.measured_at}" if info.measured_at else ""
    suite = f" {info.suite}" if info.suite else ""
    return f"{info.label} (suite{suite} {info.suite_hash or '?'}{when})"


def comparison_lines(found: Comparison) -> Iterable[RenderableType]:
    """The whole comparison: sides, how noise is judged, each level, the unpaired levels and the regressions."""
    a, b = found.side_a.label, found.side_b.label
    yield f"A: {_side(found.side_a)}"
    yield f"B: {_side(found.side_b)}"
    yield f"Noise: {found.noise_test}; a difference is beyond noise when its interval excludes 0"
    if found.common_tests_only:
        yield "--common-tests: only the tests both sides have are compared; tests are matched by name"
        for level in found.levels:
            yield (
                f"  {level.label}: {level.tests_compared} common test(s), {len(level.only_a)} only in {a}, "
                f"{len(level.only_b)} only in {b}"
            )
    for note in found.notes:
        yield Text(f"note: {note}", style="yellow")
    for level in found.levels:
        yield ""
        yield from _level_lines(level, a, b)
    if not found.levels:
        yield ""
        yield Text("no level to compare: the sides have no model@effort in common", style="yellow")
    yield from _unpaired(found, a, b)
    yield ""
    regressions = found.regressions()
    if not regressions:
        yield Text("No regression: no tier dropped, no category dropped beyond noise", style="green")
    for line in regressions:
        yield Text(f"Regression: {line}", style="bold red")


def _unpaired(found: Comparison, a: str, b: str) -> Iterable[str]:
    if found.unpaired_a:
        yield f"only in {a} (not compared): {', '.join(found.unpaired_a)}"
    if found.unpaired_b:
        yield f"only in {b} (not compared): {', '.join(found.unpaired_b)}"


def _level_lines(level: LevelComparison, a: str, b: str) -> Iterable[RenderableType]:
    dropped = Text(" (tier dropped)", style="bold red") if level.tier_dropped else ""
    yield Text.assemble(
        (level.label, "bold"), "  tier ", tier_text(level.tier_a), " → ", tier_text(level.tier_b), dropped
    )
    yield Padding(_table(level.categories, a, b), (0, 0, 0, 2), expand=False)
    yield f"  can see: {level.resolution}"
    yield from _pass_hat_k_lines(level.pass_hat_k)
    for direction, title in _ARROWS.items():
        changes = level.changes(direction)
        if changes:
            yield Text(f"  {title} ({len(changes)}):", style="bold")
            for change in changes:
                yield from _change_lines(change)
    if not level.changed_tests:
        yield f"  no test changed ({level.tests_compared} compared)"


def _pass_hat_k_lines(changes: Sequence[PassHatKChange]) -> Iterable[str]:
    """pass^1 and pass^k of each category, A → B, with the difference."""
    for c in changes:
        first, last = f"{c.first_a:.2f} → {c.first_b:.2f}", f"{c.last_a:.2f} → {c.last_b:.2f}"
        yield (
            f"  {c.category} pass^1 {first} ({c.first_b - c.first_a:+.2f}), "
            f"pass^{c.k} {last} ({c.last_b - c.last_a:+.2f})"
        )


def _table(deltas: Sequence[CategoryDelta], a: str, b: str) -> Table:
    table = Table(box=None, padding=(0, 2), pad_edge=False)
    table.add_column("category")
    table.add_column(Text(a), justify="right")
    table.add_column(Text(b), justify="right")
    for column in ("B - A", "95% interval", "beyond noise", "tests"):
        table.add_column(column, justify="right")
    for delta in deltas:
        low, high = delta.interval
        verdict = Text("no")
        if delta.regressed:
            verdict = Text("yes, worse", style="bold red")
        elif delta.improved:
            verdict = Text("yes, better", style="green")
        table.add_row(
            delta.category,
            f"{delta.score_a:.2f}",
            f"{delta.score_b:.2f}",
            f"{delta.difference:+.2f}",
            f"{low:+.2f} to {high:+.2f}",
            verdict,
            str(delta.tests),
        )
    return table


def _change_lines(change: TestChange) -> Iterable[Text]:
    statuses = f"{change.status_a} → {change.status_b}" if change.status_a != change.status_b else change.status_a
    yield Text(f"    {change.name:<28} {change.score_a:.2f} → {change.score_b:.2f}  {statuses}  ({change.category})")
    for flip in change.checks:
        style = "red" if flip.status_a == "passed" else "green" if flip.status_b == "passed" else ""
        detail = flip.detail_b if flip.status_b != "passed" else flip.detail_a
        shown = one_line(detail)
        yield Text(f"      {flip.status_a} → {flip.status_b}  {flip.location} {flip.type}: {shown}", style=style)


def details_lines(found: Comparison, a: Side, b: Side) -> Iterable[RenderableType]:
    """The answers of each changed test, A's then B's, as ``tsuka show`` prints a transcript."""
    if "profile" in (a.info.kind, b.info.kind):
        yield ""
        yield Text("--details: answers are not kept in profiles, only in runs", style="yellow")
    for level in found.levels:
        side_a, side_b = a.level(level.key_a), b.level(level.key_b)
        for change in level.changed_tests:
            test_a = side_a.test(change.name) if side_a else None
            test_b = side_b.test(change.name) if side_b else None
            for info, key, test in ((a.info, level.key_a, test_a), (b.info, level.key_b, test_b)):
                if test is not None and test.recorded:
                    yield from _answers(info, key, test)


def _answers(info: SideInfo, key: str, test: SideTest) -> Iterable[RenderableType]:
    for run in test.recorded:
        repeat = f", run {run.repeat} of {len(test.recorded)}" if len(test.recorded) > 1 else ""
        outcome = f"ERROR {run.error or ''}" if run.status != "ok" else f"score {run.score:.2f}"
        yield ""
        yield Text(f"══ {info.label} {key} {test.name}{repeat}: {outcome}", style="bold")
        yield from transcript(run)
