"""One GGUF model served in-process by llama.cpp's own server code (xllamacpp), asked for chat completions.

The request is an OpenAI chat-completion body; llama.cpp renders it with a Jinja
chat template (the model's own, or one of :data:`TOOL_TEMPLATES`), samples, and parses
tool calls itself, exactly as ``llama-server --jinja`` does. Answers are
streamed token by token only so that a request can be stopped between two
tokens: the pieces are put back together into the one ``chat.completion``
object the server would have sent.

This is the only module that touches xllamacpp's untyped objects; xllamacpp
is imported when a model is first loaded, so ``import tsuka_core`` stays fast.
"""

from __future__ import annotations

import importlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tsuka_core.errors import BackendError, RequestError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "FALLBACK_TEMPLATE",
    "GEMMA_TOOL_TEMPLATE",
    "LLAMA_CPP_TIMINGS",
    "TOOL_TEMPLATE",
    "TOOL_TEMPLATES",
    "Cancelled",
    "LlamaServer",
    "ServerSettings",
    "StreamedCompletion",
    "Timings",
    "raise_refusal",
    "tool_template",
    "tool_template_path",
]

TOOL_TEMPLATE = "chatml-tools.jinja"
"""The ChatML tool template shipped in ``tsuka_core/backends/templates/``."""
GEMMA_TOOL_TEMPLATE = "gemma-tools.jinja"
"""The tool template in Gemma's turns, shipped beside :data:`TOOL_TEMPLATE`."""
TOOL_TEMPLATES: Mapping[str, str] = {"<|im_start|>user\n": TOOL_TEMPLATE, "<start_of_turn>user\n": GEMMA_TOOL_TEMPLATE}
"""The tool template for a model whose own template renders no tools, by how its own template opens a user turn
(not by its first marker: SmolLM2's beginning-of-text token is ``<|im_start|>``, whatever the turns)."""
FALLBACK_TEMPLATE = (  # the newlines inside the quoted strings are real ones, as in llama.cpp's C source
    "{%- for message in messages -%}\n"
    "  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "  {{- '<|im_start|>assistant\n' -}}\n"
    "{%- endif -%}"
)
"""The template llama.cpp serves a GGUF file with when the file carries none (its ``CHATML_TEMPLATE_SRC``), as
``GET /props`` reports it."""
LLAMA_CPP_TIMINGS: Mapping[str, str] = {
    "generated_tokens": "timings.predicted_n",
    "generation_ms": "timings.predicted_ms",
    "prompt_processed": "timings.prompt_n",
    "prompt_ms": "timings.prompt_ms",
}
"""llama.cpp's names for the timings of an answer (``Backend.server_timing_names`` of the backends that read them)."""
INSTALL_RUNTIME = "pip install 'tsuka[embedded]'"


def tool_template(name: str = TOOL_TEMPLATE) -> str:
    """The text of the tool template ``name`` (:data:`TOOL_TEMPLATE` or :data:`GEMMA_TOOL_TEMPLATE`)."""
    return files("tsuka_core.backends").joinpath("templates", name).read_text(encoding="utf-8")


def tool_template_path(name: str = TOOL_TEMPLATE) -> str:
    """Where the tool template ``name`` is installed: the file ``llama-server --chat-template-file`` takes."""
    return str(files("tsuka_core.backends").joinpath("templates", name))


class Cancelled(BackendError):  # noqa: N818  (a condition, not a failure)
    """The request was stopped before its answer was complete."""


@dataclass(frozen=True)
class ServerSettings:
    """How a model is served: context per sequence, parallel sequences, threads and default sampling."""

    path: Path
    n_ctx: int
    """Tokens of context each sequence may use."""
    parallel: int
    """Sequences decoded together (llama.cpp's slots, ``-np``)."""
    threads: int
    sampling: Mapping[str, float | int] = field(default_factory=dict)
    """``temperature``, ``top_k``, ``seed``, ``repeat_penalty``: the server's defaults for every request."""
    host: str = "127.0.0.1"
    port: int = 0
    """0: a free port, picked by the server."""
    alias: str | None = None
    """The name ``/v1/models`` lists; None: the file's stem."""


@dataclass
class Timings:
    """llama.cpp's own timings (the ``timings`` of its answers) summed over requests."""

    requests: int = 0
    prompt_n: int = 0
    """Prompt tokens evaluated."""
    prompt_ms: float = 0.0
    predicted_n: int = 0
    """Tokens generated."""
    predicted_ms: float = 0.0

    def add(self, timings: object) -> None:
        """Add one answer's ``timings`` object (ignored when absent or malformed)."""
        if not isinstance(timings, Mapping):
            return
        try:
            prompt_n, prompt_ms = int(timings["prompt_n"]), float(timings["prompt_ms"])
            predicted_n, predicted_ms = int(timings["predicted_n"]), float(timings["predicted_ms"])
        except (KeyError, TypeError, ValueError):
            return
        self.requests += 1
        self.prompt_n += prompt_n
        self.prompt_ms += prompt_ms
        self.predicted_n += predicted_n
        self.predicted_ms += predicted_ms


def _import_runtime() -> Any:
    try:
        return importlib.import_module("xllamacpp")
    except ImportError as error:
        raise BackendError(
            f"backend 'embedded' needs the llama.cpp runtime xllamacpp: {INSTALL_RUNTIME} ({error})"
        ) from error


def _params(runtime: Any, settings: ServerSettings, template: str | None, key: str | None) -> Any:
    """llama.cpp's server parameters, as ``llama-server`` would set them from its flags (``key``: ``--api-key``)."""
    params = runtime.CommonParams()
    params.model.path = str(settings.path)
    params.model_alias = {settings.alias or settings.path.stem}
    params.n_parallel = settings.parallel
    params.n_ctx = settings.n_ctx * settings.parallel  # -c is shared by the slots
    params.kv_unified = False
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.threads
    params.cache_prompt = False  # --no-cache-prompt: every prompt is evaluated whole
    # -fa off: with flash attention an answer's last digits depended on how long the other slots' sequences
    # were, so parallel slots made a long answer differ from run to run
    params.flash_attn_type = runtime.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED
    params.use_jinja = True
    if template is not None:
        params.chat_template = template
    sampling = settings.sampling
    params.sampling.temp = float(sampling.get("temperature", 0.0))
    params.sampling.top_k = int(sampling.get("top_k", 1))
    params.sampling.seed = int(sampling.get("seed", 42))
    params.sampling.penalty_repeat = float(sampling.get("repeat_penalty", 1.0))
    params.hostnames = [settings.host]
    params.port = settings.port
    params.n_threads_http = 1
    params.api_keys = [key] if key is not None else []
    params.verbosity = 0
    return params


class StreamedCompletion:
    """The chunks of one streamed answer, put back together as the ``chat.completion`` the server would send."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.extra: dict[str, Any] = {}
        self.error: Any = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        """Take in one chunk (or the error the runtime sent instead)."""
        if "error" in chunk or "choices" not in chunk:
            self.error = chunk.get("error", chunk)
            return
        for key in ("usage", "timings", "id", "model"):
            if chunk.get(key) is not None:
                self.extra[key] = chunk[key]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            if isinstance(delta.get("reasoning_content"), str):
                self.reasoning.append(delta["reasoning_content"])
            for call in delta.get("tool_calls") or ():
                self._add_call(call)

    def _add_call(self, piece: Mapping[str, Any]) -> None:
        call = self.calls.setdefault(int(piece.get("index", 0)), {"type": "function", "function": {"arguments": ""}})
        if piece.get("id"):
            call["id"] = piece["id"]
        function = piece.get("function") or {}
        if function.get("name"):
            call["function"]["name"] = function["name"]
        call["function"]["arguments"] += function.get("arguments") or ""

    def result(self) -> dict[str, Any]:
        """The whole answer, or ``{"error": ...}`` when the runtime refused the request."""
        if self.error is not None:
            return {"error": self.error}
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content)}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.calls:
            message["tool_calls"] = [self.calls[index] for index in sorted(self.calls)]
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {"object": "chat.completion", "choices": [choice], **self.extra}


class LlamaServer:
    """One loaded model and llama.cpp's server loop around it, listening on ``settings.host`` (127.0.0.1 unless
    said otherwise), behind a random key unless ``guarded`` is False (``tsuka serve``)."""

    def __init__(self, settings: ServerSettings, template: str | None = None, *, guarded: bool = True) -> None:
        import httpx

        runtime = _import_runtime()
        self._key = secrets.token_hex(16) if guarded else None
        try:
            self._server: Any = runtime.Server(_params(runtime, settings, template, self._key))
        except Exception as error:
            raise BackendError(f"backend 'embedded' cannot load {settings.path}: {error}") from error
        self.url = str(self._server.listening_address)
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self._client: httpx.Client | None = httpx.Client(
            base_url=self.url, headers=headers, timeout=60, trust_env=False
        )
        """One client for every question asked of the server, from any thread (a new one costs about 20 ms)."""

    def _ask(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        import httpx

        if self._client is None:  # as before the client was kept: a closed server cannot be reached
            raise httpx.ConnectError(f"the server at {self.url} was closed")
        reply = self._client.request(method, path, json=body)
        data = reply.json()
        return data if isinstance(data, dict) else {}

    def props(self) -> dict[str, Any]:
        """llama.cpp's ``GET /props``: the chat template and what it can do (``chat_template_caps``)."""
        return self._ask("GET", "/props")

    def render(self, body: Mapping[str, Any]) -> str:
        """The prompt llama.cpp renders for a chat-completion body (``POST /apply-template``)."""
        return str(self._ask("POST", "/apply-template", dict(body)).get("prompt", ""))

    def render_or_none(self, body: Mapping[str, Any]) -> str | None:
        """:meth:`render`, or None when the server cannot say (an answer stands without its prompt)."""
        import httpx

        try:
            return self.render(body) or None
        except (httpx.HTTPError, ValueError):
            return None

    def chat(self, body: Mapping[str, Any], stop: Callable[[], bool]) -> dict[str, Any]:
        """One chat completion, stopped between two tokens once ``stop()`` is true (then :class:`Cancelled`)."""
        answer = StreamedCompletion()

        def take(chunk: Any) -> bool:
            if isinstance(chunk, Mapping):
                answer.add(chunk)
            return stop()  # True makes llama.cpp drop the request and free its slot

        request = {**body, "stream": True, "stream_options": {"include_usage": True}}
        try:
            self._server.handle_chat_completions(request, take)
        except Exception as error:  # the binding's own failures become an error answer
            return {"error": {"message": f"{type(error).__name__}: {error}"}}
        if stop():
            raise Cancelled
        return answer.result()

    def close(self) -> None:
        """Stop the server loop and free the model."""
        if self._client is not None:
            self._client.close()
            self._client = None
        self._server = None


def raise_refusal(label: str, result: Mapping[str, Any]) -> None:
    """Raise the runtime's refusal of a request as a :class:`~tsuka_core.RequestError`."""
    if "error" not in result:
        return
    error = result["error"]
    message = error.get("message") if isinstance(error, Mapping) else error
    code = error.get("code") if isinstance(error, Mapping) else None
    status = code if isinstance(code, int) and not isinstance(code, bool) else None
    raise RequestError(f"{label}: {message}", status=status)
