"""The OpenAI-compatible backend: any server that speaks ``/v1/chat/completions`` (OpenAI, vLLM, llama.cpp, Ollama)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from tsuka_core.backends.apikey import KeySource, checked_key
from tsuka_core.backends.base import (
    Backend,
    BackendConfig,
    ChatRequest,
    ChatResponse,
    EffortRejected,
    ServerFacts,
    estimate_tokens,
    run_seed,
)
from tsuka_core.backends.http import BodyReader, JsonReply, StatusError, request_json
from tsuka_core.backends.llama_runtime import LLAMA_CPP_TIMINGS
from tsuka_core.backends.openai_stream import (
    STREAM_FIELDS,
    STREAM_OPTIONS,
    is_stream_refusal,
    stream_option,
    timed_by_stream,
)
from tsuka_core.backends.outgoing import NOT_SENT_BACK as _NOT_SENT_BACK
from tsuka_core.backends.outgoing import outgoing_message
from tsuka_core.backends.serverinfo import (
    count,
    facts_from_props,
    note_dropped_timings,
    reasoning_tokens,
    server_timings,
)
from tsuka_core.backends.streamed import BrokenStreamError, StreamedAnswer, read_stream
from tsuka_core.errors import BackendError, RequestError
from tsuka_core.judge.answer import ToolCall, normalise_tool_calls, strip_reasoning
from tsuka_core.terms import Effort
from tsuka_core.urls import joined_url, props_url, redact_url, url_secrets, usable_url

if TYPE_CHECKING:
    import asyncio

    import httpx

__all__ = ["OpenAIBackend", "is_effort_rejection", "outgoing_message", "parse_completion"]

_REASONING_REFUSAL = re.compile(
    r"reasoning_effort|reasoning.*(unsupported|not supported|does not support|unrecogni[sz]ed|unknown|invalid)"
    r"|(unsupported|unrecogni[sz]ed|unknown|invalid).*reasoning",
    re.IGNORECASE | re.DOTALL,
)
DEFAULT_MAX_TOKENS = 2048
"""Completion token limit per request unless the user sets one: room for a reasoning model's thinking, and a
bound on a small model that rambles (2,048 tokens at 20 tokens/s is under two minutes an answer)."""
INLINE_PARSE_BYTES = 64 * 1024
"""Answers up to this size are normalised on the event loop; larger ones in a worker thread."""


def is_effort_rejection(status: int | None, message: str) -> bool:
    """True when an error answer (400 or 422) says the server does not accept the effort parameter."""
    return status in (400, 422) and _REASONING_REFUSAL.search(message) is not None


PROPS_TIMEOUT = 10.0
"""Seconds the ``/props`` question may take; a server that does not answer it in time is taken to apply efforts."""

PROPS_MAX_BYTES = 1024 * 1024
"""The most of a ``/props`` answer read (llama.cpp's is a few kilobytes, its chat template included)."""


class OpenAIBackend(Backend):
    """Any OpenAI-compatible chat-completions server, reached at a base URL such as ``http://localhost:8080/v1``.

    The base URL comes from ``--base-url`` or ``OPENAI_BASE_URL`` and is used as
    given (``/chat/completions`` and ``/models`` are appended to it; a
    ``user:password@`` in it is sent as Basic auth). The API key, optional, comes
    from the configuration or ``OPENAI_API_KEY`` and is sent as a Bearer token;
    it never appears in ``provider`` or in error messages. The effort level is
    sent verbatim as ``reasoning_effort``. Answers are streamed and timed token
    by token, except from a llama.cpp server (its ``timings`` time them) or
    with ``--option stream=off``; a server that refuses or breaks streaming is
    asked again without it, and from then on, with a note.
    """

    name: ClassVar[str] = "openai"
    env_vars: ClassVar[tuple[str, ...]] = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    applies_effort: ClassVar[bool] = True
    lists_every_model: ClassVar[bool] = True
    streams: ClassVar[bool] = True
    option_help: ClassVar[Mapping[str, str] | None] = STREAM_OPTIONS
    server_timing_names: ClassVar[Mapping[str, str] | None] = LLAMA_CPP_TIMINGS
    """The only server-timed answers it reads are llama.cpp's ``timings``."""

    def __init__(self, config: BackendConfig, client: httpx.AsyncClient) -> None:
        super().__init__(config, client)
        base_url = (config.base_url or os.environ.get("OPENAI_BASE_URL") or "").strip()
        if not base_url:
            raise BackendError("backend 'openai' needs a base URL: pass --base-url or set OPENAI_BASE_URL")
        if not usable_url(base_url):
            raise BackendError(
                f"backend 'openai' needs a valid http:// or https:// base URL, got {redact_url(base_url)!r}: "
                "pass --base-url or set OPENAI_BASE_URL"
            )
        self.base_url = base_url.rstrip("/")
        self.base_url_from_env = not (config.base_url or "").strip()  # said where it matters
        self._key = KeySource.find(config.api_key, config.api_key_from, os.environ)
        self.api_key = checked_key(self._key.key or "", self._key.origin) or None
        self._secrets = list(dict.fromkeys([*([self.api_key] if self.api_key else []), *url_secrets(self.base_url)]))
        self._props: Mapping[str, Any] | None = None
        self._props_lock: asyncio.Lock | None = None
        self._stream = stream_option(config.options)

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """The limits and sampling every request sent (``sampling``), as the profile records them."""
        del model, effort
        config = self.config
        sent = {"maxTokens": config.max_tokens or DEFAULT_MAX_TOKENS, "temperature": config.temperature}
        return {"sampling": {**sent, "seed": config.seed}}

    def secrets(self) -> tuple[str, ...]:
        """The key it sends (from whichever source), the base URL's credentials (``OPENAI_BASE_URL``'s too)."""
        return (*self._secrets, *super().secrets())

    @property
    def provider(self) -> str:
        """The base URL, credentials removed."""
        return redact_url(self.base_url).rstrip("/")

    def effort_params(self, effort: Effort) -> dict[str, Any]:
        """``{"reasoning_effort": effort}``, the level verbatim (``none`` included)."""
        return {"reasoning_effort": effort}

    async def list_models(self) -> list[str]:
        """The model ids the server lists at ``/models``, in the server's order."""
        reply = await self._send("GET", "models", None)
        entries = reply.data.get("data") if isinstance(reply.data, dict) else None
        if not isinstance(entries, list):
            raise RequestError(f"GET {self.provider}/models: the answer has no 'data' list of models")
        return [entry["id"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("id"), str)]

    async def effort_ignored(self, model: str) -> str | None:
        """The reason when the server is llama.cpp and its chat template does not use ``reasoning_effort``.

        llama.cpp's server accepts the parameter with any value and, unless the
        model's chat template reads it, changes nothing; its ``GET /props`` (at
        the server root) says so in ``chat_template_caps``. Any other server, or
        a ``/props`` that cannot be read, gives None: efforts are sent.
        """
        del model
        caps = (await self._server_props()).get("chat_template_caps")
        if isinstance(caps, Mapping) and caps.get("supports_reasoning_effort") is False:
            return (
                f"the llama.cpp server at {self.provider} would accept reasoning_effort and ignore it "
                "(GET /props: chat_template_caps.supports_reasoning_effort is false)"
            )
        return None

    async def server_facts(self, model: str) -> ServerFacts:
        """What llama.cpp's ``GET /props`` says about the server (build, model file, slots, template capabilities).

        Another server, or one whose ``/props`` cannot be read, gives no facts.
        """
        del model
        return facts_from_props(await self._server_props())

    async def _server_props(self) -> Mapping[str, Any]:
        """llama.cpp's ``GET /props``, asked once for every model of the run; empty when the server has none.

        A server still loading its model answers 503, which is retried like any
        request (at most twice); a 4xx, or an answer that is not an object, means
        no ``/props`` and is not asked again.
        """
        import asyncio

        if self._props_lock is None:
            self._props_lock = asyncio.Lock()
        async with self._props_lock:  # the models of a run start together: one asks, the others wait for it
            if self._props is None:
                self._props = await self._ask_props()
        return self._props

    async def _ask_props(self) -> Mapping[str, Any]:
        try:
            reply = await request_json(
                self.client,
                "GET",
                props_url(self.base_url),
                headers=self._headers(),
                retries=min(self.config.retries, 2),
                timeout=min(self.config.timeout, PROPS_TIMEOUT),
                max_bytes=PROPS_MAX_BYTES,
                secrets=self._secrets,
            )
        except RequestError:
            return {}
        return reply.data if isinstance(reply.data, Mapping) else {}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one chat completion and return the normalised answer.

        Raises :class:`EffortRejected` when the server refuses ``reasoning_effort``
        (the request is never re-sent without it) and
        :class:`~tsuka_core.RequestError` when the request fails for good.
        """
        try:
            return await self._answer(self.request_body(request))
        except StatusError as error:
            if request.effort is not None and is_effort_rejection(error.status, error.server_message):
                raise EffortRejected(
                    f"{self.provider} does not accept reasoning_effort={request.effort!r} "
                    f"for {request.model}: {error.server_message}",
                    status=error.status,
                ) from error
            raise

    async def _answer(self, body: dict[str, Any]) -> ChatResponse:
        """The answer, streamed where it should be; a refused or broken stream is asked again without streaming."""
        if self._streaming():
            try:
                return await self._ask({**body, **STREAM_FIELDS}, read_stream)
            except BrokenStreamError as error:
                reason = f"its stream was not a whole answer ({error})"
            except StatusError as error:
                said = error.server_message
                if is_effort_rejection(error.status, said) or not is_stream_refusal(error.status, said):
                    raise
                reason = f"it refused to stream ({error.server_message})"
            if self._stream:
                self._stream = False
                self.add_note(f"{self.provider}: {reason}; answers are no longer streamed, so speed is wall time")
        return await self._ask(body, None)

    async def _ask(self, body: dict[str, Any], read_body: BodyReader | None) -> ChatResponse:
        import asyncio

        reply = await self._send("POST", "chat/completions", body, read_body)
        label = f"POST {self.provider}/chat/completions"
        limit = body.get("max_tokens")
        note_dropped_timings(self, reply.data.kept if isinstance(reply.data, StreamedAnswer) else reply.data)
        if isinstance(reply.data, StreamedAnswer):
            answer = reply.data
            completion = replace(reply, data=answer.completion())
            response = await asyncio.to_thread(parse_completion, completion, label, limit)
            return timed_by_stream(response, answer)
        if reply.size <= INLINE_PARSE_BYTES:
            return parse_completion(reply, label, limit)
        # Off the loop: repairing a large answer's broken tool arguments may take a while, and no other request
        # should wait on it (a thread costs more than parsing a small answer does).
        return await asyncio.to_thread(parse_completion, reply, label, limit)

    def _streaming(self) -> bool:
        """True while streaming is on and the server is not llama.cpp (known from ``/props``), which times answers."""
        return self._stream and not (self._props is not None and facts_from_props(self._props).kind == "llama.cpp")

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body of a chat-completion request."""
        body: dict[str, Any] = {
            "model": request.model,
            "messages": [outgoing_message(message) for message in request.messages],
            "max_tokens": self.config.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if request.tools:
            body["tools"] = [{k: v for k, v in tool.items() if k != "requiredTier"} for tool in request.tools]
            body["tool_choice"] = "auto"
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.seed is not None:
            body["seed"] = run_seed(self.config.seed, request)
        if request.effort is not None:
            body.update(self.effort_params(request.effort))
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _send(self, method: str, path: str, body: Any, read_body: BodyReader | None = None) -> JsonReply:
        headers = self._headers()
        try:
            return await request_json(
                self.client,
                method,
                joined_url(self.base_url, path),
                body=body,
                headers=headers,
                retries=self.config.retries,
                timeout=self.config.timeout,
                secrets=self._secrets,
                read_body=read_body,
            )
        except StatusError as error:
            if error.status == 404:
                error.args = (f"{error} (is the base URL right? it usually ends in /v1{self._from_env()})",)
            elif error.status in (401, 403):
                error.args = (f"{error} ({self._key.refusal_hint(error.status, os.environ)})",)
                error.explains_refusal = True
            raise
        except RequestError as error:
            if self.base_url_from_env and "cannot connect" in str(error):
                error.args = (f"{error} ({self._from_env()[2:]})",)
            raise

    def _from_env(self) -> str:
        return _FROM_ENV if self.base_url_from_env else ""


_FROM_ENV = "; the base URL comes from OPENAI_BASE_URL: pass --base-url, or unset it to measure the embedded model"


def parse_completion(reply: JsonReply, label: str, token_limit: int | None = None) -> ChatResponse:
    """Normalise a chat-completion answer: text without reasoning, tool calls, usage (or an estimate), timings.

    llama.cpp's ``timings`` give the generation and prompt time the server
    measured; without them the request's wall time is all there is.
    ``token_limit`` is the ``max_tokens`` the request sent.
    """
    choice = _first_choice(reply.data, label)
    message = choice["message"]
    content = _content_text(message.get("content"))
    reasoning = next((v for k in _NOT_SENT_BACK if isinstance(v := message.get(k), str) and v), None)
    calls = normalise_tool_calls(message.get("tool_calls"))
    usage = reply.data.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    completion = count(usage.get("completion_tokens"))
    estimated = completion is None
    if completion is None:
        generated = (content or "") + (reasoning or "") + "".join(_call_text(call) for call in calls)
        completion = estimate_tokens(generated)
    finish = choice.get("finish_reason")
    return ChatResponse(
        text=strip_reasoning(content),
        tool_calls=tuple(calls),
        content=content,
        reasoning=reasoning,
        prompt_tokens=count(usage.get("prompt_tokens")),
        completion_tokens=completion,
        usage_estimated=estimated,
        duration=reply.duration,
        reasoning_tokens=reasoning_tokens(usage),
        finish_reason=finish if isinstance(finish, str) and finish else None,
        token_limit=token_limit,
        **server_timings(reply.data),
    )


def _first_choice(data: Any, label: str) -> Mapping[str, Any]:
    """The first choice, which has a ``message`` object."""
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not isinstance(choices, list) or not choices:
        raise RequestError(f"{label}: the answer has no choices (a malformed completion)")
    choice = choices[0] if isinstance(choices[0], Mapping) else {}
    if not isinstance(choice.get("message"), Mapping):
        raise RequestError(f"{label}: the first choice has no message (a malformed completion)")
    return choice


def _content_text(content: Any) -> str | None:
    """Message content as one string: text parts of a list joined, null kept as ``None``."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_part_text(part) for part in content)
    return json.dumps(content, ensure_ascii=False)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and part.get("type", "text") in ("text", "output_text"):
        text = part.get("text")
        return text if isinstance(text, str) else ""
    return ""


def _call_text(call: ToolCall) -> str:
    function = call.raw.get("function")
    arguments = function.get("arguments") if isinstance(function, Mapping) else None
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return call.name + text
