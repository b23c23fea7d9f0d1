"""A multi-turn test through `tsuka run`: stored, shown turn by turn in `tsuka show` and the report, resumed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import counter_env
import pytest
from counter_env import tool
from history_helpers import invoke
from loopback import LoopbackServer
from replies import Reply

import tsuka_core.plugins.registry as registry_module
from tsuka_core.testing import registry_of

TEST = {
    "name": "count", "category": "toolCalling", "environment": {"type": "counter", "config": {"start": 1}},
    "tools": [tool("add", {"amount": {"type": "integer"}}), tool("read")],
    "turns": [
        {"prompt": "Add 2.", "reference": [{"name": "add", "arguments": {"amount": 2}}],
         "checks": [{"type": "state_matches"}]},
        {"prompt": "Read it.", "reference": [{"name": "read"}], "checks": [{"type": "results_include"}]},
    ],
}  # fmt: skip


@pytest.fixture
def counter_registry() -> Iterator[None]:
    """The process's registry holds the counter environment while the test runs."""
    before = registry_module._cached
    registry_module._cached = registry_of(counter_env)
    yield
    registry_module._cached = before


def _answer(body: dict[str, Any], n: int) -> Reply:
    del n
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Reply.text("Done.")
    return Reply.tool_call("add", {"amount": 2}) if "Add" in last["content"] else Reply.tool_call("read", {})


def test_a_multi_turn_run_is_shown_turn_by_turn(tmp_path: Path, counter_registry: None) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "01_count.json").write_text(json.dumps(TEST), encoding="utf-8")
    history = tmp_path / "h.sqlite"
    with LoopbackServer(_answer) as server:
        done = invoke("run", "m1", "--suite", tmp_path / "s", "--base-url", server.base_url, "-e", "none",
                      "--profiles", tmp_path / "p.json", "--history-db", history)  # fmt: skip
        asked = len(server.bodies)
    assert done.exit_code == 0, done.stderr
    assert asked == 4  # two steps in each turn
    assert "count                        1.00" in done.stdout
    shown = invoke("show", "last", "m1@none", "count", "--history-db", history)
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    at = lines.index("── turn 0")
    assert lines[at : at + 7] == ["── turn 0", "user:", "Add 2.", "assistant:", '→ add({"amount": 2})',
                                  "tool (call call_0):", '{"value": 3}']  # fmt: skip
    assert "── turn 1" in lines
    assert "  ✓ turns[1].checks[0] results_include: all 1 reference results obtained" in lines
    report = invoke("report", "last", "--history-db", history, "-o", tmp_path / "r.html")
    assert report.exit_code == 0, report.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<p class="role">turn 1</p>' in html
    assert "→ read({})" in html
