"""The live progress displays: plain lines off a terminal, rich bars on one."""

from __future__ import annotations

import io
import sys

import pytest

from tsuka_core.cli.progress import PlainProgress, RichProgress, make_progress
from tsuka_core.engine import results
from tsuka_core.suite.model import Suite


def _result(suite: Suite, repeat: int = 1) -> results.TestResult:
    return results.TestResult(suite.tests[0], "ok", 0.75, (), repeat=repeat)


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
    assert "m@none (effort not applied)" in text
    assert "(no effort)" not in text
    assert "1/1" in text
    assert "note: names like [bold]this[/bold] are not markup" in text


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_progress_is_rich_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert isinstance(make_progress(), RichProgress)


def test_the_plain_lines_say_how_long_the_rest_of_the_level_should_take() -> None:
    from tsuka_core.cli.progress import eta

    assert eta(10.0, 1, 5) == ", ~40s left"
    assert eta(90.0, 3, 8) == ", ~2m30s left"
    assert eta(0.0, 0, 5) == ""
    assert eta(5.0, 5, 5) == ""  # the level is done


def test_a_silent_stretch_is_said_so_a_slow_level_never_looks_hung(capsys: pytest.CaptureFixture[str]) -> None:
    """No answer for a while: plain progress says which level is still running and for how long without one."""
    import threading

    from tsuka_core.cli import progress as module

    with module.PlainProgress(quiet_after=0.05) as progress:
        progress.level_started("m1", "none", True, 3)
        seen = threading.Event()
        for _ in range(400):  # up to 4 s of a loaded machine's slowness; it usually takes 0.05 s
            if "still running" in capsys.readouterr().err:
                seen.set()
                break
            threading.Event().wait(0.01)
    assert seen.is_set()
    with module.PlainProgress(quiet_after=0.05) as done:
        done.level_started("m1", "none", True, 1)
        done.totals["m1@none"] = 0  # every level finished: nothing is still running
        threading.Event().wait(0.3)
    assert "still running" not in capsys.readouterr().err
