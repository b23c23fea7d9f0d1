"""The profile store: profile layout, number formatting, validity, recommendation, locking and safe writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from readonly import readonly_folder_holding, without_file_privileges

from tsuka_core.backends.base import ChatResponse
from tsuka_core.engine import results
from tsuka_core.engine.results import LevelResult, StepResult
from tsuka_core.errors import StoreError
from tsuka_core.run.profiles import profile_from_level, recommend
from tsuka_core.storage.profile import Profile
from tsuka_core.storage.store import (
    BENCHMARK_VERSION,
    ProfileStore,
    default_store_path,
    dumps_store,
    profile_key,
    profile_status,
)
from tsuka_core.suite import model
from tsuka_core.suite.loading import suite_hash
from tsuka_core.terms import Category, Effort, Tier

PYTHON = sys.executable
MOMENT = datetime(2026, 12, 2, 10, 31, 5, 123456, tzinfo=UTC)


# --- factory --------------------------------------------------------------------------------------------------------


def result(name: str, category: Category, score: float, *, status: str = "ok") -> results.TestResult:
    test = model.Test(file=f"{name}.json", name=name, category=category, steps=())
    step = StepResult(index=0, sent=True, checks=(), response=ChatResponse(text="ok", completion_tokens=10))
    if status == "ok":
        return results.TestResult(test=test, status="ok", score=score, steps=(step,))
    return results.TestResult(test=test, status="error", score=0.0, error="HTTP 500")


def level(
    effort: Effort = "none",
    tier: Tier = "medium",
    *,
    model: str = "model-x",
    complete: bool = True,
    tests: Sequence[results.TestResult] | None = None,
    **fields: Any,
) -> LevelResult:
    if tests is None:
        tests = [
            result("frase-è", "instruction", 1.0),
            result("prodotti", "json", 0.5),
            result("catena", "toolCalling", 0.75, status="ok" if complete else "error"),
        ]
    defaults: dict[str, Any] = {
        "scores": {"instruction": 1.0, "json": 0.5, "toolCalling": 0.75},
        "tokens_per_second": 42.0,
        "avg_completion_tokens": 128,
        "suite_hash": "98ac6763",
        "provider": "http://127.0.0.1:8080/v1",
        "backend": "openai",
    }
    defaults.update(fields)
    return LevelResult(model=model, effort=effort, effort_applied=True, tests=tuple(tests), tier=tier, **defaults)


# --- profile layout -------------------------------------------------------------------------------------------------

EXPECTED_STORE = """\
{
  "profiles": {
    "model-x@low": {
      "model": "model-x",
      "provider": "http://127.0.0.1:8080/v1",
      "tier": "medium",
      "scores": {
        "instruction": 1,
        "json": 0.5,
        "toolCalling": 0.75
      },
      "tokensPerSecond": 42,
      "testedAt": "2026-12-02T10:31:05.123Z",
      "benchmarkVersion": 6,
      "testsHash": "98ac6763",
      "testResults": [
        {
          "name": "frase-è",
          "category": "instruction",
          "score": 1
        },
        {
          "name": "prodotti",
          "category": "json",
          "score": 0.5
        },
        {
          "name": "catena",
          "category": "toolCalling",
          "score": 0.75
        }
      ],
      "reasoningEffort": "low",
      "avgCompletionTokens": 128,
      "backend": "openai",
      "effortApplied": true,
      "usageEstimated": true,
      "sampling": {
        "temperature": 0.7,
        "seed": 7.0e0
      },
      "intervals": {
        "instruction": [
          1,
          1
        ],
        "json": [
          0.5,
          0.5
        ],
        "toolCalling": [
          0.75,
          0.75
        ]
      },
      "tierConfidence": 1
    }
  },
  "recommendations": {
    "model-x": "low"
  }
}
""".replace("7.0e0", "7")


def test_profile_fields_order_and_layout_are_exact(tmp_path: Path) -> None:
    lv = level("low", usage_estimated=True, extra={"sampling": {"temperature": 0.7, "seed": 7.0}})
    profile = profile_from_level(lv, tested_at=MOMENT)
    store = ProfileStore(tmp_path / "models_profile.json")
    store.update({profile_key("model-x", "low"): profile}, {"model-x": "low"})
    assert (tmp_path / "models_profile.json").read_text(encoding="utf-8") == EXPECTED_STORE
    assert (tmp_path / "models_profile.json").read_bytes() == EXPECTED_STORE.encode("utf-8")


def test_usage_estimated_only_written_when_true() -> None:
    profile = profile_from_level(level(), tested_at=MOMENT)
    assert "usageEstimated" not in profile
    assert list(profile)[-4:] == ["backend", "effortApplied", "intervals", "tierConfidence"]


def test_provider_falls_back_to_backend_name() -> None:
    assert profile_from_level(level(provider="", backend="embedded"))["provider"] == "embedded"


def test_tested_at_is_utc_with_milliseconds() -> None:
    moment = datetime(2026, 12, 2, 12, 31, 5, 9000, tzinfo=timezone(timedelta(hours=2)))
    assert profile_from_level(level(), tested_at=moment)["testedAt"] == "2026-12-02T10:31:05.009Z"
    assert profile_from_level(level())["testedAt"].endswith("Z")


def test_incomplete_level_is_never_a_profile() -> None:
    with pytest.raises(ValueError, match="incomplete"):
        profile_from_level(level(complete=False))


def test_extra_cannot_replace_a_profile_field() -> None:
    """A backend's (or a hand-edited history's) field named like one of the profile's own is kept apart."""
    stored = profile_from_level(level(extra={"tier": "large", "sampling": {"seed": 1}}))
    assert stored["tier"] == profile_from_level(level())["tier"]
    assert stored["backendExtra"] == {"tier": "large"}
    assert stored["sampling"] == {"seed": 1}


# --- dumps_store ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (1.0, "1"),
        (0.5, "0.5"),
        (-0.0, "0"),
        (-2.5, "-2.5"),
        (100.0, "100"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1.5e22, "1.5e+22"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (1.25e-10, "1.25e-10"),
        (float("nan"), "null"),
        (float("inf"), "null"),
        (3, "3"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_numbers_are_written_as_javascript_writes_them(value: object, written: str) -> None:
    assert dumps_store(value) == written + "\n"


def test_whole_numbers_lose_their_fraction_at_any_depth() -> None:
    data = {"a": [1.0, {"b": 2.0, "c": [0.5, []]}], "d": {}}
    expected = """\
{
  "a": [
    1,
    {
      "b": 2,
      "c": [
        0.5,
        []
      ]
    }
  ],
  "d": {}
}
"""
    assert dumps_store(data) == expected


def test_non_ascii_is_written_as_is_and_controls_escaped() -> None:
    written = dumps_store({"città": '漢字 ✓ "q" \\ \n\t\x01'})
    assert written == '{\n  "città": "漢字 ✓ \\"q\\" \\\\ \\n\\t\\u0001"\n}\n'
    assert dumps_store("\ud800x") == '"\\ud800x"\n'


def test_layout_matches_standard_json_without_floats() -> None:
    data = {"x": [1, "ü", None, True, {"y": [], "z": {"w": -3}}], "": "empty key"}
    assert dumps_store(data) == json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_unserialisable_values_are_refused() -> None:
    with pytest.raises(TypeError):
        dumps_store({"when": MOMENT})
    with pytest.raises(TypeError):
        dumps_store({1: "int key"})


# --- validity -------------------------------------------------------------------------------------------------------


def test_fresh_profile_is_valid() -> None:
    assert profile_status(profile_from_level(level()), "98ac6763") == (True, "valid")


def test_editing_the_suite_makes_the_profile_stale(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "10_a.json").write_text('{"name": "a"}', encoding="utf-8")
    before = suite_hash(suite)
    profile = profile_from_level(level(suite_hash=before))
    assert profile_status(profile, suite_hash(suite)) == (True, "valid")
    (suite / "10_a.json").write_text('{"name": "b"}', encoding="utf-8")
    after = suite_hash(suite)
    assert after != before
    assert profile_status(profile, after) == (False, f"stale: suite changed (testsHash {before}, suite now {after})")


def test_other_benchmark_version_is_stale() -> None:
    profile = profile_from_level(level()) | {"benchmarkVersion": 4}
    assert profile_status(profile, "98ac6763") == (False, "stale: benchmarkVersion 4, this engine is 6")
    both = profile | {"testsHash": "1a2b3c4d"}
    valid, reason = profile_status(both, "98ac6763")
    assert not valid
    assert "benchmarkVersion 4" in reason
    assert "suite changed" in reason
    missing = {k: v for k, v in profile.items() if k != "benchmarkVersion"}
    assert profile_status(missing, "98ac6763") == (False, "stale: benchmarkVersion missing, this engine is 6")
    assert BENCHMARK_VERSION == 6


@pytest.mark.parametrize("entry", ["large", 5, None, [], {}, {"tier": "huge"}, {"tier": ["large"]}])
def test_malformed_entries_are_not_profiles(entry: object) -> None:
    assert profile_status(entry, "98ac6763") == (False, "not a profile")


# --- recommendation -------------------------------------------------------------------------------------------------


def test_recommend_takes_the_cheapest_level_at_the_highest_tier() -> None:
    levels = [level("none", "small"), level("low", "medium"), level("medium", "large"), level("xhigh", "large")]
    assert recommend(levels) == "medium"
    assert recommend(list(reversed(levels))) == "medium"


def test_recommend_ignores_incomplete_levels() -> None:
    levels = [level("none", "medium"), level("low", "medium"), level("xhigh", "large", complete=False)]
    assert recommend(levels) == "none"


def test_recommend_with_one_tier_everywhere_is_the_cheapest() -> None:
    assert recommend([level("xhigh", "small"), level("low", "small")]) == "low"


def test_recommend_without_complete_levels_is_none() -> None:
    assert recommend([]) is None
    assert recommend([level("low", "large", complete=False)]) is None


# --- reading --------------------------------------------------------------------------------------------------------


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    data = ProfileStore(tmp_path / "nope.json").read()
    assert data.profiles == {}
    assert data.recommendations == {}
    assert data.raw == {}


def test_default_path_follows_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TSUKA_PROFILES", raising=False)
    assert default_store_path() == Path("models_profile.json")
    monkeypatch.setenv("TSUKA_PROFILES", str(tmp_path / "p.json"))
    assert default_store_path() == tmp_path / "p.json"


CORRUPT = [
    (b'{\n  "profiles": {\n    "a": 1,,\n  }\n}\n', r"is not valid JSON \(line 3, column 12\)"),
    (b"", r"is not valid JSON \(line 1, column 1\)"),
    (b'{"profiles": NaN}', r"is not valid JSON \(NaN is not JSON\)"),
    (b"[1, 2]", r"does not hold a JSON object \(found an array\)"),
    (b'{"profiles": []}', r'"profiles" is not a JSON object \(found an array\)'),
    (b'{"recommendations": "low"}', r'"recommendations" is not a JSON object \(found a string\)'),
    (b'{"a": "\xff"}', r"is not UTF-8 \(byte 7\)"),
]


@pytest.mark.parametrize(("content", "message"), CORRUPT)
def test_corrupt_file_is_refused_and_left_untouched(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "models_profile.json"
    path.write_bytes(content)
    store = ProfileStore(path)
    with pytest.raises(StoreError, match=message) as info:
        store.update({"model-x@none": profile_from_level(level())}, {"model-x": "none"})
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".tsuka") == ["models_profile.json"]
    with pytest.raises(StoreError, match=message):
        store.read()


def test_corrupt_message_reads_as_one_fixable_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("models_profile.json").write_text('{\n\n\n\n\n\n\n\n\n\n\n  "x": }', encoding="utf-8")
    with pytest.raises(StoreError) as info:
        ProfileStore(default_store_path()).read()
    assert str(info.value) == (
        "models_profile.json is not valid JSON (line 12, column 8); nothing was written. Fix or move the file."
    )


# --- writing --------------------------------------------------------------------------------------------------------


def test_update_keeps_unknown_entries_and_key_order(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    existing = {
        "comment": "kept",
        "profiles": {
            "other@none": {"model": "other", "custom": [1, {"deep": "✓"}]},
            "model-x@none": {"model": "model-x", "tier": "small"},
            "broken@low": "not even an object",
        },
        "recommendations": {"other": "none", "model-x": "none"},
        "zzz": {"future": True},
    }
    path.write_text(json.dumps(existing), encoding="utf-8")
    new = profile_from_level(level("none", "large"), tested_at=MOMENT)
    ProfileStore(path).update({"model-x@none": new, "model-x@low": new}, {"model-x": "low", "newbie": "xhigh"})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["comment", "profiles", "recommendations", "zzz"]
    assert list(data["profiles"]) == ["other@none", "model-x@none", "broken@low", "model-x@low"]
    assert data["profiles"]["other@none"] == existing["profiles"]["other@none"]  # type: ignore[index]
    assert data["profiles"]["broken@low"] == "not even an object"
    assert data["profiles"]["model-x@none"]["tier"] == "large"
    assert data["recommendations"] == {"other": "none", "model-x": "low", "newbie": "xhigh"}
    assert data["zzz"] == {"future": True}
    assert data["comment"] == "kept"


def test_read_gives_profiles_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    path.write_text('{"recommendations": {"b": "low", "a": "bogus"}, "profiles": {"z@none": {}, "a@none": {}}}')
    data = ProfileStore(path).read()
    assert list(data.profiles) == ["z@none", "a@none"]
    assert data.recommendation("b") == "low"
    assert data.recommendation("a") is None
    assert data.profile("z", "none") == Profile()
    assert data.profile("q", "none") is None


def test_new_file_has_profiles_then_recommendations(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    ProfileStore(path).update({}, {"m": "low"})
    assert path.read_text(encoding="utf-8") == '{\n  "profiles": {},\n  "recommendations": {\n    "m": "low"\n  }\n}\n'


def test_update_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    path.write_text("{}", encoding="utf-8")
    path.chmod(0o640)
    ProfileStore(path).update({}, {"m": "low"})
    assert path.stat().st_mode & 0o777 == 0o640


def test_update_through_a_symbolic_link_writes_the_target(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "store.json"
    real.parent.mkdir()
    real.write_text("{}", encoding="utf-8")
    link = tmp_path / "models_profile.json"
    link.symlink_to(real)
    ProfileStore(link).update({}, {"m": "low"})
    assert link.is_symlink()
    assert json.loads(real.read_text(encoding="utf-8"))["recommendations"] == {"m": "low"}


def test_missing_folders_are_created(tmp_path: Path) -> None:
    ProfileStore(tmp_path / "no" / "such" / "models_profile.json").update({}, {"m": "low"})
    stored = json.loads((tmp_path / "no" / "such" / "models_profile.json").read_text(encoding="utf-8"))
    assert stored["recommendations"] == {"m": "low"}


def test_a_folder_link_to_nothing_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    (tmp_path / "out").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StoreError, match=r"cannot create its folder \(.*out is a symbolic link to .*elsewhere"):
        ProfileStore(tmp_path / "out" / "sub" / "models_profile.json").update({}, {"m": "low"})
    assert not (tmp_path / "elsewhere").exists()


def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "models_profile.json"
    path.write_text('{"profiles": {}}', encoding="utf-8")

    def refuse(target: str | os.PathLike[str], *args: Any, **kwargs: Any) -> None:
        raise OSError(30, "Read-only file system", str(target))

    monkeypatch.setattr("tsuka_core.storage.store.os.replace", refuse)
    with pytest.raises(StoreError, match=r"folder .* is not writable \(Read-only file system\); nothing was written"):
        ProfileStore(path).update({}, {"m": "low"})
    assert path.read_text(encoding="utf-8") == '{"profiles": {}}'
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.fixture
def readonly_folder(tmp_path: Path) -> Iterator[Path]:
    with readonly_folder_holding(tmp_path, '{"profiles": {}}') as folder:
        yield folder


READONLY_SCRIPT = textwrap.dedent(
    """
    import sys
    from tsuka_core.errors import StoreError
    from tsuka_core.storage.store import ProfileStore
    try:
        ProfileStore(sys.argv[1], lock_timeout=5).update({}, {"m": "low"})
    except StoreError as exc:
        print(exc)
        sys.exit(3)
    """
)


def test_read_only_folder_is_one_line_error(readonly_folder: Path) -> None:
    store = str(readonly_folder / "models_profile.json")
    command = [*without_file_privileges(), PYTHON, "-c", READONLY_SCRIPT, store]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3, done.stderr
    message = done.stdout.strip()
    assert message.startswith(f"cannot write {store}: folder {readonly_folder} is not writable")
    assert message.endswith("nothing was written")
    assert "\n" not in message
    assert (readonly_folder / "models_profile.json").read_text(encoding="utf-8") == '{"profiles": {}}'


def test_lock_held_elsewhere_times_out(tmp_path: Path) -> None:
    path = tmp_path / "models_profile.json"
    holder_script = "import sys; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
    holder_script += "print('held', flush=True); sys.stdin.read()"
    (tmp_path / ".tsuka").mkdir()
    holder = subprocess.Popen(
        [PYTHON, "-c", holder_script, str(ProfileStore(path).lock_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match=r"cannot lock .*models_profile\.json\.lock within 0\.3 s") as info:
            ProfileStore(path, lock_timeout=0.3).update({}, {"m": "low"})
        assert "\n" not in str(info.value)
        assert not path.exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    ProfileStore(path, lock_timeout=5).update({}, {"m": "low"})
    assert ProfileStore(path).read().recommendations == {"m": "low"}


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tsuka_core.storage.store import ProfileStore
    path, tag, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.005)
    store = ProfileStore(path, lock_timeout=60)
    for i in range(count):
        store.update({f"{tag}-{i}@none": {"model": f"{tag}-{i}", "tier": "small", "n": i}}, {f"{tag}-{i}": "none"})
    """
)


def test_two_processes_writing_different_models_both_land(tmp_path: Path) -> None:
    path, go, count = tmp_path / "models_profile.json", tmp_path / "go", 20
    path.write_text('{"profiles": {"keep@none": {"model": "keep"}}, "extra": 1}', encoding="utf-8")
    writers = [
        subprocess.Popen([PYTHON, "-c", WRITER, str(path), tag, str(count), str(go)], stdout=subprocess.PIPE, text=True)
        for tag in ("alpha", "beta")
    ]
    for writer in writers:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
    go.touch()
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    data = ProfileStore(path).read()
    expected = {f"{tag}-{i}@none" for tag in ("alpha", "beta") for i in range(count)}
    assert set(data.profiles) == expected | {"keep@none"}
    assert len(data.recommendations) == 2 * count
    assert data.raw["extra"] == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_threads_of_one_process_writing_at_once_all_land(tmp_path: Path) -> None:
    path, count = tmp_path / "models_profile.json", 15

    def write(tag: str) -> None:
        for i in range(count):
            ProfileStore(path, lock_timeout=60).update({f"{tag}-{i}@none": {"n": i}}, {f"{tag}-{i}": "none"})

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, ["a", "b", "c", "d"]))
    assert len(ProfileStore(path).read().profiles) == 4 * count


def test_the_lock_lives_under_tsuka_not_beside_the_users_files(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "store.json"
    real.parent.mkdir()
    link = tmp_path / "models_profile.json"
    link.symlink_to(real)
    ProfileStore(real).update({}, {"m": "low"})
    ProfileStore(link).update({}, {"n": "high"})
    assert ProfileStore(link).lock_path == ProfileStore(real).lock_path == real.parent / ".tsuka" / "store.json.lock"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models_profile.json", "shared"]
    assert sorted(p.name for p in real.parent.iterdir()) == [".tsuka", "store.json"]
    assert [p.name for p in (real.parent / ".tsuka").iterdir()] == ["store.json.lock"]
