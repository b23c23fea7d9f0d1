"""Field descriptions of check parameters come from attribute docstrings, read when a schema is made.

Each case is built twice from the same source: once as tsuka does it (the
docstrings are read when a JSON Schema is generated) and once with pydantic's
own ``use_attribute_docstrings=True`` (read when the class is created). Their
JSON Schemas must be the same, in every mode.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import ConfigDict, Field, TypeAdapter, field_validator, model_validator

from tsuka_core import CheckParams

Models = dict[str, type[CheckParams]]


def _models(config: ConfigDict) -> Models:
    """The same parameter models, created under ``config`` (tsuka's, or pydantic's docstring reading)."""

    class Inner(CheckParams):
        """A nested model."""

        model_config = config

        level: int
        """How deep it goes."""

    class Base(CheckParams):
        """A base with a documented field and a bare one."""

        model_config = config

        path: str
        """A dotted path."""
        plain: int = 0

    class Other(CheckParams):
        """A second base."""

        model_config = config

        flags: str = ""
        """Base flags."""
        value: str
        """The pattern."""

    class Child(Base, Other):
        """Inherits, redefines, nests, aliases and validates."""

        model_config = config

        path: str = "x"
        flags: str = "i"
        """Flags of the child."""
        inner: Inner
        """The nested options."""
        inners: list[Inner] = Field(default_factory=list)
        """More of them."""
        named: str = Field("", description="An explicit description wins.")
        """Not this one."""
        aliased: str = Field("", alias="alias-name")
        """Under an alias."""
        maybe: int | None = None
        """Optional, with a default."""
        renamed: str = Field("", validation_alias="read-as", serialization_alias="written-as")
        """Read and written under other names."""
        same: Inner | None = None
        """A nested model."""
        not_documented: bool = False
        limit: ClassVar[int] = 1
        """Not a field."""

        @field_validator("path")
        @classmethod
        def _path(cls, path: str) -> str:
            return path

        @model_validator(mode="before")
        @classmethod
        def _before(cls, data: Any) -> Any:
            return data

        @model_validator(mode="after")
        def _after(self) -> Child:
            return self

    class Wrapped(CheckParams):
        """A model validator that wraps."""

        model_config = config

        count: int = 0
        """A count."""

        @model_validator(mode="wrap")
        @classmethod
        def _wrap(cls, data: Any, handler: Any) -> Any:
            return handler(data)

    class Dedented(CheckParams):
        """A docstring indented less than the class."""

        model_config = config

        text: str
        """First line.
Second line, at the left margin."""

    class Tree(CheckParams):
        """A recursive model."""

        model_config = config

        children: list[Tree] = Field(default_factory=list)
        """The subtrees."""

    return {
        "Inner": Inner,
        "Base": Base,
        "Other": Other,
        "Child": Child,
        "Wrapped": Wrapped,
        "Dedented": Dedented,
        "Tree": Tree,
    }


LAZY = _models(ConfigDict())
EAGER = _models(ConfigDict(use_attribute_docstrings=True))


@pytest.mark.parametrize("name", sorted(LAZY))
@pytest.mark.parametrize(
    "options",
    [{}, {"mode": "serialization"}, {"by_alias": False}, {"ref_template": "#/$defs/check-x-{model}"}],
    ids=["validation", "serialization", "by-name", "ref-template"],
)
def test_the_schema_matches_pydantics_attribute_docstrings(name: str, options: dict[str, Any]) -> None:
    assert LAZY[name].model_json_schema(**options) == EAGER[name].model_json_schema(**options)


def test_creating_the_class_reads_no_docstring() -> None:
    assert EAGER["Child"].model_fields["value"].description == "The pattern."
    assert {name for name, field in LAZY["Child"].model_fields.items() if field.description} == {"named"}


def test_the_descriptions_are_the_docstrings() -> None:
    schema = LAZY["Child"].model_json_schema()
    properties = schema["properties"]
    assert properties["flags"]["description"] == "Flags of the child."
    assert properties["value"]["description"] == "The pattern."
    assert properties["plain"].get("description") is None
    assert properties["path"].get("description") is None  # redefined without a docstring
    assert properties["named"]["description"] == "An explicit description wins."
    assert properties["alias-name"]["description"] == "Under an alias."
    assert properties["inner"]["description"] == "The nested options."
    assert schema["$defs"]["Inner"]["properties"]["level"]["description"] == "How deep it goes."
    assert LAZY["Dedented"].model_json_schema()["properties"]["text"]["description"] == (
        "First line.\nSecond line, at the left margin."
    )


def test_a_type_adapter_sees_the_descriptions_too() -> None:
    inner = LAZY["Inner"]
    adapted = TypeAdapter(list[inner]).json_schema()  # type: ignore[valid-type]
    assert adapted["$defs"]["Inner"]["properties"]["level"]["description"] == "How deep it goes."


def test_a_subclass_may_opt_out() -> None:
    class Quiet(CheckParams):
        model_config = ConfigDict(use_attribute_docstrings=False)

        value: str
        """Not a description."""

    assert "description" not in Quiet.model_json_schema()["properties"]["value"]


def test_a_class_without_source_has_no_descriptions() -> None:
    namespace: dict[str, Any] = {"CheckParams": CheckParams, "__name__": "generated"}
    exec('class Made(CheckParams):\n    value: str\n    """Unreadable."""\n', namespace)
    assert "description" not in namespace["Made"].model_json_schema()["properties"]["value"]
