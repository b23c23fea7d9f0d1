"""Measuring part of a suite (--limit, --test) and tests that open with earlier turns (messages)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke, rows
from loopback import LoopbackServer
from replies import Reply

from tsuka_core import Selection, SuiteError, load_suite
from tsuka_core.errors import UsageError

CATEGORIES = ("instruction", "json", "toolCalling")


def _suite(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for index, name in enumerate(names):
        test = {"name": name, "category": CATEGORIES[index % 3], "prompt": f"Say {name}.",
                "checks": [{"type": "contains", "value": name}]}  # fmt: skip
        (folder / f"{index:02d}_{name}.json").write_text(json.dumps(test), encoding="utf-8")
    return folder


NAMES = ["json_invoice", "json_menu", "haiku", "tool_weather", "tool_json_args"]


@pytest.mark.parametrize(
    ("selection", "picked"),
    [
        (Selection(), NAMES),
        (Selection(limit=2), NAMES[:2]),
        (Selection(names=("haiku",)), ["haiku"]),
        (Selection(names=("json",)), ["json_invoice", "json_menu", "tool_json_args"]),  # no test is called json
        (Selection(names=("json_menu",)), ["json_menu"]),  # an exact name picks that test only
        (Selection(names=("tool_*",)), ["tool_weather", "tool_json_args"]),
        (Selection(names=("json", "haiku"), limit=2), ["json_invoice", "json_menu"]),
    ],
)
def test_a_selection_picks_tests_in_suite_order(tmp_path: Path, selection: Selection, picked: list[str]) -> None:
    suite = load_suite(_suite(tmp_path / "s", NAMES))
    chosen = selection.apply(suite)
    assert [t.name for t in chosen.tests] == picked
    assert chosen.hash == suite.hash  # the whole suite's
    assert selection.partial is (selection != Selection())


def test_a_pattern_that_picks_nothing_is_refused_naming_it(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path / "s", NAMES))
    with pytest.raises(UsageError, match=r"--test 'poem' picks no test of .* \(its first: json_invoice"):
        Selection(names=("poem",)).apply(suite)


def _echo(body: dict[str, Any], n: int) -> Reply:
    del n
    return Reply.text(body["messages"][-1]["content"].removeprefix("Say ").rstrip("."))


def test_limit_and_test_measure_part_of_the_suite_and_store_no_profile(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "s", NAMES)
    store, history = tmp_path / "p.json", tmp_path / "h.sqlite"
    common = ("--suite", folder, "-e", "none", "--profiles", store, "--history-db", history)
    with LoopbackServer(_echo) as server:
        limited = invoke("run", "m1", "--base-url", server.base_url, "--limit", "2", *common)
        picked = invoke("run", "m1", "--base-url", server.base_url, "-k", "tool_*", "--test", "haiku", *common)
        asked = [b["messages"][-1]["content"] for b in server.bodies]
    assert limited.exit_code == 0, limited.stderr
    assert picked.exit_code == 0, picked.stderr
    assert sorted(asked[:2]) == ["Say json_invoice.", "Say json_menu."]
    assert sorted(asked[2:]) == ["Say haiku.", "Say tool_json_args.", "Say tool_weather."]
    assert "no profile is stored" in limited.stdout + limited.stderr
    assert not store.exists() or not json.loads(store.read_text(encoding="utf-8")).get("suiteProfiles")
    runs = rows(history, "SELECT options FROM runs ORDER BY id")
    assert [json.loads(r["options"]).get("limit") for r in runs] == [2, None]
    assert json.loads(runs[1]["options"])["tests"] == ["tool_*", "haiku"]


def test_a_whole_run_stores_its_profile(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "s", NAMES)
    store = tmp_path / "p.json"
    with LoopbackServer(_echo) as server:
        done = invoke("run", "m1", "--base-url", server.base_url, "--suite", folder, "-e", "none",
                      "--profiles", store, "--history-db", tmp_path / "h.sqlite")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert "m1@none" in json.loads(store.read_text(encoding="utf-8"))["suiteProfiles"][str(folder)]


def test_earlier_turns_are_sent_before_the_prompt_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    test = {"name": "follow_up", "category": "instruction", "system": "Be brief.", "prompt": "And in French?",
            "messages": [{"role": "user", "content": "Say hello."}, {"role": "assistant", "content": "Hello."}],
            "checks": [{"type": "contains", "value": "Bonjour"}]}  # fmt: skip
    (folder / "01_follow_up.json").write_text(json.dumps(test), encoding="utf-8")
    with LoopbackServer(lambda body, n: Reply.text("Bonjour.")) as server:
        done = invoke("run", "m1", "--base-url", server.base_url, "--suite", folder, "-e", "none",
                      "--profiles", tmp_path / "p.json", "--history-db", tmp_path / "h.sqlite")  # fmt: skip
        sent = server.bodies[0]["messages"]
    assert done.exit_code == 0, done.stderr
    assert [(m["role"], m["content"]) for m in sent] == [
        ("system", "Be brief."), ("user", "Say hello."), ("assistant", "Hello."), ("user", "And in French?")
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        ([{"role": "tool", "content": "x"}], r"messages\[0\]\.role"),
        ([{"role": "user"}], r"messages\[0\]\.content"),
        ([{"role": "user", "content": "x", "name": "bob"}], r"messages\[0\]\.name"),
        ("hello", r"messages"),
    ],
)
def test_a_malformed_earlier_turn_is_refused_naming_the_field(tmp_path: Path, messages: Any, said: str) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    test = {"name": "t", "category": "instruction", "prompt": "x", "messages": messages,
            "checks": [{"type": "not_empty"}]}  # fmt: skip
    (folder / "01_t.json").write_text(json.dumps(test), encoding="utf-8")
    with pytest.raises(SuiteError, match=said):
        load_suite(folder)
