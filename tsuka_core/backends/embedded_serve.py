"""A model served over HTTP as the embedded backend runs it: the same template, sampling, threads, slots, context.

``tsuka serve`` starts it. The server is llama.cpp's own, from the xllamacpp
wheel; what it was started with is given back as the ``llama-server`` command
line with the same flags (so a llama.cpp build measures the same thing) and
as the ``tsuka run`` line that measures it with the embedded backend's
sampling and token limit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tsuka_core.backends.cpu import choose_threads
from tsuka_core.backends.embedded_model import LoadedModel
from tsuka_core.backends.llama_runtime import LlamaServer, ServerSettings

if TYPE_CHECKING:
    from tsuka_core.backends.embedded import EmbeddedBackend

__all__ = ["PublicServer", "llama_server_flags", "start_public"]


@dataclass
class PublicServer:
    """A running server, what it is the same as, and what was said while starting it."""

    server: LlamaServer
    alias: str
    url: str
    """``http://HOST:PORT``, the port the server listens on (the free one picked for port 0)."""
    llama_server: list[str]
    """The ``llama-server`` command line with the same flags."""
    measure: list[str]
    """The ``tsuka run`` command line that measures it as the embedded backend would."""
    notes: list[str]

    def close(self) -> None:
        """Stop the server and free the model."""
        self.server.close()


def start_public(backend: EmbeddedBackend, path: Path, host: str, port: int, alias: str | None) -> PublicServer:
    """Serve ``path`` on ``host:port`` with ``backend``'s settings, the template chosen as the backend chooses it."""
    from tsuka_core.backends.embedded import DEFAULT_MAX_TOKENS

    threads = choose_threads(backend.threads)
    notes = [threads.said()]
    probe = LoadedModel(path, backend.n_ctx, 1, threads.threads, backend.sampling, backend.own_template)
    try:
        template = probe.single_template()
    finally:
        probe.close()
    if template.note:
        notes.append(template.note)
    name = alias or path.stem
    settings = ServerSettings(
        path, backend.n_ctx, backend.parallel, threads.threads, backend.sampling.server_defaults(), host, port, name
    )
    server = LlamaServer(settings, template.text, guarded=False)
    served = dataclasses.replace(settings, port=int(server.url.rsplit(":", 1)[1]))
    measure = [
        *("tsuka", "run", name, "--base-url", f"{server.url}/v1"),
        *("--temperature", _number(backend.sampling.temperature), "--seed", str(backend.sampling.seed)),
        *("--max-tokens", str(backend.config.max_tokens or DEFAULT_MAX_TOKENS)),
    ]
    return PublicServer(server, name, server.url, llama_server_flags(served, template.file), measure, notes)


def llama_server_flags(settings: ServerSettings, template_file: str | None) -> list[str]:
    """``llama-server`` with the flags that serve as ``settings`` do (the chat template from ``template_file``)."""
    sampling = settings.sampling
    return [
        *("llama-server", "-m", str(settings.path), "--alias", settings.alias or settings.path.stem),
        *("--host", settings.host, "--port", str(settings.port), "--jinja"),
        *(("--chat-template-file", template_file) if template_file else ()),
        *("-np", str(settings.parallel), "-c", str(settings.n_ctx * settings.parallel), "-t", str(settings.threads)),
        *("--no-cache-prompt", "-fa", "off"),
        *("--temp", _number(sampling.get("temperature", 0.0)), "--top-k", str(sampling.get("top_k", 1))),
        *("--seed", str(sampling.get("seed", 42)), "--repeat-penalty", _number(sampling.get("repeat_penalty", 1.0))),
    ]


def _number(value: float) -> str:
    """``0`` for 0.0, ``0.7`` for 0.7: as a user types it."""
    return f"{value:g}"
