"""The documentation cannot drift: the generated check and command references, links, the tutorial's test files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import click
import pytest
from click.testing import CliRunner
from devtools import checksdoc, clidoc, profiledoc
from pydantic import Field

import tsuka_core
from tsuka_core.cli import exits
from tsuka_core.cli.main import cli
from tsuka_core.plugins.manager import LoadedPlugin
from tsuka_core.plugins.registry import Registered, Registry

cli_markdown = clidoc.cli_markdown
builtin_only, check_example, checks_markdown = (
    checksdoc.builtin_only,
    checksdoc.check_example,
    checksdoc.checks_markdown,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHECKS_MD = DOCS / "checks.md"
CLI_MD = DOCS / "cli.md"

PENDING: frozenset[str] = frozenset()
"""Pages that are linked before they are written; a link to one of them may point nowhere yet."""

_FENCE = re.compile(r"^```([\w+-]*)[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _blocks(path: Path, language: str) -> list[str]:
    """The bodies of the fenced code blocks of ``path`` written in ``language``."""
    return [body for lang, body in _FENCE.findall(path.read_text(encoding="utf-8")) if lang == language]


def _one_test_suite(folder: Path, test: dict[str, Any], registry: Registry) -> tsuka_core.Suite:
    folder.mkdir(parents=True)
    (folder / "01_example.json").write_text(json.dumps(test, ensure_ascii=False), encoding="utf-8")
    return tsuka_core.load_suite(folder, registry)


# --- docs/checks.md ---------------------------------------------------------------------------------------------------


def test_checks_md_is_the_generated_reference(registry: Registry) -> None:
    expected = checks_markdown(builtin_only(registry))
    assert CHECKS_MD.read_text(encoding="utf-8") == expected, (
        "docs/checks.md is out of date: run `python tools/checksdoc.py > docs/checks.md`"
    )


def test_docgen_main_prints_the_reference(registry: Registry) -> None:
    done = subprocess.run(
        [sys.executable, "tools/checksdoc.py"], capture_output=True, check=True, cwd=ROOT, timeout=120
    )
    assert done.stdout.decode("utf-8") == checks_markdown(builtin_only(registry))


def test_checks_md_has_one_section_and_one_example_per_builtin_type(registry: Registry) -> None:
    builtins = sorted(builtin_only(registry).check_types)
    text = CHECKS_MD.read_text(encoding="utf-8")
    assert re.findall(r"^## `([^`]+)`$", text, re.MULTILINE) == builtins
    assert [json.loads(block)["type"] for block in _blocks(CHECKS_MD, "json")] == builtins


@pytest.mark.parametrize("block", _blocks(CHECKS_MD, "json"), ids=lambda b: str(json.loads(b)["type"]))
def test_each_example_check_loads_in_a_suite(block: str, registry: Registry, tmp_path: Path) -> None:
    check = json.loads(block)
    test = {"name": "example", "category": "instruction", "prompt": "Say something.", "checks": [check]}
    suite = _one_test_suite(tmp_path / "suite", test, registry)
    assert [c.type for c in suite.tests[0].steps[0].checks] == [check["type"]]


def test_every_builtin_type_carries_its_own_example(registry: Registry) -> None:
    bare = [name for name, entry in builtin_only(registry).check_types.items() if entry.cls.example is None]
    assert not bare, f"built-in check types without an `example` class attribute: {bare}"


def test_builtin_only_drops_other_distributions(registry: Registry) -> None:
    plugin = LoadedPlugin("extra", "tsuka-checks-extra", "1.0", object())
    mixed = Registry(
        plugins=[*registry.plugins, plugin],
        check_types={**registry.check_types, "sentence_tally": Registered(_SentenceCount, plugin)},
        backends=dict(registry.backends),
    )
    assert "sentence_tally" in checks_markdown(mixed)
    assert checks_markdown(builtin_only(mixed)) == checks_markdown(builtin_only(registry))


# --- a plugin's check type without an example -------------------------------------------------------------------------


class _SentenceParams(tsuka_core.CheckParams):
    value: Annotated[int, Field(ge=2)]
    """Exact number of sentences."""
    mode: Literal["strict", "loose"]
    """How sentence ends are found."""
    terminators: str = ".!?"
    """Characters that end a sentence | pipes are escaped."""
    numbered: bool | None = None


class _SentenceCount(tsuka_core.CheckType[_SentenceParams]):
    """Pass when the answer has exactly `value` sentences."""

    name = "sentence_tally"
    params_model = _SentenceParams

    def evaluate(self, answer: tsuka_core.Answer) -> tsuka_core.Outcome:
        return tsuka_core.Outcome.ok("counted")


class _WithExample(_SentenceCount):
    """Pass when the answer has exactly `value` sentences (own example)."""

    name = "sentence_tally_own"
    example: ClassVar[dict[str, Any]] = {"value": 3, "mode": "loose", "weight": 2}


class _BadExample(_SentenceCount):
    """Carries an example that does not validate."""

    name = "sentence_tally_bad"
    example: ClassVar[dict[str, Any]] = {"value": 1, "mode": "loose"}


def _plugin_registry(*types: type[_SentenceCount]) -> Registry:
    plugin = LoadedPlugin("extra", "tsuka-checks-extra", "1.0", object())
    return Registry(plugins=[plugin], check_types={t.name: Registered(t, plugin) for t in types})


def test_a_type_without_an_example_gets_one_built_from_its_schema(tmp_path: Path) -> None:
    registry = _plugin_registry(_SentenceCount)
    example = check_example("sentence_tally", registry.check_types["sentence_tally"])
    assert example == {"type": "sentence_tally", "value": 2, "mode": "strict"}
    suite = _one_test_suite(
        tmp_path / "s", {"name": "t", "category": "json", "prompt": "p", "checks": [example]}, registry
    )
    assert suite.tests[0].steps[0].checks[0].type == "sentence_tally"


def test_the_parameter_table_comes_from_the_schema() -> None:
    text = checks_markdown(_plugin_registry(_SentenceCount))
    assert "Provided by `tsuka-checks-extra`." in text
    assert "| `value` | integer ≥ 2 | required | Exact number of sentences. |" in text
    assert '| `mode` | one of `"strict"`, `"loose"` | required | How sentence ends are found. |' in text
    terminators = '| `terminators` | string | default `".!?"` | Characters that end a sentence \\| pipes are escaped. |'
    assert terminators in text
    assert "| `numbered` | boolean or null | default `null` |  |" in text


def test_a_class_example_is_used_and_must_validate() -> None:
    registry = _plugin_registry(_WithExample, _BadExample)
    own = check_example("sentence_tally_own", registry.check_types["sentence_tally_own"])
    assert own == {"type": "sentence_tally_own", "value": 3, "mode": "loose", "weight": 2}
    with pytest.raises(ValueError, match="sentence_tally_bad"):
        check_example("sentence_tally_bad", registry.check_types["sentence_tally_bad"])


def test_output_is_deterministic(registry: Registry) -> None:
    assert checks_markdown(registry) == checks_markdown(registry)


# --- docs/cli.md ------------------------------------------------------------------------------------------------------


def test_cli_md_is_the_generated_reference() -> None:
    assert CLI_MD.read_text(encoding="utf-8") == cli_markdown(cli), (
        f"docs/cli.md is out of date (a command, an option or its help changed): run `{clidoc.REGENERATE}`"
    )


def test_clidoc_main_prints_the_reference() -> None:
    done = subprocess.run([sys.executable, "tools/clidoc.py"], capture_output=True, check=True, cwd=ROOT, timeout=120)
    assert done.stdout.decode("utf-8") == cli_markdown(cli)


def _command_paths(info: dict[str, Any], prefix: str = "") -> list[str]:
    """Every command path below a group, from click's own ``to_info_dict``."""
    found = []
    for name, sub in info.get("commands", {}).items():
        path = f"{prefix}{name}"
        found += [path, *_command_paths(sub, path + " ")]
    return found


def test_every_command_and_option_has_its_place_in_cli_md() -> None:
    text = cli_markdown(cli)
    info = cli.to_info_dict(click.Context(cli, info_name="tsuka"))
    paths = _command_paths(info)
    assert {"run", "checks show", "rescore", "report"} <= set(paths)
    headings = re.findall(r"^## tsuka (.+)$", text, re.MULTILINE)
    assert sorted(headings) == sorted(paths)
    for ctx in clidoc.commands(cli):
        section = text.split(f"## {ctx.command_path}\n", 1)[1].split("\n## ", 1)[0]
        for param in ctx.command.params:
            if isinstance(param, click.Option) and "--help" not in param.opts:
                assert f"`{', '.join(param.opts)}" in section, f"{ctx.command_path}: {param.opts} not documented"


def test_an_option_row_says_type_default_environment_and_help() -> None:
    level = click.Option(["-l", "--level"], type=click.Choice(["a", "b"]), multiple=True, help="Which | level.")
    count = click.Option(["--count"], type=click.IntRange(1, 9), default=3, envvar="X_COUNT", help="How many.")
    store = click.Option(["--store/--no-store"], default=False, help="Keep it.")
    needed = click.Option(["--tools"], type=click.Path(exists=True, dir_okay=False), required=True)
    assert clidoc.param_row(level) == "| `-l, --level` | one of `a`, `b`, repeatable |  |  | Which \\| level. |"
    assert clidoc.param_row(count) == "| `--count` | integer from 1 to 9 | `3` | `X_COUNT` | How many. |"
    assert clidoc.param_row(store) == "| `--store / --no-store` | flag | `--no-store` |  | Keep it. |"
    assert clidoc.param_row(needed) == "| `--tools` | existing file | required |  |  |"


def test_help_text_becomes_markdown_without_its_exit_status_paragraph() -> None:
    @click.command()
    def demo() -> None:
        """Do one thing.

        \b
        Examples:
          demo here

        Exit status: 0 always.
        \f
        Not help.
        """

    group = click.Group("tsuka", commands=[demo])
    text = cli_markdown(group)
    assert "Do one thing.\n\n```text\nExamples:\n  demo here\n```" in text
    assert "0 always" not in text
    assert "Not help" not in text
    assert "- 0: success\n- 2: bad input or usage" in text


def test_the_declared_exit_statuses_are_the_ones_used() -> None:
    from tsuka_core.errors import RequestError, TsukaError

    assert TsukaError.exit_code == exits.BAD_INPUT
    assert RequestError.exit_code == exits.FAILED
    assert set(exits.BY_COMMAND) <= set(_command_paths(cli.to_info_dict(click.Context(cli, info_name="tsuka"))))
    assert set(exits.LABELS) == set(exits.MEANINGS)
    runner = CliRunner()
    assert runner.invoke(cli, ["hash", "--no-such-option"]).exit_code == exits.BAD_INPUT
    assert runner.invoke(cli, ["checks", "show", "no_such_check"]).exit_code == exits.BAD_INPUT
    assert runner.invoke(cli, ["hash"]).exit_code == exits.OK


# --- links ------------------------------------------------------------------------------------------------------------


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.MULTILINE):
        slug = _slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(path: Path) -> list[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return [target for target in _LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_to_existing_files(page: Path) -> None:
    broken = []
    for target in _links(page):
        file_part, _, anchor = target.partition("#")
        destination = (page.parent / file_part).resolve() if file_part else page
        name = destination.relative_to(ROOT).as_posix() if destination.is_relative_to(ROOT) else str(destination)
        if not destination.exists():
            if name not in PENDING:
                broken.append(f"{target}: no such file {name}")
            continue
        if anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
            broken.append(f"{target}: no heading #{anchor} in {name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_slug_matches_github() -> None:
    assert _slug("`json_path_equals`") == "json_path_equals"
    assert _slug("3. Running a test") == "3-running-a-test"
    assert _slug("Efforts & the sweep") == "efforts--the-sweep"


# --- docs/writing-tests.md --------------------------------------------------------------------------------------------


def _tutorial_tests() -> list[dict[str, Any]]:
    """Every ``json`` block of the tutorial that is a whole test file (an object with a name and a category).

    Files that are wrong on purpose (the common-mistakes section) are fenced as ``jsonc`` and not collected.
    """
    found = []
    for block in _blocks(DOCS / "writing-tests.md", "json"):
        try:
            value = json.loads(block)
        except ValueError:
            continue
        if isinstance(value, dict) and "name" in value and "category" in value:
            found.append(value)
    return found


def test_the_tutorial_shows_test_files() -> None:
    tests = _tutorial_tests()
    assert len(tests) >= 3
    assert any("steps" in t for t in tests)
    assert any("prompt" in t for t in tests)


@pytest.mark.parametrize("test", _tutorial_tests(), ids=lambda t: str(t["name"]))
def test_each_tutorial_test_file_validates(
    test: dict[str, Any], registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "environment" in test:  # the multi-turn example runs in the example plugin's environment
        monkeypatch.syspath_prepend(str(ROOT / "plugins_example" / "tsuka-checks-extra"))
        from tsuka_checks_extra import plugin

        from tsuka_core.testing import registry_of

        registry = registry_of(plugin)
    suite = _one_test_suite(tmp_path / "suite", test, registry)
    assert suite.tests[0].name == test["name"]


# --- the profile's fields, written from the level record --------------------------------------------------------------


def test_the_profile_field_table_is_the_level_records() -> None:
    """docs/profiles.md lists every field of LevelRecord, in the order written, with its docstring as meaning."""
    page = (DOCS / "profiles.md").read_text(encoding="utf-8")
    assert profiledoc.rewritten(page) == page, f"docs/profiles.md is out of date: {profiledoc.REGENERATE}"
    table = profiledoc.field_table()
    from tsuka_core.record import TSUKA_FIELDS, LevelRecord

    names = [line.split("`")[1] for line in table.splitlines()[2:]]
    assert names == [str(info.alias) for info in LevelRecord.model_fields.values()]
    assert tuple(names[: len(TSUKA_FIELDS)]) == TSUKA_FIELDS
    assert all("tsuka's own" in line for line in table.splitlines()[2 + len(TSUKA_FIELDS) :])
    assert "| `benchmarkVersion` | integer |" in table
    assert "| `tokensPerSecond` | number |" in table
    with pytest.raises(ValueError, match="profile fields"):
        profiledoc.rewritten("# a page without the section\n")
