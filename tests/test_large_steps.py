"""A step is written within the bound its readers apply: a long conversation of large answers reads back."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke
from loopback import LoopbackServer, Reply

from tsuka_core.storage.stored_size import MAX_STORED_STEP_BYTES

pytestmark = pytest.mark.usefixtures("fast_retries")

ANSWER_CHARS = 20 * 1024 * 1024


def _three_steps(folder: Path) -> Path:
    folder.mkdir()
    test = {
        "name": "long_talk",
        "category": "instruction",
        "steps": [
            {"prompt": f"Say a lot ({i}).", "checks": [{"type": "contains", "value": "fisherman"}]} for i in range(3)
        ],
    }
    (folder / "long_talk.json").write_text(json.dumps(test), encoding="utf-8")
    return folder


def _large(body: dict[str, Any], n: int) -> Reply:
    del body
    return Reply.text(f"{n} " + "fisherman " * (ANSWER_CHARS // 10))


def test_a_long_conversation_of_large_answers_is_stored_within_the_readers_bound(tmp_path: Path) -> None:
    suite = _three_steps(tmp_path / "suite")
    history, store = tmp_path / "h.sqlite", tmp_path / "p.json"
    with LoopbackServer(_large) as server:
        result = invoke(
            "run", "m1", "--base-url", server.base_url, "--suite", suite, "-e", "none", "-j", "1",
            "--profiles", store, "--history-db", history,
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        sent = [len(json.dumps(body)) for body in server.bodies]
    assert max(sent) > 2 * ANSWER_CHARS  # the third request carried both earlier answers whole
    with closing(sqlite3.connect(history)) as db:
        sizes = db.execute("SELECT max(length(CAST(messages AS BLOB))), max(length(CAST(response AS BLOB)))"
                           " FROM steps").fetchone()  # fmt: skip
    assert max(sizes) <= MAX_STORED_STEP_BYTES
    for args in (("show", "1"), ("report", "-o", tmp_path / "r.html"), ("runs",)):
        shown = invoke(*args, "--history-db", history)
        assert shown.exit_code == 0, shown.stderr
        assert "damaged" not in shown.stderr
    again = invoke("rescore", "1", "--history-db", history, "--profiles", store, "--suite", suite)
    assert "damaged" not in again.stderr
    assert "too large to keep whole" in again.stdout + again.stderr  # said, never taken for damage
