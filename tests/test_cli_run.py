"""The commands that measure and read profiles, end to end: tsuka run, profiles, gate and tier against real servers."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from answerers import Answerer, by_model, failing, fooled, perfect, refusing_effort, tool_shy
from click.testing import CliRunner, Result
from loopback import LoopbackServer

from tsuka_core.cli.main import cli
from tsuka_core.suite.loading import default_suite_path

pytestmark = pytest.mark.usefixtures("fast_retries")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
TSUKA = Path(sys.executable).with_name("tsuka")
LEVELS = ["none", "low", "medium", "xhigh"]
CLEAN_ENV: dict[str, str | None] = {
    "OPENAI_BASE_URL": None,
    "OPENAI_API_KEY": None,
    "TSUKA_PROFILES": None,
    "TSUKA_LOAD_PLUGINS": None,
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}},
    },
    {
        "type": "function",
        "function": {"name": "delete_file", "description": "Delete a file.", "parameters": {"type": "object"}},
        "requiredTier": "medium",
    },
]
ALPHA_BETA = by_model({"alpha": perfect, "beta": tool_shy})
"""alpha answers everything right (large); beta never calls a tool (small)."""


def invoke(*args: str | os.PathLike[str]) -> Result:
    """Run the ``tsuka`` command in this process with a clean environment; stdout and stderr kept apart."""
    return CliRunner(env=CLEAN_ENV).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def stored(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True)
class Swept:
    """The store after ``tsuka run all`` measured alpha and beta, and what that run printed."""

    store: Path
    result: Result
    base_url: str
    bodies: list[Any]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Swept:
    store = tmp_path_factory.mktemp("swept") / "models_profile.json"
    with LoopbackServer(ALPHA_BETA, models=["alpha", "beta"]) as server:
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store)
    return Swept(store, result, server.base_url, server.bodies)


@pytest.fixture
def store_copy(swept: Swept, tmp_path: Path) -> Path:
    """A copy of the swept store that a test may read or change."""
    copy = tmp_path / "models_profile.json"
    shutil.copyfile(swept.store, copy)
    return copy


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    """A copy of the default suite (same file names, same bytes, so the same hash)."""
    copy = tmp_path / "suite"
    shutil.copytree(DEFAULT_SUITE, copy)
    return copy


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    return path


def change(suite: Path) -> None:
    """Edit one test file of ``suite`` without making it invalid (its hash changes)."""
    path = suite / "10_instruction_frase.json"
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")


def folder_hash(folder: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    for path in sorted(folder.glob("*.json"), key=lambda p: p.name):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:8]


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


# --- tsuka run ------------------------------------------------------------------------------------------------------


def test_run_all_measures_and_stores_every_listed_model(swept: Swept) -> None:
    result = swept.result
    assert result.exit_code == 0, result.stderr
    data = stored(swept.store)
    tiers = {key: profile["tier"] for key, profile in data["profiles"].items()}
    assert tiers == {f"{m}@{e}": t for m, t in (("alpha", "large"), ("beta", "small")) for e in LEVELS}
    assert data["recommendations"] == {"alpha": "none", "beta": "none"}
    for key, tier in tiers.items():
        assert len(lines_with(result.stdout, f"{key}  tier {tier}")) == 1, key
    assert "Recommendation: alpha at effort none (tier large)" in result.stdout
    assert "Recommendation: beta at effort none (tier small)" in result.stdout
    assert "Stored 8 profile(s)" in result.stdout
    assert "not measured" not in result.stdout
    assert "Traceback" not in result.stderr
    assert Counter(body["model"] for body in swept.bodies) == {"alpha": 36, "beta": 28}
    assert {data["profiles"][f"alpha@{e}"]["provider"] for e in LEVELS} == {swept.base_url}


def test_json_output_holds_the_stored_profiles_exactly(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(ALPHA_BETA, models=["alpha", "beta"]) as server:
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "--json")

    assert result.exit_code == 0, result.stderr
    output = json.loads(result.stdout)
    data = stored(store)
    assert output["profiles"] == data["profiles"]
    assert len(output["profiles"]) == 8
    assert output["recommendations"] == data["recommendations"] == {"alpha": "none", "beta": "none"}
    assert output["failed"] == []
    assert output["provider"] == server.base_url
    assert len(output["levels"]) == 8
    assert "Recommendation: alpha at effort none (tier large)" in result.stderr


def test_effort_options_restrict_the_levels(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(ALPHA_BETA, models=["alpha", "beta"]) as server:
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "-e", "none", "-e", "low")

    assert result.exit_code == 0, result.stderr
    assert sorted(stored(store)["profiles"]) == ["alpha@low", "alpha@none", "beta@low", "beta@none"]
    assert Counter(body["reasoning_effort"] for body in server.bodies) == {"none": 16, "low": 16}


def test_named_models_are_measured_alone_once_the_list_shows_them(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(ALPHA_BETA, models=["alpha", "beta"]) as server:
        result = invoke("run", "beta", "--base-url", server.base_url, "--profiles", store, "-e", "medium")

    assert result.exit_code == 0, result.stderr
    assert list(stored(store)["profiles"]) == ["beta@medium"]
    assert sorted(r.path for r in server.requests if r.method == "GET") == ["/props", "/v1/models"]
    assert {body["model"] for body in server.bodies} == {"beta"}


def test_a_refused_effort_is_said_plainly_and_stored_as_none(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(refusing_effort, models=["m1"]) as server:
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store)

    assert result.exit_code == 0, result.stderr
    data = stored(store)
    assert list(data["profiles"]) == ["m1@none"]
    assert data["profiles"]["m1@none"]["effortApplied"] is False
    assert data["recommendations"] == {"m1": "none"}
    assert "m1@none (effort not applied)  tier large" in result.stdout
    (note,) = lines_with(result.stdout, "note:")
    assert "m1" in note
    assert "reasoning_effort" in note


def test_a_corrupt_store_stops_the_run_before_any_request(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    store.write_bytes(b'{"profiles": {"alpha@none": {"tier": "large"}')
    with LoopbackServer(ALPHA_BETA, models=["alpha", "beta"]) as server:
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store)

    assert result.exit_code == 2
    assert result.stdout == ""
    problem = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(problem) == 1, result.stderr
    assert str(store) in problem[0]
    assert "not valid JSON" in problem[0]
    assert store.read_bytes() == b'{"profiles": {"alpha@none": {"tier": "large"}'
    assert server.requests == []


def test_a_model_failing_for_good_exits_1_and_keeps_its_earlier_profile(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    answers: dict[str, Answerer] = {"good": fooled, "bad": perfect}
    with LoopbackServer(by_model(answers), models=["good", "bad"]) as server:
        first = invoke("run", "bad", "--base-url", server.base_url, "--profiles", store, "-e", "none")
        assert first.exit_code == 0, first.stderr
        earlier = stored(store)["profiles"]["bad@none"]
        answers["bad"] = failing(500, "the model crashed")
        result = invoke("run", "all", "--base-url", server.base_url, "--profiles", store, "--retries", "1")

    assert result.exit_code == 1
    data = stored(store)
    assert list(data["profiles"]) == ["bad@none", *(f"good@{e}" for e in LEVELS)]
    assert data["profiles"]["bad@none"] == earlier
    assert data["recommendations"] == {"bad": "none", "good": "none"}
    failed = lines_with(result.stdout, "not measured:")
    assert [line.split()[2] for line in failed] == [f"bad@{e}" for e in LEVELS]
    assert all("HTTP 500" in line for line in failed)
    assert "Traceback" not in result.stderr


# --- tsuka profiles -------------------------------------------------------------------------------------------------


def test_profiles_are_valid_for_the_suite_they_were_measured_with(store_copy: Path) -> None:
    for extra in ((), ("--suite", "default")):
        result = invoke("profiles", "--profiles", store_copy, *extra)
        assert result.exit_code == 0, result.stderr
        for model in ("alpha", "beta"):
            for effort in LEVELS:
                (row,) = lines_with(result.stdout, f"{model}@{effort} ")
                assert "valid" in row
                assert "stale" not in row


def test_profiles_go_stale_when_the_suite_changes(store_copy: Path, suite_copy: Path) -> None:
    """Profiles measured with a folder (here: as if with the copy) are judged by that folder as it is now."""
    data = stored(store_copy)
    for profile in data["profiles"].values():
        profile["suite"] = str(suite_copy.resolve())
    store_copy.write_text(json.dumps(data), encoding="utf-8")
    change(suite_copy)

    result = invoke("profiles", "--profiles", store_copy)

    assert result.exit_code == 0, result.stderr
    reason = f"stale: suite changed (testsHash {folder_hash(DEFAULT_SUITE)}, suite"
    for model in ("alpha", "beta"):
        for effort in LEVELS:
            (row,) = lines_with(result.stdout, f"{model}@{effort} ")
            assert reason in row
            assert "valid" not in row
    assert len(stored(store_copy)["profiles"]) == 8  # stale profiles stay in the file


def test_profiles_of_one_model(store_copy: Path) -> None:
    result = invoke("profiles", "beta", "--profiles", store_copy)

    assert result.exit_code == 0, result.stderr
    assert len([line for line in lines_with(result.stdout, "beta@") if line.startswith("│")]) == 4  # table rows
    assert lines_with(result.stdout, "alpha@") == []


def test_profiles_of_a_corrupt_store_is_one_line_and_exit_2(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    store.write_text("[1, 2", encoding="utf-8")

    result = invoke("profiles", "--profiles", store)

    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert str(store) in result.stderr
    assert store.read_text(encoding="utf-8") == "[1, 2"


# --- tsuka gate and tier --------------------------------------------------------------------------------------------


def test_gate_shows_every_tool_to_a_large_model(store_copy: Path, tools_file: Path) -> None:
    result = invoke("gate", "alpha", "--tools", tools_file, "--profiles", store_copy)

    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "alpha@none: tier large",
        "  visible  read_file",
        "  visible  delete_file",
    ]


def test_gate_hides_a_medium_tool_from_a_small_model(store_copy: Path, tools_file: Path) -> None:
    result = invoke("gate", "beta", "--tools", tools_file, "--profiles", store_copy)

    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "beta@none: tier small",
        "  visible  read_file",
        "  hidden   delete_file needs tier medium; beta@none is small",
    ]
    as_json = invoke("gate", "beta", "--tools", tools_file, "--profiles", store_copy, "--json")
    assert json.loads(as_json.stdout) == [TOOLS[0]]


@pytest.mark.parametrize("model", ["ghost", "alpha"])
def test_gate_hides_a_medium_tool_from_an_unprofiled_model(
    store_copy: Path, suite_copy: Path, tools_file: Path, model: str
) -> None:
    change(suite_copy)  # alpha's profiles are stale for this suite: alpha is unprofiled too

    result = invoke("gate", model, "--tools", tools_file, "--profiles", store_copy, "--suite", suite_copy)

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith(": tier small (unprofiled)")
    assert lines[1] == "  visible  read_file"
    assert lines[2].startswith("  hidden   delete_file needs tier medium; ")
    assert len(lines) == 3
    assert "unprofiled" in result.stderr


@pytest.mark.parametrize(
    ("args", "tier"),
    [(("alpha",), "large"), (("alpha", "-e", "xhigh"), "large"), (("beta",), "small"), (("ghost",), "small")],
)
def test_tier_prints_the_tier_of_the_valid_profile(store_copy: Path, args: Sequence[str], tier: str) -> None:
    result = invoke("tier", *args, "--profiles", store_copy)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{tier}\n"
    assert ("unprofiled" in result.stderr) is (args[0] == "ghost")


# --- two processes, one store ---------------------------------------------------------------------------------------


def subprocess_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}


@pytest.fixture
def servers() -> Iterator[list[LoopbackServer]]:
    with ExitStack() as stack:
        yield [stack.enter_context(LoopbackServer(perfect, models=[name])) for name in ("m1", "m2")]


def test_two_runs_writing_one_store_at_once_both_land(tmp_path: Path, servers: list[LoopbackServer]) -> None:
    store = tmp_path / "models_profile.json"
    store.write_text('{\n  "profiles": {},\n  "recommendations": {},\n  "kept": true\n}\n', encoding="utf-8")
    commands = [
        [str(TSUKA), "run", name, "--base-url", server.base_url, "--profiles", str(store)]
        for name, server in zip(("m1", "m2"), servers, strict=True)
    ]
    processes = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env())
        for c in commands
    ]
    try:
        outputs = [p.communicate(timeout=120) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)

    assert [p.returncode for p in processes] == [0, 0], outputs
    data = stored(store)
    assert sorted(data["profiles"]) == sorted(f"{m}@{e}" for m in ("m1", "m2") for e in LEVELS)
    assert data["recommendations"] == {"m1": "none", "m2": "none"}
    assert data["kept"] is True
    assert all(len(s.bodies) == 36 for s in servers)
    assert not list(tmp_path.glob(".*.tmp"))
