"""The OpenAI-compatible backend against a real llama.cpp server (xllamacpp's) serving the bundled SmolLM2."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import selectors
import shlex
import signal
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

from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse
from tsuka_core.backends.embedded import INSTALL_MODEL, INSTALL_RUNTIME, EmbeddedBackend, bundled_model_path
from tsuka_core.backends.llama_runtime import GEMMA_TOOL_TEMPLATE, TOOL_TEMPLATE, tool_template_path
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.cli.main import cli
from tsuka_core.engine.sweep import ModelSweep, sweep_models
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

pytestmark = pytest.mark.heavy

SERVER_SCRIPT = Path(__file__).with_name("llama_server.py")
SUITE_MAX_TOKENS = 128
"""Completion limit of the suite comparisons (the default suite's JSON answers run to 512 tokens otherwise)."""
GEMMA_TURNS = Path(__file__).with_name("data") / "gemma-turns.jinja"
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
    if "-t" in extra:
        command.remove("--threads")
        command.remove("1")
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


def serve_line(*args: str) -> list[str]:
    """The llama-server command line `tsuka serve --port 0 ARGS` prints; the server is stopped by Ctrl-C (SIGINT)
    once it has said it, and must end with status 0."""
    command = [sys.executable, "-m", "tsuka_core", "serve", "--port", "0", *args]
    # from a folder of its own: `-m` imports from the working folder first, and tsuka must be the one installed
    neutral = tempfile.gettempdir()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=neutral)
    assert process.stdout is not None
    try:
        for line in process.stdout:
            if line.startswith("  the same as: "):
                return shlex.split(line.removeprefix("  the same as: "))
        raise RuntimeError(f"tsuka serve printed no llama-server line (exit status {process.poll()})")
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=STOP_TIMEOUT) == 0


def start_llama_server(line: Sequence[str]) -> tuple[subprocess.Popen[str], str]:
    """Start the stand-in for llama-server (tests/llama_server.py) with ``line``'s flags, on a free port."""
    assert line[0] == "llama-server"
    flags = list(line[1:])
    flags[flags.index("--port") + 1] = "0"
    process = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), *flags], stdout=subprocess.PIPE, text=True)
    try:
        return process, _wait_ready(process)
    except BaseException:
        stop_server(process)
        raise


@pytest.fixture(scope="module")
def embedded_flags_server(model: Path) -> Iterator[str]:
    """llama-server (its stand-in) started with the command line `tsuka serve` prints for the bundled model."""
    line = serve_line()
    chosen = {flag: line[line.index(flag) + 1] for flag in ("--port", "-t")}  # a free port; the free cores
    assert line == [
        *("llama-server", "-m", str(model), "--alias", model.stem, "--host", "127.0.0.1"),
        *("--port", chosen["--port"], "--jinja", "--chat-template-file", tool_template_path(TOOL_TEMPLATE)),
        *("-np", "1", "-c", "4096", "-t", chosen["-t"], "--no-cache-prompt", "-fa", "off"),
        *("--temp", "0", "--top-k", "1", "--seed", "42", "--repeat-penalty", "1"),
    ]
    process, url = start_llama_server(line)
    yield url
    stop_server(process)


@pytest.fixture(scope="module")
def gemma_turns_server(model: Path) -> Iterator[str]:
    """The same, for the bundled model given a template in Gemma's turns: gemma-tools.jinja on the line."""
    line = serve_line("--option", f"chat_template={GEMMA_TURNS}")
    assert line[line.index("--chat-template-file") + 1] == tool_template_path(GEMMA_TOOL_TEMPLATE)
    process, url = start_llama_server(line)
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
            await backend.server_facts(ALIAS)  # as a run does first: llama.cpp, known from /props, is never streamed
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


async def suite_answers(backend: Backend, model: str, suite: Suite) -> list[tuple[str, float, list[Any]]]:
    """Every test of ``suite`` run by ``backend`` at four at once: name, score, and each step's answer."""

    class Quiet:
        def level_started(self, *args: object) -> None: ...
        def test_done(self, *args: object) -> None: ...
        def note(self, message: str) -> None: ...

    async def keep(swept: ModelSweep) -> None: ...

    swept = await sweep_models(backend, suite, [model], ("none",), observer=Quiet(), on_model=keep)
    await backend.aclose()
    return [
        (result.test.name, result.score, [answer(step.response) for step in result.steps])
        for result in swept[0].levels[0].tests
    ]


def answer(response: ChatResponse | None) -> Any:
    if response is None:
        return None
    return (response.content, [(call.name, call.arguments) for call in response.tool_calls])


def embedded_and_served(
    model: Path, url: str, suite: Suite, options: Mapping[str, str] | None = None
) -> list[list[tuple[str, float, list[Any]]]]:
    """The suite's answers from the embedded backend twice (with ``options``), then from the server at ``url``."""

    async def main() -> list[list[tuple[str, float, list[Any]]]]:
        async with httpx.AsyncClient() as client:
            config = BackendConfig(max_tokens=SUITE_MAX_TOKENS, options=dict(options or {}))
            embedded = [await suite_answers(EmbeddedBackend(config, client), model.stem, suite) for _ in range(2)]
            served = BackendConfig(base_url=f"{url}/v1", max_tokens=SUITE_MAX_TOKENS, temperature=0, seed=42)
            return [*embedded, await suite_answers(OpenAIBackend(served, client), model.stem, suite)]

    return asyncio.run(main())


@pytest.mark.model
def test_the_embedded_backend_answers_as_llama_server_with_the_flags_tsuka_serve_prints_run_after_run(
    model: Path, embedded_flags_server: str, suite: Suite
) -> None:
    first, second, server = embedded_and_served(model, embedded_flags_server, suite)
    assert [score for _, score, _ in first] == [score for _, score, _ in server]
    assert first == server
    assert first == second
    assert any(score > 0 for _, score, _ in first)


@pytest.mark.model
def test_in_gemma_turns_too_the_embedded_backend_answers_as_llama_server_with_the_printed_flags(
    model: Path, gemma_turns_server: str, suite: Suite
) -> None:
    """A model whose own template is in Gemma's turns: gemma-tools.jinja, embedded and served, the same answers."""
    first, second, server = embedded_and_served(model, gemma_turns_server, suite, {"chat_template": str(GEMMA_TURNS)})
    assert first == server
    assert first == second
    assert any(calls for _, _, steps in first for _, calls in steps if calls)  # tool calls were parsed, and compared


CUT_SUITE_TEST: dict[str, Any] = {
    "name": "find_then_use",
    "category": "toolCalling",
    "tools": [FIND_USER],
    "steps": [
        {"prompt": ASK["content"], "checks": [{"type": "tool_called", "value": "find_user"}]},
        {
            "toolResult": '{"id": "USR-7431"}',
            "prompt": "Say the id.",
            "checks": [{"type": "contains", "value": "7431"}],
        },
    ],
}


@pytest.mark.model
def test_a_call_cut_at_the_token_limit_costs_the_test_never_the_level(tool_server: str, tmp_path: Path) -> None:
    """A real llama-server (tool template) cut after 13 tokens returns find_user's call with its arguments cut.

    Sent back, llama.cpp would refuse them (HTTP 500 "Failed to parse tool call arguments as JSON"): the
    conversation ends there, the later step is not sent, and the level is stored (exit 0)."""
    suite, store = tmp_path / "suite", tmp_path / "p.json"
    suite.mkdir()
    (suite / "01_find.json").write_text(json.dumps(CUT_SUITE_TEST), encoding="utf-8")
    args = ["run", ALIAS, "--base-url", f"{tool_server}/v1", "-e", "none", "--temperature", "0", "--seed", "42"]
    result = CliRunner().invoke(
        cli, [*args, "--max-tokens", "13", "--suite", str(suite), "--profiles", str(store), "--json", "--no-history"]
    )

    assert result.exit_code == 0, result.output
    (level,) = json.loads(result.stdout)["levels"]
    (test,) = level["tests"]
    assert test["status"] == "ok", test
    assert test["score"] < 1
    second = [c for c in test["checks"] if c["step"] == 1]
    assert [c["status"] for c in second] == ["failed"], second
    assert second[0]["detail"] == "not sent: step 0 was cut at the token limit in the middle of its find_user call"
    stored = json.loads(store.read_text(encoding="utf-8"))["suiteProfiles"][str(suite.resolve())]
    assert list(stored) == [f"{ALIAS}@none"]
