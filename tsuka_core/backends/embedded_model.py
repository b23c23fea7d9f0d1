"""A loaded embedded model and the chat template its requests are rendered with.

The model's own template (or the one ``--option chat_template=FILE`` gives, as
``llama-server --chat-template-file`` would) is used when llama.cpp finds that
it renders tools (``GET /props``: ``chat_template_caps.supports_tools``).
Otherwise the model is served in its own turn format with one of tsuka's tool
templates (:data:`~tsuka_core.backends.llama_runtime.TOOL_TEMPLATES`), picked
by the turn marker its own template writes: ChatML's ``<|im_start|>`` or
Gemma's ``<start_of_turn>``. Each renders a request without tools as the
model's own template does, so one server answers both kinds. A model whose
own format is neither keeps its template for requests without tools; only
requests that offer tools use the ChatML tool template, and the run says so.

A GGUF file that carries no chat template (a base model, often) is served by
llama.cpp with its ChatML fallback, ``llama-server`` included: the same here,
and the run says the file has none.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsuka_core.backends.llama_runtime import (
    FALLBACK_TEMPLATE,
    TOOL_TEMPLATE,
    TOOL_TEMPLATES,
    LlamaServer,
    ServerSettings,
    tool_template,
    tool_template_path,
)

__all__ = ["LoadedModel", "OwnTemplate", "Sampling", "SingleTemplate"]

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


@dataclass(frozen=True)
class OwnTemplate:
    """The template a model is served with unless tsuka's tool template replaces it: the file's, or the user's."""

    text: str | None = None
    """The text of ``--option chat_template=FILE``; None: the GGUF file's own."""
    name: str = "model"
    """How the record names it: ``model``, or the file's name for ``--option chat_template``."""
    path: str | None = None
    """The ``--option chat_template`` file, as given."""


@dataclass(frozen=True)
class SingleTemplate:
    """The one template a server needs to answer every request as the embedded backend does."""

    text: str | None
    """The template's text; None: the GGUF file's own."""
    file: str | None
    """The file ``llama-server --chat-template-file`` takes for it; None: none needed."""
    note: str | None = None
    """Said when one template cannot do it (the model's own for plain requests, the ChatML one for tools)."""


class LoadedModel:
    """One GGUF model served in-process, with the template choice made once at load."""

    def __init__(
        self, path: Path, n_ctx: int, parallel: int, threads: int, sampling: Sampling, own: OwnTemplate | None = None
    ) -> None:
        own = own or OwnTemplate()
        self._own = own
        self._settings = ServerSettings(path, n_ctx, parallel, threads, sampling.server_defaults())
        self._lock = threading.Lock()
        server = LlamaServer(self._settings, own.text)
        props = server.props()
        caps = props.get("chat_template_caps")
        caps = caps if isinstance(caps, Mapping) else {}
        self.reads_effort = caps.get("supports_reasoning_effort") is True
        self.none_in_file = own.text is None and props.get("chat_template") == FALLBACK_TEMPLATE
        """True when the GGUF file carries no chat template and llama.cpp fell back to ChatML."""
        self.template = own.name
        """``model`` (its own for everything), a tool template's file name (it renders every request), or
        ``model, tools: chatml-tools.jinja``; ``model`` is the ``--option chat_template`` file's name when given."""
        self.own_for_tools = caps.get("supports_tools") is True
        """True when the model's own template (or the one given) renders tools: it serves every request."""
        self._plain: LlamaServer | None = server
        self._tools: LlamaServer | None = server if self.own_for_tools else None
        self._tool_template = TOOL_TEMPLATE
        if self.own_for_tools:
            return
        rendered = server.render(_PROBE)
        family = next((name for marker, name in TOOL_TEMPLATES.items() if marker in rendered), None)
        if family is not None:
            server.close()
            self._plain = self._tools = LlamaServer(self._settings, tool_template(family))
            self.template = self._tool_template = family
            self.reads_effort = False
        else:
            self.template = f"{own.name}, tools: {TOOL_TEMPLATE}"

    def single_template(self) -> SingleTemplate:
        """The template one server answers every request with as this model does (``tsuka serve``)."""
        if self.by_tool_template:
            return SingleTemplate(tool_template(self.template), tool_template_path(self.template))
        own = SingleTemplate(self._own.text, self._own.path)
        if self.own_for_tools:
            return own
        note = (
            "its own chat template renders no tools and is neither ChatML nor Gemma's, so the embedded backend uses "
            f"it for requests without tools and {TOOL_TEMPLATE} for requests with tools; one server takes one "
            "template: served with its own, tool requests get llama.cpp's generic tool handling"
        )
        return dataclasses.replace(own, note=note)

    def server_for(self, tools: bool) -> LlamaServer:
        """The server a request is sent to: with tools offered, one whose template renders them."""
        with self._lock:
            if self._plain is None:
                raise RuntimeError("the model was closed")
            if not tools:
                return self._plain
            if self._tools is None:
                self._tools = LlamaServer(self._settings, tool_template(self._tool_template))
            return self._tools

    @property
    def by_tool_template(self) -> bool:
        """True when one of tsuka's tool templates renders every request of the model (its own renders no tools)."""
        return self.template in TOOL_TEMPLATES.values()

    @property
    def tool_template(self) -> str:
        """The file name of the tsuka tool template tool requests use (when the model's own renders no tools)."""
        return self._tool_template

    def template_said(self) -> str | None:
        """The template tool requests are rendered with, when it is not the model's own, and why; else None."""
        if self.own_for_tools:
            return None
        if self.none_in_file:
            return (
                "the GGUF file carries no chat template, so llama.cpp serves it as ChatML (llama-server too); "
                f"tools are rendered into ChatML by tsuka's tool template ({self.template})"
            )
        own = "its own chat template renders no tools, so"
        if self.by_tool_template:
            return f"{own} it is served in its own turn format with tsuka's tool template ({self.template})"
        return (
            f"{own} the tool tests use tsuka's ChatML tool template ({TOOL_TEMPLATE}); its own format is neither "
            "ChatML nor Gemma's, so the model may not follow it"
        )

    def effort_note(self) -> str | None:
        """Why efforts cannot apply: the template the model is served with does not read ``reasoning_effort``."""
        if self.reads_effort:
            return None
        if self.by_tool_template:
            return f"{self.template} does not read reasoning_effort"
        return "its chat template does not read reasoning_effort"

    def close(self) -> None:
        """Free the model (and its second server, if tool requests needed one)."""
        with self._lock:
            for server in {id(s): s for s in (self._plain, self._tools) if s is not None}.values():
                server.close()
            self._plain = self._tools = None
