"""A profile per model, effort and suite: runs of two suites share one store and neither replaces the other."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect
from click.testing import CliRunner, Result
from loopback import LoopbackServer

from tsuka_core.cli.main import cli

DATA = Path(__file__).resolve().parent / "data"
EARLIER = DATA / "earlier_store_extended_replaced_default.json"
"""A store written before profiles were kept per suite: m1 and m2 measured with the default suite, then m1 with
the extended one, whose profile replaced m1's default-suite profile."""
CLEAN_ENV = dict.fromkeys(("OPENAI_BASE_URL", "OPENAI_API_KEY", "TSUKA_PROFILES", "TSUKA_HISTORY"))


def invoke(*args: str | os.PathLike[str]) -> Result:
    """Run ``tsuka`` in this process with a clean environment."""
    return CliRunner(env=CLEAN_ENV).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def stored(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


def run(server: LoopbackServer, store: Path, *args: str) -> None:
    ran = invoke("run", *args, "--base-url", server.base_url, "--profiles", store, "-e", "none")
    assert ran.exit_code == 0, ran.stderr


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store where m1 was measured with the default suite, then with the extended one."""
    store = tmp_path_factory.mktemp("suites") / "models_profile.json"
    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store, "m1")
        run(server, store, "m1", "--suite", "extended")
    return store


def test_a_run_with_another_suite_keeps_the_default_suites_profile(both: Path) -> None:
    data = stored(both)
    assert data["profiles"]["m1@none"]["suite"] == "default"  # where the TypeScript TSUKA reads it
    assert data["suiteProfiles"]["extended"]["m1@none"]["suite"] == "extended"
    assert data["recommendations"] == {"m1": "none"}
    assert data["suiteRecommendations"] == {"extended": {"m1": "none"}}


def test_profiles_lists_both_suites_and_filters_by_one(both: Path) -> None:
    shown = invoke("profiles", "--profiles", both)
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.count("m1@none *") == 2
    assert "default" in shown.stdout
    assert "extended" in shown.stdout
    only = invoke("profiles", "--profiles", both, "--suite", "extended")
    assert only.stdout.count("m1@none *") == 1
    assert "default" not in only.stdout.replace("(default", "")
    none = invoke("profiles", "--profiles", both, "--suite", "extended", "m9")
    assert none.stdout.strip() == f"no profiles for m9 of suite extended in {both}"


def test_tier_and_gate_use_the_chosen_suites_profile(both: Path, tmp_path: Path) -> None:
    data = stored(both)
    default_tier, extended_tier = (
        data["profiles"]["m1@none"]["tier"],
        data["suiteProfiles"]["extended"]["m1@none"]["tier"],
    )
    assert default_tier != extended_tier  # the loopback answers the default suite perfectly, not the extended one
    assert invoke("tier", "m1", "--profiles", both).stdout.strip() == default_tier
    assert invoke("tier", "m1", "--profiles", both, "--suite", "extended").stdout.strip() == extended_tier
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "f"}}]), "utf-8")
    gated = invoke("gate", "m1", "--tools", tools, "--profiles", both, "--suite", "extended", "--explain")
    assert gated.exit_code == 0, gated.stderr
    assert gated.stderr.splitlines()[0] == f"profiles of suite extended in {both}"
    assert f"m1@none: tier {extended_tier}" in gated.stdout


def test_an_earlier_store_is_upgraded_in_place_without_losing_a_profile(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    shutil.copy(EARLIER, store)
    before = stored(store)
    assert before["profiles"]["m1@none"]["suite"] == "extended"  # the default suite's profile of m1 was lost

    listed = invoke("profiles", "--profiles", store, "--suite", "extended")
    assert "m1@none *" in listed.stdout  # read as upgraded, before anything is written
    assert store.read_bytes() == EARLIER.read_bytes()  # reading never writes

    with LoopbackServer(perfect, models=["m1"]) as server:
        run(server, store, "m1")
    after = stored(store)
    assert after["suiteProfiles"]["extended"]["m1@none"] == before["profiles"]["m1@none"]
    assert after["suiteRecommendations"] == {"extended": {"m1": "none"}}
    assert after["profiles"]["m1@none"]["suite"] == "default"
    assert after["profiles"]["m2@none"] == before["profiles"]["m2@none"]
    assert after["recommendations"] == {"m1": "none", "m2": "none"}


def test_an_unknown_name_gets_a_did_you_mean_and_the_fallback_in_one_line(both: Path, tmp_path: Path) -> None:
    typo = invoke("tier", "m11", "--profiles", both)
    assert typo.exit_code == 0
    assert typo.stdout.strip() == "small"
    assert "note: no profile of 'm11' for suite default; did you mean 'm1'?" in typo.stderr
    assert "note: 'm11' is not profiled for suite default: treated as small, the safe side" in typo.stderr
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "f", "requiredTier": "medium"}}]), "utf-8")
    gated = invoke("gate", "m11", "--tools", tools, "--profiles", both)
    assert "did you mean 'm1'?" in gated.stderr
    assert "hidden   f needs tier medium" in gated.stdout
    known = invoke("tier", "m1", "--profiles", both)
    assert "did you mean" not in known.stderr
    assert "treated as small" not in known.stderr
