"""Streamed answers: the same answer as unstreamed, hostile streams held, fallbacks said, speed timed token by token."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from imitations import Notes
from replies import Reply
from streaming import StreamingServer, sse, stream_chunks

from tsuka_core.backends import http
from tsuka_core.backends.base import BackendConfig, ChatRequest, ChatResponse
from tsuka_core.backends.openai import OpenAIBackend
from tsuka_core.errors import RequestError
from tsuka_core.plugins.registry import Registry
from tsuka_core.run.session import RunOptions, run_benchmark
from tsuka_core.suite.model import Suite

pytestmark = pytest.mark.usefixtures("fast_retries")

URL = "http://mock.test/v1"
ASK = ChatRequest(model="m1", messages=[{"role": "user", "content": "Hi"}])
TIMES = {
    "duration": 0.0,
    "generation_ms": None,
    "generated_tokens": None,
    "prompt_ms": None,
    "prompt_processed": None,
    "first_token_ms": None,
    "speed_source": "wall",
}
"""The fields that time an answer, which streaming adds; everything else must be the same."""

Step = httpx.Response | Callable[[httpx.Request], httpx.Response]


def streamed(body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream", **(headers or {})})


def answers(*script: Step, options: dict[str, str] | None = None, asks: int = 1) -> tuple[list[Any], list[Any], Any]:
    """``asks`` answers from one backend whose server follows ``script``; the request bodies; the backend's notes."""
    bodies: list[Any] = []

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        step = script[min(len(bodies), len(script)) - 1]
        return step(request) if callable(step) else step

    async def main() -> tuple[list[Any], list[str]]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as client:
            backend = OpenAIBackend(BackendConfig(base_url=URL, retries=0, options=options or {}), client)
            got: list[Any] = []
            for _ in range(asks):
                try:
                    got.append(await backend.complete(ASK))
                except RequestError as error:
                    got.append(error)
            return got, backend.take_notes()

    got, notes = asyncio.run(main())
    return got, bodies, notes


def untimed(response: ChatResponse) -> ChatResponse:
    return dataclasses.replace(response, **TIMES)


REPLIES = [
    Reply.text("Paris is the capital of France."),
    Reply.text("ünïcødé ✓ — 東京", usage=None),
    Reply.text("<think>hmm</think>The answer is 4."),
    Reply.text("42", reasoning="Six times seven."),
    Reply.tool_call("find_user", {"name": "Maria Rossi", "limit": 3}),
    Reply.tool_call("find_user", '{"name": "Maria", broken', content="Looking."),
    Reply.tool_call("lookup", {"q": "x"}, object_arguments=True),
    Reply(tool_calls=(("a", {"x": 1}), ("b", {"y": [1, 2]}))),
]


@pytest.mark.parametrize("reply", REPLIES, ids=range(len(REPLIES)))
def test_a_streamed_answer_equals_the_same_answer_unstreamed(reply: Reply) -> None:
    (plain,), _, _ = answers(httpx.Response(200, content=reply.render("m1", 0)), options={"stream": "off"})
    (whole,), bodies, notes = answers(streamed(sse(stream_chunks(reply))))

    assert bodies[0]["stream"] is True
    assert bodies[0]["stream_options"] == {"include_usage": True}
    assert untimed(whole) == untimed(plain)
    assert [c.raw for c in whole.tool_calls] == [c.raw for c in plain.tool_calls]
    assert whole.speed_source == "stream"
    assert whole.first_token_ms is not None
    assert not notes


def test_junk_lines_and_events_in_a_stream_are_skipped() -> None:
    reply = Reply.tool_call("find_user", {"name": "Maria"}, content="ok")
    good = [json.dumps(c) for c in stream_chunks(reply)]
    junk = [": keep-alive\n\nevent: ping\n\nid: 7\n\nretry: 10\n\ndata: {not json\n\ndata: [1, 2]\n\ndata: \n\n"]
    wire = "".join(f"{j}data: {g}\r\n\r\n" for g, j in zip(good, junk * len(good), strict=False))
    (plain,), _, _ = answers(httpx.Response(200, content=reply.render("m1", 0)), options={"stream": "off"})
    (whole,), _, notes = answers(streamed((wire + "data: [DONE]").encode()))  # the last line has no end

    assert untimed(whole) == untimed(plain)
    assert not notes


def test_tool_call_pieces_of_two_calls_interleaved_are_joined_per_index() -> None:
    def piece(index: int, **function: Any) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": function}]}}]}

    chunks = [
        piece(0, name="a"),
        piece(1, name="b"),
        piece(0, arguments='{"x": '),
        piece(1, arguments='{"y": '),
        piece(1, arguments="2}"),
        piece(0, arguments="1}"),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    (whole,), _, _ = answers(streamed(sse(chunks)))

    assert [(c.name, c.arguments) for c in whole.tool_calls] == [("a", {"x": 1}), ("b", {"y": 2})]
    assert whole.finish_reason == "tool_calls"


def test_a_stream_that_ends_without_done_but_with_a_finish_reason_is_whole() -> None:
    (whole,), bodies, notes = answers(streamed(sse(stream_chunks(Reply.text("fine")), done=False)))
    assert whole.text == "fine"
    assert whole.completion_tokens == 7
    assert len(bodies) == 1
    assert not notes


@pytest.mark.parametrize(
    "broken",
    [
        sse(stream_chunks(Reply.text("cut off"))[:3], done=False),  # stopped mid-answer
        b"data: {oops\n\ndata: <html>\n\n",  # nothing readable
        b"",  # an empty stream
    ],
    ids=["cut", "garbage", "empty"],
)
def test_a_broken_stream_is_asked_again_unstreamed_and_said_once(broken: bytes) -> None:
    plain = httpx.Response(200, content=Reply.text("whole").render("m1", 0))
    got, bodies, notes = answers(streamed(broken), plain, asks=2)

    assert [r.text for r in got] == ["whole", "whole"]
    assert [("stream" in b) for b in bodies] == [True, False, False]  # never streamed again
    assert len(notes) == 1, notes
    assert "no longer streamed" in notes[0]


def test_a_server_that_refuses_streaming_is_asked_again_unstreamed() -> None:
    refusal = httpx.Response(400, json={"error": {"message": "Cannot use tools with stream"}})
    plain = httpx.Response(200, content=Reply.text("whole").render("m1", 0))
    got, bodies, notes = answers(refusal, plain, asks=2)

    assert [r.text for r in got] == ["whole", "whole"]
    assert [("stream" in b) for b in bodies] == [True, False, False]
    assert "refused to stream (Cannot use tools with stream)" in notes[0]


def test_a_server_that_ignores_stream_is_read_as_a_whole_answer_silently() -> None:
    (whole,), bodies, notes = answers(httpx.Response(200, content=Reply.text("plain").render("m1", 0)))
    assert whole.text == "plain"
    assert whole.speed_source == "wall"
    assert len(bodies) == 1
    assert not notes


def test_an_error_sent_in_the_stream_fails_the_request_with_its_message() -> None:
    chunks: list[Any] = [*stream_chunks(Reply.text("partial"))[:2], {"error": {"message": "model crashed"}}]
    (error,), _, _ = answers(streamed(sse(chunks)))
    assert isinstance(error, RequestError)
    assert "model crashed" in str(error)
    assert str(error).startswith("POST http://mock.test/v1/chat/completions")


def test_a_stream_larger_than_the_body_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_BODY_BYTES", 20_000)
    chunks = [{"choices": [{"index": 0, "delta": {"content": "x" * 1000}}]}] * 40
    (error,), _, _ = answers(streamed(sse(chunks)))
    assert isinstance(error, RequestError)
    assert "larger than 20,000 bytes" in str(error)


def test_a_stream_line_without_end_stops_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_BODY_BYTES", 50_000)
    (error,), _, _ = answers(streamed(b"data: " + b"y" * 200_000))
    assert isinstance(error, RequestError)
    assert "larger than 50,000 bytes" in str(error)


def test_a_gzip_stream_is_decoded() -> None:
    body = gzip.compress(sse(stream_chunks(Reply.text("zipped"))))
    (whole,), _, _ = answers(streamed(body, {"content-encoding": "gzip"}))
    assert whole.text == "zipped"


def test_stream_option_takes_auto_or_off() -> None:
    from tsuka_core.errors import BackendError

    with pytest.raises(BackendError, match="--option stream takes auto or off"):
        OpenAIBackend(BackendConfig(base_url=URL, options={"stream": "sometimes"}), httpx.AsyncClient())


# --- speed, timed from the stream on a real server --------------------------------------------------------------


def measure(server: StreamingServer, store: Path, suite: Suite, registry: Registry, jobs: int) -> dict[str, Any]:
    config = BackendConfig(base_url=server.base_url, timeout=30.0, retries=0)
    options = RunOptions(
        models=("m1",), backend="openai", config=config, efforts=("none",), store_path=store, concurrency=jobs
    )
    asyncio.run(asyncio.wait_for(run_benchmark(options, suite, registry, Notes()), 60))
    profile: dict[str, Any] = json.loads(store.read_text())["profiles"]["m1@none"]
    return profile


def test_a_one_slot_streaming_server_measures_its_decode_rate_at_j4_and_first_token_at_j1(
    tmp_path: Path, suite: Suite, registry: Registry
) -> None:
    """50 tok/s, 400 ms to the first byte, no timings: 50 ± 5 tok/s at -j 4 (queue left out), 400 ± 100 ms at -j 1."""
    four = dataclasses.replace(suite, tests=suite.tests[:4])
    with StreamingServer(slots=1, rate=50.0, first_byte=0.4, tokens=16) as server:
        busy = measure(server, tmp_path / "busy.json", four, registry, 4)
        alone = measure(server, tmp_path / "alone.json", four, registry, 1)

    assert busy["speedSource"] == "stream"
    assert abs(busy["tokensPerSecond"] - 50.0) <= 5.0, busy["tokensPerSecond"]
    assert abs(busy["speedFigures"]["decodeTokensPerSecond"]["p50"] - 50.0) <= 5.0, busy["speedFigures"]
    assert busy["speedFigures"]["timeToFirstTokenMs"]["p95"] > 1000  # the queue is in the time to first token
    assert abs(alone["timeToFirstTokenMs"] - 400.0) <= 100.0, alone["timeToFirstTokenMs"]
    assert abs(alone["speedFigures"]["timeToFirstTokenMs"]["p50"] - 400.0) <= 100.0, alone["speedFigures"]
    assert alone["speedFigures"]["decodeTokensPerSecond"]["source"] == "stream"
    assert alone["speedFigures"]["decodeTokensPerSecond"]["formula"].startswith("(completion_tokens - 1)")


def test_percentiles_interpolate_and_the_slow_tail_of_a_speed_is_its_low_end() -> None:
    from tsuka_core.engine.speed_figures import percentile

    assert percentile([5.0], 0.95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert percentile([10.0, 0.0], 0.95) == pytest.approx(9.5)
    assert percentile([10.0, 0.0], 0.05) == pytest.approx(0.5)  # p95 of a speed: 95% of answers were this fast


class _AfterDone(httpx.AsyncByteStream):
    """A whole answer, then what a careless server sends past ``[DONE]``: more events, or nothing ever again."""

    def __init__(self, after: list[bytes], hang: bool) -> None:
        self.after, self.hang, self.read_to_end = after, hang, False

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        yield sse(stream_chunks(Reply.text("kept")))
        for part in self.after:
            yield part
        if self.hang:
            await asyncio.sleep(60)
        self.read_to_end = True


@pytest.mark.parametrize(
    ("after", "hang", "to_end"),
    [
        ([], False, True),  # the usual end: read, so the connection can be reused
        ([b"data: late\n\n"] * 3, False, True),  # a few stray events: read and ignored
        ([b"data: late\n\n"] * 500, False, False),  # too many: given up, the answer kept
        ([], True, False),  # a body that never ends: given up after DRAIN_SECONDS, the answer kept
    ],
)
def test_past_done_the_body_is_read_to_its_end_within_bounds(
    after: list[bytes], hang: bool, to_end: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tsuka_core.backends import streamed

    monkeypatch.setattr(streamed, "DRAIN_SECONDS", 0.2)
    body = _AfterDone(after, hang)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    async def ask() -> ChatResponse:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            backend = OpenAIBackend(BackendConfig(base_url="http://127.0.0.1:9/v1", retries=0), client)
            return await backend.complete(ChatRequest("m1", [{"role": "user", "content": "hi"}]))

    response = asyncio.run(asyncio.wait_for(ask(), 10))
    assert response.text == "kept"
    assert body.read_to_end is to_end
