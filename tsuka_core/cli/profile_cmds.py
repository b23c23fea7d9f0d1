"""Commands that read the profile store: profiles, tier, gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tsuka_core.cli.options import effort_choice, profiles_option
from tsuka_core.cli.suite_param import SUITE_TYPE

if TYPE_CHECKING:
    from tsuka_core.storage.suites import SuiteHashes

__all__ = ["COMMANDS"]

PROFILES = profiles_option()
SUITE = click.option(
    "--suite",
    type=SUITE_TYPE,
    help="Suite (name or folder) whose hash decides validity (default: the suite each profile was measured with).",
)
EFFORT = click.option(
    "-e",
    "--effort",
    type=effort_choice,
    help="Effort (default: the recommendation).",
)


def _suite_hashes(suite: Path | None) -> SuiteHashes:
    """The hash each profile is judged against: ``--suite``'s, else that of the suite the profile names."""
    from tsuka_core.storage.suites import SuiteHashes

    return SuiteHashes(suite)


@click.command()
@click.argument("model", required=False)
@PROFILES
@SUITE
def profiles(model: str | None, profiles: Path, suite: Path | None) -> None:
    """Show every stored profile (or MODEL's): tier, scores, effort, when tested, valid or stale and why.

    A profile is valid only while its benchmarkVersion is this engine's and its
    testsHash is the hash of its suite as it is now (the suite it was measured
    with, or --suite); stale profiles are kept but never used for tier gating.
    """
    from rich.table import Table

    from tsuka_core.cli.display import console, percent
    from tsuka_core.storage.store import ProfileStore, profile_status

    data = ProfileStore(profiles).read()
    hashes = _suite_hashes(suite)
    judged = (
        f"suite {suite} hash {hashes(None)}" if suite is not None else "each against the suite it was measured with"
    )
    table = Table(title=f"{profiles} ({judged})", title_justify="left")
    for column in ("profile", "tier", "instruction", "json", "toolCalling", "tok/s", "tested at", "status"):
        table.add_column(column)
    shown = 0
    for key, entry in data.profiles.items():
        if model is not None and (not isinstance(entry, dict) or entry.get("model") != model):
            continue
        valid, reason = profile_status(entry, hashes(entry))
        scores = entry.get("scores", {}) if isinstance(entry, dict) else {}
        cells = [
            percent(scores[c]) if isinstance(scores.get(c), (int, float)) else "?"
            for c in ("instruction", "json", "toolCalling")
        ]
        get = entry.get if isinstance(entry, dict) else (lambda _k: None)
        recommended = " *" if data.recommendations.get(str(get("model"))) == get("reasoningEffort") else ""
        status = "[green]valid[/green]" if valid else f"[yellow]{reason}[/yellow]"
        table.add_row(
            f"{key}{recommended}", str(get("tier")), *cells, str(get("tokensPerSecond")), str(get("testedAt")), status
        )
        shown += 1
    out = console()
    if not shown:
        out.print(f"no profiles{' for ' + model if model else ''} in {profiles}")
        return
    out.print(table)
    out.print("[dim]* the recommended effort of that model[/dim]")


@click.command()
@click.argument("model")
@EFFORT
@PROFILES
@SUITE
def tier(model: str, effort: str | None, profiles: Path, suite: Path | None) -> None:
    """Print MODEL's tier at EFFORT (default: its recommended effort), from its valid profile.

    A model without a valid profile is small (the safe side), and is said to be unprofiled.
    """
    from tsuka_core.storage.gating import gate_tools
    from tsuka_core.storage.store import ProfileStore

    result = gate_tools([], model, ProfileStore(profiles), _suite_hashes(suite), effort)  # type: ignore[arg-type]
    click.echo(result.tier)
    click.echo(
        f"{result.subject}: {result.profile_status if result.profiled else 'unprofiled: ' + result.profile_status}",
        err=True,
    )


def _read_tools(path: Path) -> list[dict[str, Any]]:
    from tsuka_core.errors import UsageError
    from tsuka_core.storage.files import read_regular_file

    try:
        data = json.loads(read_regular_file(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: cannot read the tools: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise UsageError(f"{path}: expected a JSON array of tool schemas (or an object with a 'tools' array)")
    return data


@click.command()
@click.argument("model")
@click.option(
    "--tools",
    "tools_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="JSON array of tool schemas, each may carry requiredTier.",
)
@EFFORT
@PROFILES
@SUITE
@click.option("--json", "as_json", is_flag=True, help="Print the visible tools as JSON.")
def gate(model: str, tools_file: Path, effort: str | None, profiles: Path, suite: Path | None, as_json: bool) -> None:
    """Show which tools of FILE MODEL may be offered, by the tier of its valid profile.

    A tool's requiredTier (small, medium or large; default small) must not
    rank above the model's tier. Without a valid profile the model is small.
    """
    from tsuka_core.storage.gating import gate_tools
    from tsuka_core.storage.store import ProfileStore

    result = gate_tools(_read_tools(tools_file), model, ProfileStore(profiles), _suite_hashes(suite), effort)  # type: ignore[arg-type]
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(list(result.visible), indent=2, ensure_ascii=False))
        return
    click.echo(f"{result.subject}: tier {result.tier}{'' if result.profiled else ' (unprofiled)'}")
    for tool in result.visible:
        function = tool.get("function", {})
        click.echo(f"  visible  {function.get('name', '?') if isinstance(function, dict) else '?'}")
    for hidden in result.hidden:
        click.echo(f"  hidden   {hidden.reason}")


COMMANDS = [profiles, tier, gate]
