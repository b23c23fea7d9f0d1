"""A merge is exactly one run: whatever the order, with the suite the shards recorded, refusing what is not one run."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from loopback import LoopbackServer, Reply
from test_shards import _answer, _run, _suite, tsuka

from tsuka_core.suite.loading import resolve_suite
from tsuka_core.suite.shard import Shard

pytestmark = pytest.mark.usefixtures("fast_retries")
TSUKA = Path(sys.executable).with_name("tsuka")


def _shards(server: LoopbackServer, suite: Path, root: Path, *extra: str) -> list[Path]:
    folders = [root / "one", root / "two"]
    for index, folder in enumerate(folders, 1):
        done = _run(server, suite, folder, "--shard", f"{index}/2", *extra)
        assert done.exit_code == 0, done.output
    return folders


def _merge(*args: str | Path) -> Result:
    return tsuka("merge", *args)


def _error(result: Result) -> str:
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("tsuka: error:")]
    return line


def test_the_recorded_suite_is_used_and_the_order_of_the_shards_does_not_matter(tmp_path: Path) -> None:
    extended = resolve_suite("extended")
    with LoopbackServer(lambda body, n: Reply.text("ok"), max_requests=2000) as server:
        one, two = _shards(server, extended, tmp_path)
    stored = []
    for order in ((one, two), (two, one)):
        store = tmp_path / f"merged-{order[0].name}" / "models_profile.json"
        store.parent.mkdir()
        merged = _merge(*order, "--profiles", store)  # no --suite: the extended suite the shards recorded
        assert merged.exit_code == 0, merged.output
        stored.append(json.loads(store.read_text(encoding="utf-8"))["suiteProfiles"]["extended"]["m1@none"])
    assert stored[0]["scores"] == stored[1]["scores"]
    assert stored[0]["tier"] == stored[1]["tier"]


def test_a_model_one_shards_server_refused_is_named_whatever_the_order(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")

    def refusing(body: dict[str, Any], n: int) -> Reply:
        return Reply.error(404, "model 'm2' not found") if body.get("model") == "m2" else _answer(body, n)

    runs = []
    for index, handler in ((1, refusing), (2, _answer)):
        with LoopbackServer(handler, max_requests=2000, models=("m1", "m2")) as server:
            folder = tmp_path / f"shard{index}"
            folder.mkdir()
            store = folder / "models_profile.json"
            args = ["run", "m1", "m2", "-e", "none", "--base-url", server.base_url, "--suite", str(suite)]
            runs.append(tsuka(*args, "--profiles", store, "--shard", f"{index}/2"))
    assert [r.exit_code for r in runs] == [1, 0], [r.output for r in runs]  # shard 1's server refused m2
    for order in ((tmp_path / "shard1", tmp_path / "shard2"), (tmp_path / "shard2", tmp_path / "shard1")):
        merged = _merge(*order, "--suite", suite, "--profiles", tmp_path / "m.json", "--replicas")
        assert merged.exit_code == 1, merged.output
        assert "Nothing stored" in merged.output
        assert "m2@none" in merged.output
    assert not (tmp_path / "m.json").exists()


def test_shards_of_different_servers_are_refused_unless_said_to_be_replicas(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000) as first:
        one = _run(first, suite, tmp_path / "one", "--shard", "1/2")
    with LoopbackServer(_answer, max_requests=2000) as second:
        two = _run(second, suite, tmp_path / "two", "--shard", "2/2")
    assert one.exit_code == two.exit_code == 0
    refused = _merge(tmp_path / "one", tmp_path / "two", "--profiles", tmp_path / "m.json")
    assert refused.exit_code == 2
    assert "measured against different servers" in _error(refused)
    assert "--replicas" in _error(refused)
    merged = _merge(tmp_path / "one", tmp_path / "two", "--replicas", "--profiles", tmp_path / "m.json")
    assert merged.exit_code == 0, merged.output
    profile = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["suiteProfiles"]
    provider = next(iter(profile.values()))["m1@none"]["provider"]
    assert provider.count(" + ") == 1


def test_a_shard_still_running_or_interrupted_is_named(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000) as server:
        one, two = _shards(server, suite, tmp_path)
    history = two / ".tsuka" / "history.sqlite"
    for status in ("running", "interrupted"):
        with closing(sqlite3.connect(history)) as db:
            db.execute("UPDATE runs SET status = ?, pid = NULL", (status,))
            db.commit()
        refused = _merge(one, two, "--profiles", tmp_path / "m.json")
        assert refused.exit_code == 2, refused.output
        assert f"did not finish: {two}" in _error(refused)
        assert f"is {status}" in _error(refused)
    assert not (tmp_path / "m.json").exists()


def test_a_test_a_shard_does_not_own_is_refused(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000) as server:
        one, two = _shards(server, suite, tmp_path)
    foreign = next(f"t{i:02d}" for i in range(16) if not Shard(2, 2).holds(f"t{i:02d}"))
    history = two / ".tsuka" / "history.sqlite"
    with closing(sqlite3.connect(history)) as db:  # a hand-made shard: one of its tests renamed to shard 1's
        db.execute("UPDATE tests SET name = ? WHERE id = (SELECT min(id) FROM tests)", (foreign,))
        db.commit()
    refused = _merge(one, two, "--profiles", tmp_path / "m.json")
    assert refused.exit_code == 2, refused.output
    assert f"recorded test '{foreign}'" in _error(refused)


def test_min_tier_belongs_to_the_merge_not_to_a_shard(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    refused = tsuka("run", "m1", "--base-url", "http://127.0.0.1:9/v1", "--shard", "1/2", "--min-tier", "large")
    assert refused.exit_code == 2
    assert "give --min-tier to 'tsuka merge'" in _error(refused)
    with LoopbackServer(_answer, max_requests=2000) as server:
        one, two = _shards(server, suite, tmp_path)
    below = _merge(one, two, "--profiles", tmp_path / "m.json", "--min-tier", "large")
    assert below.exit_code == 3, below.output
    assert "below --min-tier: m1@none is" in below.stderr
    assert _merge(one, two, "--profiles", tmp_path / "n.json", "--min-tier", "small").exit_code == 0


def _small_disk(limit: int) -> Any:
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


def test_a_full_disk_says_exactly_what_the_merge_stored(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000) as server:
        one, two = _shards(server, suite, tmp_path)
    store, history = tmp_path / "merged" / "models_profile.json", tmp_path / "merged" / "history.sqlite"
    store.parent.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    done = subprocess.run(
        [str(TSUKA), "merge", str(one), str(two), "--profiles", str(store), "--history-db", str(history)],
        check=False, capture_output=True, text=True, env=env, timeout=120, preexec_fn=_small_disk(12_000),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("tsuka: error:")]
    assert "nothing was written" not in line
    assert f"the profiles were stored in {store} (m1@none), but the merge is not recorded" in line
    assert "m1@none" in json.loads(store.read_text(encoding="utf-8"))["suiteProfiles"][str(suite.resolve())]


def test_a_hand_made_shard_with_a_huge_answer_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """The answer is measured from SQLite's record header: refused as damage, never loaded into memory."""
    suite = _suite(tmp_path / "suite")
    with LoopbackServer(_answer, max_requests=2000) as server:
        one, two = _shards(server, suite, tmp_path)
    history = two / ".tsuka" / "history.sqlite"
    with closing(sqlite3.connect(history)) as db:
        db.execute("UPDATE steps SET response = ? WHERE id = (SELECT min(id) FROM steps)", ("x" * 40_000_000,))
        db.commit()
    refused = _merge(one, two, "--profiles", tmp_path / "m.json")
    assert refused.exit_code == 2, refused.output
    assert "is damaged" in _error(refused)
    assert "a step's response holds 40,000,000 bytes" in _error(refused)
