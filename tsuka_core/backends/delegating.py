"""A backend seen through another: every method answers as the wrapped backend does, unless a subclass changes it.

A wrapper that forwards by hand forgets the method added next (the cache once
dropped the server's facts). :class:`DelegatingBackend` forwards every method
and property of :class:`~tsuka_core.Backend` (a test holds it to that), and
:func:`seen_as` makes its class answer the wrapped class's facts (name, effort
support, environment, options), so a run reads exactly as without the wrapper.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, cast

from tsuka_core.backends.base import Backend, ChatRequest, ChatResponse, ServerFacts
from tsuka_core.terms import Effort

__all__ = ["CLASS_FACTS", "DelegatingBackend", "seen_as"]

CLASS_FACTS = (
    "name",
    "applies_effort",
    "env_vars",
    "api_key_env",
    "lists_every_model",
    "streams",
    "option_help",
    "server_timing_names",
)
"""What the engine reads from a backend's class: a wrapper's class answers them as the wrapped class does."""


class DelegatingBackend(Backend):
    """The wrapped backend, unchanged: a subclass overrides only what it adds (an answer cache, say)."""

    name: ClassVar[str] = "delegating"

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner.config, inner.client)
        self.inner = inner

    @property
    def provider(self) -> str:
        """The wrapped backend's provider."""
        return self.inner.provider

    def take_notes(self, model: str | None = None) -> list[str]:
        """The wrapped backend's notes, and any added to the wrapper (of ``model``, or of none in particular)."""
        return [*super().take_notes(model), *self.inner.take_notes(model)]

    def effort_params(self, effort: Effort) -> dict[str, Any]:
        """The wrapped backend's effort parameters."""
        return self.inner.effort_params(effort)

    def repeats_note(self) -> str | None:
        """The wrapped backend's note."""
        return self.inner.repeats_note()

    async def effort_ignored(self, model: str) -> str | None:
        """The wrapped backend's answer."""
        return await self.inner.effort_ignored(model)

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """The wrapped backend's recorded facts."""
        return self.inner.profile_extra(model, effort)

    def secrets(self) -> tuple[str, ...]:
        """The wrapped backend's secrets."""
        return self.inner.secrets()

    async def server_facts(self, model: str) -> ServerFacts:
        """The wrapped backend's facts."""
        return await self.inner.server_facts(model)

    async def list_models(self) -> list[str]:
        """The wrapped backend's models."""
        return await self.inner.list_models()

    def takes_unlisted(self, model: str) -> bool:
        """The wrapped backend's answer."""
        return self.inner.takes_unlisted(model)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The wrapped backend's answer."""
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        """Close the wrapped backend."""
        await self.inner.aclose()


W = TypeVar("W", bound=DelegatingBackend)
_MADE: dict[tuple[type[Any], type[Any]], type[Any]] = {}


def seen_as(wrapper: type[W], inner: type[Backend]) -> type[W]:
    """A subclass of ``wrapper`` answering ``inner``'s class facts (:data:`CLASS_FACTS`), made once per pair."""
    key = (wrapper, inner)
    if key not in _MADE:
        facts: dict[str, Any] = {fact: getattr(inner, fact) for fact in CLASS_FACTS}
        _MADE[key] = type(wrapper.__name__, (wrapper,), facts)
    return cast("type[W]", _MADE[key])
