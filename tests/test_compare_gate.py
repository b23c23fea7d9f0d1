"""tsuka compare --fail-on-regression as a CI gate: a real regression fails it, a noise-level change does not."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect, which_test
from history_helpers import invoke
from history_helpers import invoke as run_tsuka
from loopback import LoopbackServer, Reply

from tsuka_core.cli.exits import REGRESSED

pytestmark = pytest.mark.usefixtures("fast_retries")

COUNT = 10
"""Tests in the suite: each asks for one code word."""

HOSTILE = " \x1b]0;owned\x07[red]loud[/red]"
"""Ends the name of test 4: it would retitle the terminal, and rich must not read its markup."""


def write_suite(folder: Path) -> Path:
    """Ten instruction tests: answer with code word ``wN`` (3 points), without an exclamation mark (1 point)."""
    folder.mkdir()
    for i in range(COUNT):
        test = {
            "name": f"word_{i}" + (HOSTILE if i == 4 else ""),
            "category": "instruction",
            "prompt": f"Reply with the code word w{i}x and nothing else.",
            "checks": [
                {"type": "contains", "value": f"w{i}x", "weight": 3},
                {"type": "not_contains", "value": "!"},
            ],
        }
        (folder / f"{i:02d}_word.json").write_text(json.dumps(test), encoding="utf-8")
    return folder


def words(wrong: Collection[int] = (), loud: Collection[int] = ()) -> Any:
    """Answer each test's code word; the tests in ``wrong`` with another word, those in ``loud`` with a ``!``."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        del n
        found = re.search(r"w(\d+)x", str(body["messages"][-1]["content"]))
        assert found is not None
        i = int(found.group(1))
        if i in wrong:
            return Reply.text("no!")
        return Reply.text(f"w{i}x!" if i in loud else f"w{i}x")

    return answer


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Three runs of one model on the word suite: all right; four tests wrong; one test with a ``!``."""
    folder = tmp_path_factory.mktemp("gate")
    suite = write_suite(folder / "suite")
    store = folder / "models_profile.json"
    for answer in (words(), words(wrong={2, 4, 6, 8}), words(loud={5})):
        with LoopbackServer(answer, models=["m"]) as server:
            result = invoke(
                "run", "all", "--base-url", server.base_url, "--profiles", store, "--suite", suite, "-e", "none"
            )
        assert result.exit_code == 0, result.stderr
    return store, folder


def test_several_tests_failing_in_a_category_fail_the_gate(history: tuple[Path, Path]) -> None:
    store, folder = history
    out = folder / "regression.json"
    result = invoke("compare", "1", "2", "--fail-on-regression", "--json-file", out, "--profiles", store)

    assert result.exit_code == REGRESSED, result.stdout + result.stderr
    assert re.search(r"instruction\s+1\.00\s+0\.60\s+-0\.40\s+-0\.\d\d to -0\.\d\d\s+yes, worse\s+10", result.stdout)
    assert "pass → fail (4):" in result.stdout
    assert "word_4 \\x1b]0;owned[red]loud[/red]" in result.stdout  # ESC escaped, BEL dropped, markup as written
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert "Regression: m@none: instruction 1.00 → 0.60 (-0.40, 95% interval" in result.stdout
    data = json.loads(out.read_text(encoding="utf-8"))  # written before the gate exits
    assert data["hasRegression"] is True
    assert f"word_4{HOSTILE}" in [t["name"] for t in data["levels"][0]["changedTests"]]  # JSON keeps the name as is
    low, high = data["levels"][0]["categories"][0]["interval"]
    assert low <= -0.4 <= high < 0


def test_one_test_changing_slightly_is_noise_and_passes_the_gate(history: tuple[Path, Path]) -> None:
    store, _ = history
    result = invoke("compare", "1", "3", "--fail-on-regression", "--profiles", store)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert re.search(r"instruction\s+1\.00\s+0\.98\s+-0\.02\s+-0\.\d\d to \+0\.00\s+no\s+10", result.stdout)
    assert "pass → fail (1):" in result.stdout
    assert "word_5" in result.stdout
    assert "No regression: no tier dropped, no category dropped beyond noise" in result.stdout


def test_the_gate_ignores_improvements(history: tuple[Path, Path]) -> None:
    store, _ = history
    result = invoke("compare", "2", "1", "--fail-on-regression", "--profiles", store)

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "yes, better" in result.stdout
    assert "fail → pass (4):" in result.stdout


def flaky(word: int, every: int) -> Any:
    """Right, except that every ``every``-th time test ``word`` is asked it answers with a ``!``."""
    asked: dict[int, int] = {}
    right = words()

    def answer(body: dict[str, Any], n: int) -> Reply:
        found = re.search(r"w(\d+)x", str(body["messages"][-1]["content"]))
        assert found is not None
        i = int(found.group(1))
        asked[i] = asked.get(i, 0) + 1
        if i == word and asked[i] % every == 0:
            return Reply.text(f"w{i}x!")
        return right(body, n)

    return answer


def test_repeated_runs_count_with_their_mean_and_a_flaky_test_fails(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    store = tmp_path / "models_profile.json"
    for answer in (words(), flaky(word=1, every=3)):
        with LoopbackServer(answer, models=["m"]) as server:
            result = invoke(
                "run", "all", "--base-url", server.base_url, "--profiles", store, "--suite", suite, "-e", "none",
                "--repeats", "3", "--no-cache",
            )  # fmt: skip
        assert result.exit_code == 0, result.stderr

    result = invoke("compare", "last~1", "last", "--details", "--profiles", store)

    assert result.exit_code == 0, result.stderr
    assert "word_1                       1.00 → 0.92  pass → fail  (instruction)" in result.stdout
    assert re.search(r"passed → failed  checks\[1\] not_contains: run [123]: '!' found", result.stdout)
    assert len(re.findall(r"══ run 2 m@none word_1, run [123] of 3: score 0\.75", result.stdout)) == 1
    assert len(re.findall(r"══ run 2 m@none word_1, run [123] of 3: score 1\.00", result.stdout)) == 2
    assert "══ run 1 m@none word_1, run 1 of 3: score 1.00" in result.stdout
    profiles = invoke("compare", "m@none", "last~1", "--profiles", store)  # the stored profile is run 2's
    assert "word_1                       0.92 → 1.00  fail → pass  (instruction)" in profiles.stdout


def test_a_drop_measured_with_other_settings_is_said_to_coincide_with_them(tmp_path: Path) -> None:
    """Two settings against one model: compare states every difference, the gate says the drop coincides."""

    def short_answers(body: dict[str, Any], n: int) -> Reply:
        if body.get("max_tokens", 0) < 100 and which_test(body)[0].startswith("json_"):
            return Reply.text("{", usage=(12, 24))  # a limit too low for JSON
        return perfect(body, n)

    store = tmp_path / "models_profile.json"
    with LoopbackServer(short_answers, models=("m1",)) as server:
        for tokens in ("512", "24"):
            done = run_tsuka("run", "m1", "--base-url", server.base_url, "--profiles", store, "-e", "none",
                             "--max-tokens", tokens)  # fmt: skip
            assert done.exit_code == 0, done.stderr
    shown = run_tsuka("compare", "1", "2", "--profiles", store, "--json", "--fail-on-regression")
    data = json.loads(shown.stdout)
    assert "maxTokens 512 → 24" in data["settingsChanged"]
    assert data["hasRegression"]
    assert data["regressions"][-1].startswith("the drop coincides with changed settings (maxTokens 512 → 24")
    assert any("were measured with different settings (maxTokens 512 → 24" in note for note in data["notes"])


def test_how_the_tools_reached_the_prompt_is_a_setting_compare_names() -> None:
    """The embedded model's tool template against a llama.cpp server whose template renders no tools: compare says
    the two differ in how the tools were rendered, the chat template and tool support, not only in the backend."""
    from tsuka_core.compare.settings import differences, record_settings
    from tsuka_core.record.level import LevelRecord

    embedded = record_settings(LevelRecord.parse({"backend": "embedded", "chatTemplate": "chatml-tools.jinja"}))
    generic = record_settings(LevelRecord.parse({"backend": "openai", "toolCallingServerSupport": False}))
    native = record_settings(LevelRecord.parse({"backend": "openai", "toolCallingServerSupport": True}))
    assert differences(embedded, generic) == [
        "backend embedded → openai",
        "tools rendered by chat template chatml-tools.jinja → server's generic handling: its template renders no tools",
    ]
    assert differences(generic, native) == [
        "tools server's generic handling: its template renders no tools → rendered by the server's chat template"
    ]
    assert "tools" not in record_settings(LevelRecord.parse({"backend": "openai"}))  # unknown: never a difference
