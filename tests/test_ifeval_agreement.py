"""tsuka's IFEval suite against IFEval's own verifiers: crafted and random answers through `tsuka run`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTIONS = 25


@pytest.mark.ifeval
def test_tsuka_agrees_with_ifevals_verifiers_on_every_instruction() -> None:
    """IFEval's 25 instructions, settings drawn by IFEval's generator: every verdict, strict and loose, is IFEval's,
    and so are the four accuracies tsuka's scorecard stored for each answer, streamed and not."""
    if importlib.util.find_spec("if_verifiable") is None:
        pytest.skip("if-verifiable is not installed: pip install --no-deps if-verifiable langdetect immutabledict nltk")
    script = ROOT / "tools" / "ifeval_agreement.py"
    command = [sys.executable, str(script), "--settings", "3", "--random", "10"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    table = lines[1 : lines.index("") if "" in lines else len(lines)]
    rows = {line.split()[0]: line.split() for line in table if not line.startswith("scorecard")}
    assert len(rows) == INSTRUCTIONS, done.stdout
    for name, row in rows.items():
        assert int(row[1]) >= 40, (name, done.stdout)
        assert row[2:4] == ["100.00%", "100.00%"], (name, done.stdout)
    scorecard = next(line for line in lines if line.startswith("scorecard"))
    assert scorecard.split()[-1] == "100.00%", done.stdout
    assert "\n0 disagreement(s)" in done.stdout
