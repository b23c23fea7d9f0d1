"""A tool's schema is suite data: judging it reaches no network, no file and no unbounded search, through tsuka run."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from history_helpers import invoke
from loopback import LoopbackServer, Reply

from tsuka_checks_builtin.sentences import count_sentences
from tsuka_core import schema_validator
from tsuka_core.judge.schemas import MAX_FORMAT_CHARS

pytestmark = pytest.mark.usefixtures("fast_retries")

SECRET_FILE_TEXT = "root:x:0:0:the file's own content"


def _suite(folder: Path, schema: dict[str, Any]) -> Path:
    folder.mkdir()
    test = {
        "name": "conform",
        "category": "toolCalling",
        "prompt": "Call f.",
        "tools": [{"type": "function", "function": {"name": "f", "description": "f", "parameters": schema}}],
        "checks": [{"type": "tool_args_conform"}],
    }
    (folder / "conform.json").write_text(json.dumps(test), encoding="utf-8")
    return folder


def _run(tmp_path: Path, schema: dict[str, Any], arguments: dict[str, Any]) -> tuple[str, str, float]:
    suite = _suite(tmp_path / "suite", schema)
    history = tmp_path / "h.sqlite"
    with LoopbackServer(lambda body, n: Reply.tool_call("f", arguments)) as server:
        started = time.process_time()
        result = invoke("run", "m1", "--base-url", server.base_url, "--suite", suite, "-e", "none",
                        "--profiles", tmp_path / "p.json", "--history-db", history)  # fmt: skip
        took = time.process_time() - started
    assert "Traceback" not in result.stderr
    shown = invoke("show", "1", "m1@none", "--history-db", history)
    report = invoke("report", "-o", tmp_path / "r.html", "--history-db", history)
    assert report.exit_code == 0, report.stderr
    everything = result.stdout + result.stderr + shown.stdout + (tmp_path / "r.html").read_text(encoding="utf-8")
    return result.stdout, everything + history.read_bytes().decode("utf-8", "replace"), took


def test_a_ref_to_a_url_is_never_fetched(tmp_path: Path) -> None:
    with LoopbackServer() as target:
        url = target.base_url.replace("/v1", "/schema.json")
        schema = {"type": "object", "properties": {"d": {"$ref": url}}}
        out, everything, _ = _run(tmp_path, schema, {"d": "x"})
        assert target.requests == []
    assert "refers outside itself" in everything
    assert "0.00" in out


def test_a_ref_to_a_file_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"type": "string", "description": SECRET_FILE_TEXT}), encoding="utf-8")
    schema = {"type": "object", "properties": {"d": {"$ref": secret.as_uri()}}}
    _, everything, _ = _run(tmp_path, schema, {"d": "x"})
    assert SECRET_FILE_TEXT not in everything
    assert "refers outside itself" in everything


def test_a_ref_within_the_schema_is_followed(tmp_path: Path) -> None:
    schema = {"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"d": {"$ref": "#/$defs/n"}}}
    out, _, _ = _run(tmp_path, schema, {"d": 3})
    assert "1.00" in out


def test_a_pattern_is_searched_within_the_time_limit(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"d": {"type": "string", "pattern": "(a|aa)+$"}}}
    _, everything, took = _run(tmp_path, schema, {"d": "a" * 40 + "!"})
    assert took < 30  # a search without the limit runs for hours
    assert "regex search exceeded" in everything


@pytest.mark.parametrize(
    ("fmt", "bad", "good"),
    [
        ("date", "yesterday", "2026-12-06"),
        ("email", "nobody", "a@b.example"),
        ("date-time", "now", "2026-12-06T10:00:00Z"),
    ],
)
def test_the_formats_a_schema_states_are_checked(fmt: str, bad: str, good: str) -> None:
    validator = schema_validator({"type": "object", "properties": {"d": {"type": "string", "format": fmt}}})
    assert not validator.is_valid({"d": bad})
    assert validator.is_valid({"d": good})
    assert not validator.is_valid({"d": good + " " * MAX_FORMAT_CHARS})


def test_unique_items_and_sentences_take_linear_time() -> None:
    validator = schema_validator({"type": "array", "uniqueItems": True})
    items = [{"n": i} for i in range(20000)]
    started = time.process_time()
    assert validator.is_valid(items)
    assert not validator.is_valid([1, 1.0])
    assert validator.is_valid([1, True])
    assert count_sentences(". " * 30000 + "Done.") == 1
    assert time.process_time() - started < 10  # quadratic: minutes
