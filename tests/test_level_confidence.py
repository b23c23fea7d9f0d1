"""A level's confidence is computed once, when the sweep hands the level over, and shown and stored as computed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from answerers import fooled
from click.testing import CliRunner
from loopback import LoopbackServer

from tsuka_core import BackendConfig, Registry, RunOptions, run_benchmark
from tsuka_core.cli.main import cli
from tsuka_core.engine import confidence, results
from tsuka_core.engine.confidence import Confidence, Tries, bootstrap, level_confidence
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

pytestmark = pytest.mark.usefixtures("fast_retries")


class Quiet:
    """A sweep observer that says nothing."""

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Nothing to keep."""

    def test_done(self, model: str, effort: Effort, result: results.TestResult) -> None:
        """Nothing to keep."""

    def note(self, message: str) -> None:
        """Nothing to keep."""


def test_a_swept_level_carries_the_bootstrap_of_its_tests_and_its_profile_stores_it(
    suite: Suite, registry: Registry, tmp_path: Path
) -> None:
    store = tmp_path / "p.json"
    with LoopbackServer(fooled, models=["m1"]) as server:
        options = RunOptions(
            models=["m1"], config=BackendConfig(base_url=server.base_url), efforts=["none"], store_path=store
        )
        report = asyncio.run(run_benchmark(options, suite, registry, Quiet()))

    (level,) = report.sweeps[0].levels
    expected = bootstrap(
        [Tries(t.test.name, t.test.category, t.test.weight, (t.score,)) for t in level.per_test], level.tier
    )
    assert level.confidence == expected
    assert level.confidence.intervals["toolCalling"] != (1.0, 1.0)  # a level with something to be unsure of
    assert level_confidence(level) is level.confidence
    profile = json.loads(store.read_text(encoding="utf-8"))["profiles"]["m1@none"]
    assert profile["intervals"] == {c: list(v) for c, v in expected.intervals.items()}
    assert profile["tierConfidence"] == expected.tier_confidence


def test_a_run_computes_each_levels_bootstrap_once_for_its_profile_and_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed: list[str] = []

    def counted(samples: Sequence[Tries], tier: str, *args: int) -> Confidence:
        computed.append(tier)
        return bootstrap(samples, tier, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(confidence, "bootstrap", counted)
    store = tmp_path / "p.json"
    with LoopbackServer(fooled, models=["m1"]) as server:
        argv = ["run", "m1", "--base-url", server.base_url, "--profiles", str(store), "-e", "none", "-e", "low"]
        result = CliRunner().invoke(cli, argv, catch_exceptions=False, prog_name="tsuka")

    assert result.exit_code == 0, result.stderr
    assert computed == ["medium", "medium"]  # two levels, each once
    profiles = json.loads(store.read_text(encoding="utf-8"))["profiles"]
    for effort in ("none", "low"):
        shown = f"m1@{effort}  tier medium (confidence {profiles[f'm1@{effort}']['tierConfidence']:.2f})"
        assert shown in result.stdout
