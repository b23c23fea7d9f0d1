"""Field descriptions of check parameters come from the docstring written under each field."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ConfigDict, Field

from tsuka_core import CheckParams
from tsuka_core.judge.checks import RegexParams
from tsuka_core.plugins.manager import discover
from tsuka_core.plugins.registry import Registry, load_registry
from tsuka_core.suite.schema import suite_schema


class Inner(CheckParams):
    """A nested model."""

    level: int
    """How deep it goes."""


class Base(CheckParams):
    """A base with a documented field and a bare one."""

    value: str
    """The pattern."""
    plain: int = 0


class Child(Base):
    """Inherits, redefines, nests and aliases."""

    plain: int = 1
    """Redefined, with a docstring of its own."""
    inner: Inner
    """The nested options."""
    named: str = Field("", description="An explicit description wins.")
    """Not this one."""
    aliased: str = Field("", alias="alias-name")
    """Under an alias."""
    not_documented: bool = False


class Dedented(CheckParams):
    """A docstring indented less than the class."""

    text: str
    """First line.
Second line, at the left margin."""


def test_the_descriptions_are_the_docstrings() -> None:
    schema = Child.model_json_schema()
    properties = schema["properties"]
    assert properties["value"]["description"] == "The pattern."
    assert properties["plain"]["description"] == "Redefined, with a docstring of its own."
    assert properties["named"]["description"] == "An explicit description wins."
    assert properties["alias-name"]["description"] == "Under an alias."
    assert properties["inner"]["description"] == "The nested options."
    assert "description" not in properties["not_documented"]
    assert "description" not in Base.model_json_schema()["properties"]["plain"]
    assert schema["$defs"]["Inner"]["properties"]["level"]["description"] == "How deep it goes."
    assert Dedented.model_json_schema()["properties"]["text"]["description"] == (
        "First line.\nSecond line, at the left margin."
    )


def test_a_subclass_may_opt_out() -> None:
    class Quiet(CheckParams):
        model_config = ConfigDict(use_attribute_docstrings=False)

        value: str
        """Not a description."""

    assert "description" not in Quiet.model_json_schema()["properties"]["value"]
    with pytest.raises(ValueError, match="frozen"):
        Quiet(value="x").value = "y"  # type: ignore[misc]  # the rest of the base's config stays


def test_builtin_parameters_are_described_in_the_suite_schema() -> None:
    assert RegexParams.model_json_schema()["properties"]["value"]["description"] == "The regular expression."
    defs = suite_schema(load_registry())["$defs"]
    parameters = [
        (name, key, spec)
        for name, check in defs.items()
        if name.startswith("check-")
        for key, spec in check.get("properties", {}).items()
        if key not in ("type", "weight")
    ]
    assert len(parameters) >= 15
    assert [(name, key) for name, key, spec in parameters if not spec.get("description")] == []


PLUGIN_MODULE = '''
    import tsuka_core
    from tsuka_core import Answer, CheckParams, CheckType, Outcome


    class EndsWithParams(CheckParams):
        suffix: str
        """What the answer must end with."""


    class EndsWith(CheckType[EndsWithParams]):
        """Pass when the answer ends with ``suffix``."""

        name = "ends_with_suffix"
        params_model = EndsWithParams

        def evaluate(self, answer: Answer) -> Outcome:
            return Outcome.check(answer.text.endswith(self.params.suffix), answer.text[-20:])


    @tsuka_core.hookimpl
    def register_check_types(register):
        register(EndsWith)
'''


@pytest.fixture
def plugin_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A distribution ``tsuka-suffix`` on ``sys.path`` whose check type's parameters are documented."""
    (tmp_path / "tsuka_suffix_plugin.py").write_text(textwrap.dedent(PLUGIN_MODULE))
    info = tmp_path / "tsuka_suffix-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tsuka-suffix\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tsuka]\nsuffix = tsuka_suffix_plugin\n")
    monkeypatch.syspath_prepend(tmp_path)
    yield "tsuka-suffix"
    sys.modules.pop("tsuka_suffix_plugin", None)


def test_plugin_parameters_are_described_in_the_suite_schema(plugin_on_path: str) -> None:
    schema: dict[str, Any] = suite_schema(Registry.from_plugins(discover(env=plugin_on_path)))
    params = schema["$defs"]["check-ends_with_suffix"]
    assert params["properties"]["suffix"]["description"] == "What the answer must end with."
