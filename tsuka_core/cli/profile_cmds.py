"""Commands that read the profile store: profiles, tier, gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tsuka_core.cli.display import console
from tsuka_core.cli.exits import UNPROFILED
from tsuka_core.cli.options import effort_choice, profiles_option, tier_choice
from tsuka_core.cli.profile_table import ProfileTable
from tsuka_core.cli.suite_param import SUITE_TYPE
from tsuka_core.errors import UsageError
from tsuka_core.gating import allowlist as gating
from tsuka_core.gating.allowlist import gate_tools
from tsuka_core.gating.tiermap import load_tier_map, tool_name
from tsuka_core.gating.toolformats import read_tools_document
from tsuka_core.gating.unknown_model import unknown_model_lines
from tsuka_core.storage.store import ProfileStore, StoreData
from tsuka_core.suite.identity import DEFAULT_SUITE, SuiteHashes, suite_label

__all__: list[str] = []

PROFILES = profiles_option()
SUITE = click.option(
    "--suite",
    type=SUITE_TYPE,
    help="Suite (name or folder) whose profiles count, judged by its hash now "
    "(default: tier and gate use the default suite's; profiles shows every suite's, each judged by its own).",
)
EFFORT = click.option(
    "-e",
    "--effort",
    type=effort_choice,
    help="Effort (default: the recommendation).",
)


def _suite_view(profiles: Path, suite: Path | None) -> tuple[StoreData, str]:
    """The store, and the suite whose profiles count: ``--suite``'s (a registered name or a folder), else default."""
    return ProfileStore(profiles).read(), DEFAULT_SUITE if suite is None else suite_label(suite)


def _suite_hashes(suite: Path | None) -> SuiteHashes:
    """The hash each profile is judged against: ``--suite``'s, else that of the suite the profile names."""

    return SuiteHashes(suite)


@click.command()
@click.argument("model", required=False)
@PROFILES
@SUITE
def profiles(model: str | None, profiles: Path, suite: Path | None) -> None:
    """Show every stored profile (or MODEL's): tier, scores, effort, when tested, valid or stale and why.

    Under each profile: the suite it was measured with, its tier confidence
    and each score's 95% interval; a tier whose confidence is under 0.8 is
    marked borderline (!).

    A profile is valid only while its benchmarkVersion is this engine's and its
    testsHash is the hash of its suite as it is now (the suite it was measured
    with); stale profiles are kept but never used for tier gating. With --suite,
    only the profiles measured with that suite are shown.
    """

    data = ProfileStore(profiles).read()
    hashes = _suite_hashes(suite)
    judged = (
        f"suite {suite} hash {hashes(None)}" if suite is not None else "each against the suite it was measured with"
    )
    rows = ProfileTable(data, lambda entry: entry.status(hashes(entry.suite)), f"{profiles} ({judged})")
    for view in data.by_suite() if suite is None else [data.for_suite(suite_label(suite))]:
        for key, entry in view.profiles.items():
            if model is None or entry.model == model:
                rows.add(key, entry, view.recommendations)
    out = console()
    if not rows.shown:
        of_suite = "" if suite is None else f" of suite {suite_label(suite)}"
        out.print(f"no profiles{' for ' + model if model else ''}{of_suite} in {profiles}", markup=False)
        return
    out.print(rows.table)
    for line in rows.legend():
        out.print(line)


STRICT = click.option(
    "--strict",
    is_flag=True,
    help="Exit with status 4 when the model has no valid profile (for scripts: a misspelt name is an error).",
)


@click.command()
@click.argument("model")
@EFFORT
@PROFILES
@SUITE
@STRICT
def tier(model: str, effort: str | None, profiles: Path, suite: Path | None, strict: bool) -> None:
    """Print MODEL's tier at EFFORT (default: its recommended effort), from its valid profile.

    The profiles of --suite count (default: those of the default suite). A
    model without a valid profile is small (the safe side), and is said to be
    unprofiled; a name the store does not hold gets a did-you-mean on stderr.
    The exit status is 0 either way (an unknown model is small, not an error),
    unless --strict makes it 4.
    """

    data, label = _suite_view(profiles, suite)
    result = gate_tools([], model, data.for_suite(label), _suite_hashes(suite), effort)  # type: ignore[arg-type]
    for line in unknown_model_lines(data, model, label):
        click.echo(f"note: {line}", err=True)
    click.echo(result.tier)
    click.echo(
        f"{result.subject}: {result.profile_status if result.profiled else 'unprofiled: ' + result.profile_status}",
        err=True,
    )
    if strict and not result.profiled:
        raise SystemExit(UNPROFILED)


@click.command()
@click.argument("model")
@click.option(
    "--tools",
    "tools_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="OpenAI tool array (each may carry requiredTier) or an MCP tools/list result (or its JSON-RPC response).",
)
@EFFORT
@PROFILES
@SUITE
@click.option(
    "--tiers",
    "tiers_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="JSON or TOML object: tool name or fnmatch glob -> tier (exact beats glob, longest glob wins; else large).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openai", "names", "mcp"]),
    help="Write the allowed tools in the tools file's format (openai or mcp), or their names one per line.",
)
@click.option(
    "--floor",
    type=tier_choice,
    help="Offer no tool at all to a model below this tier (opt-in; without it a small model may see small tools).",
)
@click.option("--explain", is_flag=True, help="Say on stderr why each tool was kept or dropped.")
@click.option("--json", "as_json", is_flag=True, help="Print the visible tools as JSON.")
@STRICT
def gate(
    model: str,
    tools_file: Path,
    effort: str | None,
    profiles: Path,
    suite: Path | None,
    tiers_file: Path | None,
    fmt: str | None,
    floor: str | None,
    explain: bool,
    as_json: bool,
    strict: bool,
) -> None:
    """Show which tools of FILE MODEL may be offered, by the tier of its valid profile.

    A tool's requiredTier (small, medium or large), else its --tiers entry, must
    not rank above the model's tier; without either a tool needs small (large
    when --tiers is given). The profiles of --suite count (default: those of the
    default suite). Without a valid profile at the effort the model is small; a
    name the store does not hold gets a did-you-mean on stderr (exit status 0,
    or 4 with --strict, the tools still shown as for a small model).
    A model whose toolcount-suite profile records toolCountTolerance N is offered
    at most N tools: those needing the lowest tier first, then in file order.
    --floor TIER offers a model below TIER no tool at all (by default a small
    or unprofiled model still sees every tool that needs only small).
    """

    if fmt is not None and as_json:
        raise UsageError("use --format or --json, not both")
    document = read_tools_document(tools_file)
    tiers = None if tiers_file is None else load_tier_map(tiers_file)
    hashes = _suite_hashes(suite)
    data, label = _suite_view(profiles, suite)
    view = data.for_suite(label)
    result = gating.gate_tools(document.tools, model, view, hashes, effort, tiers, floor)  # type: ignore[arg-type]
    for line in unknown_model_lines(data, model, label):
        click.echo(f"note: {line}", err=True)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if explain:
        click.echo(f"profiles of suite {label} in {profiles}", err=True)
    for line in gating.explain(result) if explain else []:
        click.echo(line, err=True)
    if fmt is not None:
        click.echo(document.render(result.visible, fmt), nl=False)
    elif as_json:
        click.echo(json.dumps(list(result.visible), indent=2, ensure_ascii=False))
    else:
        click.echo(f"{result.subject}: tier {result.tier}{'' if result.profiled else ' (unprofiled)'}")
        for index, tool in enumerate(result.visible):
            click.echo(f"  visible  {tool_name(tool, index) if document.format == 'mcp' else _openai_name(tool)}")
        for hidden in result.hidden:
            click.echo(f"  hidden   {hidden.reason}")
    if strict and not result.profiled:
        raise SystemExit(UNPROFILED)


def _openai_name(tool: dict[str, Any]) -> str:
    function = tool.get("function", {})
    return str(function.get("name", "?")) if isinstance(function, dict) else "?"
