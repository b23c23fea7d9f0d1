"""BFCL's categories as tsuka suites, and tsuka's verdicts against BFCL's own checker on BFCL's own data."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tsuka_checks_builtin import bfcl
from tsuka_core import Answer, ToolCall
from tsuka_core.suite.loading import load_suite
from tsuka_core.testing import run_check

ROOT = Path(__file__).resolve().parents[1]

QUESTION = {
    "id": "simple_python_0",
    "question": [[{"role": "user", "content": "Find the area of a triangle with base 10 and height 5."}]],
    "function": [
        {
            "name": "geometry.area",
            "description": "Area of a triangle.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "base": {"type": "integer"},
                    "height": {"type": "float"},
                    "type": {"type": "string", "description": "a parameter called type"},
                    "unit": {"type": "string"},
                    "size": {"type": "dict", "properties": {"w": {"type": "integer"}}},
                },
                "required": ["base", "height"],
            },
        }
    ],
}
TRUTH = {
    "id": "simple_python_0",
    "ground_truth": [
        {
            "geometry.area": {
                "base": [10],
                "height": [5.0],
                "type": ["right", "rectangle"],
                "unit": ["units", ""],
                "size": [{"w": [1, 2]}, ""],
            }
        }
    ],
}


SIMPLE = bfcl.by_suite("bfcl-simple")
IRRELEVANCE = bfcl.by_suite("bfcl-irrelevance")
assert SIMPLE is not None
assert IRRELEVANCE is not None


def test_a_bfcl_entry_becomes_a_test_judged_as_bfcl_judges() -> None:
    assert SIMPLE is not None
    test = bfcl.test_of(SIMPLE, QUESTION, TRUTH)
    tool = test["tools"][0]["function"]
    assert tool["name"] == "geometry_area"
    assert tool["parameters"]["type"] == "object"
    height = {"type": "number", "format": "float", "description": " This is a float type value."}
    assert tool["parameters"]["properties"]["height"] == height  # as BFCL's handler sends it
    assert tool["parameters"]["properties"]["type"]["type"] == "string"  # a parameter named type is kept
    (check,) = test["checks"]
    (call,) = check["calls"]
    assert call["accept"]["size"] == [{"w": 1}, {"w": 2}]  # a possible dict, expanded
    assert call["accept"]["unit"] == ["units", ""]  # BFCL's string checker takes its absent marker as ""
    assert sorted(call["optional"]) == ["size", "unit"]
    assert (check["only_named"], check["normalize"]) == (True, True)

    def judged(arguments: dict[str, Any]) -> bool:
        answer = Answer("", (ToolCall("c0", "geometry_area", arguments),), test["tools"])
        return run_check("tool_calls_match", {k: v for k, v in check.items() if k != "type"}, answer).passed

    assert judged({"base": 10, "height": 5, "type": "Right"})  # 5 for a float, case folded
    assert judged({"base": 10, "height": 5.0, "type": "right", "unit": "units", "size": {"w": 2}})
    assert not judged({"base": 10.0, "height": 5, "type": "right"})  # 10.0 for an integer
    assert not judged({"base": 10, "type": "right"})  # a required argument absent
    assert not judged({"base": 10, "height": 5, "type": "right", "colour": "red"})  # not declared


def test_an_irrelevance_entry_wants_no_call() -> None:
    assert IRRELEVANCE is not None
    assert bfcl.test_of(IRRELEVANCE, QUESTION, None)["checks"] == [{"type": "tool_not_called"}]


def _fake_bfcl(root: Path) -> None:
    """A package laid out as bfcl-eval is, holding one entry per category."""
    data = root / "bfcl_eval" / "data"
    (data / "possible_answer").mkdir(parents=True)
    (root / "bfcl_eval" / "__init__.py").write_text("", encoding="utf-8")
    for category in bfcl.CATEGORIES.values():
        name = f"BFCL_v4_{category}.json"
        question = {**QUESTION, "id": f"{category}_0"}
        (data / name).write_text(json.dumps(question) + "\n", encoding="utf-8")
        if "relevance" not in category:
            (data / "possible_answer" / name).write_text(json.dumps({**TRUTH, "id": f"{category}_0"}) + "\n", "utf-8")


def test_the_suites_are_written_once_into_the_cache_and_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With bfcl-eval and mpmath, every category; with the single-turn data alone (a fake laid out as bfcl-eval
    where it is not installed), the single-turn ones, and a warning saying the multi-turn ones are left out."""
    single = {c.suite for c in bfcl.SINGLE_TURN}
    if importlib.util.find_spec("bfcl_eval") is None:
        _fake_bfcl(tmp_path / "site")
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
        monkeypatch.setattr(bfcl, "_MULTI_TURN_NEEDS", ("tsuka_not_installed",))  # the fake has no BFCL classes
    whole = all(importlib.util.find_spec(name) is not None for name in bfcl._MULTI_TURN_NEEDS)
    if whole:
        found = bfcl.bfcl_suites(tmp_path / "cache")
    else:
        with pytest.warns(UserWarning, match="BFCL's multi-turn suites are left out"):
            found = bfcl.bfcl_suites(tmp_path / "cache")
    assert set(found) == (set(bfcl.CATEGORIES) if whole else single)
    first = {name: sorted(p.name for p in folder.iterdir()) for name, folder in found.items()}
    assert bfcl.bfcl_suites(tmp_path / "cache") == found  # already there: nothing written again
    assert {name: sorted(p.name for p in folder.iterdir()) for name, folder in found.items()} == first
    for folder in found.values():
        assert load_suite(folder).tests
    assert not list((tmp_path / "cache").glob("*/*.partial-*"))


def test_without_bfcl_eval_there_are_no_bfcl_suites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bfcl.cache, "bfcl_data", lambda: None)
    assert bfcl.bfcl_suites(tmp_path) == {}
    assert not list(tmp_path.iterdir())


@pytest.mark.bfcl
@pytest.mark.heavy
def test_tsuka_run_agrees_with_bfcls_checker_on_every_category() -> None:
    """Crafted answers to the first entries of every category, served to tsuka run, streamed and not: >= 99%."""
    if importlib.util.find_spec("bfcl_eval") is None:
        pytest.skip("bfcl-eval is not installed: pip install --no-deps bfcl-eval")
    script = ROOT / "tools" / "bfcl_agreement.py"
    done = subprocess.run(
        [sys.executable, str(script), "--limit", "6"], capture_output=True, text=True, timeout=1200, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    table = {line.split()[0]: line.split() for line in lines[1 : 1 + len(bfcl.SINGLE_TURN)]}
    assert set(table) == {c.suite for c in bfcl.SINGLE_TURN}, done.stdout
    for suite, row in table.items():
        outside, agreement = int(row[3]), float(row[4].rstrip("%"))
        assert outside > 20, (suite, row)
        assert agreement >= 99.0, done.stdout


def test_bfcl_data_of_another_shape_leaves_the_suites_out_and_breaks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tsuka_checks_builtin import plugin

    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    for category in bfcl.CATEGORIES.values():
        (data / f"BFCL_v4_{category}.json").write_text('{"id": "x", "question": []}\n', encoding="utf-8")
        (data / "possible_answer" / f"BFCL_v4_{category}.json").write_text("not json\n", encoding="utf-8")
    monkeypatch.setattr(bfcl.cache, "bfcl_data", lambda: data)
    monkeypatch.setenv(bfcl.CACHE_ENV, str(tmp_path / "cache"))
    registered: dict[str, Path] = {}
    with pytest.warns(UserWarning, match=r"bfcl-simple is left out: an entry of BFCL \S+ cannot be converted"):
        plugin.register_suites(lambda name, folder: registered.__setitem__(name, Path(str(folder))))
    assert "default" in registered
    assert not any(name.startswith("bfcl-") for name in registered)


def _with_bfcl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("bfcl_eval") is None:
        _fake_bfcl(tmp_path / "site")
        monkeypatch.syspath_prepend(str(tmp_path / "site"))


@pytest.mark.parametrize("damage", ["a test file removed", "a test file cut", "the manifest removed"])
def test_a_damaged_conversion_is_converted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    _with_bfcl(tmp_path, monkeypatch)
    found = bfcl.bfcl_suites(tmp_path / "cache")
    folder = found["bfcl-simple"]
    first = sorted(p.name for p in folder.iterdir())
    victim = sorted(folder.glob("*.json"))[0]
    if damage == "a test file removed":
        victim.unlink()
    elif damage == "a test file cut":
        victim.write_text(victim.read_text(encoding="utf-8")[:10], encoding="utf-8")
    else:
        (folder / bfcl.MANIFEST).unlink()
    assert not bfcl.converted(folder)
    again = bfcl.bfcl_suites(tmp_path / "cache")
    assert again == found
    assert sorted(p.name for p in folder.iterdir()) == first
    assert load_suite(folder).tests


def test_a_cache_that_cannot_be_written_is_said_naming_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_bfcl(tmp_path, monkeypatch)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder", encoding="utf-8")
    with pytest.warns(UserWarning, match=rf"left out: {blocked}/bfcl-.* cannot be written.*set TSUKA_CACHE"):
        assert bfcl.bfcl_suites(blocked) == {}


def _first_tool(body: dict[str, Any], n: int) -> Any:
    from loopback import Reply

    del n
    return Reply.tool_call(body["tools"][0]["function"]["name"], {})


@pytest.mark.bfcl
def test_a_run_of_bfcl_suites_prints_bfcls_score_table(tmp_path: Path) -> None:
    if importlib.util.find_spec("bfcl_eval") is None:
        pytest.skip("bfcl-eval is not installed: pip install --no-deps bfcl-eval")
    from history_helpers import invoke
    from loopback import LoopbackServer

    store = tmp_path / "p.json"
    common = ("-e", "none", "--profiles", store, "--history-db", tmp_path / "h.sqlite")
    with LoopbackServer(_first_tool, models=("m1",)) as server:
        first = invoke("run", "m1", "--suite", "bfcl-live-relevance", "--base-url", server.base_url, *common)
        second = invoke("run", "m1", "--suite", "bfcl-live-parallel", "--base-url", server.base_url, *common)
    assert first.exit_code == 0, first.stderr
    assert "BFCL (function-calling mode" in first.stdout
    relevance = next(line for line in first.stdout.splitlines() if "Relevance (live)" in line)
    assert "100.00%" in relevance
    assert "16" in relevance
    assert "not measured" in next(line for line in first.stdout.splitlines() if "Live AST" in line)
    assert second.exit_code == 0, second.stderr
    parallel = [line for line in second.stdout.splitlines() if "   Parallel " in line]
    assert any("0.00%" in line and "16" in line for line in parallel), second.stdout
    shown = invoke("scorecard", "m1", "-e", "none", "--profiles", store)
    assert shown.exit_code == 0, shown.stderr
    assert "Relevance (live)" in shown.stdout
    assert "m1@none" in shown.stdout
    missing = invoke("scorecard", "nobody", "--profiles", store)
    assert missing.exit_code == 2
    assert "no valid profile" in missing.stderr
