"""The embedded backend: model discovery, options and errors without a model, then the bundled SmolLM2 for real."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from history_helpers import invoke

from tsuka_core.backends import embedded, embedded_model, native_calls
from tsuka_core.backends.base import BackendConfig, ChatRequest, ChatResponse
from tsuka_core.backends.embedded import (
    INSTALL_MODEL,
    INSTALL_RUNTIME,
    MODELS_DIR_ENV,
    EmbeddedBackend,
    bundled_model_path,
    find_models,
)
from tsuka_core.backends.llama_runtime import (
    GEMMA_TOOL_TEMPLATE,
    TOOL_TEMPLATE,
    Cancelled,
    LlamaServer,
    ServerSettings,
    StreamedCompletion,
    Timings,
    tool_template_path,
)
from tsuka_core.errors import BackendError, RequestError
from tsuka_core.record import LevelRecord
from tsuka_core.suite.model import Suite

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
STOP_SECONDS = 45.0
"""Seconds an embedded run may take to exit after Ctrl-C: answers being generated stop at their next token
(under a second), but a prompt still being evaluated is finished first, which on a busy 2-core machine took up
to 21 s; a margin a loaded machine keeps, far below the minutes a run left to finish would take."""


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
        "sampling": {"temperature": 0.0, "seed": 42, "repeatPenalty": 1.0, "topK": 1, "maxTokens": 512}
    }
    tuned = backend(
        temperature=0.7,
        seed=7,
        options={"repeat_penalty": "1.1", "n_ctx": "2048", "threads": "2", "parallel": "3"},
    )
    assert tuned.profile_extra("m", "low") == {
        "sampling": {"temperature": 0.7, "seed": 7, "repeatPenalty": 1.1, "topK": 40, "maxTokens": 512}
    }
    assert (tuned.n_ctx, tuned.threads, tuned.parallel) == (2048, 2, 3)
    assert (backend().n_ctx, backend().threads, backend().parallel) == (4096, 0, 1)  # threads: chosen at load
    assert backend(options={"threads": "0", "parallel": "0"}).threads == 0
    assert backend().provider == "embedded"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"ctx": "1"},
            "no option 'ctx'; did you mean 'n_ctx'? "
            "(it reads: chat_template, n_ctx, parallel, repeat_penalty, threads)",
        ),
        ({"n_ctx": "big"}, "--option n_ctx='big' is not a number"),
        ({"threads": "-2"}, "--option threads='-2' must not be negative"),
    ],
)
def test_bad_options_are_refused(options: dict[str, str], message: str) -> None:
    with pytest.raises(BackendError, match=re.escape(message)):
        backend(options=options)


def test_the_request_body_is_the_openai_backends_with_sampling_always_given() -> None:
    request = ChatRequest("m", [{"role": "assistant", "content": None}], ({**FIND_USER, "requiredTier": "medium"},))
    body = backend(max_tokens=9).request_body(dataclasses.replace(request, effort="low", repeat=3))
    assert body == {
        "messages": [{"role": "assistant", "content": ""}],
        "max_tokens": 9,
        "tools": [FIND_USER],
        "tool_choice": "auto",
        "temperature": 0.0,
        "seed": 44,
        "reasoning_effort": "low",
    }
    assert backend().request_body(ChatRequest("m", []))["max_tokens"] == 512


class FakeServer:
    """Stands in for llama.cpp's server: records the bodies, answers from a script, honours ``stop``."""

    def __init__(self, model: FakeModel, tools: bool) -> None:
        self.model = model
        self.tools = tools

    def chat(self, body: dict[str, Any], stop: Callable[[], bool]) -> dict[str, Any]:
        model = self.model
        with model.lock:
            model.active += 1
            model.most_active = max(model.most_active, model.active)
            model.bodies.append((self.tools, body))
        try:
            for _ in range(model.tokens):  # one "token" per 10 ms until done or stopped
                if stop():
                    model.stopped += 1
                    raise Cancelled
                time.sleep(0.01)
        finally:
            with model.lock:
                model.active -= 1
        if model.answers:
            return model.answers.pop(0)
        message = {"role": "assistant", "content": "ok"}
        return {"choices": [{"message": message}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}

    def render_or_none(self, body: dict[str, Any]) -> str | None:
        if self.model.render_fails:
            return None
        return "".join(f"[{m['role']}] {m['content']}\n" for m in body["messages"]) + "[assistant]"


class FakeModel:
    """Stands in for a loaded model; the class keeps what every instance saw."""

    loads: ClassVar[list[Path]] = []
    closed: ClassVar[int] = 0
    current: ClassVar[FakeModel | None] = None
    load_seconds: ClassVar[float] = 0.0

    def __init__(
        self, path: Path, n_ctx: int, parallel: int, threads: int, sampling: embedded.Sampling, own: object = None
    ) -> None:
        del n_ctx, threads, sampling, own
        time.sleep(FakeModel.load_seconds)
        FakeModel.loads.append(path)
        FakeModel.current = self
        self.parallel = parallel
        self.lock = threading.Lock()
        self.bodies: list[tuple[bool, dict[str, Any]]] = []
        self.answers: list[dict[str, Any]] = []
        self.active = self.most_active = self.stopped = 0
        self.tokens = 1
        self.template = "model"
        self.own_for_tools = True
        self.render_fails = False

    def server_for(self, tools: bool) -> FakeServer:
        return FakeServer(self, tools)

    def effort_note(self) -> str | None:
        return "its chat template does not read reasoning_effort"

    def close(self) -> None:
        FakeModel.closed += 1


@pytest.fixture
def fake_model(fake_models: Path, monkeypatch: pytest.MonkeyPatch) -> type[FakeModel]:
    monkeypatch.setattr(FakeModel, "loads", [])
    monkeypatch.setattr(FakeModel, "closed", 0)
    monkeypatch.setattr(embedded_model, "LoadedModel", FakeModel)
    return FakeModel


def loaded() -> FakeModel:
    assert FakeModel.current is not None
    return FakeModel.current


def test_a_request_goes_to_the_tool_server_only_with_tools_and_the_model_loads_once(
    fake_model: type[FakeModel],
) -> None:
    subject = backend()

    async def main() -> list[ChatResponse]:
        replies = [
            await subject.complete(ChatRequest("Bundled.Q4", [{"role": "user", "content": "Hi"}], tools))
            for tools in ((FIND_USER,), ())
        ]
        await subject.aclose()
        return replies

    replies = asyncio.run(main())
    assert len(fake_model.loads) == 1
    assert fake_model.closed == 1
    assert [(tools, body.get("tools")) for tools, body in loaded().bodies] == [(True, [FIND_USER]), (False, None)]
    assert (replies[0].text, replies[0].prompt_tokens, replies[0].completion_tokens) == ("ok", 3, 1)
    assert replies[0].duration > 0


def at_once(subject: EmbeddedBackend, count: int) -> None:
    """One request (which loads the fake model), then ``count`` requests of 5 tokens each sent together."""

    async def main() -> None:
        request = ChatRequest("Bundled.Q4", [{"role": "user", "content": "Hi"}])
        await subject.complete(request)
        loaded().tokens = 5
        await asyncio.gather(*(subject.complete(request) for _ in range(count)))

    asyncio.run(main())


def test_at_most_parallel_requests_are_generated_at_once(fake_model: type[FakeModel]) -> None:
    subject = backend(max_tokens=7, options={"parallel": "2"})
    at_once(subject, 6)
    assert loaded().most_active == 2
    assert len(fake_model.loads) == 1
    assert {body["max_tokens"] for _, body in loaded().bodies} == {7}


def test_by_default_one_answer_is_generated_at_a_time_and_the_model_loads_with_one_slot(
    fake_model: type[FakeModel],
) -> None:
    """Batched decoding is not batch-invariant: by default no answer shares a batch with another, whatever -j sends;
    the record says so (compute.parallel), and a parallel above one is said in the run."""
    subject = backend()
    at_once(subject, 4)
    assert (loaded().most_active, loaded().parallel) == (1, 1)
    assert subject.profile_extra("Bundled.Q4", None)["compute"]["parallel"] == 1
    assert not any("batch-invariant" in note for note in subject.take_notes())
    batched = backend(options={"parallel": "4"})
    asyncio.run(batched.effort_ignored("Bundled.Q4"))
    assert embedded.BATCHED in batched.take_notes()


def test_a_cancelled_request_stops_its_generation_at_the_next_token(fake_model: type[FakeModel]) -> None:
    subject = backend()

    async def main() -> float:
        request = ChatRequest("Bundled.Q4", [{"role": "user", "content": "Hi"}])
        await subject.complete(request)
        loaded().tokens = 3000  # 30 s unless stopped
        task = asyncio.ensure_future(subject.complete(request))
        await asyncio.sleep(0.2)
        task.cancel()
        start = time.perf_counter()
        with pytest.raises(asyncio.CancelledError):
            await task
        await subject.aclose()
        return time.perf_counter() - start

    took = asyncio.run(main())  # returns at once: the generation stops in its own thread, not waited for
    assert took < 15  # the answer would go on for 30 s unless stopped
    for _ in range(1500):  # it stops at its next token (10 ms here); a loaded machine may take seconds
        if native_calls.running() == 0:
            break
        time.sleep(0.01)
    assert loaded().stopped == 1
    assert loaded().active == 0


def test_llama_cpp_tool_calls_become_tool_calls_and_missing_usage_is_estimated(fake_model: type[FakeModel]) -> None:
    subject = backend()
    asyncio.run(subject.list_models())
    call = {"id": "Xy7", "type": "function", "function": {"name": "find_user", "arguments": '{"name": "Ann"}'}}
    answer = {"choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [call]}}]}

    async def main() -> ChatResponse:
        request = ChatRequest("Bundled.Q4", [{"role": "user", "content": "Find Ann"}], (FIND_USER,))
        await subject.complete(dataclasses.replace(request, tools=()))
        loaded().answers.append(answer)
        return await subject.complete(request)

    reply = asyncio.run(main())
    assert (reply.text, reply.content) == ("", "")
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("Xy7", "find_user", {"name": "Ann"})]
    assert reply.usage_estimated
    assert reply.prompt_tokens is None


def test_each_answer_carries_the_prompt_its_template_rendered_or_none_when_it_cannot_be_had(
    fake_model: type[FakeModel],
) -> None:
    """The rendered prompt is asked of the server that answered, with the body it answered; a failure to render
    loses the prompt, never the answer."""
    subject = backend()
    request = ChatRequest("Bundled.Q4", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])

    async def main() -> list[ChatResponse]:
        first = await subject.complete(request)
        loaded().render_fails = True
        second = await subject.complete(request)
        await subject.aclose()
        return [first, second]

    first, second = asyncio.run(main())
    assert first.rendered_prompt == "[system] Be brief.\n[user] Hi\n[assistant]"
    assert (second.rendered_prompt, second.text) == (None, "ok")


@pytest.mark.parametrize("failure", [httpx.ConnectError("the server stopped"), ValueError("not JSON")])
def test_a_prompt_the_server_cannot_render_is_none_never_an_error(
    failure: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = LlamaServer.__new__(LlamaServer)

    def ask(*args: object) -> dict[str, Any]:
        raise failure

    monkeypatch.setattr(server, "_ask", ask, raising=False)
    assert server.render_or_none({"messages": []}) is None
    monkeypatch.setattr(server, "_ask", lambda *args: {"prompt": "<s>hi"}, raising=False)
    assert server.render_or_none({"messages": []}) == "<s>hi"
    monkeypatch.setattr(server, "_ask", lambda *args: {}, raising=False)
    assert server.render_or_none({"messages": []}) is None


@pytest.mark.parametrize(
    ("answer", "message", "status"),
    [
        (
            {"error": {"code": 400, "message": "request (5001 tokens) exceeds the available context size"}},
            "exceeds",
            400,
        ),
        ({"error": "boom"}, "boom", None),
        ({"choices": []}, "the answer has no choices", None),
    ],
)
def test_runtime_errors_are_request_errors(
    fake_model: type[FakeModel], answer: dict[str, Any], message: str, status: int | None
) -> None:
    subject = backend()

    async def main() -> None:
        request = ChatRequest("Bundled.Q4", [{"role": "user", "content": "Hi"}])
        await subject.complete(request)
        loaded().answers.append(answer)
        await subject.complete(request)

    with pytest.raises(RequestError, match=message) as caught:
        asyncio.run(main())
    assert caught.value.status == status
    assert str(caught.value).startswith("backend 'embedded', model Bundled.Q4: ")


def test_a_gguf_path_may_be_named_as_the_model(fake_model: type[FakeModel], tmp_path: Path) -> None:
    extra = tmp_path / "extra.gguf"
    extra.touch()
    ask(backend(), str(extra), "Hi")
    assert fake_model.loads == [extra]


def test_efforts_are_measured_once_when_the_template_does_not_read_them(fake_model: type[FakeModel]) -> None:
    note = asyncio.run(backend().effort_ignored("Bundled.Q4"))
    assert note == "its chat template does not read reasoning_effort"
    assert backend().effort_params("high") == {"reasoning_effort": "high"}


def test_a_model_that_cannot_load_fails_every_request_without_loading_again(
    fake_model: type[FakeModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[Path] = []

    def broken(path: Path, *args: object) -> None:
        attempts.append(path)
        raise BackendError(f"backend 'embedded' cannot load {path}: bad file")

    monkeypatch.setattr(embedded_model, "LoadedModel", broken)
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
def test_the_template_a_model_is_served_with_is_said_and_recorded(smol: tuple[EmbeddedBackend, str]) -> None:
    """The bundled model's own template renders no tools: tsuka's ChatML tool template serves it, and both the
    run (a note naming llama.cpp's generic tool handling) and the profile (chatTemplate) say so."""
    subject, model = smol
    said = asyncio.run(subject.effort_ignored(model))
    assert subject.profile_extra(model, None)["chatTemplate"] == "chatml-tools.jinja"
    assert said is not None
    assert said.startswith("its own chat template renders no tools")
    assert "llama.cpp's generic tool handling" in said  # one note says both, not two notes saying the template
    assert not any("chat template" in note for note in subject.take_notes())


@pytest.mark.model
def test_the_threads_a_model_loaded_with_are_said_and_recorded(smol: tuple[EmbeddedBackend, str]) -> None:
    """Chosen from the cores free when it loaded (no --option threads): the run says how many, the record keeps why."""
    subject, model = smol
    asyncio.run(subject.effort_ignored(model))
    compute = subject.profile_extra(model, None)["compute"]
    cores = len(os.sched_getaffinity(0))
    assert compute["chosenBy"] == "free cores"
    assert compute["cores"] == cores
    assert compute["threads"] == max(1, cores - compute["busyCores"])
    assert LevelRecord.parse({"compute": compute}).damaged == {}


@pytest.mark.model
def test_answers_do_not_depend_on_the_thread_count_or_what_is_decoded_beside_them() -> None:
    """One thread or two, each request alone or four decoded together: the same answers, call for call."""
    path = bundled_model_path()
    if importlib.util.find_spec("xllamacpp") is None or path is None:
        pytest.skip(f"the bundled model is not installed: {INSTALL_RUNTIME}, then {INSTALL_MODEL}")
    requests = [
        ChatRequest(path.stem, [{"role": "user", "content": ASK_ID}], (FIND_USER,)),
        ChatRequest(path.stem, [{"role": "user", "content": "List three prime numbers."}]),
        ChatRequest(path.stem, [{"role": "user", "content": "Write a haiku about rain."}]),
        ChatRequest(path.stem, [{"role": "user", "content": 'Reply with JSON: {"ok": true}'}]),
    ]

    async def answers(threads: int, together: bool) -> list[tuple[str, list[tuple[str, str]]]]:
        subject = backend(max_tokens=MAX_TOKENS, options={"threads": str(threads), "parallel": "4"})
        try:
            if together:
                got = await asyncio.gather(*(subject.complete(r) for r in requests))
            else:
                got = [await subject.complete(r) for r in requests]
        finally:
            await subject.aclose()
        return [(a.text, [(c.name, json.dumps(c.arguments, sort_keys=True)) for c in a.tool_calls]) for a in got]

    alone = asyncio.run(answers(1, together=False))
    assert asyncio.run(answers(2, together=False)) == alone
    assert asyncio.run(answers(1, together=True)) == alone
    assert any(calls for _, calls in alone)  # the tool request was answered with a call: calls are compared too


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
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("find_user", {"name": "Maria Rossi"})]
    assert reply.tool_calls[0].id
    assert reply.text == ""
    assert json.loads(reply.tool_calls[0].raw["function"]["arguments"]) == {"name": "Maria Rossi"}
    body = subject.request_body(ChatRequest(model, [{"role": "user", "content": ASK_ID}], (FIND_USER,)))
    assert reply.rendered_prompt == subject._loaded(subject.model_file(model)).server_for(True).render(body)
    assert f"<|im_start|>user\n{ASK_ID}<|im_end|>" in reply.rendered_prompt


@pytest.mark.model
def test_smollm2_is_served_with_the_packaged_tool_template(smol: tuple[EmbeddedBackend, str]) -> None:
    subject, model = smol
    note = asyncio.run(subject.effort_ignored(model))
    assert note is not None
    assert TOOL_TEMPLATE in note
    loaded = subject._loaded(subject.model_file(model))
    assert loaded.template == TOOL_TEMPLATE
    body = subject.request_body(ChatRequest(model, [{"role": "user", "content": ASK_ID}], (FIND_USER,)))
    prompt = loaded.server_for(True).render(body)
    assert "find_user(name: string) -> Find a user's id from their full name." in prompt
    assert prompt.endswith(f"<|im_start|>user\n{ASK_ID}<|im_end|>\n<|im_start|>assistant\n")
    example = '<|im_start|>assistant\n<tool_call>{"name": "lookup", "arguments": {"word": "cat"}}</tool_call>'
    assert example in prompt  # the example calls a tool that is not offered, never the one under test
    assert '{"name": "find_user"' not in prompt


@pytest.mark.model
def test_show_and_the_report_print_the_prompt_the_model_read(smol: tuple[EmbeddedBackend, str], tmp_path: Path) -> None:
    """`tsuka show --request` and the report print, after the request as sent, the prompt as its template rendered
    it: the system message, the tools and the question in ChatML, as the model read them."""
    _, model = smol
    store = tmp_path / "models_profile.json"
    args = ("--backend", "embedded", "--max-tokens", "32", "--profiles", store)
    ran = invoke("run", model, "-k", "trappola_astensione", "--no-cache", *args)
    assert ran.exit_code == 0, ran.stderr
    shown = invoke("show", "1", f"{model}@none", "trappola_astensione", "--request", "--profiles", store)
    assert shown.exit_code == 0, shown.stderr
    prompt = shown.stdout.split("── prompt of step 0 as the model read it (rendered by its chat template)\n", 1)[1]
    assert prompt.startswith("<|im_start|>system\n")
    assert "send_email(to: string, subject: string, body: string)" in prompt
    assert "tell me what the send_email tool is for.<|im_end|>\n<|im_start|>assistant\n" in prompt
    report = tmp_path / "report.html"
    assert invoke("report", "1", "-o", report, "--profiles", store).exit_code == 0
    page = report.read_text(encoding="utf-8")
    assert "<summary>Prompt as the model read it</summary><pre>&lt;|im_start|&gt;system" in page
    assert "<summary>Request as sent</summary>" in page


GEMMA_TURNS = Path(__file__).with_name("data") / "gemma-turns.jinja"
"""A chat template in Gemma's turn format, with no tools: the model's own as far as the backend can tell."""


def _bundled_or_skip() -> Path:
    path = bundled_model_path()
    if importlib.util.find_spec("xllamacpp") is None or path is None:
        pytest.skip(f"the bundled model is not installed: {INSTALL_RUNTIME}, then {INSTALL_MODEL}")
    return path


@pytest.fixture(scope="module")
def gemma_turns() -> Iterator[tuple[EmbeddedBackend, str]]:
    """The bundled model served with a template in Gemma's turns (``--option chat_template``)."""
    path = _bundled_or_skip()
    subject = backend(max_tokens=MAX_TOKENS, options={"chat_template": str(GEMMA_TURNS)})
    yield subject, path.stem
    asyncio.run(subject.aclose())


@pytest.mark.model
def test_a_model_in_gemma_turns_is_measured_in_them_with_the_tools_rendered_into_them(
    gemma_turns: tuple[EmbeddedBackend, str],
) -> None:
    """Its own template renders no tools and opens a user turn as Gemma does: gemma-tools.jinja serves it, renders
    a request without tools exactly as its own template, and llama.cpp parses the <tool_call> it answers."""
    subject, model = gemma_turns
    said = asyncio.run(subject.effort_ignored(model))
    assert said is not None
    assert said.startswith(
        "its own chat template renders no tools, so it is served in its own turn format with tsuka's tool template "
        "(gemma-tools.jinja); llama-server measures the same with --jinja --chat-template-file "
        f"{tool_template_path(GEMMA_TOOL_TEMPLATE)};"
    )
    assert said.endswith("; gemma-tools.jinja does not read reasoning_effort")
    assert subject.profile_extra(model, None)["chatTemplate"] == GEMMA_TOOL_TEMPLATE
    loaded = subject._loaded(subject.model_file(model))
    settings = ServerSettings(subject.model_file(model), 1024, 1, 1)
    own = LlamaServer(settings, GEMMA_TURNS.read_text(encoding="utf-8"))
    try:
        for messages in (
            [{"role": "system", "content": "Be brief."}, {"role": "user", "content": " Hi "}],
            [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "2+2?"},
            ],
        ):
            assert loaded.server_for(False).render({"messages": messages}) == own.render({"messages": messages})
    finally:
        own.close()
    reply = ask(subject, model, ASK_ID, [FIND_USER])
    assert reply.tool_calls[0].name == "find_user"
    assert reply.tool_calls[0].arguments == {"name": "Maria Rossi"}
    prompt = reply.rendered_prompt or ""
    assert prompt.endswith(f"<start_of_turn>user\n{ASK_ID}<end_of_turn>\n<start_of_turn>model\n")
    assert "find_user(name: string) -> Find a user's id from their full name." in prompt
    assert '<start_of_turn>model\n<tool_call>{"name": "lookup", "arguments": {"word": "cat"}}</tool_call>' in prompt
    assert "<|im_end|>" not in prompt
    result = {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": '{"id": "USR-7431"}'}
    call = {"role": "assistant", "content": None, "tool_calls": [reply.tool_calls[0].raw]}
    answered = ask(subject, model, [{"role": "user", "content": ASK_ID}, call, result, result], [FIND_USER])
    assert (answered.rendered_prompt or "").endswith(
        '<start_of_turn>user\n<tool_response>\n{"id": "USR-7431"}\n</tool_response>\n'
        '<tool_response>\n{"id": "USR-7431"}\n</tool_response><end_of_turn>\n<start_of_turn>model\n'
    )  # two results in one user turn: Gemma's turns alternate


@pytest.fixture(scope="module")
def without_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model's file with its chat template's key renamed: a GGUF file that carries no template."""
    data = _bundled_or_skip().read_bytes()
    key = b"tokenizer.chat_template"
    assert data.count(key) == 1
    copy = tmp_path_factory.mktemp("untemplated") / "untemplated.gguf"
    copy.write_bytes(data.replace(key, b"tokenizer.chat_templatX"))
    return copy


@pytest.mark.model
def test_a_file_without_a_chat_template_is_said_to_carry_none_and_served_as_llama_cpp_serves_it(
    without_template: Path,
) -> None:
    """llama.cpp falls back to ChatML for such a file (llama-server too): the ChatML tool template, said as such."""
    subject = backend(max_tokens=MAX_TOKENS, model_path=str(without_template))
    try:
        said = asyncio.run(subject.effort_ignored("untemplated"))
        assert said is not None
        assert said.startswith(
            "the GGUF file carries no chat template, so llama.cpp serves it as ChatML (llama-server too); tools are "
            "rendered into ChatML by tsuka's tool template (chatml-tools.jinja); llama-server measures the same"
        )
        assert subject.profile_extra("untemplated", None)["chatTemplate"] == TOOL_TEMPLATE
    finally:
        asyncio.run(subject.aclose())
    smol = backend(max_tokens=MAX_TOKENS)
    try:  # a file that carries one is not said to lack it
        assert not (asyncio.run(smol.effort_ignored(_bundled_or_skip().stem)) or "").startswith("the GGUF file")
    finally:
        asyncio.run(smol.aclose())


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (None, "--option chat_template=FILE: no such file"),
        (b"", "--option chat_template=FILE is empty"),
        (b"\xff\xfe{{", "--option chat_template=FILE is not UTF-8 text"),
        (b" " * (1024 * 1024 + 1), "--option chat_template=FILE is larger than 1024 KB: not a chat template"),
    ],
)
def test_a_chat_template_option_that_cannot_be_used_is_a_one_line_error(
    tmp_path: Path, write: bytes | None, message: str
) -> None:
    path = tmp_path / "t.jinja"
    if write is not None:
        path.write_bytes(write)
    with pytest.raises(BackendError) as raised:
        backend(options={"chat_template": str(path)})
    assert str(raised.value) == f"backend 'embedded': {message.replace('FILE', str(path))}"


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

    seeds = [sampled.request_body(dataclasses.replace(request, repeat=k))["seed"] for k in (1, 2, 3)]

    assert seeds == [5, 6, 7]
    assert sampled.repeats_note() is None
    note = backend().repeats_note()
    assert note is not None
    assert "temperature 0 (greedy)" in note


@pytest.mark.model
def test_ctrl_c_stops_an_embedded_run_at_once_and_exits_130(smol: tuple[EmbeddedBackend, str], tmp_path: Path) -> None:
    """SIGINT once the first test has finished: the answers being generated stop, the process exits promptly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}
    command = [str(Path(sys.executable).with_name("tsuka")), "run", "all", "--profiles", str(tmp_path / "p.json")]
    process = subprocess.Popen(
        [*command, "--no-history"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509  (a shell may start us with SIGINT ignored)
    )
    try:
        assert process.stderr is not None
        lines = []
        for line in process.stderr:  # a progress line per finished test: "MODEL@none 1/7 NAME SCORE [T s]"
            lines.append(line)
            if " 1/7 " in line or len(lines) > 100:
                break
        assert " 1/7 " in lines[-1], lines
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = process.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert took < STOP_SECONDS, f"exit took {took:.1f} s"
    assert "tsuka: interrupted" in err
    assert "Traceback" not in err


def test_streamed_chunks_are_put_back_together_as_the_servers_completion() -> None:
    function = {"name": "find_user", "arguments": '{"name": "Ann"}'}
    answer = StreamedCompletion()
    call = {"index": 0, "id": "Ab1", "type": "function", "function": {"name": "find_user", "arguments": '{"na'}}
    for chunk in (
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]},
        {"choices": [{"index": 0, "delta": {"content": "Sure"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 'me": "Ann"}'}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "timings": {"predicted_n": 9}},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9}},
    ):
        answer.add(chunk)
    assert answer.result() == {
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Sure",
                    "tool_calls": [{"type": "function", "id": "Ab1", "function": function}],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "timings": {"predicted_n": 9},
        "usage": {"prompt_tokens": 5, "completion_tokens": 9},
    }
    refused = StreamedCompletion()
    refused.add({"error": {"code": 400, "message": "too long"}})
    assert refused.result() == {"error": {"code": 400, "message": "too long"}}


def test_llama_cpp_timings_are_summed_and_malformed_ones_ignored() -> None:
    timings = Timings()
    timings.add({"prompt_n": 10, "prompt_ms": 20.0, "predicted_n": 5, "predicted_ms": 50.0, "cache_n": 0})
    timings.add({"prompt_n": 1, "prompt_ms": 2.5, "predicted_n": 2, "predicted_ms": 10.0})
    for bad in (None, {"prompt_n": 1}, {"prompt_n": "x", "prompt_ms": 1, "predicted_n": 1, "predicted_ms": 1}):
        timings.add(bad)
    assert timings == Timings(requests=2, prompt_n=11, prompt_ms=22.5, predicted_n=7, predicted_ms=60.0)


def test_the_tool_templates_example_never_calls_an_offered_tool() -> None:
    """A test offering a tool named like the example's own gets another example name (rendered with Jinja alone)."""
    jinja2 = pytest.importorskip("jinja2")
    template = jinja2.Environment().from_string(embedded_model.tool_template())
    lookup = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    for tools, example in (([FIND_USER], "lookup"), ([FIND_USER, lookup], "example_lookup")):
        prompt = template.render(messages=[{"role": "user", "content": "Hi"}], tools=tools, add_generation_prompt=True)
        assert f'<tool_call>{{"name": "{example}", "arguments": {{"word": "cat"}}}}</tool_call>' in prompt
        offered = {t["function"]["name"] for t in tools}
        assert not any(f'{{"name": "{name}"' in prompt for name in offered)


def test_serve_refuses_what_it_cannot_serve_in_one_line(tmp_path: Path) -> None:
    """A port in use, a model it does not know, an option the embedded backend does not read: one line, exit 2,
    before any model is loaded."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        busy = invoke("serve", "--port", str(port))
    assert busy.exit_code == 2
    assert busy.stderr == (
        f"tsuka: error: --port {port}: cannot listen on 127.0.0.1:{port} (Address already in use); "
        "pick another port, or 0 for a free one\n"
    )
    unknown = invoke("serve", "no-such-model", "--model-path", tmp_path / "none.gguf")
    assert unknown.exit_code == 2
    assert unknown.stderr.startswith("tsuka: error: backend 'embedded': model file not found:")
    option = invoke("serve", "--option", "bogus=1")
    assert (option.exit_code, option.stderr.count("\n")) == (2, 1)
    assert "backend 'embedded' has no option 'bogus'" in option.stderr


def test_a_note_is_taken_for_its_own_model_and_a_general_one_by_whichever_asks_first() -> None:
    """Two models measured at once share the backend: each level takes the notes added for its model, and those
    for none in particular, never the other model's."""
    subject = backend()
    subject.add_note("threads of a", "a")
    subject.add_note("the machine is busy")
    subject.add_note("threads of b", "b")
    assert subject.take_notes("a") == ["threads of a", "the machine is busy"]
    assert subject.take_notes("a") == []
    subject.add_note("template of a", "a")
    assert subject.take_notes("b") == ["threads of b"]
    assert subject.take_notes() == ["template of a"]


def test_models_measured_together_each_say_their_own_load_notes(
    fake_model: type[FakeModel], fake_models: Path, monkeypatch: pytest.MonkeyPatch, suite: Suite
) -> None:
    """`tsuka run all` sweeps the models at once: the threads each loaded with are said under its own name."""
    from tsuka_core.engine.sweep import ModelSweep, sweep_models

    monkeypatch.setenv(MODELS_DIR_ENV, str(fake_models))
    monkeypatch.setattr(FakeModel, "load_seconds", 0.3)  # the two loads overlap, as real ones do
    said: list[str] = []

    class Notes:
        def level_started(self, *args: object) -> None: ...
        def test_done(self, *args: object) -> None: ...
        def note(self, message: str) -> None:
            said.append(message)

    async def keep(swept: ModelSweep) -> None: ...

    async def main() -> None:
        subject = backend(options={"parallel": "2"})
        await sweep_models(subject, suite, ["a-model", "b-model"], ("none",), observer=Notes(), on_model=keep)
        await subject.aclose()

    asyncio.run(main())
    loads = [note for note in said if "thread(s)" in note]
    assert sorted(note.split(":")[0] for note in loads) == ["a-model", "b-model"]
    assert sorted(note.split(":")[0] for note in said if embedded.BATCHED in note) == ["a-model", "b-model"]
