"""docs/gating.md: its tier map is what the text says, and every block marked runnable runs against a real store."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import profile

from tsuka_core.gating.tiermap import load_tier_map
from tsuka_core.gating.toolnames import NAME_RULE, TOOL_NAME
from tsuka_core.terms import PROFILES_ENV

DOC = Path(__file__).resolve().parents[1] / "docs" / "gating.md"
TEXT = DOC.read_text(encoding="utf-8")
RUNNABLE = re.findall(r"^```python runnable\n(.*?)^```$", TEXT, re.S | re.M)
TIER_MAP = re.findall(r"^```toml\n(.*?)^```$", TEXT, re.S | re.M)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the page's tier map and a store: my-model medium at low (recommended), large at xhigh."""
    profiles = [profile("my-model", "low", "medium"), profile("my-model", "xhigh", "large")]
    store = {
        "profiles": {f"my-model@{p['reasoningEffort']}": p for p in profiles},
        "recommendations": {"my-model": "low"},
    }
    (tmp_path / "models_profile.json").write_text(json.dumps(store), encoding="utf-8")
    (tmp_path / "tiers.toml").write_text(TIER_MAP[0], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(PROFILES_ENV, raising=False)
    return tmp_path


def test_the_page_has_its_snippets() -> None:
    assert len(RUNNABLE) >= 5
    assert len(TIER_MAP) == 1


def test_the_tier_map_says_what_the_text_says(folder: Path) -> None:
    tiers = load_tier_map(folder / "tiers.toml")
    assert tiers.lookup("write_notes") == ("medium", "write_notes")
    assert tiers.lookup("write_file") == ("large", "write_*")
    assert tiers.lookup("delete_file") == ("large", None)


def run_snippet(source: str, name: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run ``source`` as the module ``name`` (registered, as dataclasses need), and return its namespace."""
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(source, f"{DOC}:{name}", "exec"), module.__dict__)
    return module.__dict__


@pytest.mark.parametrize("index", range(len(RUNNABLE)))
def test_a_runnable_snippet_runs(folder: Path, index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    run_snippet(RUNNABLE[index], f"gating_doc_{index}", monkeypatch)


def test_the_callable_filter_snippet_gates_each_tool(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class McpTool:
        def __init__(self, name: str) -> None:
            self.name = name

    namespace = run_snippet(next(b for b in RUNNABLE if "def tier_filter" in b), "gating_doc_filter", monkeypatch)
    tier_filter = namespace["tier_filter"]
    assert callable(tier_filter)
    assert tier_filter(None, McpTool("read_file")) is True
    assert tier_filter(None, McpTool("delete_file")) is False


def test_the_page_states_the_tool_name_rule_that_is_enforced() -> None:
    assert f"`^{TOOL_NAME.pattern}$`" in TEXT
    assert NAME_RULE in TEXT
