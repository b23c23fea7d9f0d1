"""What tsuka measures on a real llama.cpp server (xllamacpp's, serving the bundled SmolLM2): timings, facts, names."""

from __future__ import annotations

import asyncio
import importlib.util
import selectors
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from tsuka_core.backends.base import BackendConfig, ChatRequest, ChatResponse, ServerFacts
from tsuka_core.backends.embedded import INSTALL_MODEL, INSTALL_RUNTIME, bundled_model_path
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.cli.main import cli

pytestmark = pytest.mark.heavy

SERVER_SCRIPT = Path(__file__).with_name("llama_server.py")
ALIAS = "smollm2"
START_TIMEOUT = 180.0


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The server with the model's own chat template: its base URL (``/v1`` included)."""
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed: {INSTALL_RUNTIME}")
    model = bundled_model_path()
    if model is None:
        pytest.skip(f"the bundled SmolLM2 model is not installed: {INSTALL_MODEL}")
    command = [sys.executable, str(SERVER_SCRIPT), str(model), "--alias", ALIAS, "--threads", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(timeout=START_TIMEOUT), "llama.cpp server not ready in time"
        line = process.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:"), line
        yield line.removeprefix("READY ") + "/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def with_backend(url: str, request: ChatRequest | None) -> tuple[ChatResponse | None, ServerFacts]:
    """One answer (when ``request`` is given) and the server's facts, through the ``openai`` backend."""

    async def main() -> tuple[ChatResponse | None, ServerFacts]:
        async with httpx.AsyncClient() as client:
            config = BackendConfig(base_url=url, max_tokens=8, retries=1, temperature=0, seed=42, timeout=120)
            backend = OpenAIBackend(config, client)
            answer = await backend.complete(request) if request is not None else None
            return answer, await backend.server_facts(ALIAS)

    return asyncio.run(main())


@pytest.mark.model
def test_the_answer_carries_the_servers_own_timings_and_finish_reason(server: str) -> None:
    ask = ChatRequest(ALIAS, [{"role": "user", "content": "Tell me a long story about the sea."}])
    answer, _ = with_backend(server, ask)

    assert answer is not None
    assert answer.speed_source == "server"
    assert answer.generated_tokens == answer.completion_tokens == 8
    assert answer.generation_ms is not None
    assert 0 < answer.generation_ms < answer.duration * 1000
    assert answer.prompt_ms is not None
    assert answer.prompt_processed is not None
    assert answer.finish_reason == "length"
    assert answer.cut_at_limit


@pytest.mark.model
def test_props_give_the_servers_facts(server: str) -> None:
    _, facts = with_backend(server, None)

    assert facts.kind == "llama.cpp"
    assert facts.slots == 1
    assert facts.model_file is not None
    assert facts.model_file.endswith(".gguf")
    assert facts.supports_tools is False  # SmolLM2's own template has no tool support
    assert facts.supports_reasoning_effort is False


@pytest.mark.model
def test_a_name_the_server_does_not_list_is_refused_before_any_request(server: str, tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    env = {"OPENAI_API_KEY": None, "TSUKA_PROFILES": None, "TSUKA_HISTORY": None}
    result = CliRunner(env=env).invoke(
        cli, ["run", "smolm2", "--base-url", server, "--profiles", str(store), "-e", "none"], prog_name="tsuka"
    )

    assert result.exit_code == 2, result.output
    assert "did you mean 'smollm2'?" in result.stderr
    assert not store.exists()
