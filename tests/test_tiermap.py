"""Tier maps: exact names beat globs, the longest glob wins, unlisted tools need large; bad maps are refused."""

from __future__ import annotations

import time
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


@pytest.mark.parametrize("name", ["read_file\ndelete_all", "read_\n", "", "read_x" + "y" * 200, "read_\x00"])
def test_a_glob_never_matches_a_name_no_api_accepts(name: str) -> None:
    tiers = TierMap.parse({"read_*": "small", "*": "medium", "[!a]*": "small", "read_?": "small"})
    with pytest.raises(UsageError, match="is not valid; a tool name is 1 to 128"):
        tiers.lookup(name)


@pytest.mark.parametrize("key", ["read file", "read_\n*", "write\x1b*", "a/b", "x" * 129, "[^a]*", "dé*"])
def test_a_key_no_tool_name_could_match_is_refused(key: str) -> None:
    with pytest.raises(UsageError) as caught:
        TierMap.parse({key: "small"}, "t.json")
    message = str(caught.value)
    assert message.startswith(f"t.json: the {'glob' if '*' in key else 'name'} {ascii(key)[:40]}")
    assert "can never match a tool" in message
    assert message.isprintable()
    assert message.isascii()


def test_globs_with_every_name_character_and_class_still_match() -> None:
    tiers = TierMap.parse({"mcp:fs.*": "medium", "mcp:fs.read-[a-z]?": "small", "[!x]*": "large", "x*": "medium"})
    assert tiers.lookup("mcp:fs.read-ab") == ("small", "mcp:fs.read-[a-z]?")
    assert tiers.lookup("mcp:fs.write") == ("medium", "mcp:fs.*")
    assert tiers.lookup("xyz") == ("medium", "x*")
    assert tiers.lookup("abc") == ("large", "[!x]*")


def test_of_equally_long_globs_the_first_listed_wins_however_they_start() -> None:
    tiers = TierMap.parse({"*_file": "medium", "read_*": "small", "re*": "large", "*": "small"})
    assert tiers.lookup("read_file") == ("medium", "*_file")
    assert TierMap.parse({"read_*": "small", "*_file": "medium"}).lookup("read_file") == ("small", "read_*")
    assert tiers.lookup("rex") == ("large", "re*")


def test_a_map_of_100k_globs_is_looked_up_without_recompiling_them() -> None:
    """fnmatch caches 32,768 patterns: a bigger map once took about 3 s per lookup."""
    globs = {f"tool_{i:06d}_*": "small" for i in range(100_000)}
    globs["*_any"] = "medium"
    tiers = TierMap.parse(globs)
    started = time.perf_counter()
    found = [tiers.lookup(f"tool_{i:06d}_x") for i in range(0, 100_000, 10_000)]
    assert found == [("small", f"tool_{i:06d}_*") for i in range(0, 100_000, 10_000)]
    assert tiers.lookup("x_any") == ("medium", "*_any")
    assert time.perf_counter() - started < 5


KEYS = st.text(alphabet="ab_.*?[]!", min_size=1, max_size=8).filter(lambda k: bool(set("*?[") & set(k)))


@given(st.lists(KEYS, max_size=12), st.text(alphabet="ab_.", min_size=1, max_size=8))
def test_a_lookup_finds_what_trying_every_glob_in_turn_finds(keys: list[str], name: str) -> None:
    globs = dict.fromkeys(keys, "small")
    matching = [key for key in globs if fnmatchcase(name, key)]
    expected = max(matching, key=len) if matching else None
    assert TierMap.parse(globs).lookup(name)[1] == expected
