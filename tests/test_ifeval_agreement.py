"""tsuka's instruction checks against IFEval's own verifiers, on crafted and random answers."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.ifeval
def test_tsuka_agrees_with_ifevals_verifiers() -> None:
    """Ten IFEval instructions, stated with tsuka's checks: every answer judged alike (about 2,600)."""
    if importlib.util.find_spec("if_verifiable") is None:
        pytest.skip("if-verifiable is not installed: pip install --no-deps if-verifiable langdetect immutabledict nltk")
    script = ROOT / "tools" / "ifeval_agreement.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:] if line.strip()[:1].isalpha()}
    assert len(rows) >= 11, done.stdout  # ten instructions and "all"
    assert int(rows["all"][1]) > 2000
    assert rows["all"][3] == "100.00%", done.stdout
    assert "0 disagreement(s):" in done.stdout
