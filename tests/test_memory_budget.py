"""A run's memory stays bounded: large answers are read and judged a few at a time, and kept shortened."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tsuka_core import Registry
from tsuka_core.backends.base import BackendConfig, ChatResponse
from tsuka_core.backends.budget import LARGE_BODY_BYTES, BodyBudget
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.engine.kept import KEEP_CHARS, PART_CHARS, kept_answer
from tsuka_core.engine.runner import run_test
from tsuka_core.storage.answer_json import bounded_response_json
from tsuka_core.suite import model
from tsuka_core.suite.loading import load_suite

CONCURRENCY = 8


def _answer(chars: int) -> bytes:
    content = ("fisherman " * (chars // 10 + 1))[:chars]
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    return json.dumps({"choices": [choice], "usage": {"completion_tokens": 5}}).encode()


class _Watched(httpx.AsyncByteStream):
    """A body handed out in pieces; counts the bodies read past LARGE_BODY_BYTES at once."""

    reading = 0
    most = 0
    open_now = 0
    open_most = 0
    """Bodies begun and not closed, at once: small ones never wait, so all are read together."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.large = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        step = 256 * 1024
        type(self).open_now += 1
        type(self).open_most = max(type(self).open_most, type(self).open_now)
        for start in range(0, len(self.body), step):
            if start > LARGE_BODY_BYTES and not self.large:
                self.large = True
                type(self).reading += 1
                type(self).most = max(type(self).most, type(self).reading)
            await asyncio.sleep(0.001)
            yield self.body[start : start + step]

    async def aclose(self) -> None:
        type(self).open_now -= 1
        if self.large:
            type(self).reading -= 1
            self.large = False


def _tests(tmp_path: Path, registry: Registry) -> list[model.Test]:
    folder = tmp_path / "suite"
    folder.mkdir()
    for index in range(CONCURRENCY):
        test = {"name": f"t{index}", "category": "instruction", "prompt": f"Go on ({index}).",
                "checks": [{"type": "contains", "value": "fisherman"}]}  # fmt: skip
        (folder / f"t{index}.json").write_text(json.dumps(test))
    return list(load_suite(folder, registry).tests)


def _most_read_at_once(tests: list[model.Test], body: bytes, budget: BodyBudget) -> tuple[int, list[float]]:
    _Watched.reading = _Watched.most = _Watched.open_now = _Watched.open_most = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json"}, stream=_Watched(body))

    async def main() -> list[float]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            backend = OpenAIBackend(BackendConfig(base_url="http://model.test/v1", retries=0), client)
            runs = [run_test(backend, test, "m1", None, budget=budget) for test in tests]
            return [result.score for result in await asyncio.gather(*runs)]

    scores = asyncio.run(main())
    return _Watched.most, scores


@pytest.mark.parametrize("places", [1, 2])
def test_large_answers_are_read_no_more_at_once_than_the_budget_has_places(
    tmp_path: Path, registry: Registry, places: int
) -> None:
    most, scores = _most_read_at_once(_tests(tmp_path, registry), _answer(2 * LARGE_BODY_BYTES), BodyBudget(places))
    assert scores == [1.0] * CONCURRENCY
    assert most == places


def test_small_answers_never_wait_for_the_budget(tmp_path: Path, registry: Registry) -> None:
    most, scores = _most_read_at_once(_tests(tmp_path, registry), _answer(LARGE_BODY_BYTES // 4), BodyBudget(1))
    assert scores == [1.0] * CONCURRENCY
    assert most == 0
    assert _Watched.open_most == CONCURRENCY


def test_a_large_answer_is_kept_shortened_and_the_history_marks_it_cut() -> None:
    content = "word " * (KEEP_CHARS // 2)
    other = content[:-5] + "wore "
    kept, size = kept_answer(ChatResponse(text=content.strip(), content=content, completion_tokens=7))
    assert size is not None
    assert size > KEEP_CHARS
    assert len(kept.text) == PART_CHARS
    assert kept.completion_tokens == 7
    assert kept.content is not None
    assert kept.content.startswith(content[:PART_CHARS])
    different, _ = kept_answer(ChatResponse(text=other.strip(), content=other, completion_tokens=7))
    assert different.content != kept.content  # answers differing past the kept part still compare different
    stored, cut = bounded_response_json(kept, shortened=size)
    assert cut
    assert json.loads(stored)["cut"] == size


def test_a_small_answer_is_kept_whole() -> None:
    response = ChatResponse(text="short", content="short")
    assert kept_answer(response) == (response, None)
