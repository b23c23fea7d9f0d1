"""Shards and merge: ``tsuka run --shard I/N`` on each machine, ``tsuka merge`` equal to one unsharded run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from loopback import LoopbackServer, Reply

from tsuka_core.cli.main import cli
from tsuka_core.errors import UsageError
from tsuka_core.suite.model import Suite
from tsuka_core.suite.shard import Shard, parse_shard, shard_suite

TESTS = 16
CLEAN_ENV: dict[str, str | None] = dict.fromkeys(
    ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TSUKA_PROFILES", "TSUKA_HISTORY")
)

pytestmark = pytest.mark.usefixtures("fast_retries")


def tsuka(*args: str | Path) -> Result:
    runner = CliRunner(env=CLEAN_ENV)
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def _suite(folder: Path, count: int = TESTS) -> Path:
    """Tests in two categories; the answer passes a test unless its number is a multiple of 3."""
    folder.mkdir()
    for index in range(count):
        category = "instruction" if index % 2 else "json"
        test = {"name": f"t{index:02d}", "category": category, "prompt": f"Say ok. (#{index})",
                "checks": [{"type": "contains", "value": "ok"}]}  # fmt: skip
        (folder / f"t{index:02d}.json").write_text(json.dumps(test))
    return folder


def _answer(body: dict[str, Any], n: int) -> Reply:
    number = int(re.findall(r"#(\d+)", json.dumps(body["messages"]))[-1])
    return Reply.text("nope" if number % 3 == 0 else "ok, done")


def _run(server: LoopbackServer, suite: Path, folder: Path, *extra: str) -> Result:
    folder.mkdir(exist_ok=True)
    store = folder / "models_profile.json"
    url = server.base_url
    return tsuka("run", "m1", "-e", "none", "--base-url", url, "--suite", suite, "--profiles", store, *extra)


def _profile(folder: Path, suite: Path) -> dict[str, Any]:
    """m1@none as stored for ``suite``, a folder no plugin registers: in that suite's own section."""
    data: dict[str, Any] = json.loads((folder / "models_profile.json").read_text())
    return data["suiteProfiles"][str(suite.resolve())]["m1@none"]  # type: ignore[no-any-return]


def test_shards_split_a_suite_by_test_name_whatever_else_it_holds(suite: Suite) -> None:
    names = [f"test_{i}" for i in range(200)]
    shards = [Shard(i, 4) for i in range(1, 5)]
    held = [[name for name in names if shard.holds(name)] for shard in shards]
    assert sorted(name for part in held for name in part) == sorted(names)  # each test in exactly one shard
    assert all(30 <= len(part) <= 70 for part in held)
    assert [n for n in names[:100] if shards[0].holds(n)] == [n for n in held[0] if n in names[:100]]  # edits
    whole = {t.name for t in suite.tests}
    assert set().union(*({t.name for t in shard_suite(suite, s).tests} for s in shards)) == whole
    assert shard_suite(suite, shards[0]).hash == suite.hash


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_a_shard_that_cannot_be_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        parse_shard(text)


def test_merged_shards_equal_an_unsharded_run(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000) as server:
        whole = _run(server, suite, tmp_path / "whole")
        one = _run(server, suite, tmp_path / "one", "--shard", "1/2")
        two = _run(server, suite, tmp_path / "two", "--shard", "2/2", "-j", "2")
    for result in (whole, one, two):
        assert result.exit_code == 0, result.output
    assert "no profile is stored" in one.output
    assert not (tmp_path / "one" / "models_profile.json").exists()
    merged_store = tmp_path / "merged" / "models_profile.json"
    merged_store.parent.mkdir()
    merged = tsuka("merge", tmp_path / "one", tmp_path / "two", "--suite", suite, "--profiles", merged_store)
    assert merged.exit_code == 0, merged.output
    expected, found = _profile(tmp_path / "whole", suite), _profile(tmp_path / "merged", suite)
    for key in ("scores", "tier", "intervals", "tierConfidence", "suiteHash", "complete"):
        assert found.get(key) == expected.get(key), key
    assert expected["scores"]["json"] < 1.0  # the answers are not all right: the equality means something
    runs = tsuka("runs", "--profiles", merged_store)
    assert "merge" in runs.output


def test_merging_what_is_not_one_measurement_is_refused_in_one_line(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000) as server:
        assert _run(server, suite, tmp_path / "one", "--shard", "1/2").exit_code == 0
        assert _run(server, suite, tmp_path / "hot", "--shard", "2/2", "--temperature", "0.9").exit_code == 0
        assert _run(server, suite, tmp_path / "whole").exit_code == 0
    store = tmp_path / "merged" / "models_profile.json"
    store.parent.mkdir()
    cases = [
        ((tmp_path / "one", tmp_path / "one"), "(missing 2/2; given twice 1/2): give each shard 1/N to N/N"),
        ((tmp_path / "one",), "cannot merge shards 1/2 (missing 2/2)"),
        ((tmp_path / "one", tmp_path / "hot"), "different settings (temperature)"),
        ((tmp_path / "one", tmp_path / "whole"), "is not a 'tsuka run --shard I/N'"),
        ((tmp_path / "one", tmp_path / "nowhere"), "no such file or folder"),
    ]
    for sources, needle in cases:
        result = tsuka("merge", *sources, "--suite", suite, "--profiles", store)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        errors = [line for line in result.stderr.splitlines() if line.startswith("tsuka: error:")]
        assert len(errors) == 1, result.stderr
        assert needle in errors[0]
    assert not store.exists()


def test_a_shard_without_history_is_refused(tmp_path: Path) -> None:
    result = tsuka("run", "m1", "--base-url", "http://127.0.0.1:9/v1", "--shard", "1/2", "--no-history")
    assert result.exit_code == 2
    assert "--no-history" in result.stderr


def _props(model_file: list[str]) -> Any:
    return lambda: {"model_path": model_file[0], "build_info": "b1", "total_slots": 1}


def test_shards_the_server_measured_with_another_model_file_are_refused(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    model_file = ["/models/a.gguf"]
    with LoopbackServer(_answer, max_requests=2000, props=_props(model_file)) as server:
        assert _run(server, suite, tmp_path / "one", "--shard", "1/2").exit_code == 0
        model_file[0] = "/models/b.gguf"
        assert _run(server, suite, tmp_path / "two", "--shard", "2/2").exit_code == 0
        model_file[0] = "/models/a.gguf"
        assert _run(server, suite, tmp_path / "same", "--shard", "2/2").exit_code == 0
    store = tmp_path / "merged" / "models_profile.json"
    store.parent.mkdir()
    refused = tsuka("merge", tmp_path / "one", tmp_path / "two", "--suite", suite, "--profiles", store)
    assert refused.exit_code == 2, refused.output
    assert "the server served another model for m1@none" in refused.stderr
    assert "'/models/a.gguf' and '/models/b.gguf'" in refused.stderr
    assert not store.exists()
    merged = tsuka("merge", tmp_path / "one", tmp_path / "same", "--suite", suite, "--profiles", store)
    assert merged.exit_code == 0, merged.output
    profile = _profile(tmp_path / "merged", suite)
    assert profile["server"] == {"kind": "llama.cpp", "version": "b1", "modelFile": "/models/a.gguf", "slots": 1}


def test_a_merged_profile_keeps_what_the_server_said_and_whether_the_effort_mattered(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000, props=_props(["/models/a.gguf"])) as server:
        for folder, shard in (("one", "1/2"), ("two", "2/2"), ("whole", None)):
            extra = ("-e", "low") + (("--shard", shard) if shard else ())
            assert _run(server, suite, tmp_path / folder, *extra).exit_code == 0
    store = tmp_path / "merged" / "models_profile.json"
    store.parent.mkdir()
    merged = tsuka("merge", tmp_path / "one", tmp_path / "two", "--suite", suite, "--profiles", store)
    assert merged.exit_code == 0, merged.output
    whole, found = _profile(tmp_path / "whole", suite), _profile(tmp_path / "merged", suite)
    assert whole["effortEffective"] is False  # the server gives the same answers at every effort
    for key in ("server", "effortEffective"):
        assert found.get(key) == whole[key], key
