"""README's example output is what a real run prints, so that it cannot drift from the program."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from answerers import perfect
from history_helpers import ROOT, invoke
from loopback import LoopbackServer

ELIDED = "..."
"""A README line standing for any number of lines of the run."""


def readme_example() -> list[str]:
    """The lines of the first plain code block after README's 'A run prints' paragraph."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"A run prints.*?\n```\n(.*?)\n```", text, re.DOTALL)
    assert block is not None, "README lost its example of a run"
    return block.group(1).splitlines()


def pattern_of(line: str) -> re.Pattern[str]:
    """A README line as a pattern: the speeds and times, which vary from run to run, match any number."""
    pattern = re.escape(line).replace(r"171\.7\ tok/s", r"[\d.]+\ tok/s")
    return re.compile(pattern.replace(r"latency\ 45\.0/48\.9\ ms", r"latency\ [\d.,]+/[\d.,]+\ ms") + "$")


def shows(example: list[str], printed: list[str]) -> bool:
    """True when ``printed`` holds the example's lines in order, each run of lines between '...' consecutive."""
    start = 0
    for chunk in "\n".join(example).split(f"\n{ELIDED}\n"):
        patterns = [pattern_of(line) for line in chunk.splitlines()]
        for at in range(start, len(printed) - len(patterns) + 1):
            if all(p.match(printed[at + i]) for i, p in enumerate(patterns)):
                start = at + len(patterns)
                break
        else:
            return False
    return True


def test_readme_example_output_is_what_a_run_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with LoopbackServer(perfect, models=["m1"]) as server:
        result = invoke("run", "m1", "--base-url", server.base_url)
    assert result.exit_code == 0, result.stderr
    example = readme_example()
    assert ELIDED in [line.strip() for line in example]
    printed = result.stdout.splitlines()
    assert shows([line if line.strip() != ELIDED else ELIDED for line in example], printed), result.stdout


def test_the_matcher_catches_a_drifted_line() -> None:
    printed = ["a  tier large (confidence 1.00)", "  12.5 tok/s", "x", "end"]
    assert shows(["a  tier large (confidence 1.00)", "  171.7 tok/s", ELIDED, "end"], printed)
    assert not shows(["a  tier large", "  171.7 tok/s", ELIDED, "end"], printed)
    assert not shows(["a  tier large (confidence 1.00)", ELIDED, "gone"], printed)
