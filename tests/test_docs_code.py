"""Every Python block of every page of docs/ runs, and prints what the page shows after it.

A block that cannot run on its own (a fragment copied from the example
plugins, whose own tests run it; a call into another project's SDK) is
preceded by ``<!-- not run: REASON -->``; the count of those is pinned here,
so a new unrun block is a choice, not an accident. docs/gating.md's blocks run
in tests/test_gating_docs.py, against the store and tier map its text describes.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from click.testing import CliRunner
from gate_helpers import profile

from tsuka_core.cli.main import cli
from tsuka_core.testing import Reply, ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
NOT_RUN = {
    "docs/plugins.md": 13,
    "docs/writing-tests.md": 0,
    "docs/api.md": 0,
    "docs/compare.md": 0,
    "docs/profiles.md": 0,
    "docs/gating.md": 4,
}
"""How many Python blocks each page marks as not run."""
OWN_RUNNER = {"docs/gating.md": "tests/test_gating_docs.py"}
"""Pages whose blocks another test runs, with the setting their text describes."""
_BLOCK = re.compile(
    r"(?:<!-- not run: (?P<reason>[^>]*?) -->\n)?```python(?: runnable)?\n(?P<code>.*?)^```\n"
    r"(?:\n```text\n(?P<output>.*?)^```)?",
    re.DOTALL | re.MULTILINE,
)


def _blocks(page: str) -> list[tuple[str | None, str, str | None]]:
    text = (ROOT / page).read_text(encoding="utf-8")
    found = [(m["reason"], m["code"], m["output"]) for m in _BLOCK.finditer(text)]
    assert len(found) == text.count("```python"), f"{page}: a python block the pattern does not read"
    return found


RUNNABLE = [
    pytest.param(page, code, output, id=f"{page}#{index}")
    for page in NOT_RUN
    if page not in OWN_RUNNER
    for index, (reason, code, output) in enumerate(_blocks(page))
    if reason is None
]


def test_every_page_with_python_is_run_here_or_by_its_own_test() -> None:
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md") if "```python" in p.read_text(encoding="utf-8")}
    assert pages == set(NOT_RUN)
    assert all((ROOT / test).is_file() for test in OWN_RUNNER.values())


def _profiles_page(folder: Path) -> None:
    """docs/profiles.md's tools file and a store where hasty-3b is medium at its recommended effort none."""
    text = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    tools = next(block for block in re.findall(r"^```json\n(.*?)^```", text, re.S | re.M) if block.startswith("["))
    (folder / "tools.json").write_text(tools, encoding="utf-8")
    store = {
        "profiles": {"hasty-3b@none": profile("hasty-3b", "none", "medium")},
        "recommendations": {"hasty-3b": "none"},
    }
    (folder / "models_profile.json").write_text(json.dumps(store), encoding="utf-8")


def _compare_page(folder: Path) -> None:
    """Three recorded runs of the page's server, for docs/compare.md's 'compare 1 3'."""
    del folder
    for _ in range(3):
        done = CliRunner().invoke(cli, ["run", "qwen3:8b", "-e", "none"], catch_exceptions=False)
        assert done.exit_code == 0, done.output


SETUP: dict[str, Callable[[Path], None]] = {"docs/profiles.md": _profiles_page, "docs/compare.md": _compare_page}
"""What a page's blocks assume is there (in the current folder) before they run."""


@pytest.mark.parametrize("page", list(NOT_RUN))
def test_blocks_not_run_are_marked_with_a_reason_and_counted(page: str) -> None:
    reasons = [reason for reason, _, _ in _blocks(page) if reason is not None]
    assert all(len(reason.strip()) > 10 for reason in reasons), reasons
    assert len(reasons) == NOT_RUN[page]


def _openai_answer(text: str) -> Reply:
    message = {"role": "assistant", "content": text}
    return Reply({"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"completion_tokens": 3}})


@pytest.mark.parametrize(("page", "code", "output"), RUNNABLE)
def test_the_block_runs_and_prints_what_the_page_shows(
    page: str, code: str, output: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    models = Reply({"object": "list", "data": [{"id": "qwen3:8b", "object": "model"}]})
    server = ScriptedServer(
        "/v1/chat/completions",
        other=lambda method, path: models if path == "/v1/models" else Reply({"error": "none"}, 404),
        default=_openai_answer("I cannot help with that."),
    )
    with server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.delenv("TSUKA_PROFILES", raising=False)
        monkeypatch.delenv("TSUKA_HISTORY", raising=False)
        if page in SETUP:
            SETUP[page](tmp_path)
        printed = io.StringIO()
        with redirect_stdout(printed):
            exec(compile(code, f"{page} block", "exec"), {"__name__": "__docs__"})
    if output is not None:
        assert printed.getvalue() == output
