"""The live progress displays, and the observer that loads the run's summary while the server works."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys

import pytest

from tsuka_core.cli.progress import PlainProgress, Prefetching, make_progress
from tsuka_core.cli.progress_rich import RichProgress
from tsuka_core.engine import results
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort


def _result(suite: Suite, repeat: int = 1) -> results.TestResult:
    return results.TestResult(suite.tests[0], "ok", 0.75, (), repeat=repeat)


class Recorder:
    """A sweep observer that keeps what it is told."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        self.calls.append(f"start {model}@{effort} {applied} {total}")

    def test_done(self, model: str, effort: Effort, result: results.TestResult) -> None:
        self.calls.append(f"done {model}@{effort} {result.test.name}")

    def note(self, message: str) -> None:
        self.calls.append(f"note {message}")


def test_off_a_terminal_progress_is_plain_lines_and_loads_no_rich() -> None:
    code = (
        "import sys\n"
        "from tsuka_core.cli.progress import make_progress\n"
        "print(type(make_progress()).__name__, 'rich' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["PlainProgress", "False"]


def test_plain_progress_prints_a_line_per_test(suite: Suite, capsys: pytest.CaptureFixture[str]) -> None:
    with make_progress() as progress:
        assert isinstance(progress, PlainProgress)
        progress.level_started("m", "low", True, 2)
        progress.test_done("m", "low", _result(suite, repeat=2))
        progress.note("careful [red]now[/red]")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "m@low: 2 test runs"
    assert lines[1].startswith(f"m@low 1/2 {suite.tests[0].name} #2 0.75 [")
    assert lines[2] == "note: careful [red]now[/red]"


def test_rich_progress_draws_a_bar_per_level_and_prints_notes_as_they_are(suite: Suite) -> None:
    out = io.StringIO()
    progress = RichProgress()
    progress.console.file = out
    with progress:
        progress.level_started("m", "none", False, 1)
        progress.test_done("m", "none", _result(suite))
        progress.note("names like [bold]this[/bold] are not markup")
    text = out.getvalue()
    assert "m@none (no effort)" in text
    assert "1/1" in text
    assert "note: names like [bold]this[/bold] are not markup" in text


def test_prefetching_forwards_everything_and_imports_only_after_the_first_test(suite: Suite) -> None:
    module = "tsuka_core.report.svg"  # imported by nothing a test run has loaded so far in this check
    sys.modules.pop(module, None)
    recorder = Recorder()
    observer = Prefetching(recorder, [module])

    async def main() -> list[bool]:
        seen = []
        observer.level_started("m", "low", True, 2)
        observer.note("n")
        await asyncio.sleep(0)
        seen.append(module in sys.modules)
        observer.test_done("m", "low", _result(suite))
        seen.append(module in sys.modules)  # not yet: the import waits for the loop's next turn
        observer.test_done("m", "low", _result(suite))
        for _ in range(3):
            await asyncio.sleep(0)
        seen.append(module in sys.modules)
        return seen

    assert asyncio.run(main()) == [False, False, True]
    name = suite.tests[0].name
    assert recorder.calls == ["start m@low True 2", "note n", f"done m@low {name}", f"done m@low {name}"]
