"""Loading a suite: the default and reference suites, the hash, and every problem reported at once."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import tsuka_core
import tsuka_core.suite.loading as suite_module
from tsuka_core import SuiteError, load_suite
from tsuka_core.suite.loading import default_suite_path, suite_hash
from tsuka_core.suite.testfile import Check, TestFile

DEFAULT_SUITE = [
    # file, name, category, weight, steps, checks
    ("10_instruction_frase.json", "frase_8_parole", "instruction", 1, 1, 4),
    ("11_instruction_lista.json", "lista_vincoli_negativi", "instruction", 1, 1, 3),
    ("20_json_prodotti.json", "json_prodotti", "json", 1, 1, 7),
    ("21_json_annidato.json", "json_annidato", "json", 1, 1, 11),
    ("30_tool_catena.json", "catena_tool_distrattori", "toolCalling", 2, 2, 4),
    ("31_tool_trappola.json", "trappola_astensione", "toolCalling", 1, 1, 2),
    ("32_tool_write_append.json", "tool_write_append", "toolCalling", 2, 2, 7),
]


def shape(suite: tsuka_core.Suite) -> list[tuple[str, str, str, float, int, int]]:
    return [(t.file, t.name, t.category, t.weight, len(t.steps), t.check_count) for t in suite.tests]


def test_default_suite_has_the_seven_tests(default_suite: Path, registry: tsuka_core.Registry) -> None:
    suite = load_suite(default_suite, registry)
    assert shape(suite) == DEFAULT_SUITE
    assert suite.warnings == ()
    assert all(t.description for t in suite.tests)


def test_default_suite_is_where_tsuka_looks(default_suite: Path) -> None:
    # Installed as a wheel, tsuka carries a copy of benchmarks/; from a checkout it reads the folder itself.
    installed = default_suite_path()
    assert [p.name for p in installed.glob("*.json")] != []
    assert tsuka_core.suite_hash(installed) == tsuka_core.suite_hash(default_suite) == "7c90f8e0"


def test_a_loaded_suite_carries_the_hash_of_its_folder(default_suite: Path, registry: tsuka_core.Registry) -> None:
    assert load_suite(default_suite, registry).hash == tsuka_core.suite_hash(default_suite) == "7c90f8e0"


def test_the_hash_is_of_the_bytes_parsed_when_a_file_changes_while_loading(
    tmp_path: Path, registry: tsuka_core.Registry, default_suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for file in default_suite.glob("*.json"):
        (tmp_path / file.name).write_bytes(file.read_bytes())
    first = sorted(tmp_path.glob("*.json"))[0]
    original = first.read_bytes()
    read = suite_module._read

    def read_then_edit(path: Path) -> tuple[bytes, str | None]:
        found = read(path)
        if path == first:
            path.write_bytes(original.replace(b"{", b"{\n", 1))  # an editor saving while the suite loads
        return found

    monkeypatch.setattr(suite_module, "_read", read_then_edit)
    loaded = load_suite(tmp_path, registry)

    assert loaded.hash == "7c90f8e0"  # what was parsed, not what the folder holds a moment later
    assert tsuka_core.suite_hash(tmp_path) != loaded.hash


def test_default_suite_differs_from_the_reference(default_suite: Path, reference_suite: Path) -> None:
    for file, *_ in DEFAULT_SUITE:
        ours, theirs = json.loads((default_suite / file).read_text()), json.loads((reference_suite / file).read_text())
        our_prompts = [s.get("prompt") for s in ours.get("steps", [ours])]
        their_prompts = [s.get("prompt") for s in theirs.get("steps", [theirs])]
        assert set(our_prompts).isdisjoint(p for p in their_prompts if p), file
        assert ours["name"] == theirs["name"]


def test_reference_suite_loads_unchanged(reference_suite: Path, registry: tsuka_core.Registry) -> None:
    suite = load_suite(reference_suite, registry)
    assert suite.hash == "98ac6763"
    assert shape(suite) == DEFAULT_SUITE


def test_reference_suite_tool_chain(reference_suite: Path, registry: tsuka_core.Registry) -> None:
    chain = load_suite(reference_suite, registry).tests[4]
    assert [s.prompt is not None for s in chain.steps] == [True, False]
    assert chain.steps[1].tool_result is not None
    assert [c.location for c in chain.steps[1].checks] == ["steps[1].checks[0]", "steps[1].checks[1]"]
    assert [c.weight for c in chain.steps[1].checks] == [2, 3]


# --- the hash ---------------------------------------------------------------------------------


def md5_of(*parts: bytes) -> str:
    return hashlib.md5(b"".join(parts), usedforsecurity=False).hexdigest()[:8]


def test_hash_is_md5_of_names_and_bytes_in_code_point_order(tmp_path: Path) -> None:
    files = {"b.json": b'{"x": 1}\n', "B.json": b"[]", "\u00e9.json": "{\u00e9}".encode(), "a.json": b""}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    order = ["B.json", "a.json", "b.json", "\u00e9.json"]
    expected = md5_of(*(name.encode() + files[name] for name in order))
    assert suite_hash(tmp_path) == expected


def test_hash_ignores_other_files_and_sub_folders(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_bytes(b"{}")
    before = suite_hash(tmp_path)
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "t.json.bak").write_text("old")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "u.json").write_text("{}")
    assert suite_hash(tmp_path) == before == md5_of(b"t.json{}")


def test_hash_changes_with_a_file_name_or_a_byte(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_bytes(b"{}")
    first = suite_hash(tmp_path)
    (tmp_path / "t.json").write_bytes(b"{} ")
    second = suite_hash(tmp_path)
    (tmp_path / "t.json").rename(tmp_path / "u.json")
    assert len({first, second, suite_hash(tmp_path)}) == 3


def test_hash_of_an_empty_or_missing_folder_is_none(tmp_path: Path) -> None:
    assert suite_hash(tmp_path) == "none"
    (tmp_path / "notes.txt").write_text("x")
    assert suite_hash(tmp_path) == "none"
    assert suite_hash(tmp_path / "missing") == "none"


def test_reference_hash(reference_suite: Path) -> None:
    assert suite_hash(reference_suite) == "98ac6763"


# --- a broken suite ---------------------------------------------------------------------------


def step(checks: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {**fields, "checks": checks}


OK = {"name": "ok", "category": "instruction", "prompt": "Say hi.", "checks": [{"type": "not_empty"}]}

BROKEN: dict[str, bytes | dict[str, Any] | list[Any]] = {
    "00_ok.json": OK,
    "01_bad_json.json": b'{"name": "a", "checks": [',
    "02_unknown_type.json": {
        "name": "b",
        "category": "toolCalling",
        "steps": [
            step([{"type": "tool_called", "value": "f"}], prompt="p"),
            step([{"type": "tool_caled", "value": "g"}], toolResult="r"),
        ],
    },
    "03_missing_arg.json": {**OK, "name": "c", "checks": [{"type": "tool_arg_equals", "value": 1}]},
    "04_bad_regex.json": {**OK, "name": "d", "checks": [{"type": "regex", "value": "(unclosed"}]},
    "05_wrong_type.json": {**OK, "name": "e", "checks": [{"type": "word_count", "value": "8"}]},
    "06_unknown_key.json": {**OK, "name": "f", "promt": "typo"},
    "07_both_forms.json": {**OK, "name": "g", "steps": [step([{"type": "not_empty"}], prompt="p")]},
    "08_not_utf8.json": b'{"name": "h\xff", "category": "json"}',
    "09_nan.json": b'{"name": "i", "category": "json", "weight": NaN, "prompt": "p", "checks": []}',
    "10_array.json": [OK],
    "11_duplicate.json": OK,
}

EXPECTED_PROBLEMS = [
    ("01_bad_json.json", "not valid JSON"),
    ("02_unknown_type.json", "steps[1].checks[0].type: unknown check type 'tool_caled'; did you mean 'tool_called'?"),
    ("03_missing_arg.json", "checks[0].arg: required by check type 'tool_arg_equals'"),
    ("04_bad_regex.json", "checks[0].value: regex does not compile"),
    ("05_wrong_type.json", "checks[0].value: "),
    ("06_unknown_key.json", "promt: unknown key; did you mean 'prompt'?"),
    ("07_both_forms.json", "both 'prompt'/'checks' and 'steps'"),
    ("08_not_utf8.json", "not UTF-8"),
    ("09_nan.json", "NaN"),
    ("10_array.json", "must hold a JSON object, got array"),
    ("11_duplicate.json", "name: 'ok' is already the name of 00_ok.json"),
]


def write_suite(folder: Path, files: dict[str, bytes | dict[str, Any] | list[Any]]) -> Path:
    for name, content in files.items():
        data = content if isinstance(content, bytes) else json.dumps(content).encode()
        (folder / name).write_bytes(data)
    return folder


def test_broken_suite_reports_every_problem_with_file_and_location(
    tmp_path: Path, registry: tsuka_core.Registry
) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(write_suite(tmp_path, BROKEN), registry)
    problems = caught.value.problems
    assert len(problems) == len(EXPECTED_PROBLEMS), "\n".join(problems)
    for line, (file, fragment) in zip(problems, EXPECTED_PROBLEMS, strict=True):
        assert line.startswith(f"{file}: "), line
        assert fragment in line, line
        assert "\n" not in line
        assert "Traceback" not in line
    assert str(caught.value).startswith("01_bad_json.json: ")
    assert str(caught.value).endswith(f"(and {len(EXPECTED_PROBLEMS) - 1} more)")


def test_the_spec_example_line_is_exact(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    write_suite(tmp_path, {"30_tool_catena.json": BROKEN["02_unknown_type.json"]})
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path, registry)
    assert caught.value.problems == [
        "30_tool_catena.json: steps[1].checks[0].type: unknown check type 'tool_caled'; "
        "did you mean 'tool_called'? ('tsuka checks' lists them)"
    ]


@pytest.mark.parametrize(
    ("test", "location"),
    [
        ({**OK, "checks": []}, "checks: required, a non-empty array of checks"),
        ({**OK, "checks": [{"type": "not_empty", "weight": 0}]}, "checks[0].weight: must be > 0, got 0"),
        ({**OK, "weight": True}, "weight: must be a number > 0, got boolean"),
        ({**OK, "category": "tools"}, "category: must be one of instruction, json, toolCalling, got 'tools'"),
        ({**OK, "name": " "}, "name: must not be empty"),
        ({**OK, "checks": [{"type": "regex", "value": "a", "flags": "x"}]}, "checks[0].flags: unknown regex flag"),
        ({**OK, "checks": [{"type": "word_count", "value": 3, "vlaue": 4}]}, "checks[0].vlaue: unknown key"),
        ({**OK, "checks": [{"type": "json_path_type", "path": "a", "value": "float"}]}, "checks[0].value: "),
        (
            {**OK, "checks": [{"type": "json_path_equals", "path": "a[", "value": 1}]},
            "checks[0].path: not a valid JMESPath",
        ),
        (
            {"name": "s", "category": "json", "steps": [step([{"type": "not_empty"}], toolResult="r")]},
            "steps[0].prompt: the first step needs a prompt",
        ),
        (
            {"name": "s", "category": "json", "steps": [step([{"type": "not_empty"}], prompt="p"), step([])]},
            "steps[1]: a step needs a 'prompt' or a 'toolResult'",
        ),
        ({**OK, "tools": [{"type": "function", "function": {}}]}, "tools[0].function.name: required"),
        ({**OK, "tools": [{"type": "web", "function": {"name": "x"}}]}, "tools[0].type: must be 'function', got 'web'"),
        (
            {**OK, "tools": [{"type": "function", "function": {"name": "x", "description": 3}}]},
            "tools[0].function.description: must be a string, got integer",
        ),
        ({**OK, "system": None}, "system: must be a string, got null"),
    ],
)
def test_each_problem_names_its_location(
    tmp_path: Path, registry: tsuka_core.Registry, test: dict[str, Any], location: str
) -> None:
    write_suite(tmp_path, {"t.json": test})
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path, registry)
    assert any(line.startswith(f"t.json: {location}") for line in caught.value.problems), caught.value.problems


def test_weight_must_be_finite(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    """1e400 parses as infinity in Python; an infinite weight would make every score NaN."""
    (tmp_path / "t.json").write_text(
        '{"name": "t", "category": "json", "weight": 1e400, "prompt": "p",'
        ' "checks": [{"type": "not_empty", "weight": 1e400}]}'
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path, registry)
    locations = [line.split(": ")[1] for line in caught.value.problems]
    assert locations == ["weight", "checks[0].weight"]


def test_weight_is_at_most_a_million(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    """A weight is a share: 1e308 is finite, but a sum of two such weights is not."""
    (tmp_path / "t.json").write_text(
        '{"name": "t", "category": "json", "weight": 1e308, "prompt": "p",'
        ' "checks": [{"type": "not_empty", "weight": 1000001}]}'
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path, registry)
    assert caught.value.problems == [
        "t.json: weight: must be at most 1000000, got 1e+308",
        "t.json: checks[0].weight: must be at most 1000000, got 1000001",
    ]
    write_suite(tmp_path, {"t.json": {**OK, "weight": 1e6, "checks": [{"type": "not_empty", "weight": 1000000}]}})
    test = load_suite(tmp_path, registry).tests[0]
    assert (test.weight, test.steps[0].checks[0].weight) == (1e6, 1000000)


def test_weights_keep_the_type_they_are_written_with(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    write_suite(tmp_path, {"t.json": {**OK, "weight": 2, "checks": [{"type": "not_empty", "weight": 2.5}]}})
    test = load_suite(tmp_path, registry).tests[0]
    assert (type(test.weight), type(test.steps[0].checks[0].weight)) == (int, float)


def test_a_check_lists_its_weight_and_parameter_problems_together(
    tmp_path: Path, registry: tsuka_core.Registry
) -> None:
    write_suite(tmp_path, {"t.json": {**OK, "checks": [{"type": "first_word", "valeu": "Hi", "weight": -2}]}})
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path, registry)
    assert caught.value.problems == [
        "t.json: checks[0].weight: must be > 0, got -2",
        "t.json: checks[0].value: required by check type 'first_word'",
        "t.json: checks[0].valeu: unknown key for check type 'first_word'; did you mean 'value'?",
    ]


def test_a_chain_lists_every_problem_in_file_order(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    chain = {
        "name": "c",
        "category": "toolCalling",
        "stpes": [],
        "steps": [
            step([{"type": "tool_caled", "value": "f"}], toolResult="{}"),
            step([], prompt="p"),
            step([{"type": "tool_arg_equals", "value": 1}]),
        ],
    }
    write_suite(tmp_path, {"t.json": chain})
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path, registry)
    assert caught.value.problems == [
        "t.json: stpes: unknown key; did you mean 'steps'?",
        "t.json: steps[0].prompt: the first step needs a prompt",
        "t.json: steps[0].checks[0].type: unknown check type 'tool_caled'; did you mean 'tool_called'? "
        "('tsuka checks' lists them)",
        "t.json: steps[1].checks: required, a non-empty array of checks",
        "t.json: steps[2]: a step needs a 'prompt' or a 'toolResult' (or both)",
        "t.json: steps[2].checks[0].arg: required by check type 'tool_arg_equals'",
    ]


def test_a_first_step_without_prompt_is_one_problem(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    write_suite(tmp_path, {"t.json": {"name": "c", "category": "json", "steps": [step([{"type": "not_empty"}])]}})
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path, registry)
    assert caught.value.problems == ["t.json: steps[0].prompt: the first step needs a prompt"]


def test_tools_are_kept_as_written(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    tool = {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object"}, "strict": True},
        "requiredTier": "medium",
        "x-note": [1, None],
    }
    write_suite(tmp_path, {"t.json": {**OK, "tools": [tool]}})
    assert load_suite(tmp_path, registry).tests[0].tools == (tool,)


def test_without_a_registry_the_model_checks_the_shape_of_checks_only(registry: tsuka_core.Registry) -> None:
    document = {**OK, "checks": [{"type": "no_such_type", "anything": 1}]}
    check = TestFile.model_validate(document).checks[0]
    assert isinstance(check, Check)
    assert (check.type, check.model_extra) == ("no_such_type", {"anything": 1})
    with pytest.raises(ValueError, match="without a registry"):
        check.built("checks[0]")
    with pytest.raises(ValidationError, match="unknown check type 'no_such_type'"):
        TestFile.model_validate(document, context=registry)


def test_missing_or_empty_folder_is_a_suite_error(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    with pytest.raises(SuiteError, match="no such folder"):
        load_suite(tmp_path / "missing", registry)
    with pytest.raises(SuiteError, match=r"no \*\.json test files"):
        load_suite(tmp_path, registry)


def test_a_category_without_tests_gives_a_warning(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    write_suite(tmp_path, {"a.json": OK, "b.json": {**OK, "name": "j", "category": "json"}})
    suite = load_suite(tmp_path, registry)
    assert [t.name for t in suite.tests] == ["ok", "j"]
    assert len(suite.warnings) == 1
    assert "'toolCalling'" in suite.warnings[0]
    assert "small" in suite.warnings[0]


def test_tests_run_in_file_name_order(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    names = ["b.json", "A.json", "a.json", "10.json", "9.json"]
    write_suite(tmp_path, {n: {**OK, "name": n} for n in names})
    (tmp_path / "ignored.txt").write_text("{}")
    suite = load_suite(tmp_path, registry)
    assert [t.name for t in suite.tests] == ["10.json", "9.json", "A.json", "a.json", "b.json"]


def test_short_and_long_forms_load_the_same(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    long_form = {"name": "long", "category": "instruction", "steps": [step(OK["checks"], prompt=OK["prompt"])]}
    write_suite(tmp_path, {"a.json": OK, "b.json": long_form})
    short, long = load_suite(tmp_path, registry).tests
    summary = [[(s.prompt, s.tool_result, [c.type for c in s.checks]) for s in t.steps] for t in (short, long)]
    assert summary == [[("Say hi.", None, ["not_empty"])]] * 2
    assert [c.location for c in long.steps[0].checks] == ["steps[0].checks[0]"]
    assert [c.location for c in short.steps[0].checks] == ["checks[0]"]


def test_utf8_bom_and_system_are_accepted(tmp_path: Path, registry: tsuka_core.Registry) -> None:
    (tmp_path / "t.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({**OK, "system": "Be brief."}).encode())
    test = load_suite(tmp_path, registry).tests[0]
    assert test.system == "Be brief."
