"""Suites as plugins: the register_suites hook, ``tsuka suites``, and ``--suite NAME`` resolution."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import tsuka_core
from tsuka_core import PluginError, RegisterSuite, Registry
from tsuka_core.cli.main import cli
from tsuka_core.errors import SuiteError
from tsuka_core.plugins import registry as registry_module
from tsuka_core.plugins.manager import LoadedPlugin, discover
from tsuka_core.suite.loading import default_suite_path, resolve_suite, suite_hash

TEST_FILES = {
    "10_i.json": {
        "name": "hello",
        "category": "instruction",
        "prompt": "Say hello.",
        "checks": [{"type": "contains", "value": "hello"}],
    },
    "20_j.json": {"name": "obj", "category": "json", "prompt": "Return {}.", "checks": [{"type": "json_valid"}]},
    "21_j.json": {"name": "obj2", "category": "json", "prompt": "Return [].", "checks": [{"type": "json_valid"}]},
}


def write_suite(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, test in TEST_FILES.items():
        (folder / name).write_text(json.dumps(test), encoding="utf-8")
    return folder


class SuitePlugin:
    def __init__(self, folders: dict[str, Path]) -> None:
        self.folders = folders

    @tsuka_core.hookimpl
    def register_suites(self, register: RegisterSuite) -> None:
        for name, folder in self.folders.items():
            register(name, folder)


def loaded(plugin: object, distribution: str) -> LoadedPlugin:
    return LoadedPlugin("main", distribution, "1.0", plugin)


def test_a_suite_name_registered_twice_names_both_distributions(tmp_path: Path) -> None:
    first = loaded(SuitePlugin({"mine": tmp_path}), "tsuka-one")
    second = loaded(SuitePlugin({"mine": tmp_path}), "tsuka-two")
    with pytest.raises(PluginError, match=r"suite 'mine' is registered twice: by tsuka-one .* and by tsuka-two"):
        Registry.from_plugins([first, second])


def test_a_suite_that_is_not_a_folder_on_disk_is_a_plugin_error() -> None:
    plugin = loaded(SuitePlugin({"mine": "not a path"}), "tsuka-bad")  # type: ignore[dict-item]
    with pytest.raises(PluginError, match="registered suite 'mine' as 'not a path', not a folder on disk"):
        Registry.from_plugins([plugin])


def test_the_builtin_plugin_registers_the_default_suite() -> None:
    registry = Registry.from_plugins(discover())
    assert registry.suites["default"].path == default_suite_path()
    assert registry.suites["default"].distribution == "tsuka"


@pytest.fixture
def with_mine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The installed plugins plus one registering ``mine``, as the process-wide registry."""
    folder = write_suite(tmp_path / "pkg" / "mine")
    registry = Registry.from_plugins([*discover(), loaded(SuitePlugin({"mine": folder}), "tsuka-mine")])
    monkeypatch.setattr(registry_module, "_cached", registry)
    monkeypatch.chdir(tmp_path)
    return folder


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, prog_name="tsuka")


def test_tsuka_suites_lists_every_suite_with_counts_and_hash(with_mine: Path) -> None:
    result = invoke("suites")
    assert result.exit_code == 0, result.output
    rows = {cells[0]: cells[1:] for line in result.stdout.splitlines() if (cells := _cells(line))}
    assert rows["default"][:5] == ["tsuka", "2", "2", "3", "7c90f8e0"]
    assert rows["mine"][:5] == ["tsuka-mine", "1", "2", "0", suite_hash(with_mine)]
    assert next(iter(rows)) == "suite"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("│" if "│" in line else "┃")[1:-1]]


def test_tsuka_suites_shows_a_suite_that_does_not_load(with_mine: Path) -> None:
    (with_mine / "30_bad.json").write_text("{", encoding="utf-8")
    result = invoke("suites")
    assert result.exit_code == 0
    assert "invalid: 30_bad.json" in result.stdout


def test_suite_name_resolves_to_the_registered_folder(with_mine: Path) -> None:
    assert resolve_suite("mine") == with_mine
    assert resolve_suite("default") == default_suite_path()
    result = invoke("hash", "mine")
    assert result.exit_code == 0
    assert result.stdout.strip() == suite_hash(with_mine)
    assert invoke("validate", "mine").stdout.splitlines()[-1] == f"3 tests, suite hash {suite_hash(with_mine)}"


def test_an_existing_folder_wins_over_a_name(with_mine: Path, tmp_path: Path) -> None:
    shutil.copytree(default_suite_path(), tmp_path / "mine")
    assert resolve_suite("mine") == Path("mine")
    assert invoke("hash", "mine").stdout.strip() == "7c90f8e0"


def test_an_unknown_name_is_one_line_with_the_closest_names(with_mine: Path) -> None:
    with pytest.raises(SuiteError, match=r"^suite 'mien': no such folder and no such registered suite .*'mine'\?$"):
        resolve_suite("mien")
    for args in (["hash", "defualt"], ["run", "all", "--suite", "defualt"], ["tier", "m", "--suite", "defualt"]):
        result = invoke(*args)
        assert result.exit_code == 2
        (error,) = [line for line in result.stderr.splitlines() if line.startswith("tsuka: error:")]
        assert "suite 'defualt': no such folder and no such registered suite" in error
        assert "did you mean 'default'? (see 'tsuka " in error


def test_run_without_suite_keeps_the_default_suite(with_mine: Path) -> None:
    from tsuka_core.suite.loading import load_suite

    assert load_suite().hash == "7c90f8e0"
    assert suite_hash(resolve_suite("default")) == "7c90f8e0"
