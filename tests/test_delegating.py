"""A wrapper backend forwards every method of Backend: none is forgotten when the base class grows one."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, ClassVar

import httpx

from tsuka_core.backends.base import Backend, BackendConfig, ChatRequest, ChatResponse, ServerFacts
from tsuka_core.backends.delegating import CLASS_FACTS, DelegatingBackend, seen_as
from tsuka_core.run.replicas import replica_set
from tsuka_core.storage.cache import CachingBackend
from tsuka_core.terms import Effort

NOT_FORWARDED = {"add_note": "a note added to the wrapper is taken with the wrapped backend's (take_notes)",
                 "description": "a class method: the wrapper's class answers it (seen_as)"}  # fmt: skip


def test_every_method_and_property_of_backend_is_forwarded() -> None:
    members = {
        name
        for name, value in vars(Backend).items()
        if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property | classmethod))
    }
    assert members - set(NOT_FORWARDED) <= set(vars(DelegatingBackend)), sorted(members - set(vars(DelegatingBackend)))
    assert "complete" in members  # the walk found the methods, not nothing


class Inner(Backend):
    """A backend whose every answer is its own."""

    name: ClassVar[str] = "inner"
    applies_effort: ClassVar[bool] = False
    env_vars: ClassVar[tuple[str, ...]] = ("INNER_URL",)

    @property
    def provider(self) -> str:
        return "http://127.0.0.1:1/v1"

    def effort_params(self, effort: Effort) -> dict[str, Any]:
        return {"think": effort}

    def repeats_note(self) -> str | None:
        return "greedy"

    async def effort_ignored(self, model: str) -> str | None:
        return f"{model} ignores it"

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        return {"sampling": {"topK": 3}}

    def secrets(self) -> tuple[str, ...]:
        return ("s3cret-value",)

    async def server_facts(self, model: str) -> ServerFacts:
        return ServerFacts(kind="llama.cpp", slots=2)

    async def list_models(self) -> list[str]:
        return ["m1"]

    def takes_unlisted(self, model: str) -> bool:
        return model.endswith(".gguf")

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.add_note("inner said so")
        return ChatResponse(text=f"hi {request.model}")


def test_a_wrapper_answers_as_the_wrapped_backend_does() -> None:
    inner = Inner(BackendConfig(), httpx.AsyncClient())
    wrapper = seen_as(DelegatingBackend, Inner)(inner)
    assert {fact: getattr(type(wrapper), fact) for fact in CLASS_FACTS} == {f: getattr(Inner, f) for f in CLASS_FACTS}
    assert wrapper.provider == inner.provider
    assert wrapper.effort_params("low") == {"think": "low"}
    assert wrapper.repeats_note() == "greedy"
    assert wrapper.profile_extra("m1", None) == {"sampling": {"topK": 3}}
    assert wrapper.secrets() == ("s3cret-value",)
    assert wrapper.takes_unlisted("a.gguf")

    async def ask() -> tuple[Any, ...]:
        return (
            await wrapper.effort_ignored("m1"),
            await wrapper.server_facts("m1"),
            await wrapper.list_models(),
            await wrapper.complete(ChatRequest("m1", [{"role": "user", "content": "x"}])),
        )

    ignored, facts, models, answer = asyncio.run(ask())
    assert (ignored, facts.slots, models, answer.text) == ("m1 ignores it", 2, ["m1"], "hi m1")
    wrapper.add_note("the wrapper's own")
    assert sorted(wrapper.take_notes()) == ["inner said so", "the wrapper's own"]
    assert issubclass(seen_as(CachingBackend, Inner), CachingBackend)


def test_the_replica_set_is_a_delegating_wrapper_answering_the_first_replicas_class_facts() -> None:
    """With two URLs the set is checked as one server: its class says it lists every model, as the first's does."""
    first, second = (Inner(BackendConfig(), httpx.AsyncClient()) for _ in range(2))
    replicas = replica_set([first, second], None, lambda note: None)
    assert isinstance(replicas, DelegatingBackend)
    assert {f: getattr(type(replicas), f) for f in CLASS_FACTS} == {f: getattr(Inner, f) for f in CLASS_FACTS}
    assert replicas.takes_unlisted("a.gguf")
    assert not replicas.takes_unlisted("m2")
    assert replicas.effort_params("low") == {"think": "low"}
    assert replicas.secrets() == ("s3cret-value", "s3cret-value")
