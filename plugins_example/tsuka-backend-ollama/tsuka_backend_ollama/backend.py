"""The Ollama backend: a tsuka Backend that speaks Ollama's native API (``/api/chat``, ``/api/tags``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import httpx

from tsuka_backend_ollama.wire import DecodeTiming, ollama_messages, ollama_tools, parse_chat
from tsuka_core import (
    Backend,
    BackendConfig,
    BackendError,
    ChatRequest,
    ChatResponse,
    Effort,
    EffortRejected,
    JsonReply,
    RequestError,
    ServerFacts,
    StatusError,
    redact_url,
    request_json,
    run_seed,
    url_secrets,
)

__all__ = ["DEFAULT_HOST", "OPTIONS", "THINK", "OllamaBackend", "base_url_from", "is_think_rejection"]

DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where Ollama listens unless ``--base-url`` or ``OLLAMA_HOST`` says otherwise."""
DEFAULT_PORT = 11434

DEFAULT_NUM_PREDICT = 8192
"""Completion token limit per request unless --max-tokens sets one (thinking models need room)."""
OPTIONS: Mapping[str, str] = {
    "num_ctx": "the context window, in tokens (Ollama's options.num_ctx)",
    "keep_alive": "how long Ollama keeps the model loaded after a request (e.g. 5m, 0)",
}
"""The ``--option KEY=VALUE`` keys this backend reads, declared as ``OllamaBackend.options``."""

# docs:start think-mapping
THINK: Mapping[Effort, bool | str] = {"none": False, "low": "low", "medium": "medium", "xhigh": "high"}
"""The value of Ollama's ``think`` field for each tsuka effort level."""

_THINK_REFUSAL = re.compile(
    r"does not support thinking|invalid think value|\bthink\b[^.]*\bnot supported", re.IGNORECASE
)


def is_think_rejection(status: int | None, message: str) -> bool:
    """True when an error answer says the model does not take the ``think`` value it was sent."""
    return status == 400 and _THINK_REFUSAL.search(message) is not None


# docs:end think-mapping


def base_url_from(configured: str | None, ollama_host: str | None) -> str:
    """The server's root URL: ``configured`` (``--base-url``), else ``OLLAMA_HOST``, else :data:`DEFAULT_HOST`.

    As Ollama's own client does, a host without a scheme gets ``http://`` and,
    without a port, port 11434 (``OLLAMA_HOST=0.0.0.0`` works). A trailing
    ``/api`` or ``/v1`` is dropped: requests go to ``ROOT/api/...``.
    """
    raw = (configured or ollama_host or DEFAULT_HOST).strip()
    source = "--base-url" if configured else ("OLLAMA_HOST" if ollama_host else "the default")
    bare = "://" not in raw
    try:
        parts = urlsplit(f"http://{raw}" if bare else raw)
        port = parts.port
    except ValueError as exc:
        raise BackendError(f"backend 'ollama': {source} {redact_url(raw)!r} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendError(
            f"backend 'ollama' needs an http:// or https:// server URL, got {redact_url(raw)!r} from {source}: "
            "pass --base-url or set OLLAMA_HOST (e.g. 127.0.0.1:11434)"
        )
    netloc = f"{parts.netloc}:{DEFAULT_PORT}" if bare and port is None else parts.netloc
    path = re.sub(r"/(api|v1)$", "", parts.path.rstrip("/"))
    return urlunsplit((parts.scheme, netloc, path, "", ""))


def _options(config: BackendConfig) -> dict[str, str]:
    unknown = sorted(set(config.options) - set(OPTIONS))
    if unknown:
        raise BackendError(
            f"backend 'ollama' does not know --option {', '.join(unknown)}; it reads {', '.join(OPTIONS)}"
        )
    num_ctx = config.options.get("num_ctx")
    if num_ctx is not None and (not num_ctx.isdigit() or int(num_ctx) < 1):
        raise BackendError(f"backend 'ollama': --option num_ctx={num_ctx} must be a whole number of tokens > 0")
    return dict(config.options)


@dataclass
class _Speed:
    tokens: int = 0
    seconds: float = 0.0


class OllamaBackend(Backend):
    """An Ollama server through its native API, at OLLAMA_HOST or http://127.0.0.1:11434.

    ``--base-url`` (the server root, such as ``http://127.0.0.1:11434``)
    overrides ``OLLAMA_HOST``. Each effort level is sent as Ollama's ``think``
    field (see :data:`THINK`); when the server refuses it, the model is
    measured once without it. ``--option num_ctx=N`` sets the context window
    and ``--option keep_alive=5m`` how long the model stays loaded.
    """

    name: ClassVar[str] = "ollama"
    env_vars: ClassVar[tuple[str, ...]] = ("OLLAMA_HOST",)
    option_help: ClassVar[Mapping[str, str] | None] = OPTIONS
    applies_effort: ClassVar[bool] = True
    server_timing_names: ClassVar[Mapping[str, str] | None] = {
        "generated_tokens": "eval_count",
        "generation_ms": "eval_duration / 10^6",
        "prompt_processed": "prompt_eval_count",
        "prompt_ms": "prompt_eval_duration / 10^6",
    }
    """Ollama's names for its timings (nanoseconds), which the profile's speed-figure formulas give."""

    def __init__(self, config: BackendConfig, client: httpx.AsyncClient) -> None:
        super().__init__(config, client)
        self.base_url = base_url_from(config.base_url, os.environ.get("OLLAMA_HOST"))
        self._secrets = url_secrets(self.base_url)
        self.options = _options(config)
        self._speed: dict[tuple[str, str], _Speed] = {}

    @property
    def provider(self) -> str:
        """The server's root URL, credentials removed."""
        return redact_url(self.base_url)

    def effort_params(self, effort: Effort) -> dict[str, Any]:
        """``{"think": ...}``: false for none, else the level (xhigh is Ollama's highest, "high")."""
        return {"think": THINK[effort]}

    async def list_models(self) -> list[str]:
        """The models the server has pulled (``GET /api/tags``), in the server's order."""
        reply = await self._send("GET", "/api/tags", None)
        models = reply.data.get("models") if isinstance(reply.data, Mapping) else None
        if not isinstance(models, list):
            raise RequestError(f"GET {self.provider}/api/tags: the answer has no 'models' list")
        names = (entry.get("name") or entry.get("model") for entry in models if isinstance(entry, Mapping))
        return [name for name in names if isinstance(name, str) and name]

    async def server_facts(self, model: str) -> ServerFacts:
        """What Ollama says of itself and ``model``: its version, the model's digest, whether it takes tools.

        From ``GET /api/version``, ``GET /api/tags`` and ``POST /api/show``
        (``capabilities``); whatever cannot be read is left out.
        """
        version = await self._quietly("GET", "/api/version", None)
        shown = await self._quietly("POST", "/api/show", {"model": model})
        tags = await self._quietly("GET", "/api/tags", None)
        capabilities = shown.get("capabilities")
        tools = "tools" in capabilities if isinstance(capabilities, list) else None
        entries = tags.get("models")
        digest = (
            next(
                (
                    e.get("digest")
                    for e in entries
                    if isinstance(e, Mapping) and model in (e.get("name"), e.get("model"))
                ),
                None,
            )
            if isinstance(entries, list)
            else None
        )
        found = version.get("version")
        return ServerFacts(
            kind="ollama",
            version=found if isinstance(found, str) and found else None,
            model_file=digest if isinstance(digest, str) and digest else None,
            supports_tools=tools,
        )

    async def _quietly(self, method: str, path: str, body: Any) -> Mapping[str, Any]:
        """The answer of one request, or nothing when it fails or is not an object."""
        try:
            reply = await self._send(method, path, body)
        except RequestError:
            return {}
        return reply.data if isinstance(reply.data, Mapping) else {}

    # docs:start complete
    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one ``/api/chat`` request (not streamed) and return the normalised answer.

        Raises :class:`~tsuka_core.EffortRejected` when the server refuses the
        ``think`` value, and :class:`~tsuka_core.RequestError` when the request
        fails for good.
        """
        try:
            reply = await self._send("POST", "/api/chat", self.request_body(request))
        except StatusError as error:
            if request.effort is not None and is_think_rejection(error.status, error.server_message):
                raise EffortRejected(
                    f"{self.provider} refused think={THINK[request.effort]!r} for {request.model}: "
                    f"{error.server_message}",
                    status=error.status,
                ) from error
            raise
        response, timing = parse_chat(reply.data, f"POST {self.provider}/api/chat", reply.duration)
        self._note_speed(request, timing)
        return response

    # docs:end complete

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body of one ``/api/chat`` request."""
        options: dict[str, Any] = {"num_predict": self.config.max_tokens or DEFAULT_NUM_PREDICT}
        if self.config.temperature is not None:
            options["temperature"] = self.config.temperature
        if self.config.seed is not None:
            options["seed"] = run_seed(self.config.seed, request)  # run K of a repeated test: seed + K - 1
        if "num_ctx" in self.options:
            options["num_ctx"] = int(self.options["num_ctx"])
        body: dict[str, Any] = {
            "model": request.model,
            "messages": ollama_messages(request.messages),
            "stream": False,
            "options": options,
        }
        if request.tools:
            body["tools"] = ollama_tools(request.tools)
        if request.effort is not None:
            body.update(self.effort_params(request.effort))
        if "keep_alive" in self.options:
            body["keep_alive"] = self.options["keep_alive"]
        return body

    def decode_speed(self, model: str, effort: Effort | None) -> float | None:
        """Tokens per second the server reported generating at, over this backend's requests of that level.

        Taken from Ollama's ``eval_count`` / ``eval_duration``: decoding only,
        without prompt processing, model loading or network time, so it is
        higher than the profile's ``tokensPerSecond`` (which divides by wall time).
        """
        speed = self._speed.get((model, effort or "none"))
        if speed is None or speed.seconds <= 0:
            return None
        return round(speed.tokens / speed.seconds, 1)

    def _note_speed(self, request: ChatRequest, timing: DecodeTiming | None) -> None:
        if timing is None:
            return
        speed = self._speed.setdefault((request.model, request.effort or "none"), _Speed())
        speed.tokens += timing.tokens
        speed.seconds += timing.seconds

    async def _send(self, method: str, path: str, body: Any) -> JsonReply:
        try:
            return await request_json(
                self.client,
                method,
                self.base_url + path,
                body=body,
                headers={"Accept": "application/json"},
                retries=self.config.retries,
                timeout=self.config.timeout,
                secrets=self._secrets,
            )
        except StatusError as error:
            if error.status == 404 and path == "/api/tags":
                error.args = (f"{error} (is this an Ollama server? give its root URL, e.g. http://127.0.0.1:11434)",)
            elif error.status == 404 and "pull" not in error.server_message:
                error.args = (f"{error} (pull the model first: ollama pull MODEL)",)
            raise
