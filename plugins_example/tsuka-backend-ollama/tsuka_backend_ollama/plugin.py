"""The plugin module the ``tsuka`` entry point names: it registers the Ollama backend."""

from __future__ import annotations

# docs:start hookimpl
import tsuka_core
from tsuka_backend_ollama.backend import OllamaBackend


@tsuka_core.hookimpl
def register_backends(register: tsuka_core.RegisterBackend) -> None:
    """Register the ``ollama`` backend."""
    register(OllamaBackend)


# docs:end hookimpl
