"""``tsuka gate --format/--tiers/--explain``: OpenAI and MCP tool files read and written back, tier maps, efforts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from gate_helpers import write_store
from history_helpers import invoke

OPENAI = [
    {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "search", "requiredTier": "medium"}},
    {"type": "function", "requiredTier": "large", "function": {"name": "write_file"}},
]
MCP_TOOLS = [
    {"name": name, "description": f"{name} tool", "inputSchema": {"type": "object", "properties": {}}}
    for name in ("read_file", "search_web", "write_file", "write_notes", "delete_file")
]
TIERS = {"read_*": "small", "search_*": "medium", "write_*": "large", "write_notes": "medium"}


def dump(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return write_store(tmp_path / "models_profile.json")


@pytest.fixture
def tiers(tmp_path: Path) -> Path:
    return dump(tmp_path / "tiers.json", TIERS)


def gate(store: Path, *args: str | os.PathLike[str]) -> Result:
    return invoke("gate", *args, "--profiles", store)


# --- formats, read and written ----------------------------------------------------------------------------------------


def test_openai_in_openai_out_drops_only_the_hidden_tools(store: Path, tmp_path: Path) -> None:
    result = gate(store, "m", "--tools", dump(tmp_path / "t.json", OPENAI), "--format", "openai")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == OPENAI[:2]


def test_openai_under_tools_keeps_its_object(store: Path, tmp_path: Path) -> None:
    wrapped = {"tools": OPENAI, "tool_choice": "auto"}
    result = gate(store, "m", "--tools", dump(tmp_path / "t.json", wrapped), "--format", "openai")
    assert json.loads(result.stdout) == {"tools": OPENAI[:2], "tool_choice": "auto"}


def test_openai_names_one_per_line(store: Path, tmp_path: Path) -> None:
    result = gate(store, "m", "--tools", dump(tmp_path / "t.json", OPENAI), "--format", "names", "-e", "xhigh")
    assert result.stdout == "read_file\nsearch\nwrite_file\n"


def test_mcp_result_in_same_shape_out(store: Path, tmp_path: Path, tiers: Path) -> None:
    listed = {"tools": MCP_TOOLS, "nextCursor": "page-2"}
    result = gate(store, "m", "--tools", dump(tmp_path / "l.json", listed), "--tiers", tiers, "--format", "mcp")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"tools": [MCP_TOOLS[0], MCP_TOOLS[1], MCP_TOOLS[3]], "nextCursor": "page-2"}


def test_mcp_jsonrpc_response_in_same_response_out(store: Path, tmp_path: Path, tiers: Path) -> None:
    response = {"jsonrpc": "2.0", "id": 7, "result": {"tools": MCP_TOOLS}}
    tools = dump(tmp_path / "r.json", response)
    result = gate(store, "s", "--tools", tools, "--tiers", tiers, "--format", "mcp")
    assert json.loads(result.stdout) == {"jsonrpc": "2.0", "id": 7, "result": {"tools": [MCP_TOOLS[0]]}}
    names = gate(store, "s", "--tools", tools, "--tiers", tiers, "--format", "names")
    assert names.stdout == "read_file\n"


def test_mcp_tools_without_a_tier_map_need_small(store: Path, tmp_path: Path) -> None:
    result = gate(store, "s", "--tools", dump(tmp_path / "l.json", {"tools": MCP_TOOLS}), "--format", "names")
    assert result.stdout.split() == [t["name"] for t in MCP_TOOLS]


def test_a_tier_map_decides_only_where_requiredtier_is_absent(store: Path, tmp_path: Path) -> None:
    tiers = dump(tmp_path / "tiers.json", {"*": "small"})
    result = gate(store, "s", "--tools", dump(tmp_path / "t.json", OPENAI), "--tiers", tiers, "--format", "names")
    assert result.stdout == "read_file\n"


def test_the_human_listing_names_mcp_tools(store: Path, tmp_path: Path, tiers: Path) -> None:
    result = gate(store, "m", "--tools", dump(tmp_path / "l.json", {"tools": MCP_TOOLS}), "--tiers", tiers)
    assert "  visible  write_notes" in result.stdout
    assert "  hidden   delete_file needs tier large; m@low is medium" in result.stdout


# --- effort and tier --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("effort", "expected"),
    [
        ([], ["read_file", "search_web", "write_notes"]),
        (["-e", "low"], ["read_file", "search_web", "write_notes"]),
        (["-e", "xhigh"], ["read_file", "search_web", "write_file", "write_notes", "delete_file"]),
        (["-e", "medium"], ["read_file"]),
        (["-e", "none"], ["read_file"]),
    ],
)
def test_the_effort_picks_the_profile(
    store: Path, tmp_path: Path, tiers: Path, effort: list[str], expected: list[str]
) -> None:
    listed = dump(tmp_path / "l.json", {"tools": MCP_TOOLS})
    result = gate(store, "m", "--tools", listed, "--tiers", tiers, "--format", "names", *effort)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == expected


def test_a_stale_level_is_unprofiled_and_said_so(store: Path, tmp_path: Path, tiers: Path) -> None:
    listed = dump(tmp_path / "l.json", {"tools": MCP_TOOLS})
    result = gate(store, "m", "--tools", listed, "--tiers", tiers, "--format", "names", "-e", "medium")
    assert result.stderr.startswith("note: m@medium is unprofiled (stale: suite changed (testsHash 00000000")


# --- --explain --------------------------------------------------------------------------------------------------------


def test_explain_says_why_each_tool_was_kept_or_dropped(store: Path, tmp_path: Path, tiers: Path) -> None:
    tools = [*OPENAI[:2], {"type": "function", "function": {"name": "write_notes"}}, OPENAI[2]]
    tools.append({"type": "function", "function": {"name": "rm"}})
    listed = dump(tmp_path / "t.json", tools)
    result = gate(store, "m", "--tools", listed, "--tiers", tiers, "--format", "names", "--explain")
    standing = "m@low is medium (profile m@low, recommended effort)"
    said, *lines = result.stderr.splitlines()
    assert said == f"profiles of suite default in {store}"
    assert lines == [
        f'keep read_file: needs small (tier map pattern "read_*"); {standing}',
        f"keep search: needs medium (requiredTier field); {standing}",
        f'keep write_notes: needs medium (tier map pattern "write_notes"); {standing}',
        f"drop write_file: needs large (requiredTier field); {standing}",
        f"drop rm: needs large (default); {standing}",
        "tool-count cap: none (m@low has no toolCountTolerance stored)",
    ]
    assert result.stdout == "read_file\nsearch\nwrite_notes\n"


def test_explain_names_the_given_effort_and_an_unprofiled_model(store: Path, tmp_path: Path) -> None:
    tools = dump(tmp_path / "t.json", OPENAI)
    given = gate(store, "m", "--tools", tools, "-e", "xhigh", "--format", "names", "--explain")
    assert given.stderr.splitlines()[1] == (
        "keep read_file: needs small (default); m@xhigh is large (profile m@xhigh, effort given)"
    )
    missing = gate(store, "m", "--tools", tools, "-e", "none", "--format", "names", "--explain")
    assert missing.stderr.splitlines()[-2] == (
        "drop write_file: needs large (requiredTier field); m@none is small (unprofiled: no profile stored for m@none)"
    )
    nobody = gate(store, "x", "--tools", tools, "--format", "names", "--explain")
    assert nobody.stderr.splitlines()[-2:] == [
        "drop write_file: needs large (requiredTier field); "
        "x is small (unprofiled: no effort given and no recommendation stored for x)",
        "tool-count cap: none (x has no toolCountTolerance stored)",
    ]


# --- bad input --------------------------------------------------------------------------------------------------------


def one_line_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.stdout
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ("[{", "cannot read the tools"),
        ("42", "expected a JSON array of tool schemas or an MCP tools/list result"),
        ('{"tools": [{"description": "no name"}]}', "tools[0] (tool #1) has no name"),
        ('{"result": {"tools": [1]}}', "result.tools[0]: expected a tool object, got int"),
        ('{"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}', "Method not found"),
        ('{"tool": []}', "an object with a 'tools' array"),
    ],
)
def test_a_malformed_tools_file_is_one_line(store: Path, tmp_path: Path, data: str, needle: str) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(data, encoding="utf-8")
    one_line_error(gate(store, "m", "--tools", tools, "--format", "names"), str(tools), needle)


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [("tiers.json", '{"read_*": "tiny"}', 'tier "tiny"'), ("tiers.toml", "read_* =", "cannot read the tier map")],
)
def test_a_malformed_tier_map_is_one_line(store: Path, tmp_path: Path, name: str, text: str, needle: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    listed = dump(tmp_path / "l.json", {"tools": MCP_TOOLS})
    one_line_error(gate(store, "m", "--tools", listed, "--tiers", tmp_path / name), str(tmp_path / name), needle)


def test_a_format_other_than_the_files_is_one_line(store: Path, tmp_path: Path) -> None:
    listed = dump(tmp_path / "l.json", {"tools": MCP_TOOLS})
    one_line_error(gate(store, "m", "--tools", listed, "--format", "openai"), "use --format mcp or names")
    array = dump(tmp_path / "a.json", OPENAI)
    one_line_error(gate(store, "m", "--tools", array, "--format", "mcp"), "use --format openai or names")
    one_line_error(gate(store, "m", "--tools", array, "--format", "openai", "--json"), "not both")


# --- tool names that could smuggle another name into an allow-list ---------------------------------------------------

SMUGGLED = "read_file\ndelete_all"
BAD_NAMES = [SMUGGLED, "", "read\x1b[2Jfile", "read_file\r", "read file", "read,file", "x" * 129, "wr\u0131te"]


def shapes(name: str) -> list[tuple[str, Any]]:
    """The smuggling pair (``delete_all`` dropped as large, then the bad name) in every tools-file shape."""
    openai = [
        {"type": "function", "requiredTier": "large", "function": {"name": "delete_all"}},
        {"type": "function", "function": {"name": name}},
    ]
    mcp = [{"name": "delete_all", "requiredTier": "large"}, {"name": name}]
    return [
        ("openai", openai),
        ("openai", {"tools": openai}),
        ("mcp", {"tools": mcp}),
        ("mcp", {"jsonrpc": "2.0", "id": 1, "result": {"tools": mcp}}),
    ]


FORMATS = [["--format", "names"], ["--format", "{own}"], ["--json"], [], ["--explain", "--format", "names"]]


@pytest.mark.parametrize("name", BAD_NAMES, ids=ascii)
@pytest.mark.parametrize("how", FORMATS, ids=" ".join)
def test_a_tool_name_no_api_accepts_is_refused_in_every_format(
    store: Path, tmp_path: Path, name: str, how: list[str]
) -> None:
    for number, (own, data) in enumerate(shapes(name)):
        tools = dump(tmp_path / f"t{number}.json", data)
        result = gate(store, "m", "--tools", tools, *(arg.format(own=own) for arg in how))
        one_line_error(result, str(tools), "(tool #2) has", ascii(name)[:40], "1 to 128 of A-Z a-z 0-9 _ . : -")
        assert result.stdout == ""


def test_a_tool_with_a_missing_or_non_string_name_is_refused(store: Path, tmp_path: Path) -> None:
    unnamed = dump(tmp_path / "u.json", [{"type": "function", "function": {"description": "no name"}}])
    one_line_error(gate(store, "m", "--tools", unnamed, "--format", "names"), "[0] (tool #1) has no name")
    number = dump(tmp_path / "n.json", [{"type": "function", "function": {"name": 7}}])
    one_line_error(gate(store, "m", "--tools", number, "--format", "names"), "not a string (int)")


def test_every_character_and_length_the_rule_allows_is_written_as_given(store: Path, tmp_path: Path) -> None:
    names = ["a", "server:read.file-v2_X9", "y" * 128]
    tools = dump(tmp_path / "t.json", {"tools": [{"name": name} for name in names]})
    result = gate(store, "m", "--tools", tools, "--format", "names")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == names
