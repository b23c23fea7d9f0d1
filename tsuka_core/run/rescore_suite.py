"""Which suite rescores a recorded run: the one the run recorded, found again by its folder or registered name.

A run records its suite's folder and hash. That folder judges the rescore
while it is there. When it is gone (tsuka reinstalled elsewhere, a temporary
folder deleted), a registered suite with the recorded hash, else the registered
suite of the same folder name (a built-in suite of another tsuka version), takes
its place. A suite that holds none of the run's tests cannot judge it: its
answers would all be missing, so that is one line naming the suite to give.
"""

from __future__ import annotations

from pathlib import Path

from tsuka_core.errors import UsageError
from tsuka_core.storage.history_query import StoredRun
from tsuka_core.suite.identity import suite_label
from tsuka_core.suite.loading import default_suite_path, suite_hash
from tsuka_core.suite.model import Suite

__all__ = ["check_fits", "judged_with", "recorded_label", "recorded_suite"]


def recorded_label(run: StoredRun) -> str:
    """The suite ``run`` was measured with, as a profile names it: a registered name, else the recorded folder."""
    if not run.suite_path:
        return "default"
    folder = Path(run.suite_path)
    return suite_label(folder) if folder.is_dir() else run.suite_path


def recorded_suite(run: StoredRun) -> Path:
    """The folder of the suite ``run`` was measured with; UsageError naming what to give when it is gone."""
    if not run.suite_path:  # recorded before the history kept the suite's folder
        return default_suite_path()
    folder = Path(run.suite_path)
    if folder.is_dir():
        return folder
    found = _registered_like(folder, run.suite_hash)
    if found is not None:
        return found
    raise UsageError(
        f"run {run.id} was measured with suite {run.suite_path} ({run.suite_hash}), which is gone; "
        f"give the suite to judge it with: tsuka rescore {run.id} --suite NAME|FOLDER"
    )


def _registered_like(folder: Path, recorded_hash: str) -> Path | None:
    """A registered suite with the recorded hash, else one whose folder has the recorded folder's name."""
    from tsuka_core.plugins.registry import load_registry

    registered = {name: suite.path for name, suite in load_registry().suites.items()}
    same_hash = next((path for path in registered.values() if suite_hash(path) == recorded_hash), None)
    if same_hash is not None:
        return same_hash
    return next((path for path in registered.values() if path.name == folder.name), None)


def check_fits(run: StoredRun, suite: Suite, *, given: bool) -> None:
    """UsageError when ``suite`` has none of the tests ``run`` recorded (its answers could judge nothing)."""
    recorded = {test.name for level in run.levels for test in level.tests}
    if not recorded or recorded & {test.name for test in suite.tests}:
        return
    measured = f"run {run.id} was measured with suite {recorded_label(run)} ({run.suite_hash})"
    chosen = "the --suite given" if given else "its recorded folder now"
    raise UsageError(
        f"suite {suite_label(suite.path)} ({chosen}) has none of the tests of run {run.id}; {measured}: "
        f"give that suite with --suite NAME|FOLDER"
    )


def judged_with(run: StoredRun, suite: Suite, *, given: bool) -> str:
    """Which suite judges the rescore of ``run``, and whether it is the one the run was measured with."""
    how = "given with --suite" if given else "the suite the run was measured with"
    return (
        f"rescore of run {run.id} (suite {recorded_label(run)}, {run.suite_hash}) "
        f"with suite {suite_label(suite.path)} ({suite.hash}), {how}"
    )
