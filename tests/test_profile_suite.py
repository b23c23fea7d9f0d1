"""Profiles remember their suite: profiles, tier and gate judge each against the suite it was measured with."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from answerers import perfect
from click.testing import CliRunner, Result
from loopback import LoopbackServer

from tsuka_core.cli.main import cli
from tsuka_core.storage.store import BENCHMARK_VERSION
from tsuka_core.suite.loading import default_suite_path, suite_hash

ROOT = Path(__file__).resolve().parents[1]
CLEAN_ENV = dict.fromkeys(("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES", "TSUKA_HISTORY"))


def invoke(*args: str | os.PathLike[str]) -> Result:
    """Run ``tsuka`` in this process with a clean environment."""
    return CliRunner(env=CLEAN_ENV).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def own_suite(tmp_path: Path) -> Path:
    """A copy of the default suite with one file more, so that its hash differs from the installed suite's."""
    folder = tmp_path / "mysuite"
    shutil.copytree(ROOT / "benchmarks", folder)
    extra = json.loads((folder / sorted(p.name for p in folder.glob("*.json"))[0]).read_text("utf-8"))
    extra["name"] = "extra_copy"
    (folder / "99_extra.json").write_text(json.dumps(extra), "utf-8")
    return folder


def profile(suite: str, tests_hash: str) -> dict[str, Any]:
    return {
        "model": "m1",
        "provider": "p",
        "tier": "large",
        "scores": {"instruction": 1, "json": 1, "toolCalling": 1},
        "tokensPerSecond": 10,
        "testedAt": "2026-01-01T00:00:00.000Z",
        "benchmarkVersion": BENCHMARK_VERSION,
        "testsHash": tests_hash,
        "testResults": [],
        "reasoningEffort": "none",
        "avgCompletionTokens": 5,
        "suite": suite,
    }


def write_store(path: Path, entry: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"profiles": {"m1@none": entry}, "recommendations": {"m1": "none"}}), "utf-8")
    return path


def test_a_run_stores_the_suite_it_measured_with(tmp_path: Path) -> None:
    suite = own_suite(tmp_path)
    store = tmp_path / "p.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none", "--suite", suite)
        default = invoke("run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "d.json", "-e", "none")

    assert result.exit_code == 0, result.stderr
    stored = json.loads(store.read_text("utf-8"))
    assert stored["profiles"] == {}
    assert stored["suiteProfiles"][str(suite.resolve())]["m1@none"]["suite"] == str(suite.resolve())
    assert default.exit_code == 0, default.stderr
    assert json.loads((tmp_path / "d.json").read_text("utf-8"))["profiles"]["m1@none"]["suite"] == "default"


def test_a_profile_is_judged_against_its_own_suite_not_the_installed_one(tmp_path: Path) -> None:
    suite = own_suite(tmp_path)
    assert suite_hash(suite) != suite_hash(default_suite_path())
    store = write_store(tmp_path / "p.json", profile(str(suite), suite_hash(suite)))

    shown = invoke("profiles", "--profiles", store)
    assert "valid" in shown.stdout, shown.stdout
    assert "stale" not in shown.stdout
    tier = invoke("tier", "m1", "--profiles", store, "--suite", suite)
    assert tier.stdout.strip() == "large", tier.stderr
    default = invoke("tier", "m1", "--profiles", store)
    assert default.stdout.strip() == "small"  # the default suite's profiles count unless --suite names another
    assert f"'m1' has profiles for suite {suite.resolve()} only; choose it with --suite" in default.stderr

    (suite / "99_extra.json").unlink()  # the suite changed since: the profile is stale
    stale = invoke("tier", "m1", "--profiles", store, "--suite", suite)
    assert stale.stdout.strip() == "small"
    assert "stale" in stale.stderr


def test_a_profile_of_the_default_suite_or_naming_none_is_judged_against_the_installed_one(tmp_path: Path) -> None:
    installed = suite_hash(default_suite_path())
    for suite in ("default", None):
        entry = profile("default", installed)
        if suite is None:
            del entry["suite"]
        store = write_store(tmp_path / "p.json", entry)
        assert invoke("tier", "m1", "--profiles", store).stdout.strip() == "large"
