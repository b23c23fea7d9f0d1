"""A chat-completion stream put back together: the completion a non-streamed request returns, and when tokens came.

Every chunk is hostile: one that is not JSON, not an object, or holds fields
of the wrong type is skipped (and counted); tool-call pieces are joined per
``index`` (arguments concatenated); ``reasoning_content`` and ``reasoning``
deltas are kept apart from the content; the last ``finish_reason``, ``usage``
and llama.cpp ``timings`` seen are kept. A stream that ends without
``[DONE]`` is whole when it said why it finished; one that gave no usable chunk,
or stopped without either, is :class:`BrokenStreamError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tsuka_core.backends.bounded import read_bounded
from tsuka_core.backends.sse import DONE, is_event_stream, sse_data
from tsuka_core.errors import RequestError
from tsuka_core.judge.answer import MAX_TOOL_CALLS
from tsuka_core.textsafe import scrub

if TYPE_CHECKING:
    import httpx

__all__ = ["BrokenStreamError", "StreamedAnswer", "read_stream"]

_KEPT = ("usage", "timings", "id", "model")
DRAIN_SECONDS = 1.0
"""How long the rest of a body is read after ``[DONE]`` (its end, so the connection is kept) before giving up."""
DRAIN_EVENTS = 64
"""How many events after ``[DONE]`` are read (and ignored) before giving up on the body's end."""


class BrokenStreamError(RequestError):
    """The server answered a streamed request with something that is not a whole chat-completion stream."""


@dataclass
class StreamedAnswer:
    """The chunks of one stream as they are added, and the seconds (since sending) when tokens arrived."""

    content: list[str] = field(default_factory=list)
    reasoning: dict[str, list[str]] = field(default_factory=dict)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    kept: dict[str, Any] = field(default_factory=dict)
    chunks: int = 0
    """Chunks read that were chat-completion chunks."""
    skipped: int = 0
    """Events that were not (not JSON, not an object)."""
    done: bool = False
    token_events: int = 0
    """Chunks that carried generated text, reasoning or a tool-call piece."""
    token_arrivals: int = 0
    """Network reads that brought such chunks (chunks read at once arrive at the same time)."""
    first_token_s: float | None = None
    last_token_s: float | None = None

    def add(self, data: str, at: float) -> None:
        """Take in one event's data, which arrived ``at`` seconds after the request was sent."""
        if data.strip() == DONE:
            self.done = True
            return
        try:
            chunk = scrub(json.loads(data))
        except (ValueError, RecursionError):
            self.skipped += 1
            return
        if not isinstance(chunk, Mapping):
            self.skipped += 1
            return
        if chunk.get("error") is not None:
            raise RequestError(f"the server ended the stream with an error: {_error_text(chunk['error'])}")
        self.chunks += 1
        self.kept.update({key: chunk[key] for key in _KEPT if chunk.get(key) is not None})
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, Mapping) and choice.get("index", 0) == 0 and self._add_choice(choice):
                self.token_arrivals += at != self.last_token_s
                self.first_token_s = at if self.first_token_s is None else self.first_token_s
                self.last_token_s = at
                self.token_events += 1

    def _add_choice(self, choice: Mapping[str, Any]) -> bool:
        """Take in one choice's delta; True when it carried something generated."""
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self.finish_reason = finish
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            return False
        generated = False
        if isinstance(text := delta.get("content"), str):
            self.content.append(text)
            generated = bool(text)
        for key in ("reasoning_content", "reasoning"):
            if isinstance(text := delta.get(key), str) and text:
                self.reasoning.setdefault(key, []).append(text)
                generated = True
        pieces = delta.get("tool_calls")
        for piece in pieces if isinstance(pieces, list) else ():
            generated = self._add_call(piece) or generated
        return generated

    def _add_call(self, piece: Any) -> bool:
        """Join one tool-call piece to the call of its ``index``; True when it was one."""
        if not isinstance(piece, Mapping):
            return False
        index = self._index(piece)
        if index is None:
            return False
        call = self.calls.setdefault(index, {"type": "function", "function": {}})
        if isinstance(piece.get("id"), str) and piece["id"]:
            call["id"] = piece["id"]
        if isinstance(piece.get("type"), str) and piece["type"]:
            call["type"] = piece["type"]
        function = piece.get("function")
        if isinstance(function, Mapping):
            _join_function(call["function"], function)
        return True

    def _index(self, piece: Mapping[str, Any]) -> int | None:
        """The piece's call index: as sent, else a new call when it brings a new id, else the last call's."""
        index = piece.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            last = max(self.calls, default=None)
            fresh = last is None or (piece.get("id") not in (None, "", self.calls[last].get("id")))
            index = 0 if last is None else last + 1 if fresh else last
        if not 0 <= index < MAX_TOOL_CALLS * 4 or (index not in self.calls and len(self.calls) >= MAX_TOOL_CALLS):
            return None
        return index

    def completion(self) -> dict[str, Any]:
        """The answer as a non-streamed ``chat.completion`` object, for the same parser."""
        text = "".join(self.content)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        for key, parts in self.reasoning.items():
            message[key] = "".join(parts)
        if self.calls:
            message["tool_calls"] = [self.calls[index] for index in sorted(self.calls)]
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {"object": "chat.completion", "choices": [choice], **self.kept}

    def broken(self) -> str | None:
        """Why the stream is not a whole answer, or None when it is."""
        if not self.chunks:
            return f"no chat-completion chunk came ({self.skipped} unreadable event(s))"
        if not self.done and self.finish_reason is None:
            return "the stream stopped before its end ([DONE]) and before a finish_reason"
        return None


def _join_function(into: dict[str, Any], piece: Mapping[str, Any]) -> None:
    """A function piece joined to the call so far: the name set, string arguments appended."""
    name = piece.get("name")
    if isinstance(name, str) and name:
        before = into.get("name")
        into["name"] = name if before in (None, name) else f"{before}{name}"  # a name sent whole, or in pieces
    arguments = piece.get("arguments")
    if isinstance(arguments, str):
        before = into.get("arguments", "")
        into["arguments"] = (before if isinstance(before, str) else json.dumps(before)) + arguments
    elif isinstance(arguments, Mapping) and not into.get("arguments"):
        into["arguments"] = dict(arguments)  # a server that sends the whole object at once


def _error_text(error: Any) -> str:
    message = error.get("message") if isinstance(error, Mapping) else error
    return " ".join(str(message).split())[:300]


async def read_stream(response: httpx.Response, limit: int, label: str, started: float) -> StreamedAnswer | bytes:
    """The stream of ``response`` put together; a body that is not ``text/event-stream`` as its bytes.

    The answer ends at ``[DONE]``; the body is then read to its end, so that its
    connection can carry the next request, within :data:`DRAIN_EVENTS` more events,
    :data:`DRAIN_SECONDS` and the body's ``limit`` (past them the connection is
    dropped, the answer kept). Raises :class:`BrokenStreamError` for a stream that
    is not a whole answer and RequestError for an error the server sent in it.
    """
    if not is_event_stream(response):
        return await read_bounded(response, limit, truncate=False, label=label)
    import asyncio

    answer = StreamedAnswer()
    after_done = 0
    try:
        async with asyncio.timeout(None) as drain:
            async for data, at in sse_data(response, limit, label):
                if answer.done:
                    after_done += 1
                    if after_done > DRAIN_EVENTS:
                        break
                    continue
                answer.add(data, at - started)
                if answer.done:
                    drain.reschedule(asyncio.get_running_loop().time() + DRAIN_SECONDS)
    except Exception as error:
        if not answer.done:
            if isinstance(error, RequestError) and not str(error).startswith(label):
                error.args = (f"{label}: {error}",)
            raise
        # The answer is whole: what went wrong past its end (too slow, too much, a reset) only costs the connection.
    reason = answer.broken()
    if reason is not None:
        raise BrokenStreamError(f"{label}: {reason}")
    return answer
