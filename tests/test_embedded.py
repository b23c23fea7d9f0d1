"""The embedded backend: model discovery, options and errors without a model, then the bundled SmolLM2 for real."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from tsuka_core.backends import embedded
from tsuka_core.backends.base import BackendConfig, ChatRequest, ChatResponse
from tsuka_core.backends.chatml import render_prompt
from tsuka_core.backends.embedded import (
    INSTALL_MODEL,
    INSTALL_RUNTIME,
    MODELS_DIR_ENV,
    EmbeddedBackend,
    bundled_model_path,
    find_models,
)
from tsuka_core.errors import BackendError, RequestError

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
ASK_ID = "Please find the user id for Maria Rossi."
MAX_TOKENS = 64


def backend(**config: Any) -> EmbeddedBackend:
    return EmbeddedBackend(BackendConfig(**config), httpx.AsyncClient())


def ask(
    subject: EmbeddedBackend, model: str, text: str | Sequence[Mapping[str, Any]], tools: Sequence[Any] = ()
) -> ChatResponse:
    messages = [{"role": "user", "content": text}] if isinstance(text, str) else list(text)
    return asyncio.run(subject.complete(ChatRequest(model, messages, tuple(tools))))


@pytest.fixture(autouse=True)
def _no_models_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODELS_DIR_ENV, raising=False)


@pytest.fixture
def fake_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bundled model, and a models folder, made of empty files (nothing is loaded)."""
    bundled = tmp_path / "pkg" / "Bundled.Q4.gguf"
    bundled.parent.mkdir()
    bundled.touch()
    monkeypatch.setattr(embedded, "bundled_model_path", lambda: bundled)
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("b-model.gguf", "a-model.GGUF", "notes.txt", "Bundled.Q4.gguf"):
        (folder / name).touch()
    (folder / "sub.gguf").mkdir()
    return folder


# discovery, options and errors: no model needed


def test_models_are_the_bundled_one_then_model_path_then_the_folder_in_name_order(
    fake_models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "mine.gguf"
    mine.touch()
    monkeypatch.setenv(MODELS_DIR_ENV, str(fake_models))
    names = asyncio.run(backend(model_path=str(mine)).list_models())
    assert names == ["Bundled.Q4", "mine", "a-model", "b-model"]
    assert find_models(None, str(fake_models))["Bundled.Q4"].parent.name == "pkg"


def test_a_missing_model_path_or_models_folder_is_a_one_line_error(fake_models: Path, tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"model file not found: .*nope\.gguf \(check --model-path\)"):
        find_models(tmp_path / "nope.gguf")
    with pytest.raises(BackendError, match=rf"{MODELS_DIR_ENV}=.* is not a folder"):
        find_models(None, str(tmp_path / "missing"))


def test_no_model_at_all_says_how_to_install_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "bundled_model_path", lambda: None)
    with pytest.raises(BackendError) as caught:
        asyncio.run(backend().list_models())
    message = str(caught.value)
    assert "\n" not in message
    assert INSTALL_MODEL in message
    assert MODELS_DIR_ENV in message


def test_an_unknown_model_name_lists_the_known_ones(fake_models: Path) -> None:
    with pytest.raises(BackendError, match=r"no model 'other'; available: Bundled\.Q4"):
        ask(backend(), "other", "Hi")


def test_without_xllamacpp_the_error_says_what_to_install(fake_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes ``import xllamacpp`` raise ImportError
    with pytest.raises(BackendError) as caught:
        ask(backend(), "Bundled.Q4", "Hi")
    message = str(caught.value)
    assert "\n" not in message
    assert INSTALL_RUNTIME in message
    assert "xllamacpp" in message


def test_sampling_is_pinned_recorded_and_overridable() -> None:
    assert backend().profile_extra("m", None) == {
        "sampling": {"temperature": 0.0, "seed": 42, "repeatPenalty": 1.0, "topK": 1}
    }
    tuned = backend(temperature=0.7, seed=7, options={"repeat_penalty": "1.1", "n_ctx": "2048", "threads": "2"})
    assert tuned.profile_extra("m", "low") == {
        "sampling": {"temperature": 0.7, "seed": 7, "repeatPenalty": 1.1, "topK": 40}
    }
    assert (tuned.n_ctx, tuned.threads) == (2048, 2)
    assert (backend().n_ctx, backend().threads) == (4096, 1)
    assert backend(options={"threads": "0"}).threads is None
    assert EmbeddedBackend.applies_effort is False
    assert backend().provider == "embedded"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ctx": "1"}, "has no option 'ctx'; it reads: n_ctx, repeat_penalty, threads"),
        ({"n_ctx": "big"}, "--option n_ctx='big' is not a number"),
        ({"threads": "-2"}, "--option threads='-2' must not be negative"),
    ],
)
def test_bad_options_are_refused(options: dict[str, str], message: str) -> None:
    with pytest.raises(BackendError, match=message.replace("(", r"\(").replace(")", r"\)")):
        backend(options=options)


class FakeRuntime:
    """Stands in for the loaded model: records what it is asked and answers from a script."""

    loads: ClassVar[list[Path]] = []
    payloads: ClassVar[list[dict[str, object]]] = []
    answers: ClassVar[list[dict[str, Any]]] = []
    active: ClassVar[int] = 0
    most_active: ClassVar[int] = 0
    closed: ClassVar[int] = 0

    def __init__(self, path: Path, n_ctx: int, threads: int | None, sampling: embedded.Sampling) -> None:
        del n_ctx, threads, sampling
        FakeRuntime.loads.append(path)

    def complete(self, payload: dict[str, object]) -> dict[str, Any]:
        FakeRuntime.active += 1
        FakeRuntime.most_active = max(FakeRuntime.most_active, FakeRuntime.active)
        time.sleep(0.01)
        FakeRuntime.active -= 1
        FakeRuntime.payloads.append(payload)
        if FakeRuntime.answers:
            return FakeRuntime.answers.pop(0)
        return {"choices": [{"text": "ok"}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}

    def close(self) -> None:
        FakeRuntime.closed += 1


@pytest.fixture
def fake_runtime(fake_models: Path, monkeypatch: pytest.MonkeyPatch) -> type[FakeRuntime]:
    for name in ("loads", "payloads", "answers"):
        monkeypatch.setattr(FakeRuntime, name, [])
    for name in ("active", "most_active", "closed"):
        monkeypatch.setattr(FakeRuntime, name, 0)
    monkeypatch.setattr(embedded, "_Runtime", FakeRuntime)
    return FakeRuntime


def test_a_request_is_rendered_with_pinned_sampling_and_the_model_loaded_once(fake_runtime: type[FakeRuntime]) -> None:
    subject = backend()
    messages = [{"role": "user", "content": "Hi"}]

    async def main() -> list[ChatResponse]:
        replies = [await subject.complete(ChatRequest("Bundled.Q4", messages, (FIND_USER,))) for _ in range(2)]
        await subject.aclose()
        return replies

    replies = asyncio.run(main())
    assert len(fake_runtime.loads) == 1
    assert fake_runtime.closed == 1
    assert fake_runtime.payloads[0] == {
        "prompt": render_prompt(messages, [FIND_USER]),
        "max_tokens": 512,
        "stop": ["<|im_end|>"],
        "cache_prompt": False,
        "temperature": 0.0,
        "seed": 42,
        "repeat_penalty": 1.0,
        "top_k": 1,
    }
    assert (replies[0].text, replies[0].prompt_tokens, replies[0].completion_tokens) == ("ok", 3, 1)
    assert replies[0].duration > 0


def test_requests_to_one_model_run_one_at_a_time(fake_runtime: type[FakeRuntime]) -> None:
    subject = backend(max_tokens=7)

    async def main() -> None:
        request = ChatRequest("Bundled.Q4", [{"role": "user", "content": "Hi"}])
        await asyncio.gather(*(subject.complete(request) for _ in range(6)))

    asyncio.run(main())
    assert fake_runtime.most_active == 1
    assert len(fake_runtime.loads) == 1
    assert {payload["max_tokens"] for payload in fake_runtime.payloads} == {7}


def test_calls_in_the_text_become_tool_calls_and_missing_usage_is_estimated(fake_runtime: type[FakeRuntime]) -> None:
    text = 'Sure.<tool_call>{"name": "find_user", "arguments": {"name": "Ann"}}</tool_call>'
    fake_runtime.answers.append({"choices": [{"text": text}]})
    reply = ask(backend(), "Bundled.Q4", "Find Ann", [FIND_USER])
    assert (reply.text, reply.content) == ("Sure.", text)
    assert [(call.id, call.name, call.arguments) for call in reply.tool_calls] == [
        ("call_0", "find_user", {"name": "Ann"})
    ]
    assert reply.usage_estimated
    assert reply.completion_tokens == round(len(text) / 3.5)
    assert reply.prompt_tokens is None


@pytest.mark.parametrize(
    ("answer", "message", "status"),
    [
        (
            {"error": {"code": 400, "message": "request (5001 tokens) exceeds the available context size"}},
            "exceeds",
            400,
        ),
        ({"error": "boom"}, "boom", None),
        ({"choices": []}, "the runtime returned no text", None),
    ],
)
def test_runtime_errors_are_request_errors(
    fake_runtime: type[FakeRuntime], answer: dict[str, Any], message: str, status: int | None
) -> None:
    fake_runtime.answers.append(answer)
    with pytest.raises(RequestError, match=message) as caught:
        ask(backend(), "Bundled.Q4", "Hi")
    assert caught.value.status == status
    assert str(caught.value).startswith("backend 'embedded', model Bundled.Q4: ")


def test_a_gguf_path_may_be_named_as_the_model(fake_runtime: type[FakeRuntime], tmp_path: Path) -> None:
    extra = tmp_path / "extra.gguf"
    extra.touch()
    ask(backend(), str(extra), "Hi")
    assert fake_runtime.loads == [extra]


def test_a_model_that_cannot_load_fails_every_request_without_loading_again(
    fake_runtime: type[FakeRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[Path] = []

    def broken(path: Path, *args: object) -> None:
        attempts.append(path)
        raise BackendError(f"backend 'embedded' cannot load {path}: bad file")

    monkeypatch.setattr(embedded, "_Runtime", broken)
    subject = backend()
    for _ in range(2):
        with pytest.raises(BackendError, match=r"cannot load .*Bundled\.Q4\.gguf: bad file"):
            ask(subject, "Bundled.Q4", "Hi")
    assert len(attempts) == 1


@pytest.mark.model
def test_a_file_that_is_not_a_model_is_a_one_line_load_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed: {INSTALL_RUNTIME}")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(BackendError, match=r"backend 'embedded' cannot load .*broken\.gguf: ") as caught:
        ask(backend(model_path=str(broken)), "broken", "Hi")
    assert "\n" not in str(caught.value)


def test_importing_tsuka_does_not_import_the_runtime() -> None:
    code = "import sys, tsuka_core, tsuka_core.backends.embedded; print('xllamacpp' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "False"


# the bundled model, for real


@pytest.fixture(scope="module")
def smol() -> Iterator[tuple[EmbeddedBackend, str]]:
    """The backend with the bundled SmolLM2 (loaded on first use), and the model's name."""
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed: {INSTALL_RUNTIME}")
    path = bundled_model_path()
    if path is None:
        pytest.skip(f"the bundled SmolLM2 model is not installed: {INSTALL_MODEL}")
    subject = backend(max_tokens=MAX_TOKENS)
    yield subject, path.stem
    asyncio.run(subject.aclose())


@pytest.mark.model
def test_list_models_finds_the_bundled_model(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    assert model == "SmolLM2-135M-Instruct.Q4_1"
    assert asyncio.run(subject.list_models())[0] == model


@pytest.mark.model
def test_a_plain_answer(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    reply = ask(subject, model, "What is the capital of France? Answer in one word.")
    assert "Paris" in reply.text
    assert reply.tool_calls == ()
    assert reply.content is not None
    assert reply.text == reply.content.strip()
    assert reply.prompt_tokens is not None
    assert reply.prompt_tokens > 0
    assert 0 < reply.completion_tokens <= MAX_TOKENS
    assert not reply.usage_estimated
    assert reply.duration > 0


@pytest.mark.model
def test_a_tool_call_is_parsed_from_the_model(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    reply = ask(subject, model, ASK_ID, [FIND_USER])
    assert [(call.id, call.name, call.arguments) for call in reply.tool_calls] == [
        ("call_0", "find_user", {"name": "Maria Rossi"})
    ]
    assert reply.text == ""
    assert json.loads(reply.tool_calls[0].raw["function"]["arguments"]) == {"name": "Maria Rossi"}


@pytest.mark.model
def test_the_same_request_gives_the_same_answer(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    first = ask(subject, model, "Write one sentence about the sea.")
    ask(subject, model, "Write one sentence about the moon.")  # another prompt with the same beginning
    second = ask(subject, model, "Write one sentence about the sea.")
    assert first.content == second.content
    assert first.completion_tokens == second.completion_tokens


@pytest.mark.model
def test_a_text_answer_stays_possible_with_tools_offered(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    reply = ask(subject, model, "What is 2+2?", [FIND_USER])
    assert reply.tool_calls == ()
    assert "4" in reply.text


@pytest.mark.model
def test_a_conversation_with_a_tool_result_is_answered(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "find_user", "arguments": '{"name": "Maria Rossi"}'},
    }
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": ASK_ID},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": '{"id": "USR-7431"}'},
        {"role": "user", "content": "Thanks."},
    ]
    reply = ask(subject, model, messages, [FIND_USER])
    assert reply.completion_tokens > 0


@pytest.mark.model
def test_a_prompt_longer_than_the_context_is_a_request_error(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    with pytest.raises(RequestError, match="exceeds the available context size") as caught:
        ask(subject, model, "word " * 5000)
    assert caught.value.status == 400


@pytest.mark.model
def test_the_runtime_keeps_stdout_and_stderr_clean(smol: tuple[EmbeddedBackend, str]) -> None:
    code = (
        "import asyncio, sys, httpx\n"
        "from tsuka_core.backends.base import BackendConfig, ChatRequest\n"
        "from tsuka_core.backends.embedded import EmbeddedBackend\n"
        "async def main():\n"
        "    backend = EmbeddedBackend(BackendConfig(max_tokens=4), httpx.AsyncClient())\n"
        "    await backend.complete(ChatRequest(sys.argv[1], [{'role': 'user', 'content': 'Hi'}]))\n"
        "    await backend.aclose()\n"
        "asyncio.run(main())\n"
    )
    command = [sys.executable, "-c", code, smol[1]]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    assert (result.stdout, result.stderr) == ("", "")


def test_run_k_of_a_repeated_test_samples_with_seed_plus_k_minus_one() -> None:
    request = ChatRequest("m", [{"role": "user", "content": "Hi"}])
    sampled = backend(temperature=0.7, seed=5)

    seeds = [sampled.completion_fields(dataclasses.replace(request, repeat=k))["seed"] for k in (1, 2, 3)]

    assert seeds == [5, 6, 7]
    assert sampled.repeats_note() is None
    note = backend().repeats_note()
    assert note is not None
    assert "temperature 0 (greedy)" in note
