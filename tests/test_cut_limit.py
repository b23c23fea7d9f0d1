"""An answer cut with ``finish_reason: length`` says which limit cut it: max_tokens, or the server's context size."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tsuka_core.backends.base import BackendConfig, ChatRequest, ChatResponse
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.engine.answer_faults import answer_fault


def cut_answer(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "a b c"}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }


def complete(answer: dict[str, Any], max_tokens: int | None) -> ChatResponse:
    async def main() -> ChatResponse:
        transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
        async with httpx.AsyncClient(transport=transport) as client:
            backend = OpenAIBackend(BackendConfig(base_url="http://mock.test/v1", max_tokens=max_tokens), client)
            return await backend.complete(ChatRequest(model="m1", messages=[{"role": "user", "content": "Hi"}]))

    return asyncio.run(main())


def detail(response: ChatResponse) -> str:
    found = answer_fault(response, [], None)
    assert found is not None
    assert found[0] == "cut"
    return found[1]


def test_an_answer_that_used_every_token_allowed_was_cut_at_max_tokens() -> None:
    response = complete(cut_answer(30, 64), max_tokens=64)
    assert response.token_limit == 64
    assert detail(response) == "answer cut at max_tokens (64 of 64 tokens; raise --max-tokens)"


def test_an_answer_stopped_short_of_max_tokens_was_cut_at_the_servers_context() -> None:
    response = complete(cut_answer(3584, 512), max_tokens=None)  # a 4,096-token context, the default 2048 asked
    assert response.token_limit == 2048
    assert detail(response) == (
        "answer cut at the server's context size, not max_tokens (3584 prompt + 512 answer tokens, "
        "max_tokens 2048; raise the server's context, llama-server -c, or its own token cap)"
    )


@pytest.mark.parametrize(
    "response",
    [
        ChatResponse(text="a", completion_tokens=40, finish_reason="length"),
        ChatResponse(text="a", completion_tokens=40, finish_reason="length", token_limit=512, usage_estimated=True),
    ],
    ids=["limit-unknown", "count-estimated"],
)
def test_without_a_known_limit_or_a_counted_answer_the_cut_is_said_as_before(response: ChatResponse) -> None:
    assert detail(response) == "answer cut at the token limit (finish_reason: length, 40 tokens)"
