"""The public API: one list, every name resolves, every name is documented in docs/api.md."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import tsuka_core

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"


def test_every_exported_name_resolves_to_the_module_the_stub_names() -> None:
    stub = (ROOT / "tsuka_core" / "__init__.pyi").read_text(encoding="utf-8")
    listed = re.findall(r"^from \.([\w.]+) import (\w+) as \2$", stub, re.M)
    assert sorted(name for _, name in listed) == sorted(tsuka_core.__all__)
    for module, name in listed:
        value = getattr(tsuka_core, name)
        assert value is getattr(__import__(f"tsuka_core.{module}", fromlist=[name]), name)


def test_the_api_stays_small() -> None:
    # 0.3 adds two plugin contracts (scorecards, tool environments) and their types: the cap moves with them.
    assert 30 <= len(tsuka_core.__all__) <= 96


def test_the_api_md_headings_follow_the_stub() -> None:
    stub = (ROOT / "tsuka_core" / "__init__.pyi").read_text(encoding="utf-8")
    sections = re.split(r"^# (?=Every plugin|Check authors|Backend authors|Suite authors|Embedding)", stub, flags=re.M)
    doc = DOC.read_text(encoding="utf-8")
    for section in sections[1:]:
        heading = section.splitlines()[0].split(":")[0].rstrip(".")
        names = re.findall(r" as (\w+)$", section, re.M)
        body = doc.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
        assert set(re.findall(r"^\| `(\w+)` \|", body, re.M)) == set(names), heading


def test_the_helpers_check_authors_are_told_to_use_judge_as_the_built_ins_do() -> None:
    answer = tsuka_core.Answer('Here: {"port": 8080.0, "tags": ["a"]}')
    value, problem = tsuka_core.json_at_path(answer, "port")
    assert (value, problem) == (8080.0, None)
    assert tsuka_core.json_equal(value, 8080)
    assert tsuka_core.json_type_name(value) == "integer"
    assert tsuka_core.json_at_path(answer, "length(tags)") == (1, None)
    missing, problem = tsuka_core.json_at_path(answer, "nope")
    assert missing is tsuka_core.MISSING
    assert problem == tsuka_core.Outcome.fail("nothing at path 'nope'")
    found = tsuka_core.extract_json(answer.text)
    assert isinstance(found, tsuka_core.ExtractedJson)
    assert found.method == "extracted"


def test_every_class_and_function_exported_has_a_docstring() -> None:
    for name in tsuka_core.__all__:
        value = getattr(tsuka_core, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert (inspect.getdoc(value) or "").strip(), f"{name} has no docstring"


def test_docs_api_lists_exactly_the_exported_names() -> None:
    documented = set(re.findall(r"^\| `(\w+)` \|", DOC.read_text(encoding="utf-8"), re.M))
    assert documented == set(tsuka_core.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    assert not hasattr(tsuka_core, "no_such_name")
