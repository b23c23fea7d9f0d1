"""A loaded embedded model and the chat template its requests are rendered with.

The model's own template is used when llama.cpp finds that it renders tools
(``GET /props``: ``chat_template_caps.supports_tools``). Otherwise the model is
served with tsuka's ChatML tool template (:data:`~tsuka_core.backends.llama_runtime.TOOL_TEMPLATE`),
the same file ``llama-server --jinja --chat-template-file`` takes. A model whose
own template is not ChatML either keeps it for requests without tools; only
requests that offer tools use the ChatML tool template, and the run says so.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsuka_core.backends.llama_runtime import TOOL_TEMPLATE, LlamaServer, ServerSettings, tool_template

__all__ = ["LoadedModel", "Sampling"]

_PROBE: Mapping[str, Any] = {"messages": [{"role": "user", "content": "Hi"}]}


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

    def server_defaults(self) -> dict[str, float | int]:
        """The sampling as the server's defaults (``llama-server --temp --top-k --seed --repeat-penalty``)."""
        return {
            "temperature": self.temperature,
            "top_k": self.top_k,
            "seed": self.seed,
            "repeat_penalty": self.repeat_penalty,
        }

    def record(self) -> dict[str, object]:
        """The sampling as stored with a profile."""
        return {
            "temperature": self.temperature,
            "seed": self.seed,
            "repeatPenalty": self.repeat_penalty,
            "topK": self.top_k,
        }


class LoadedModel:
    """One GGUF model served in-process, with the template choice made once at load."""

    def __init__(self, path: Path, n_ctx: int, parallel: int, threads: int, sampling: Sampling) -> None:
        self._settings = ServerSettings(path, n_ctx, parallel, threads, sampling.server_defaults())
        self._lock = threading.Lock()
        own = LlamaServer(self._settings)
        caps = own.props().get("chat_template_caps")
        caps = caps if isinstance(caps, Mapping) else {}
        self.reads_effort = caps.get("supports_reasoning_effort") is True
        self.template = "model"
        """``model`` (its own for everything), ``chatml-tools.jinja``, or ``model, tools: chatml-tools.jinja``."""
        self._plain: LlamaServer | None = own
        self._tools: LlamaServer | None = own if caps.get("supports_tools") is True else None
        if self._tools is None and "<|im_start|>" in own.render(_PROBE):
            own.close()
            self._plain = self._tools = LlamaServer(self._settings, tool_template())
            self.template = TOOL_TEMPLATE
            self.reads_effort = False
        elif self._tools is None:
            self.template = f"model, tools: {TOOL_TEMPLATE}"

    def server_for(self, tools: bool) -> LlamaServer:
        """The server a request is sent to: with tools offered, one whose template renders them."""
        with self._lock:
            if self._plain is None:
                raise RuntimeError("the model was closed")
            if not tools:
                return self._plain
            if self._tools is None:
                self._tools = LlamaServer(self._settings, tool_template())
            return self._tools

    def effort_note(self) -> str | None:
        """Why efforts cannot apply (the template does not read ``reasoning_effort``), with the template used."""
        if self.reads_effort:
            return None
        if self.template == "model":
            return "its chat template does not read reasoning_effort"
        if self.template == TOOL_TEMPLATE:
            return (
                f"its own chat template renders no tools, so it is served with tsuka's ChatML tool template "
                f"({TOOL_TEMPLATE}), which does not read reasoning_effort"
            )
        return (
            f"its chat template does not read reasoning_effort; it renders no tools and is not ChatML, so the "
            f"tool tests use tsuka's ChatML tool template ({TOOL_TEMPLATE}), which the model may not follow"
        )

    def close(self) -> None:
        """Free the model (and its second server, if tool requests needed one)."""
        with self._lock:
            for server in {id(s): s for s in (self._plain, self._tools) if s is not None}.values():
                server.close()
            self._plain = self._tools = None
