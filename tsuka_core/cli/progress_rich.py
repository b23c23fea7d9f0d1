"""The terminal's live progress: a rich bar per model@effort (loaded only when stderr is a terminal)."""

from __future__ import annotations

from types import TracebackType

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from tsuka_core.cli.progress import run_name
from tsuka_core.cli.safe_console import SafeConsole
from tsuka_core.engine.results import TestResult
from tsuka_core.terms import Effort

__all__ = ["RichProgress"]


class RichProgress:
    """A bar per model@effort with tests done, elapsed time and ETA."""

    def __init__(self) -> None:
        self.console = SafeConsole(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),  # model and test names are not markup
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[last]}", markup=False),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RichProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.progress.__exit__(kind, exc, tb)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Add a bar for the level."""
        label = f"{model}@{effort}" + ("" if applied else " (no effort)")
        self.tasks[f"{model}@{effort}"] = self.progress.add_task(label, total=total, last="")

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """Advance the level's bar."""
        last = "error" if result.status == "error" else f"{run_name(result)} {result.score:.2f}"
        self.progress.update(self.tasks[f"{model}@{effort}"], advance=1, last=last)

    def note(self, message: str) -> None:
        """Print a note above the bars."""
        self.progress.console.print(Text.assemble(("note:", "yellow"), f" {message}"))
