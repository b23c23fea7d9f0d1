"""The profile store under stress: concurrent runs, writers killed mid-write, corrupt, read-only and locked stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect
from click.testing import CliRunner, Result
from faultserver import FaultServer, measure, openai_registry
from loopback import Reply
from readonly import readonly_folder_holding, without_file_privileges

from tsuka_core import Registry
from tsuka_core.cli.main import cli
from tsuka_core.storage import store as store_module
from tsuka_core.storage.layout import dumps_store
from tsuka_core.storage.store import ProfileStore
from tsuka_core.suite.loading import default_suite_path, load_suite
from tsuka_core.suite.model import Suite

TSUKA = Path(sys.executable).with_name("tsuka")
DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
PYTHON = sys.executable
CLEAN_ENV = {
    k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_")) and k != "COVERAGE_PROCESS_START"
}
WRITERS = 8


pytestmark = pytest.mark.usefixtures("fast_retries")


def invoke(*args: str | os.PathLike[str]) -> Result:
    """``tsuka ARGS`` in this process; stdout and stderr kept apart."""
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".probe")))


# --- eight runs at once ---------------------------------------------------------------------------------------------


def test_eight_runs_writing_different_models_to_one_store_at_once_all_land(tmp_path: Path) -> None:
    """Eight processes, each a whole run of its own model; the server holds every answer until all eight ask."""
    store = tmp_path / "models_profile.json"
    store.write_text('{"profiles": {"keep@none": {"model": "keep"}}, "extra": [1, 2]}\n', encoding="utf-8")
    models = [f"model-{i}" for i in range(WRITERS)]
    registry = openai_registry()
    suite = load_suite(DEFAULT_SUITE, registry)
    asking: set[str] = set()
    everyone = threading.Event()
    lock = threading.Lock()

    def together(body: dict[str, Any], n: int) -> Reply:
        with lock:
            asking.add(str(body["model"]))
            if len(asking) == WRITERS:
                everyone.set()
        everyone.wait(timeout=90)
        return perfect(body, n)

    with FaultServer(together, models=models) as server:
        runs = [fork_run(server.base_url, store, suite, registry, model) for model in models]
        codes = wait_all(runs, seconds=120)

    assert everyone.is_set()
    assert codes == [0] * WRITERS
    data = json.loads(store.read_text(encoding="utf-8"))
    assert set(data["profiles"]) == {"keep@none", *(f"{m}@none" for m in models)}
    assert data["recommendations"] == dict.fromkeys(models, "none")
    assert data["extra"] == [1, 2]
    assert leftovers(tmp_path) == []


def fork_run(base_url: str, store: Path, suite: Suite, registry: Registry, model: str) -> int:
    """A process that measures ``model`` at ``none`` into ``store`` and exits 0 when it stored it."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            report, _ = measure(base_url, store, suite, registry, models=[model], efforts=["none"])
            code = 0 if report.ok and f"{model}@none" in report.profiles else 1
        finally:
            os._exit(code)
    return pid


def wait_all(pids: list[int], seconds: float) -> list[int]:
    """Each process's exit status, in order; any still running after ``seconds`` is killed (status -9)."""
    deadline = time.monotonic() + seconds
    codes: dict[int, int] = {}
    while len(codes) < len(pids) and time.monotonic() < deadline:
        for pid in pids:
            if pid not in codes and (done := os.waitpid(pid, os.WNOHANG))[0]:
                codes[pid] = os.waitstatus_to_exitcode(done[1])
        time.sleep(0.02)
    for pid in pids:
        if pid not in codes:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            codes[pid] = -9
    return [codes[pid] for pid in pids]


# --- a writer killed at random points ----------------------------------------------------------------------------

TRIALS = 50


def big_store(profiles: int, tag: str) -> dict[str, Any]:
    """A store of ``profiles`` profile-sized entries, so that a write takes long enough to be interrupted."""
    results = [{"name": f"test_{i}", "category": "json", "score": 0.5} for i in range(40)]
    entries = {
        f"{tag}-{i}@none": {"model": f"{tag}-{i}", "tier": "medium", "testResults": results, "n": i}
        for i in range(profiles)
    }
    return {"profiles": entries, "recommendations": {f"{tag}-{i}": "none" for i in range(profiles)}}


def timed_update(path: Path, new: dict[str, Any]) -> float:
    started = time.perf_counter()
    ProfileStore(path).update(new["profiles"], new["recommendations"])
    return time.perf_counter() - started


def killed_write(path: Path, new: dict[str, Any], delay: float) -> None:
    """Fork a writer of ``new`` into ``path`` and SIGKILL it after ``delay`` seconds (if it is still writing)."""
    pid = os.fork()
    if pid == 0:  # the writer
        try:
            ProfileStore(path).update(new["profiles"], new["recommendations"])
        finally:
            os._exit(0)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_writer_killed_at_random_points_leaves_the_old_or_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    old_bytes = dumps_store(big_store(20, "old")).encode()
    new = big_store(20, "new")
    path.write_bytes(old_bytes)
    duration = timed_update(path, new)
    new_bytes = path.read_bytes()
    assert new_bytes != old_bytes

    seen: Counter[str] = Counter()

    def trial(delay: float) -> None:
        path.write_bytes(old_bytes)
        killed_write(path, new, delay=delay)
        after = path.read_bytes()
        json.loads(after)  # always parses
        assert after in (old_bytes, new_bytes), f"killed after {delay:.4f} s: a torn store ({len(after)} bytes)"
        seen["new" if after == new_bytes else "old"] += 1

    for n in range(TRIALS):
        trial(duration * 1.3 * n / (TRIALS - 1))
    # A loaded machine can make a forked writer much slower than the timed one: give it longer, a bounded number
    # of times, so the kills are seen to span the whole write.
    delay = duration * 2
    while not seen["new"] and delay < 10:
        trial(delay)
        delay *= 2

    assert seen["old"] >= 1
    assert seen["new"] >= 1
    started = time.monotonic()
    ProfileStore(path, lock_timeout=10).update({"after@none": {"model": "after"}}, {})
    assert time.monotonic() - started < 5  # no lock outlives its killed holder
    assert "after@none" in ProfileStore(path).read().profiles
    assert leftovers(tmp_path) == []  # temporary files of killed writers are cleared by the next write


# --- stores that cannot be used: one line, nothing written, nothing lost ------------------------------------------

CORRUPT = {
    "truncated": (b'{"profiles": {"m1@none": {"tier": "large"}', "is not valid JSON (line 1, column 43)"),
    "not-utf8": (b'{"profiles": {"m\xff@none": {}}}', "is not UTF-8 (byte 16)"),
    "nan": (b'{"profiles": {"m1@none": {"tokensPerSecond": NaN}}}', "is not valid JSON (NaN is not JSON)"),
    "array": (b'[{"profiles": {}}]', "does not hold a JSON object (found an array)"),
    "profiles-list": (b'{"profiles": []}', '"profiles" is not a JSON object (found an array)'),
    "empty": (b"", "is not valid JSON (line 1, column 1)"),
    "deep": (b'{"profiles": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "is not valid JSON (JSON nested too deeply)"),
}


@pytest.mark.parametrize("content", list(CORRUPT), ids=list(CORRUPT))
def test_a_corrupt_store_stops_the_run_in_one_line_before_any_request(tmp_path: Path, content: str) -> None:
    raw, message = CORRUPT[content]
    store = tmp_path / "models_profile.json"
    store.write_bytes(raw)
    with FaultServer(perfect) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none")

    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"tsuka: error: {store}")
    assert message in lines[0]
    assert lines[0].endswith("nothing was written. Fix or move the file.")
    assert store.read_bytes() == raw
    assert server.log == []
    assert leftovers(tmp_path) == []


@pytest.fixture
def readonly_folder(tmp_path: Path) -> Iterator[Path]:
    with readonly_folder_holding(tmp_path, '{"profiles": {"keep@none": {"model": "keep"}}}') as folder:
        yield folder


def run_in_readonly(folder: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], FaultServer]:
    store = folder / "models_profile.json"
    with FaultServer(perfect) as server:
        run = ["run", "m1", "--base-url", server.base_url, "--profiles", str(store), "-e", "none", *extra]
        command = [*without_file_privileges(), str(TSUKA), *run]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=CLEAN_ENV)
    return done, server


def test_a_store_in_a_read_only_folder_is_one_line_and_loses_nothing(readonly_folder: Path) -> None:
    before = sorted(os.listdir(readonly_folder))
    done, _server = run_in_readonly(readonly_folder)

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("tsuka:")]
    assert len(lines) == 1, done.stderr
    assert str(readonly_folder) in lines[0]  # the store, or the run history beside it: whichever is refused first
    assert "not writable" in lines[0] or "Permission denied" in lines[0]
    assert sorted(os.listdir(readonly_folder)) == before
    assert (readonly_folder / "models_profile.json").read_text(encoding="utf-8") == (
        '{"profiles": {"keep@none": {"model": "keep"}}}'
    )


@pytest.mark.parametrize("history", ["--history", "--no-history"])
def test_a_store_in_a_read_only_folder_is_refused_before_anything_is_measured(
    readonly_folder: Path, history: str
) -> None:
    """Measuring for a store that cannot take the result wastes the whole run: the check comes first."""
    done, server = run_in_readonly(readonly_folder, history)

    assert done.returncode == 2, done.stderr
    assert [i.path for i, _ in server.log if i.is_chat] == []
    lines = [line for line in done.stderr.splitlines() if line.startswith("tsuka:")]
    assert len(lines) == 1, done.stderr
    if history == "--no-history":
        store = readonly_folder / "models_profile.json"
        assert lines[0].startswith(f"tsuka: error: cannot write {store}: folder {readonly_folder} is not writable")
        assert lines[0].endswith("nothing was written")


def test_a_store_locked_past_the_timeout_is_one_line_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "models_profile.json"
    original = '{"profiles": {"keep@none": {"model": "keep"}}}'
    store.write_text(original, encoding="utf-8")
    monkeypatch.setattr(store_module, "DEFAULT_LOCK_TIMEOUT", 0.5)
    holder_script = "import sys; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
    holder_script += "print('held', flush=True); sys.stdin.read()"
    lock = tmp_path / ".tsuka" / "models_profile.json.lock"
    lock.parent.mkdir()
    holder = subprocess.Popen(
        [PYTHON, "-c", holder_script, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with FaultServer(perfect) as server:
            started = time.monotonic()
            result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none")
            elapsed = time.monotonic() - started
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)

    # The level was measured but could not be stored: the run failed (exit 1) and says nothing was stored.
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("tsuka:")]
    assert lines == [
        f"tsuka: error: cannot lock {lock} within 0.5 s: another run is writing {store}; "
        "try again when it has finished; the run stopped there, no profile was stored"
    ], result.stderr
    assert elapsed < 30
    assert store.read_text(encoding="utf-8") == original
    assert leftovers(tmp_path) == []


# --- the store's own guards -----------------------------------------------------------------------------------------

CHECK_WRITABLE = (
    "import sys\n"
    "from tsuka_core.errors import StoreError\n"
    "from tsuka_core.storage.store import ProfileStore\n"
    "try:\n"
    "    ProfileStore(sys.argv[1]).check_writable()\n"
    "except StoreError as exc:\n"
    "    print(exc)\n"
    "    sys.exit(3)\n"
)


def test_check_writable_refuses_a_read_only_folder_in_one_line(readonly_folder: Path) -> None:
    store = readonly_folder / "models_profile.json"
    command = [*without_file_privileges(), PYTHON, "-c", CHECK_WRITABLE, str(store)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == (
        f"cannot write {store}: folder {readonly_folder} is not writable (Permission denied); nothing was written"
    )
    assert sorted(os.listdir(readonly_folder)) == ["models_profile.json"]


def test_check_writable_passes_a_writable_folder_and_leaves_nothing_behind(tmp_path: Path) -> None:
    ProfileStore(tmp_path / "models_profile.json").check_writable()
    assert list(tmp_path.iterdir()) == []
    ProfileStore(tmp_path / "missing" / "models_profile.json").check_writable()
    assert [p.name for p in tmp_path.rglob("*")] == ["missing"]


def test_a_write_clears_only_the_temporary_files_of_dead_writers(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    dead = [tmp_path / ".models_profile.json.0123456789ab.tmp", tmp_path / ".models_profile.json.ba9876543210.tmp"]
    kept = [
        tmp_path / ".models_profile.json.backup.tmp",
        tmp_path / ".other.json.0123456789ab.tmp",
        tmp_path / "models_profile.json.0123456789ab.tmp",
    ]
    for path in dead + kept:
        path.write_text("{", encoding="utf-8")
    ProfileStore(store).update({"m@none": {"model": "m"}}, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [".tsuka", "models_profile.json", *(p.name for p in kept)]
    )
