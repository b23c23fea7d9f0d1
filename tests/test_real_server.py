"""The OpenAI-compatible backend against a real llama.cpp server (xllamacpp's) serving the bundled SmolLM2."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from tsuka_core.backends.base import BackendConfig, ChatRequest, ChatResponse
from tsuka_core.backends.embedded import INSTALL_MODEL, INSTALL_RUNTIME, bundled_model_path
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.cli.main import cli
from tsuka_core.terms import Effort

SERVER_SCRIPT = Path(__file__).with_name("llama_server.py")
ALIAS = "smollm2"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 15.0
MAX_TOKENS = 48
FIND_USER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "find_user",
        "description": "Find a user's id from their full name.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The user's full name"}},
            "required": ["name"],
        },
    },
}
ASK = {"role": "user", "content": "Use the tool find_user to find the id of Maria Rossi"}
SHOT: list[dict[str, Any]] = [
    {"role": "user", "content": "Use the tool find_user to find the id of John Smith"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "find_user", "arguments": '{"name": "John Smith"}'},
            }
        ],
    },
]


def start_server(model: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """Start tests/llama_server.py; return the process and its base URL once it answers ``/health``."""
    command = [sys.executable, str(SERVER_SCRIPT), str(model), "--alias", ALIAS, "--threads", "1", *extra]
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            return process, _wait_ready(process)
        except BaseException as error:
            stop_server(process)
            log.seek(0)
            error.add_note(f"llama.cpp server stderr: {log.read()[-2000:]}")
            raise


def _wait_ready(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=START_TIMEOUT):
            raise RuntimeError(f"llama.cpp server not ready after {START_TIMEOUT:.0f} s")
    line = process.stdout.readline().strip()
    if not line.startswith("READY http://127.0.0.1:"):
        raise RuntimeError(f"llama.cpp server did not start (exit status {process.poll()}): {line!r}")
    url = line.removeprefix("READY ")
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("llama.cpp server never answered /health with 200")
        time.sleep(0.1)


def stop_server(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT)


@pytest.fixture(scope="module")
def model() -> Path:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed: {INSTALL_RUNTIME}")
    path = bundled_model_path()
    if path is None:
        pytest.skip(f"the bundled SmolLM2 model is not installed: {INSTALL_MODEL}")
    return path


@pytest.fixture(scope="module")
def plain_server(model: Path) -> Iterator[str]:
    """The server with the model's own chat template (no tool support): its base URL.

    Requests send ``temperature: 0`` and a seed: the server's default samples at 0.8 with a random seed.
    """
    process, url = start_server(model)
    yield url
    stop_server(process)


@pytest.fixture(scope="module")
def tool_server(model: Path) -> Iterator[str]:
    """The server with a tool-capable ChatML template: its base URL."""
    process, url = start_server(model, "--tool-template")
    yield url
    stop_server(process)


def complete(
    url: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] = (),
    effort: Effort | None = None,
) -> ChatResponse:
    async def main() -> ChatResponse:
        async with httpx.AsyncClient() as client:
            config = BackendConfig(base_url=f"{url}/v1", max_tokens=MAX_TOKENS, retries=0, temperature=0, seed=42)
            backend = OpenAIBackend(config, client)
            return await backend.complete(ChatRequest(ALIAS, messages, tuple(tools), effort))

    return asyncio.run(main())


@pytest.mark.model
def test_list_models_gives_the_alias(plain_server: str) -> None:
    async def main() -> list[str]:
        async with httpx.AsyncClient() as client:
            return await OpenAIBackend(BackendConfig(base_url=f"{plain_server}/v1"), client).list_models()

    assert asyncio.run(main()) == [ALIAS]


@pytest.mark.model
def test_a_plain_answer(plain_server: str) -> None:
    reply = complete(plain_server, [{"role": "user", "content": "What is the capital of France? Answer in one word."}])
    assert "Paris" in reply.text
    assert reply.tool_calls == ()
    assert reply.prompt_tokens
    assert 0 < reply.completion_tokens <= MAX_TOKENS
    assert not reply.usage_estimated


@pytest.mark.model
def test_tools_are_ignored_by_a_template_without_tool_support(plain_server: str) -> None:
    reply = complete(plain_server, [*SHOT, ASK], [FIND_USER])
    assert reply.tool_calls == ()
    assert reply.content is not None


@pytest.mark.model
def test_effort_low_is_accepted_and_ignored(plain_server: str) -> None:
    messages = [{"role": "user", "content": "Say hello."}]
    assert complete(plain_server, messages, effort="low").content == complete(plain_server, messages).content


@pytest.mark.model
def test_a_tool_call_history_with_null_content_is_accepted(plain_server: str) -> None:
    messages: list[dict[str, Any]] = [
        ASK,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "find_user", "arguments": {"name": "Maria"}}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": '{"id": "USR-7431"}'},
    ]
    reply = complete(plain_server, messages, [FIND_USER])
    assert reply.completion_tokens > 0
    raw = httpx.post(
        f"{plain_server}/v1/chat/completions",
        json={"model": ALIAS, "messages": messages, "max_tokens": 4},
        timeout=120,
    )
    assert raw.status_code == 200, raw.text


@pytest.mark.model
def test_a_tool_capable_template_returns_openai_tool_calls(tool_server: str) -> None:
    reply = complete(tool_server, [*SHOT, ASK], [FIND_USER])
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("find_user", {"name": "Maria Rossi"})]
    call_id = reply.tool_calls[0].id
    assert call_id
    assert not call_id.startswith("call_")
    assert reply.content == ""
    assert reply.text == ""


@pytest.mark.model
def test_a_multi_turn_tool_conversation_on_a_tool_capable_template(tool_server: str) -> None:
    first = complete(tool_server, [*SHOT, ASK], [FIND_USER])
    assert first.tool_calls
    messages = [
        *SHOT,
        ASK,
        {"role": "assistant", "content": None, "tool_calls": [dict(first.tool_calls[0].raw)]},
        {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": '{"id": "USR-7431"}'},
    ]
    reply = complete(tool_server, messages, [FIND_USER], effort="low")
    assert reply.completion_tokens > 0


@pytest.mark.model
def test_the_backend_learns_from_props_that_efforts_would_be_ignored(plain_server: str) -> None:
    async def main() -> str | None:
        async with httpx.AsyncClient() as client:
            return await OpenAIBackend(BackendConfig(base_url=f"{plain_server}/v1"), client).effort_ignored(ALIAS)

    reason = asyncio.run(main())
    assert reason is not None
    assert "supports_reasoning_effort is false" in reason


@pytest.mark.model
def test_a_sweep_of_a_template_without_efforts_is_measured_once_as_none(plain_server: str, tmp_path: Path) -> None:
    store = tmp_path / "p.json"
    args = ["run", ALIAS, "--base-url", f"{plain_server}/v1", "-e", "none", "-e", "low", "--temperature", "0"]
    result = CliRunner().invoke(cli, [*args, "--seed", "42", "--max-tokens", "48", "--profiles", str(store)])

    assert result.exit_code == 0, result.output
    profiles = json.loads(store.read_text(encoding="utf-8"))["profiles"]
    assert list(profiles) == [f"{ALIAS}@none"]
    assert profiles[f"{ALIAS}@none"]["effortApplied"] is False
    assert "would accept reasoning_effort and ignore it" in result.stderr
    assert "measured once without it, as none" in result.stderr
