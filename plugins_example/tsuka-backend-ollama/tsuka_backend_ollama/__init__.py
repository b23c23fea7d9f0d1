"""A tsuka backend for Ollama's native API: models from /api/tags, answers from /api/chat, efforts as ``think``."""

from tsuka_backend_ollama.backend import THINK, OllamaBackend, base_url_from, is_think_rejection

__all__ = ["THINK", "OllamaBackend", "base_url_from", "is_think_rejection"]
