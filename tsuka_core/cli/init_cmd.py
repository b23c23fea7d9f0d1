"""``tsuka init``: write a commented starter project file, optionally with an endpoint for a server it asks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tsuka_core.errors import UsageError
from tsuka_core.run.project_starter import probe, starter
from tsuka_core.storage.files import read_regular_file

if TYPE_CHECKING:
    pass

__all__: list[str] = []


@click.command()
@click.option("--probe", "url", metavar="URL", help="Ask this server what it is and which models it lists.")
@click.option("--name", default="local", show_default=True, help="The endpoint's name (with --probe).")
@click.option(
    "--config",
    "path",
    type=click.Path(path_type=Path, dir_okay=False),
    default="tsuka.toml",
    show_default=True,
    help="The file to write.",
)
def init(url: str | None, name: str, path: Path) -> None:
    """Write a commented starter project file (tsuka.toml); never overwrites one.

    \b
    Examples:
      tsuka init
      tsuka init --probe http://127.0.0.1:8080     llama.cpp, Ollama or any OpenAI-compatible server
    """

    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise UsageError(f"--name {name!r}: use letters, digits, '_', '.' and '-' only")
    if path.exists():
        raise UsageError(f"{path} exists; not overwritten (remove it or pick another --config)")
    text = starter(probe(url) if url else None, name)
    try:
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc}") from None
    click.echo(f"wrote {path}", err=True)
    if not _ignored(path.parent / ".gitignore"):
        click.echo(
            "tsuka keeps its run history and lock files in .tsuka/ beside the profile store; "
            "to keep them out of git: echo '.tsuka/' >> .gitignore",
            err=True,
        )


def _ignored(gitignore: Path) -> bool:
    """True when ``gitignore`` already has a line for ``.tsuka``."""

    try:
        text = read_regular_file(gitignore, 1024 * 1024).decode("utf-8", errors="replace")
    except OSError:
        return False
    return any(line.strip().strip("/") in (".tsuka", "**/.tsuka") for line in text.splitlines())
