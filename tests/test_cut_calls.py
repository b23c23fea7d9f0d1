"""A tool call the model left broken ends its conversation: judged as it is, the level stored, nothing retried."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

import pytest
from answerers import perfect, which_test
from history_helpers import invoke
from loopback import LoopbackServer, Reply

from tsuka_core.storage.answer_json import response_from_json, response_to_json

pytestmark = pytest.mark.usefixtures("fast_retries")

CUT_ARGUMENTS = '{"path": "deploy.log", "content": "[START] Deploy'
"""write_file's arguments as a model cut at the token limit left them."""
REFUSAL = "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] syntax error"
"""What a llama.cpp server with a tool template answers (HTTP 500) when such arguments are sent back."""


def llama_like(first: Reply) -> Any:
    """Right answers, except ``first`` for write_file's first step; sending a broken call back gets llama.cpp's 500."""

    def answer(body: dict[str, Any], n: int) -> Reply:
        name, step = which_test(body)
        if name != "tool_write_append":
            return perfect(body, n)
        if step == 0:
            return first
        sent = [c["function"]["arguments"] for m in body["messages"] for c in m.get("tool_calls") or []]
        if any(not _is_json(a) for a in sent):
            return Reply.error(500, REFUSAL)
        return perfect(body, n)

    return answer


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def run(tmp_path: Path, first: Reply) -> tuple[LoopbackServer, str, dict[str, Any]]:
    """One level of m1 against the llama-like server; the server, ``tsuka show`` of the test, and the stored profile."""
    store, history = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    with LoopbackServer(llama_like(first)) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
                        "-e", "none", "--max-tokens", "64")  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    (tmp_path / "run.txt").write_text(result.stdout, encoding="utf-8")
    shown = invoke("show", "last", "m1@none", "tool_write_append", "--history-db", history)
    assert shown.exit_code == 0, shown.stderr
    profile: dict[str, Any] = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    return server, " ".join(shown.stdout.split()), profile  # lines the terminal width wrapped joined again


def write_requests(server: LoopbackServer) -> list[dict[str, Any]]:
    return [b for b in server.bodies if which_test(b)[0] == "tool_write_append"]


def test_a_call_cut_at_the_limit_is_judged_as_cut_and_ends_the_conversation(tmp_path: Path) -> None:
    cut = Reply.tool_call("write_file", CUT_ARGUMENTS, finish_reason="length", usage=(40, 64))
    server, shown, profile = run(tmp_path, cut)

    assert len(write_requests(server)) == 1  # the cut call was never sent back, so nothing was refused or retried
    assert not server.errors
    assert profile["answerFaults"]["cutAtLimit"] == 1
    assert profile["scores"]["toolCalling"] < 1
    step0, step1 = shown.split("── step 1")
    assert "x steps[0].checks[1] tool_arg_equals: answer cut at max_tokens (64 of 64 tokens" in step0
    assert "✓ steps[0].checks[0] tool_called" in step0
    assert "(not sent)" in step1
    assert "not sent: step 0 was cut at the token limit in the middle of its write_file call" in step1
    assert "failure kind: cut at the limit" in step0


def test_the_summary_show_and_the_report_name_the_failure_kinds(tmp_path: Path) -> None:
    cut = Reply.tool_call("write_file", CUT_ARGUMENTS, finish_reason="length", usage=(40, 64))
    run(tmp_path, cut)
    assert "failure kinds: 1 cut at the limit" in (tmp_path / "run.txt").read_text(encoding="utf-8")
    level = invoke("show", "last", "m1@none", "--history-db", tmp_path / "history.sqlite")
    assert "failure kinds: 1 cut at the limit" in level.stdout
    page = tmp_path / "report.html"
    made = invoke("report", "--profiles", tmp_path / "models_profile.json", "--history-db", tmp_path / "history.sqlite",
                  "-o", page)  # fmt: skip
    assert made.exit_code == 0, made.stderr
    html = page.read_text(encoding="utf-8")
    assert "<td>1 cut at the limit</td>" in html
    assert '<p class="warn">failure kind: cut at the limit</p>' in html


def test_a_server_refusing_the_models_own_arguments_fails_the_test_without_a_retry(tmp_path: Path) -> None:
    broken = Reply.tool_call("write_file", '{"path": "deploy.log", "content": "[START] Deployment started"')
    server, shown, profile = run(tmp_path, broken)

    requests = write_requests(server)
    assert len(requests) == 2  # the step that was refused was sent once, not retried
    assert profile["answerFaults"]["invalidArguments"] == 1
    assert profile["scores"]["toolCalling"] < 1
    step1 = shown.split("── step 1")[1]
    assert "x steps[1].checks[0] tool_called: the server refused the tool call sent back" in step1
    assert "(not sent)" not in step1
    assert "Failed to parse tool call arguments as JSON" in step1


def test_transcripts_show_the_arguments_as_written_and_the_repaired_value_beside_them(tmp_path: Path) -> None:
    cut = Reply.tool_call("write_file", CUT_ARGUMENTS, finish_reason="length", usage=(40, 64))
    _, shown, _ = run(tmp_path, cut)
    assert f"→ write_file({CUT_ARGUMENTS})" in shown
    assert 'repaired: {"path": "deploy.log", "content": "[START] Deploy"}' in shown

    page = tmp_path / "report.html"
    made = invoke("report", "--profiles", tmp_path / "models_profile.json", "--history-db", tmp_path / "history.sqlite",
                  "-o", page)  # fmt: skip
    assert made.exit_code == 0, made.stderr
    html = page.read_text(encoding="utf-8")
    assert f"→ write_file({escape(CUT_ARGUMENTS).replace('&quot;', '&#34;')})" in html
    assert '<span class="pill">repaired</span> {&#34;path&#34;' in html


def test_a_history_written_before_repairs_were_marked_still_shows_them() -> None:
    raw = {"id": "call_0", "type": "function", "function": {"name": "write_file", "arguments": CUT_ARGUMENTS}}
    old = {"text": "", "toolCalls": [{"id": "call_0", "name": "write_file", "arguments": {"path": "deploy.log"},
                                      "problem": None, "raw": raw}]}  # fmt: skip
    (call,) = response_from_json(old).tool_calls
    assert call.repaired
    assert call.raw_arguments == CUT_ARGUMENTS
    written = response_to_json(response_from_json(old))
    assert written["toolCalls"][0]["repaired"] is True
    unknown = {**old, "toolCalls": [{**old["toolCalls"][0], "raw": {}}]}
    assert response_from_json(unknown).tool_calls[0].repaired is False


def test_an_answer_left_empty_by_thinking_is_never_scored_as_an_abstention(tmp_path: Path) -> None:
    def thinker(body: dict[str, Any], n: int) -> Reply:
        if which_test(body)[0] == "trappola_astensione":  # tool_not_called: an empty answer would pass it
            return Reply(content="", reasoning_content="Let me think. " * 50, usage=(40, 512), finish_reason="length")
        return perfect(body, n)

    store, history = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    with LoopbackServer(thinker) as server:
        result = invoke("run", "m1", "--base-url", server.base_url, "--profiles", store, "--history-db", history,
                        "-e", "none")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert profile["answerFaults"] == {"thinkingOnly": 1}
    assert {t["name"]: t["score"] for t in profile["testResults"]}["trappola_astensione"] == 0
    shown = " ".join(invoke("show", "last", "m1@none", "trappola_astensione", "--history-db", history).stdout.split())
    assert "x checks[0] tool_not_called: no answer after 512 reasoning tokens" in shown
