"""BFCL's multi-turn categories: the converted tests, BFCL's classes as an environment, and the agreement."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.bfcl


@pytest.fixture(scope="module")
def data() -> Path:
    """bfcl-eval's data folder (with mpmath, which its classes import)."""
    if importlib.util.find_spec("bfcl_eval") is None or importlib.util.find_spec("mpmath") is None:
        pytest.skip("needs BFCL's data and classes: pip install --no-deps bfcl-eval && pip install mpmath")
    from tsuka_checks_builtin.bfcl import bfcl_data

    found = bfcl_data()
    assert found is not None
    return found


def _entry(data: Path, category: str, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    from tsuka_checks_builtin.bfcl import rows

    name = f"BFCL_v4_{category}.json"
    question = list(rows(data / name))[index]
    answer = next(r for r in rows(data / "possible_answer" / name) if r["id"] == question["id"])
    return question, answer


def test_a_held_function_is_revealed_in_its_turn_without_the_hint(data: Path) -> None:
    from tsuka_checks_builtin.bfcl.categories import MULTI_TURN
    from tsuka_checks_builtin.bfcl.multi import REVEAL_PROMPT, multi_turn_test

    question, answer = _entry(data, "multi_turn_miss_func", 0)
    test = multi_turn_test(data, MULTI_TURN[1], question, answer)
    offered = [t["function"]["name"] for t in test["tools"]]
    assert "sort" not in offered
    assert "mv" in offered
    held = test["turns"][3]
    assert held["prompt"] == REVEAL_PROMPT
    assert [t["function"]["name"] for t in held["reveal"]] == ["sort"]
    assert "Python 3 syntax" not in held["reveal"][0]["function"]["description"]
    assert "Python 3 syntax" in test["tools"][0]["function"]["description"]
    # BFCL's ground truth writes sort('final_report.pdf'): the argument is named from the method's signature
    assert held["reference"] == [{"name": "sort", "arguments": {"file_name": "final_report.pdf"}}]
    assert held["checks"][1] == {"type": "state_matches"}
    assert test["turns"][2]["reference"] == []
    assert test["turns"][2]["checks"] == []
    assert test["environment"]["config"]["classes"] == ["TwitterAPI", "GorillaFileSystem"]


def test_a_ground_truth_call_is_read_never_run(data: Path) -> None:
    from tsuka_checks_builtin.bfcl.environment import reference_call

    classes = ["GorillaFileSystem", "MathAPI"]
    assert reference_call(classes, "cd(folder='document')") == ("cd", {"folder": "document"})
    assert reference_call(classes, "mean([1, 2.5])") == ("mean", {"numbers": [1, 2.5]})
    for bad in ("cd(folder=open('x'))", "__import__('os')", "cd(**{'folder': 'x'})", "os.system('x')", "1 + 1"):
        with pytest.raises(ValueError, match=r"not a call of a method|not a method of|\*\* arguments|malformed"):
            reference_call(classes, bad)


def test_bfcls_classes_run_only_their_own_methods(data: Path) -> None:
    from tsuka_checks_builtin.bfcl.environment import BfclConfig, BfclEnvironment

    question, _ = _entry(data, "multi_turn_base", 0)
    config = BfclConfig(classes=question["involved_classes"], initial_config=question["initial_config"])
    model, reference = BfclEnvironment(config), BfclEnvironment(config)
    assert json.loads(model.call("ls", {})) == {"current_directory_content": ["document", "archive"]}
    with pytest.raises(NameError, match="name 'print' is not defined"):
        model.call("print", {"x": 1})
    with pytest.raises(NameError, match="name '__import__' is not defined"):
        model.call("__import__", {"name": "os"})
    with pytest.raises(RuntimeError, match=r"Function call kill is not allowed\."):
        model.call("kill", {})
    assert model.differences(reference) == {}
    model.call("mkdir", {"dir_name": "temp"})
    found = model.differences(reference)
    assert list(found) == ["GorillaFileSystem.root"]
    assert model.call("cd", {"folder": "nowhere"}).startswith('{"error"')


@pytest.mark.heavy
def test_tsuka_agrees_with_bfcls_multi_turn_checker(data: Path) -> None:
    """Crafted trajectories (ground truth and near-misses) of the first entries of each multi-turn category,
    played through tsuka run, streamed and not: BFCL's checker gives the same verdict on 99% in each category."""
    script = ROOT / "tools" / "bfcl_multi_agreement.py"
    done = subprocess.run([sys.executable, str(script), "--limit", "4"], capture_output=True, text=True,
                          timeout=3000, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("bfcl-multi-turn-")]
    names = ["bfcl-multi-turn-base", "bfcl-multi-turn-miss-func", "bfcl-multi-turn-miss-param"]
    assert [r[0] for r in rows] == [*names, "bfcl-multi-turn-long-context"], done.stdout
    for row in rows:
        total, passed, agree = int(row[1]), int(row[2]), int(row[3])
        assert total >= 80, row
        assert 0 < passed < total, row  # both verdicts were exercised
        assert agree / total >= 0.99, done.stdout


def test_the_score_table_has_bfcls_multi_turn_mean() -> None:
    from tsuka_checks_builtin.bfcl.scorecard import BfclScorecard
    from tsuka_core import Figure

    values = (("base", 0.5), ("miss-func", 0.25), ("miss-param", 0.75), ("long-context", 0.1))
    measured = {f"bfcl-multi-turn-{n}": {"accuracy": Figure(value=v, count=200)} for n, v in values}
    rows = {r.label: r for r in BfclScorecard().rows(measured)}
    mean = rows["Multi turn (unweighted mean)"].figure
    assert mean is not None
    assert mean.value == pytest.approx((0.5 + 0.25 + 0.75 + 0.1) / 4)
    assert rows["Missing function"].figure == Figure(value=0.25, count=200)
    del measured["bfcl-multi-turn-base"]
    assert {r.label: r for r in BfclScorecard().rows(measured)}["Multi turn (unweighted mean)"].figure is None
