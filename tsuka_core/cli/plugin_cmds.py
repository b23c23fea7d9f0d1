"""Commands about what is installed: check types, backends, plugins."""

from __future__ import annotations

import difflib
import inspect
import json
import textwrap
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from tsuka_core.backends.base import Backend
from tsuka_core.cli.display import console
from tsuka_core.cli.loaded import loaded_registry
from tsuka_core.errors import UsageError
from tsuka_core.judge.checks import describe

if TYPE_CHECKING:
    from tsuka_core.backends.base import Backend

__all__: list[str] = []


@click.group(invoke_without_command=True)
@click.pass_context
def checks(ctx: click.Context) -> None:
    """List every check type a test may use, with the distribution that provides it.

    'tsuka checks show NAME' prints one type's parameters.
    """
    if ctx.invoked_subcommand is not None:
        return

    table = Table()
    for column in ("check type", "provided by", "description"):
        table.add_column(column)
    for name, entry in sorted(loaded_registry().check_types.items()):
        table.add_row(name, f"{entry.distribution} {entry.plugin.version}", describe(entry.cls))
    console().print(table)


@checks.command()
@click.argument("name")
def show(name: str) -> None:
    """Print the parameters of the check type NAME (its JSON Schema and a description of each)."""

    registry = loaded_registry()
    entry = registry.check_types.get(name)
    if entry is None:
        close = difflib.get_close_matches(name, list(registry.check_types), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown check type {name!r}{hint} ('tsuka checks' lists them){registry.missing_hint()}")
    click.echo(f"{name}: {describe(entry.cls)}")
    rest = (inspect.getdoc(entry.cls) or "").split("\n\n", 1)[1:]
    if rest:
        click.echo(textwrap.indent(rest[0].strip(), "  "))
    click.echo(f"provided by {entry.distribution} {entry.plugin.version}")
    schema = entry.cls.params_model.model_json_schema()
    properties = schema.get("properties", {})
    if not properties:
        click.echo("parameters: none (besides type and weight)")
    _params(properties, set(schema.get("required", [])), schema.get("$defs", {}), "  ")
    click.echo("  weight (number > 0, optional, default 1): weight of the check in its test")
    example = getattr(entry.cls, "example", None)
    if example:
        click.echo(f"example: {json.dumps({'type': name, **example}, ensure_ascii=False)}")


def _params(properties: dict[str, Any], required: set[str], defs: dict[str, Any], indent: str) -> None:
    """One line per parameter, and under a list of objects (``calls``), one line per field of those objects."""
    for key, spec in properties.items():
        default = f", default {json.dumps(spec['default'])}" if "default" in spec else ""
        need = "required" if key in required else f"optional{default}"
        kind = spec.get("type") or " | ".join(str(s.get("type", s.get("const", "any"))) for s in spec.get("anyOf", []))
        if "enum" in spec:
            kind = " | ".join(json.dumps(v) for v in spec["enum"])
        said = " ".join(str(spec.get("description", "")).split())
        click.echo(f"{indent}{key} ({kind or 'any JSON value'}, {need}): {said}")
        ref = str(spec.get("items", {}).get("$ref", "")).rsplit("/", 1)[-1]
        if ref in defs and indent == "  ":
            nested = defs[ref]
            _params(nested.get("properties", {}), set(nested.get("required", [])), defs, indent + "    ")


@click.command()
def backends() -> None:
    """List every backend with its distribution, the environment it reads, its --option keys and its efforts."""

    table = Table()
    for column in ("backend", "provided by", "environment", "options", "efforts", "description"):
        table.add_column(column)
    for name, entry in sorted(loaded_registry().backends.items()):
        cls = entry.cls
        description = cls.description().replace("``", "`")  # reST literals read as Markdown ones in a terminal
        options = "(any, undeclared)" if cls.option_help is None else " ".join(cls.option_help) or "-"
        provided = f"{entry.distribution} {entry.plugin.version}"
        table.add_row(name, provided, " ".join(cls.env_vars), options, _efforts(cls), description)
    console().print(table)


def _efforts(cls: type[Backend]) -> str:
    """Whether a backend applies efforts: never, always, or per model (it says when a model ignores them)."""

    if not cls.applies_effort:
        return "cannot apply"
    return "applied" if cls.effort_ignored is Backend.effort_ignored else "if the model reads them"


@click.command()
def plugins() -> None:
    """List every installed plugin: distribution, version, entry point, and what it registered or why it failed."""

    registry = loaded_registry()
    table = Table()
    for column in ("distribution", "version", "entry point", "registered"):
        table.add_column(column)
    for plugin in registry.plugins:
        table.add_row(
            plugin.distribution, plugin.version, plugin.entry_point, ", ".join(registry.registered_by(plugin))
        )
    for failed in registry.failed:
        table.add_row(failed.distribution, failed.version, failed.entry_point, f"FAILED to import: {failed.error}")
    console().print(table)
    for note in registry.notes:
        click.echo(f"note: {note}", err=True)
