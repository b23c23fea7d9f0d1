"""The bundled SmolLM2 measured on the extended suite through ``tsuka run``: tier small, yet no category at zero.

The extended suite is there to tell a weak model from one that cannot do a category at all; a 135M model answers a
few tests of each category right. The run takes minutes, so it measures one effort level, once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tsuka_core.backends.embedded import INSTALL_MODEL, INSTALL_RUNTIME, bundled_model_path
from tsuka_core.suite.loading import resolve_suite, suite_hash
from tsuka_core.terms import CATEGORIES

pytestmark = pytest.mark.heavy

TSUKA = Path(sys.executable).with_name("tsuka")
RUN_TIMEOUT = 2400
"""Seconds the run may take: about two minutes on two idle cores, over ten times that when other work shares them."""


@pytest.fixture(scope="module")
def bundled() -> str:
    """The bundled model's name, or a skip saying what to install."""
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed: {INSTALL_RUNTIME}")
    path = bundled_model_path()
    if path is None:
        pytest.skip(f"the bundled SmolLM2 model is not installed: {INSTALL_MODEL}")
    return path.stem


@pytest.mark.model
@pytest.mark.timeout(RUN_TIMEOUT + 60)
def test_the_bundled_model_is_small_on_the_extended_suite_with_every_category_above_zero(
    bundled: str, tmp_path: Path
) -> None:
    store = tmp_path / "models_profile.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    command = [str(TSUKA), "run", "all", "--suite", "extended", "-e", "none", "--profiles", str(store), "--no-history"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    profiles: dict[str, Any] = json.loads(store.read_text(encoding="utf-8"))["suiteProfiles"]["extended"]
    assert sorted(profiles) == [f"{bundled}@none"]
    profile = profiles[f"{bundled}@none"]
    assert profile["backend"] == "embedded"
    assert profile["testsHash"] == suite_hash(resolve_suite("extended"))
    assert len(profile["testResults"]) == 49
    assert profile["tier"] == "small", profile["scores"]
    assert sorted(profile["scores"]) == sorted(CATEGORIES)
    assert all(score > 0 for score in profile["scores"].values()), profile["scores"]
