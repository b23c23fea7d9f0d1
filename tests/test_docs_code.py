"""Every Python block of the plugin, test-writing and API pages runs, and prints what the page shows after it.

A block that cannot run on its own (a fragment copied from the example
plugins, whose own tests run it) is preceded by ``<!-- not run: REASON -->``;
the count of those is pinned here, so a new unrun block is a choice, not an
accident.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from tsuka_core.testing import Reply, ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
NOT_RUN = {"docs/plugins.md": 12, "docs/writing-tests.md": 0, "docs/api.md": 0}
"""How many Python blocks each page marks as not run."""
_BLOCK = re.compile(
    r"(?:<!-- not run: (?P<reason>[^>]*?) -->\n)?```python\n(?P<code>.*?)^```\n(?:\n```text\n(?P<output>.*?)^```)?",
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
    for index, (reason, code, output) in enumerate(_blocks(page))
    if reason is None
]


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
        printed = io.StringIO()
        with redirect_stdout(printed):
            exec(compile(code, f"{page} block", "exec"), {"__name__": "__docs__"})
    if output is not None:
        assert printed.getvalue() == output
