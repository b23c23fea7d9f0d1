"""A hostile server or file: lone surrogates, absurd numbers and odd answers end in a clear outcome, never a crash."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke, rows
from hypothesis import given
from hypothesis import strategies as st
from loopback import LoopbackServer, Reply

from tsuka_core.backends.http import JsonReply
from tsuka_core.backends.openai import parse_completion
from tsuka_core.judge.answer import MAX_TOOL_CALLS
from tsuka_core.judge.jsontools import REPAIR_BUDGET
from tsuka_core.judge.patterns import DEFAULT_TIMEOUT
from tsuka_core.textsafe import REPLACEMENT, scrub

ROOT = Path(__file__).resolve().parents[1]
LONE = "\\ud800"
"""A lone surrogate as JSON writes it: valid JSON, but no UTF-8 writer accepts the string it decodes to."""

pytestmark = pytest.mark.usefixtures("fast_retries")


def surrogate_answer(body: dict[str, Any], n: int) -> Reply:
    """Lone surrogates in the content, a tool name, a tool-call id and the arguments; model 'b' errors with one."""
    if body["model"] == "b":
        return Reply.body(f'{{"error": {{"message": "bad {LONE} model"}}}}'.encode(), status=400)
    call = f'{{"id": "c{LONE}", "type": "function", "function": {{"name": "x{LONE}", "arguments": "{{}}"}}}}'
    message = f'{{"role": "assistant", "content": "hi {LONE} there", "tool_calls": [{call}]}}'
    return Reply.body(f'{{"choices": [{{"index": 0, "message": {message}, "finish_reason": "stop"}}]}}'.encode())


def tsuka(*args: str | os.PathLike[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``tsuka`` command in a fresh interpreter, its output on pipes (strict UTF-8, as a terminal would be)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    clean.update({"PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8:strict", **(env or {})})
    command = [str(Path(sys.executable).with_name("tsuka")), *map(str, args)]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, errors="replace", env=clean, timeout=120
    )


@given(
    st.recursive(
        st.text() | st.integers() | st.none(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)
    )
)
def test_scrubbed_json_can_always_be_written_as_utf8(value: Any) -> None:
    json.dumps(scrub(value), ensure_ascii=False).encode("utf-8")


def test_scrub_replaces_surrogates_in_keys_and_deep_values() -> None:
    deep: Any = "\udc00"
    for _ in range(5000):
        deep = [deep]
    data = scrub({"k\ud800": {"v": ["a\ud83d", "ok 😀"]}, "deep": deep})
    assert data["k" + REPLACEMENT] == {"v": ["a" + REPLACEMENT, "ok 😀"]}
    inner = data["deep"]
    while isinstance(inner, list):
        inner = inner[0]
    assert inner == REPLACEMENT


def test_lone_surrogates_from_the_server_do_not_end_a_sweep(tmp_path: Path) -> None:
    store, history = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    with LoopbackServer(surrogate_answer, models=["a", "b"]) as server:
        result = tsuka(
            "run", "all", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
            "-e", "none", "--retries", "0",
        )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr  # model b failed with its error; model a was measured
    assert "bad \ufffd model" in result.stdout + result.stderr
    assert "x\ufffd" in result.stdout
    assert [r["status"] for r in rows(history, "SELECT status FROM runs")] == ["failed"]
    assert json.loads(store.read_text(encoding="utf-8"))["profiles"]["a@none"]["tier"] == "small"
    shown = tsuka("show", "last", "a@none", "catena_tool_distrattori", "--history-db", history)
    assert shown.returncode == 0, shown.stderr
    assert "c\ufffd" in shown.stdout or "x\ufffd" in shown.stdout


def test_a_store_holding_a_lone_surrogate_is_listed(tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    profile = {"model": f"m{LONE}", "tier": "large", "scores": {}, "reasoningEffort": "none"}
    text = json.dumps({"profiles": {f"m{LONE}@none": profile}}).replace("\\\\ud800", LONE)
    store.write_text(text, encoding="utf-8")
    result = tsuka("profiles", "--profiles", store)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    assert "m\ufffd@none" in result.stdout


def test_a_history_holding_lone_surrogates_or_bad_utf8_is_shown(tmp_path: Path) -> None:
    store, history = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    with LoopbackServer(models=["m1"]) as server:
        first = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", store, "--history-db", history, "-e", "none"
        )
    assert first.exit_code == 0, first.stderr
    with closing(sqlite3.connect(history)) as db:
        db.execute("UPDATE steps SET messages = ?", (f'[{{"role": "user", "content": "q {LONE}"}}]',))
        db.execute("UPDATE checks SET detail = CAST(? AS TEXT)", (b"bad \xff byte",))
        db.commit()
    result = tsuka("show", "last", "m1@none", "frase_8_parole", "--history-db", history)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    assert "q \ufffd" in result.stdout
    assert "bad \ufffd byte" in result.stdout


@pytest.mark.parametrize("count", ["18446744073709551616", "1" + "0" * 400, "1e400", "12.5", "-3", '"7"'])
def test_an_absurd_token_count_is_estimated_and_said(tmp_path: Path, count: str) -> None:
    store = tmp_path / "models_profile.json"
    message = '{"role": "assistant", "content": "Every morning the fisherman walks beside the river."}'
    body = f'{{"choices": [{{"message": {message}}}], "usage": {{"prompt_tokens": 5, "completion_tokens": {count}}}}}'
    with LoopbackServer(lambda body_, n: Reply.body(body.encode()), models=["m1"]) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "--no-history", "-e", "none")
    assert result.exit_code == 0, result.stderr
    assert "completion tokens (estimated)" in result.stdout
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert profile["usageEstimated"] is True
    assert 0 < profile["avgCompletionTokens"] < 100


def test_broken_arguments_of_many_tool_calls_share_one_repair_budget() -> None:
    slow = "{" * 300 + " some prose here and there"  # json-repair spends its whole budget on each of these
    calls = [{"id": f"c{i}", "function": {"name": "f", "arguments": slow}} for i in range(100)]
    data = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": calls}}]}
    started = time.monotonic()
    response = parse_completion(JsonReply(data, 200, 0.1, 1), "POST x")
    took = time.monotonic() - started
    assert took < REPAIR_BUDGET * 4, took  # one budget for the answer (each call had its own: 30 s)
    assert len(response.tool_calls) == 100
    assert [c.arguments_problem for c in response.tool_calls[MAX_TOOL_CALLS:]] == [
        f"not judged: the answer holds more than {MAX_TOOL_CALLS} tool calls"
    ] * (100 - MAX_TOOL_CALLS)


def slow_to_judge_suite(folder: Path) -> Path:
    """One test whose answer takes a regex check its full time limit to judge, and eight quick tests."""
    folder.mkdir()
    slow = {
        "name": "slow",
        "category": "instruction",
        "prompt": "slow",
        "checks": [{"type": "regex", "value": "(a|aa)+$"}],
    }
    (folder / "00_slow.json").write_text(json.dumps(slow), encoding="utf-8")
    for i in range(8):
        quick = {
            "name": f"quick{i}",
            "category": "instruction",
            "prompt": f"quick{i}",
            "checks": [{"type": "contains", "value": "ok"}],
        }
        (folder / f"1{i}_quick.json").write_text(json.dumps(quick), encoding="utf-8")
    return folder


def test_judging_one_answer_does_not_add_to_another_requests_duration(tmp_path: Path) -> None:
    """The slow answer comes at once and is judged for about 1 s; the quick ones arrive 0.3 s later meanwhile."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        if body["messages"][-1]["content"] == "slow":
            return Reply.text("a" * 5000 + "!")
        return Reply(content="ok", delay=0.3)

    suite, history = slow_to_judge_suite(tmp_path / "suite"), tmp_path / "history.sqlite"
    with LoopbackServer(answer) as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--suite", suite, "--profiles", tmp_path / "p.json",
            "--history-db", history, "-e", "none", "-j", "9",
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (check,) = rows(history, "SELECT c.status FROM checks c JOIN steps s ON c.step_id = s.id WHERE c.type = 'regex'")
    assert check["status"] == "errored"  # the regex ran its full time limit
    responses = rows(history, "SELECT t.name, s.response FROM steps s JOIN tests t ON s.test_id = t.id")
    quick = [json.loads(r["response"])["duration"] for r in responses if r["name"].startswith("quick")]
    assert len(quick) == 8
    assert max(quick) < 0.3 + 0.5 * DEFAULT_TIMEOUT, quick


def test_an_answer_holding_a_lone_surrogate_by_another_way_is_recorded(tmp_path: Path) -> None:
    """A backend plugin's own text may hold a lone surrogate that no decoder replaced: the history still takes it."""
    from tsuka_core.backends.base import ChatResponse
    from tsuka_core.storage.answer_json import bounded_response_json
    from tsuka_core.storage.history import dumps

    text, cut = bounded_response_json(ChatResponse(text="a\ud800b", tool_calls=()))
    assert not cut
    text.encode("utf-8")
    assert json.loads(text)["text"] == "a\ufffdb"
    assert dumps({"k\udc00": ["v\ud800"]}).encode("utf-8") == '{"k\ufffd":["v\ufffd"]}'.encode()
