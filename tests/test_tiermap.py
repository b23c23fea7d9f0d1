"""Tier maps: exact names beat globs, the longest glob wins, unlisted tools need large; bad maps are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsuka_core.errors import UsageError
from tsuka_core.gating.tiermap import TierMap, load_tier_map, tool_name


def test_an_exact_name_beats_a_glob_listed_before_or_after_it() -> None:
    assert TierMap.parse({"search_*": "large", "search_web": "small"}).lookup("search_web") == ("small", "search_web")
    assert TierMap.parse({"search_web": "small", "search_*": "large"}).lookup("search_web") == ("small", "search_web")
    assert TierMap.parse({"search_*": "large", "search_web": "small"}).lookup("search_docs") == ("large", "search_*")


def test_the_longest_matching_glob_wins() -> None:
    tiers = TierMap.parse({"*": "small", "write_*": "large", "write_n*": "medium"})
    assert tiers.lookup("write_notes") == ("medium", "write_n*")
    assert tiers.lookup("write_file") == ("large", "write_*")
    assert tiers.lookup("ls") == ("small", "*")


def test_globs_are_case_sensitive_and_support_classes() -> None:
    tiers = TierMap.parse({"[rw]ead_?": "medium"})
    assert tiers.lookup("read_x") == ("medium", "[rw]ead_?")
    assert tiers.lookup("READ_x") == ("large", None)


def test_an_unlisted_tool_needs_large() -> None:
    assert TierMap.parse({"read_*": "small"}).lookup("delete_file") == ("large", None)


def test_a_map_is_read_from_json_or_toml(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"read_*": "small", "write_file": "large"}', encoding="utf-8")
    (tmp_path / "t.toml").write_text('"read_*" = "small"\nwrite_file = "large"\n', encoding="utf-8")
    assert load_tier_map(tmp_path / "t.json") == load_tier_map(tmp_path / "t.toml")
    assert load_tier_map(tmp_path / "t.toml").entries == {"read_*": "small", "write_file": "large"}


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("bad.json", '{"read_*": "huge"}', 'read_*: tier "huge" is not one of small, medium, large'),
        ("list.json", '["read_*"]', "expected an object of tool name or glob to tier, got list"),
        ("broken.json", '{"read_*": ', "cannot read the tier map"),
        ("broken.toml", "read_* = small", "cannot read the tier map"),
        ("nested.toml", "[read]\nx = 'small'", 'read: tier {"x": "small"} is not one of'),
    ],
)
def test_a_bad_map_is_one_usage_error_naming_the_file(tmp_path: Path, name: str, text: str, needle: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_tier_map(tmp_path / name)
    message = str(caught.value)
    assert message.startswith(str(tmp_path / name))
    assert needle in message
    assert "\n" not in message


def test_tool_names_come_from_each_shape() -> None:
    class Named:
        name = "from_object"

    assert tool_name("bare") == "bare"
    assert tool_name({"type": "function", "function": {"name": "openai"}}) == "openai"
    assert tool_name({"name": "mcp", "inputSchema": {}}) == "mcp"
    assert tool_name(Named()) == "from_object"
    assert tool_name({}, 2) == "tool #3"
