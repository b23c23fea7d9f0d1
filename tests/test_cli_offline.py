"""The commands that need no model server: validate, hash, checks, schema, plugins, backends, help, usage errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import jsonschema
import pytest
from click.testing import CliRunner, Result

from tsuka_core.cli.main import cli
from tsuka_core.suite.loading import default_suite_path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = default_suite_path()
"""The default suite as installed (in a source checkout, ``benchmarks/``): profiles measured with it are the
default suite's."""
TSUKA = Path(sys.executable).with_name("tsuka")
CLEAN_ENV: dict[str, str | None] = {
    "OPENAI_BASE_URL": None,
    "OPENAI_API_KEY": None,
    "TSUKA_PROFILES": None,
    "TSUKA_LOAD_PLUGINS": None,
}
DEFAULT_TESTS = {
    "10_instruction_frase.json": "frase_8_parole",
    "11_instruction_lista.json": "lista_vincoli_negativi",
    "20_json_prodotti.json": "json_prodotti",
    "21_json_annidato.json": "json_annidato",
    "30_tool_catena.json": "catena_tool_distrattori",
    "31_tool_trappola.json": "trappola_astensione",
    "32_tool_write_append.json": "tool_write_append",
}
BUILTIN_TYPES = [
    "capital_word_count",
    "contains",
    "ends_with",
    "first_word",
    "instruction",
    "json_path_equals",
    "json_path_length",
    "json_path_type",
    "json_valid",
    "language",
    "last_word",
    "letter_case",
    "letter_count",
    "line_count",
    "not_contains",
    "not_empty",
    "not_regex",
    "paragraph_count",
    "paragraph_first_word",
    "regex",
    "regex_count",
    "response_count",
    "results_include",
    "sentence_count",
    "starts_with",
    "state_matches",
    "title",
    "tool_arg_at",
    "tool_arg_equals",
    "tool_arg_regex",
    "tool_args_conform",
    "tool_call_at",
    "tool_called",
    "tool_calls_count",
    "tool_calls_match",
    "tool_not_called",
    "word_count",
    "wrapped_in",
]
BROKEN_FILES = {
    "10_bad_json.json": '{"name": "x",',
    "20_typo.json": json.dumps(
        {
            "name": "typo",
            "category": "toolCalling",
            "steps": [
                {"prompt": "Find Ann.", "checks": [{"type": "tool_called", "value": "find_user"}]},
                {"toolResult": "{}", "checks": [{"type": "tool_caled", "value": "find_user"}]},
            ],
        }
    ),
    "30_regex.json": json.dumps(
        {"name": "regex", "category": "instruction", "prompt": "Hi", "checks": [{"type": "regex", "value": "(open"}]}
    ),
    "40_missing_arg.json": json.dumps(
        {"name": "arg", "category": "toolCalling", "prompt": "Hi", "checks": [{"type": "tool_arg_equals", "value": 3}]}
    ),
    "50_category.json": json.dumps(
        {"name": "cat", "category": "instructions", "prompt": "Hi", "checks": [{"type": "not_empty", "colour": "red"}]}
    ),
    "README.md": "not a test file",
}
BROKEN_LINES = [
    "10_bad_json.json: line 1, column 14: not valid JSON",
    "20_typo.json: steps[1].checks[0].type: unknown check type 'tool_caled'; did you mean 'tool_called'?",
    "30_regex.json: checks[0]",
    "40_missing_arg.json: checks[0].arg: ",
    "50_category.json: category: ",
    "50_category.json: checks[0].colour: ",
]


def invoke(*args: str | os.PathLike[str]) -> Result:
    """Run the ``tsuka`` command in this process with a clean environment; stdout and stderr kept apart."""
    return CliRunner(env=CLEAN_ENV).invoke(cli, [str(a) for a in args], catch_exceptions=False, prog_name="tsuka")


def folder_hash(folder: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    for path in sorted(folder.glob("*.json"), key=lambda p: p.name):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:8]


@pytest.fixture
def broken_suite(tmp_path: Path) -> Path:
    folder = tmp_path / "broken"
    folder.mkdir()
    for name, text in BROKEN_FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# --- validate and hash ----------------------------------------------------------------------------------------------


def test_validate_lists_the_default_tests_and_the_hash() -> None:
    result = invoke("validate")

    assert result.exit_code == 0, result.stderr
    for file, name in DEFAULT_TESTS.items():
        (row,) = [line for line in result.stdout.splitlines() if file in line]
        assert name in row
    assert f"7 tests, suite hash {folder_hash(DEFAULT_SUITE)}" in result.stdout
    assert result.stderr == ""


def test_validate_reports_every_problem_of_a_broken_suite(broken_suite: Path) -> None:
    result = invoke("validate", broken_suite)

    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == len(BROKEN_LINES) + 1
    for line, start in zip(lines, BROKEN_LINES, strict=False):
        assert line.startswith(start), line
    assert "did you mean 'instruction'?" in lines[4]
    assert lines[-1] == f"tsuka: {len(BROKEN_LINES)} problem(s) in the suite; nothing was run"
    assert "Traceback" not in result.stderr
    assert "README" not in result.stderr


def test_a_broken_suite_through_the_installed_command(broken_suite: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    done = subprocess.run(
        [str(TSUKA), "validate", str(broken_suite)], capture_output=True, text=True, timeout=60, env=env, check=False
    )

    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == len(BROKEN_LINES) + 1
    assert done.stderr.startswith("10_bad_json.json: ")


def test_run_refuses_a_broken_suite_before_asking_anything(broken_suite: Path, tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    result = invoke("run", "m1", "--base-url", "http://127.0.0.1:9/v1", "--suite", broken_suite, "--profiles", store)

    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"tsuka: {len(BROKEN_LINES)} problem(s) in the suite; nothing was run"
    assert not store.exists()


def test_hash_of_the_reference_suite(reference_suite: Path) -> None:
    result = invoke("hash", reference_suite)

    assert result.exit_code == 0
    assert result.stdout == "98ac6763\n"


def test_the_reference_suite_validates_unchanged(reference_suite: Path) -> None:
    result = invoke("validate", reference_suite)

    assert result.exit_code == 0, result.stderr
    assert "7 tests, suite hash 98ac6763" in result.stdout


def test_hash_of_the_default_and_of_an_empty_suite(tmp_path: Path) -> None:
    assert invoke("hash").stdout == f"{folder_hash(DEFAULT_SUITE)}\n"
    assert invoke("hash", tmp_path).stdout == "none\n"


# --- checks, schema, plugins, backends ------------------------------------------------------------------------------


def test_checks_lists_the_builtin_types_provided_by_tsuka() -> None:
    result = invoke("checks")

    assert result.exit_code == 0, result.stderr
    rows = [line.split("│") for line in result.stdout.splitlines() if line.startswith("│")]
    listed = [(cells[1].strip(), cells[2].split()[0]) for cells in rows if cells[1].strip()]
    assert listed == [(name, "tsuka") for name in BUILTIN_TYPES]


def test_checks_show_prints_the_parameters() -> None:
    result = invoke("checks", "show", "tool_arg_regex")

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("tool_arg_regex: ")
    assert lines[1].startswith("provided by tsuka ")
    params = {line.split()[0]: line for line in lines[2:-1]}
    assert sorted(params) == ["arg", "flags", "value", "weight"]
    assert "required" in params["arg"]
    assert "required" in params["value"]
    assert 'optional, default "i"' in params["flags"]
    assert lines[-1].startswith('example: {"type": "tool_arg_regex", ')


def test_checks_show_teaches_the_nested_fields_and_the_rules() -> None:
    shown = invoke("checks", "show", "tool_calls_match").stdout
    assert "      accept (object, optional): " in shown  # a field of each expected call, under calls
    assert "  An argument matches when it holds the value of `arguments`" in shown  # the docstring's rules
    assert '"optional": ["unit"]' in shown.splitlines()[-1]


@pytest.mark.parametrize(("name", "hint"), [("tool_caled", "did you mean 'tool_called'?"), ("zzzz", "")])
def test_checks_show_of_an_unknown_type(name: str, hint: str) -> None:
    result = invoke("checks", "show", name)

    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"tsuka: error: unknown check type '{name}'")
    assert hint in line
    assert ("did you mean" in line) is bool(hint)
    assert result.stdout == ""


def test_schema_validates_every_default_test_file() -> None:
    result = invoke("schema")

    assert result.exit_code == 0, result.stderr
    validator = jsonschema.Draft202012Validator(json.loads(result.stdout))
    for file in DEFAULT_TESTS:
        validator.validate(json.loads((DEFAULT_SUITE / file).read_text(encoding="utf-8")))
    typo = json.loads(BROKEN_FILES["20_typo.json"])
    assert not validator.is_valid(typo)


def test_plugins_lists_the_builtin_plugin() -> None:
    result = invoke("plugins")

    assert result.exit_code == 0, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if "builtin" in line]
    assert row.split("│")[1].strip() == "tsuka"
    assert "check type word_count" in result.stdout
    assert "backend openai" in result.stdout


def test_backends_lists_the_openai_backend() -> None:
    result = invoke("backends")

    assert result.exit_code == 0, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("│ openai ")]
    assert "OPENAI_BASE_URL" in row
    assert "if the model reads them" in row  # llama.cpp says when a chat template ignores them


def test_backends_says_efforts_apply_per_model_on_the_embedded_backend_and_shows_no_rest_markup() -> None:
    result = invoke("backends")
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("│ embedded ")]
    assert "if the model reads them" in row  # every run of the bundled model says "effort not applied"
    assert "``" not in result.stdout
    assert "`--model-path`" in result.stdout


# --- help and usage errors ------------------------------------------------------------------------------------------


def command_paths() -> list[list[str]]:
    paths: list[list[str]] = [[]]
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        paths.append([name])
        if isinstance(command, click.Group):
            paths.extend([name, sub] for sub in sorted(command.commands))
    return paths


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "tsuka")
def test_every_command_has_help(path: list[str]) -> None:
    result = invoke(*path, "--help")

    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: {' '.join(['tsuka', *path])}")


def test_every_expected_command_exists() -> None:
    expected = {
        "backends",
        "checks",
        "gate",
        "hash",
        "models",
        "plugins",
        "profiles",
        "run",
        "schema",
        "tier",
        "validate",
    }
    assert expected <= set(cli.list_commands(click.Context(cli)))


def test_help_through_the_installed_command() -> None:
    done = subprocess.run([str(TSUKA), "--help"], capture_output=True, text=True, timeout=60, check=False)

    assert done.returncode == 0
    assert done.stdout.startswith("Usage: tsuka ")


@pytest.mark.parametrize("command", ["run", "models"])
def test_an_unknown_backend_is_one_line_and_exit_2(command: str, tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    args = ["run", "m1", "--profiles", store] if command == "run" else ["models"]

    result = invoke(*args, "-b", "nope")

    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("tsuka: error: unknown backend 'nope'")
    assert "tsuka backends" in line
    assert not store.exists()


def test_a_misspelled_backend_gets_a_suggestion(tmp_path: Path) -> None:
    result = invoke("run", "m1", "-b", "openia", "--profiles", tmp_path / "p.json")

    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "did you mean 'openai'?" in line
