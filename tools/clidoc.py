"""Render the command-line reference (``docs/cli.md``) from the click commands themselves.

Every command's usage, help, options (type, default, environment variable)
and exit statuses (``tsuka_core.cli.exits``) come from the code; the prose
click cannot know (sample output, links to other pages) is kept in
``tools/clidoc_notes.py``. Regenerate the page with::

    python tools/clidoc.py > docs/cli.md
"""

from __future__ import annotations

import inspect
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import click
import clidoc_notes

from tsuka_core.cli import exits

__all__ = ["REGENERATE", "cli_markdown", "commands", "main", "param_row"]

REGENERATE = "python tools/clidoc.py > docs/cli.md"
"""The command that rewrites ``docs/cli.md``."""

ORDER = (
    "run",
    "models",
    "profiles",
    "tier",
    "gate",
    "validate",
    "hash",
    "schema",
    "checks",
    "backends",
    "plugins",
    "runs",
    "show",
    "rescore",
    "report",
)
"""The order of the page: a user's way through the commands; a command not listed follows, by name."""


def commands(root: click.Group) -> Iterator[click.Context]:
    """A context for every command under ``root``, in page order, each group followed by its subcommands."""
    ctx = click.Context(root, info_name="tsuka", **root.context_settings)
    yield from _children(ctx, ORDER)


def _children(ctx: click.Context, order: Sequence[str]) -> Iterator[click.Context]:
    group = ctx.command
    assert isinstance(group, click.Group)
    names = group.list_commands(ctx)
    ranked = [n for n in order if n in names] + sorted(n for n in names if n not in order)
    for name in ranked:
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx)
        yield sub
        if isinstance(command, click.Group):
            yield from _children(sub, ())


def _path(ctx: click.Context) -> str:
    """The command path without the program name: ``run``, ``checks show``."""
    return ctx.command_path.partition(" ")[2]


# --- one option or argument -------------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    """Text fit for one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _bounds(info: Mapping[str, Any]) -> str:
    low, high = info.get("min"), info.get("max")
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" {'>' if info.get('min_open') else '≥'} {low}"
    if high is not None:
        return f" {'<' if info.get('max_open') else '≤'} {high}"
    return ""


def _type_words(param: click.Parameter, info: Mapping[str, Any]) -> str:
    """A parameter's type in words: ``integer from 1 to 1024``, ``one of `a`, `b```, ``file``, ``flag``."""
    kind: Mapping[str, Any] = info["type"]
    name = kind.get("param_type")
    if info.get("is_flag"):
        words = "flag"
    elif name == "Choice":
        words = "one of " + ", ".join(f"`{choice}`" for choice in kind["choices"])
    elif name in ("IntRange", "FloatRange"):
        words = ("integer" if name == "IntRange" else "number") + _bounds(kind)
    elif name == "Path":
        place = {"file": "file", "directory": "folder"}.get(str(kind.get("name")), "path")
        words = f"existing {place}" if kind.get("exists") else place
    else:
        words = {"Int": "integer", "Float": "number", "Bool": "boolean"}.get(str(name), "text")
    if param.metavar and isinstance(param, click.Option) and not info.get("is_flag"):
        words = f"`{param.metavar}`"
    if info.get("multiple"):
        words += ", repeatable"
    if info.get("nargs") == -1:
        words += ", any number"
    return words


def _default(info: Mapping[str, Any]) -> str:
    if info.get("required"):
        return "required"
    default = info.get("default")
    if info.get("is_flag") and info.get("secondary_opts"):
        return f"`{info['opts'][-1] if default else info['secondary_opts'][-1]}`"
    if info.get("is_flag") or default is None or default == ():
        return ""
    return f"`{default}`"


def _names(param: click.Parameter, info: Mapping[str, Any]) -> str:
    if isinstance(param, click.Argument):
        return f"`{(param.metavar or str(param.name).upper()).strip('[]')}`"
    names = ", ".join(info["opts"])
    if info.get("secondary_opts"):
        names += " / " + ", ".join(info["secondary_opts"])
    return f"`{names}`"


def param_row(param: click.Parameter) -> str:
    """One row of a command's table: names, type, default, environment variable, help."""
    info = param.to_info_dict()
    envvar = info.get("envvar")
    env = ", ".join(f"`{v}`" for v in ([envvar] if isinstance(envvar, str) else envvar or ()))
    meaning = "(argument)" if isinstance(param, click.Argument) else _cell(str(info.get("help") or ""))
    return f"| {_names(param, info)} | {_cell(_type_words(param, info))} | {_default(info)} | {env} | {meaning} |"


# --- one command ------------------------------------------------------------------------------------------------------


def _help_markdown(text: str) -> list[str]:
    """A click help text as Markdown: ``\\b`` paragraphs become text blocks; the exit-status paragraph is left out.

    The exit statuses are shown from ``tsuka_core.cli.exits`` instead, and text after ``\\f`` is not help.
    """
    lines: list[str] = []
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text).partition("\f")[0]):
        if not paragraph.strip() or paragraph.startswith("Exit status:"):
            continue
        if paragraph.startswith("\b\n"):
            lines += ["```text", *textwrap.dedent(paragraph[2:]).splitlines(), "```", ""]
        else:
            lines += [*paragraph.splitlines(), ""]
    return lines


def _params(ctx: click.Context) -> list[click.Parameter]:
    helps = set(ctx.help_option_names)
    return [p for p in ctx.command.params if not (set(p.opts) & helps) and not getattr(p, "hidden", False)]


def _section(ctx: click.Context) -> list[str]:
    path = _path(ctx)
    usage = " ".join([ctx.command_path, *ctx.command.collect_usage_pieces(ctx)])
    lines = [f"## {ctx.command_path}", "", "```text", usage, "```", ""]
    lines += _help_markdown(ctx.command.help or "")
    params = _params(ctx)
    if params:
        lines += ["| option | type | default | environment | meaning |", "|---|---|---|---|---|"]
        lines += [param_row(p) for p in params] + [""]
    lines += ["Exit status ([what each means](#exit-status)):", ""]
    lines += [f"- {code}: {meaning}" for code, meaning in exits.statuses(path).items()]
    note = clidoc_notes.NOTES.get(path)
    return [*lines, "", note.strip("\n")] if note else lines


# --- the page ---------------------------------------------------------------------------------------------------------


def _summary(ctx: click.Context) -> str:
    first = inspect.cleandoc(ctx.command.help or "").split("\n\n")[0]
    return _cell(first)


def _anchor(ctx: click.Context) -> str:
    return ctx.command_path.lower().replace(" ", "-")


def _environment(contexts: Sequence[click.Context]) -> list[str]:
    """The environment table: the variables options read (from click), then those read elsewhere."""
    users: dict[str, list[str]] = {}
    meanings: dict[str, str] = {}
    for ctx in contexts:
        for param in _params(ctx):
            envvar = param.envvar
            for name in [envvar] if isinstance(envvar, str) else envvar or ():
                users.setdefault(name, []).append(f"`{_path(ctx)}`")
                meanings.setdefault(name, f"`{param.opts[-1]}`: {_cell(getattr(param, 'help', None) or '')}")
    lines = ["| variable | used by | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | {', '.join(users[name])} | {meanings[name]} |" for name in sorted(users)]
    lines += [f"| `{name}` | {used_by} | {meaning} |" for name, used_by, meaning in clidoc_notes.OTHER_ENV]
    return lines


def cli_markdown(root: click.Group) -> str:
    """The command-line reference as Markdown: an index, the environment, exit statuses, then every command."""
    contexts = list(commands(root))
    lines = [
        "# The `tsuka` command",
        "",
        f"<!-- Generated from the click commands; do not edit. Regenerate: {REGENERATE} -->",
        "",
        *_help_markdown(root.help or ""),
        clidoc_notes.PREAMBLE.strip("\n").replace("{REGENERATE}", REGENERATE),
        "",
        "| command | what it does |",
        "|---|---|",
        *(f"| [`{c.command_path}`](#{_anchor(c)}) | {_summary(c)} |" for c in contexts),
        "",
        "## Environment",
        "",
        *_environment(contexts),
        "",
        "## Exit status",
        "",
        "| status | meaning |",
        "|---|---|",
        *(f"| {code} | {_cell(meaning)} |" for code, meaning in exits.MEANINGS.items()),
        "",
        clidoc_notes.ERRORS.strip("\n"),
    ]
    for ctx in contexts:
        lines += ["", *_section(ctx)]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    """Write the command-line reference to standard output, as UTF-8."""
    from tsuka_core.cli.main import cli

    sys.stdout.buffer.write(cli_markdown(cli).encode("utf-8"))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
