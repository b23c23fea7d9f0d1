"""tsuka rescore judges a run with the suite it was measured with, and says which; a suite that is gone is one line."""

from __future__ import annotations

import shutil
from pathlib import Path

from answerers import perfect
from history_helpers import DEFAULT_SUITE, invoke, stored
from loopback import LoopbackServer

from tsuka_core.suite.loading import resolve_suite, suite_hash


def run(server: LoopbackServer, store: Path, *args: str | Path) -> None:
    ran = invoke("run", "m1", *args, "--base-url", server.base_url, "--profiles", store, "-e", "none")
    assert ran.exit_code == 0, ran.stderr


def test_an_extended_run_is_rescored_with_the_extended_suite(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store, "--suite", "extended")
        requests = len(server.requests)
        result = invoke("rescore", "last", "--profiles", store)
        assert len(server.requests) == requests  # no model asked
    assert result.exit_code == 0, result.stdout + result.stderr
    extended = suite_hash(resolve_suite("extended"))
    first = result.stdout.splitlines()[0]
    assert first == (
        f"rescore of run 1 (suite extended, {extended}) with suite extended ({extended}), "
        "the suite the run was measured with"
    )
    data = stored(store)
    assert data["suiteProfiles"]["extended"]["m1@none"]["rescoredFrom"] == 1
    assert "m1@none" not in data.get("profiles", {})  # the default suite's section is untouched


def test_suite_overrides_the_recorded_suite(tmp_path: Path) -> None:
    store, suite = tmp_path / "models_profile.json", tmp_path / "suite"
    shutil.copytree(DEFAULT_SUITE, suite)
    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store)
    result = invoke("rescore", "last", "--suite", suite, "--profiles", store, "--dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.endswith(f"with suite {suite.resolve()} ({suite_hash(suite)}), given with --suite")


def test_a_deleted_suite_folder_names_the_suite_to_give(tmp_path: Path) -> None:
    store, suite = tmp_path / "models_profile.json", tmp_path / "plugin-suite"
    shutil.copytree(DEFAULT_SUITE, suite)
    for file in suite.glob("*.json"):  # renamed, so no registered suite has its hash
        file.write_text(file.read_text("utf-8").replace('"name": "', '"name": "mine-', 1), "utf-8")
    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store, "--suite", suite)
    recorded = suite_hash(suite)
    shutil.rmtree(suite)
    result = invoke("rescore", "last", "--profiles", store)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"tsuka: error: run 1 was measured with suite {suite} ({recorded}), which is gone; "
        "give the suite to judge it with: tsuka rescore 1 --suite NAME|FOLDER\n"
    )


def test_a_suite_without_any_of_the_runs_tests_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store, "--suite", "extended")
    result = invoke("rescore", "last", "--suite", DEFAULT_SUITE, "--profiles", store)
    assert result.exit_code == 2
    assert result.stderr.startswith("tsuka: error: suite default (the --suite given) has none of the tests of run 1;")
    assert "measured with suite extended" in result.stderr
    assert len(result.stderr.splitlines()) == 1
