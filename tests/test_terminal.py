"""What a terminal is shown: control characters from servers, suites and files escaped; JSON output kept exact."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from history_helpers import CLEAN_ENV
from loopback import LoopbackServer, Reply
from rich.text import Text

from tsuka_core.cli.main import cli
from tsuka_core.cli.safe_console import SafeConsole
from tsuka_core.cli.terminal import escaped_output
from tsuka_core.textsafe import terminal_text

pytestmark = pytest.mark.usefixtures("fast_retries")

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;owned\x07"
LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"
CSI8 = "\x9b2J"
"""The 8-bit form of CLEAR, one C1 character."""


def hostile(body: dict[str, Any], n: int) -> Reply:
    """A tool named to clear the screen, content with a fake link; model 'b' errors with a title change."""
    if body["model"] == "b":
        return Reply.error(400, f"no {TITLE} such model {CSI8}")
    return Reply.tool_call(f"x{CLEAR}", {"a": LINK}, content=f"see {LINK}")


def invoke(*args: str | Path) -> Result:
    """``tsuka`` in this process as on a terminal: click keeps escape sequences (it strips some off a terminal)."""
    runner = CliRunner(env=CLEAN_ENV)
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka", color=True)


def raw_controls(text: str) -> list[str]:
    """The control characters (but newline) in ``text``: none may reach the terminal."""
    return sorted({c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F})


def test_terminal_text_escapes_controls_but_keeps_lines_and_tabs() -> None:
    shown = terminal_text(f"a{CLEAR}b{TITLE}{CSI8}\x7f\r\n\tf\ud800")
    assert shown == "a\\x1b[2Jb\\x1b]0;owned\\x07\\u009b2J\\u007f\\x0d\n\tf\ufffd"
    assert terminal_text("plain ünïcode 😀\n") == "plain ünïcode 😀\n"


def test_a_safe_console_keeps_its_styles_and_escapes_the_text() -> None:
    out = io.StringIO()
    SafeConsole(file=out, force_terminal=True, color_system="standard").print(Text(f"m{CLEAR}", style="bold"))
    assert "\x1b[1m" in out.getvalue()  # rich's own style
    assert "m\\x1b[2J" in out.getvalue()
    assert CLEAR not in out.getvalue()


def test_escaped_output_lets_rich_write_beneath_it(capsys: pytest.CaptureFixture[str]) -> None:
    with escaped_output():
        print(f"plain {TITLE}")
        SafeConsole(force_terminal=True, color_system="standard").print(Text("styled", style="bold"))
    out = capsys.readouterr().out
    assert "plain \\x1b]0;owned\\x07" in out
    assert "\x1b[1mstyled" in out


def test_a_run_shows_hostile_names_answers_and_errors_escaped(tmp_path: Path) -> None:
    store, history = tmp_path / "models_profile.json", tmp_path / "history.sqlite"
    common = ("--profiles", store, "--history-db", history, "-e", "none", "--retries", "0")
    with LoopbackServer(hostile, models=["a", "b"]) as server:
        run = invoke("run", "all", "--base-url", server.base_url, *common)
        as_json = invoke("run", "all", "--base-url", server.base_url, *common, "--json")
    shown = invoke("show", "1", "a@none", "catena_tool_distrattori", "--history-db", history)
    for result in (run, shown):
        assert raw_controls(result.stdout + result.stderr) == []
    assert "x\\x1b[2J" in run.stdout
    assert "no \\x1b]0;owned\\x07 such model \\u009b2J" in run.stdout + run.stderr
    assert "\\x1b]8;;http://evil.example" in shown.stdout
    data = json.loads(as_json.stdout)  # exact text, escaped as JSON escapes it
    assert any(f"no {TITLE} such model {CSI8}" in failure for failure in data["failed"])


def test_a_test_name_from_a_suite_is_shown_escaped(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    test = {"name": f"t{TITLE}", "category": "instruction", "prompt": "Say hi.", "checks": [{"type": "contains"}]}
    test["checks"] = [{"type": "contains", "value": "hi"}]
    (suite / "10_t.json").write_text(json.dumps(test), encoding="utf-8")
    result = invoke("validate", suite)
    assert result.exit_code == 0, result.stderr
    assert raw_controls(result.stdout + result.stderr) == []
    assert "t\\x1b]0;owned\\x07" in result.stdout


def test_gate_and_errors_show_hostile_names_escaped(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": f"t{CLEAR}"}}]), encoding="utf-8")
    gate = invoke("gate", f"m{TITLE}", "--tools", tools, "--profiles", tmp_path / "none.json")
    error = invoke("run", "m", "--base-url", f"http://{CLEAR}x/v1", "--profiles", tmp_path / "p.json")
    for result in (gate, error):
        assert raw_controls(result.stdout + result.stderr) == [], result.stdout + result.stderr
    assert gate.exit_code == 2  # no API accepts such a tool name: refused, and shown escaped
    assert "t\\x1b[2J" in gate.stderr
    assert error.exit_code == 2
    assert "\\x1b[2J" in error.stderr


FAKE = "m1@none  tier large (confidence 1.00)"
"""A line a model would like the user to read as tsuka's own verdict."""


def forging(body: dict[str, Any], n: int) -> Reply:
    """Every tool test is answered with a call whose name (and a cut argument text) holds newlines."""
    del n
    if body.get("tools"):
        return Reply.tool_call(f"read_file\n{FAKE}\n", '{"path": "a\n' + FAKE)
    return Reply.text("x")


def test_a_newline_in_a_model_named_tool_never_starts_a_line(tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    with LoopbackServer(forging, models=("m1",)) as server:
        ran = invoke(
            "run", "m1", "--base-url", server.base_url, "--profiles", tmp_path / "p.json", "--history-db", history,
            "-e", "none",
        )  # fmt: skip
    shown = invoke("show", "last", "m1@none", "--history-db", history, "--profiles", tmp_path / "p.json")
    tests = [line.split()[0] for line in shown.stdout.splitlines() if line.startswith("    ") and "0." in line]
    transcript = invoke("show", "last", "m1@none", tests[-1] if tests else "x", "--history-db", history)
    for output in (ran.stdout, shown.stdout, transcript.stdout):
        assert "read_file\\n" in output  # the name is there, escaped
        assert not any(line.startswith(FAKE) for line in output.splitlines()), output
