"""``tsuka run MODEL --suite extended`` through the openai backend and the example Ollama backend, end to end.

Each run answers with the extended suite's reference answers from a loopback server, so it must store a profile of
tier large measured with that suite. The embedded backend's run is in ``test_extended_embedded.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from loopback import LoopbackServer
from test_extended_suite import EXTENDED, reference_steps, scripted
from test_plugins_example import OllamaReply, OllamaServer, Venv, venv  # noqa: F401  (the fixture, plugins installed)

from tsuka_core import Registry
from tsuka_core.cli.main import cli
from tsuka_core.suite.loading import load_suite, suite_hash
from tsuka_core.suite.model import Suite

pytestmark = pytest.mark.usefixtures("fast_retries")

RUN = ("--suite", "extended", "-e", "none", "--no-history")
CLEAN_ENV: dict[str, str | None] = {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": None, "TSUKA_PROFILES": None}


@pytest.fixture(scope="module")
def extended(registry: Registry) -> Suite:
    return load_suite(EXTENDED, registry)


def stored_profile(store: Path, key: str, suite: Suite) -> dict[str, Any]:
    """The profile stored under ``key``, checked to be a perfect measurement of the extended suite.

    It is stored in the extended suite's section: the default suite's profiles are left as they were (none).
    """
    data = json.loads(store.read_text(encoding="utf-8"))
    assert data["profiles"] == {}
    profiles = data["suiteProfiles"]["extended"]
    assert sorted(profiles) == [key]
    profile: dict[str, Any] = profiles[key]
    assert profile["testsHash"] == suite.hash == suite_hash(EXTENDED)
    assert [result["name"] for result in profile["testResults"]] == [t.name for t in suite.tests]
    assert profile["tier"] == "large"
    assert profile["scores"] == {"instruction": 1, "json": 1, "toolCalling": 1}
    return profile


def test_run_suite_extended_through_the_openai_backend(extended: Suite, tmp_path: Path) -> None:
    store = tmp_path / "models_profile.json"
    with LoopbackServer(scripted(extended), models=["m1"]) as server:
        args = ["run", "m1", "--base-url", server.base_url, *RUN, "--profiles", str(store)]
        result = CliRunner(env=CLEAN_ENV).invoke(cli, args, catch_exceptions=False, prog_name="tsuka")
    assert result.exit_code == 0, result.stderr
    assert server.errors == []
    assert stored_profile(store, "m1@none", extended)["backend"] == "openai"


def ollama_reference(extended: Suite) -> Callable[[dict[str, Any], int], Any]:
    """An Ollama handler answering every request with the reference answers."""
    next_step = reference_steps(extended)

    def answer(body: dict[str, Any], n: int) -> Any:
        del n
        step = next_step(body["messages"])
        calls = tuple((name, args) for name, args in step.get("calls", []))
        return OllamaReply(content=step.get("text", ""), tool_calls=calls)

    return answer


def test_run_suite_extended_through_the_ollama_backend(venv: Venv, extended: Suite, tmp_path: Path) -> None:  # noqa: F811
    store = tmp_path / "models_profile.json"
    with OllamaServer(ollama_reference(extended), models=["m1"], max_requests=200) as server:
        done = venv.tsuka("run", "m1", "-b", "ollama", "--base-url", server.base_url, *RUN, "--profiles", store)
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.errors == []
    assert stored_profile(store, "m1@none", extended)["backend"] == "ollama"
