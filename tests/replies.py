"""What the loopback server answers to one chat request: a completion, an error, raw bytes, or a dropped connection."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Arguments", "Reply"]

Arguments = str | Mapping[str, Any]


@dataclass(frozen=True)
class Reply:
    """What the server answers to one chat request: a completion, an error, raw bytes, or a dropped connection."""

    status: int = 200
    content: str | None = None
    tool_calls: tuple[tuple[str, Arguments], ...] = ()
    """``(name, arguments)``: a string is sent as it is (even invalid JSON), a mapping as a JSON string."""
    object_arguments: bool = False
    """Send mapping arguments as JSON objects instead of strings, as some servers do."""
    reasoning_content: str | None = None
    usage: tuple[int, int] | None = (12, 7)
    """``(prompt_tokens, completion_tokens)``, or ``None`` to send no ``usage`` at all."""
    message: str = ""
    """The error message, for a status of 400 or more."""
    retry_after: str | None = None
    raw: bytes | None = None
    """A body sent verbatim instead of a rendered one."""
    content_type: str = "application/json"
    delay: float = 0.0
    """Seconds to wait before answering."""
    disconnect: bool = False
    """Close the connection without answering."""
    finish_reason: str | None = None
    """The ``finish_reason`` sent; by default ``tool_calls`` with calls, else ``stop``."""

    @classmethod
    def text(
        cls, content: str | None, *, reasoning: str | None = None, usage: tuple[int, int] | None = (12, 7)
    ) -> Reply:
        """A plain answer (``content`` may be ``None``), optionally with ``reasoning_content``."""
        return cls(content=content, reasoning_content=reasoning, usage=usage)

    @classmethod
    def tool_call(cls, name: str, arguments: Arguments, *, content: str | None = None, **kw: Any) -> Reply:
        """An answer with one tool call."""
        return cls(content=content, tool_calls=((name, arguments),), **kw)

    @classmethod
    def error(cls, status: int, message: str, *, retry_after: float | str | None = None, delay: float = 0.0) -> Reply:
        """An OpenAI-style error answer, with a ``Retry-After`` header when ``retry_after`` is given."""
        header = None if retry_after is None else str(retry_after)
        return cls(status=status, message=message, retry_after=header, delay=delay)

    @classmethod
    def body(cls, raw: bytes, *, status: int = 200, content_type: str = "application/json") -> Reply:
        """Exactly these bytes as the body."""
        return cls(status=status, raw=raw, content_type=content_type)

    @classmethod
    def drop(cls) -> Reply:
        """Close the connection without a response."""
        return cls(disconnect=True)

    def render(self, model: str, n: int) -> bytes:
        """The response body for this reply."""
        if self.raw is not None:
            return self.raw
        if self.status >= 400:
            error = {"message": self.message, "type": "invalid_request_error", "code": self.status}
            return json.dumps({"error": error}).encode()
        data: dict[str, Any] = {
            "id": f"chatcmpl-loopback-{n}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "message": self._message(), "finish_reason": self._finish()}],
        }
        if self.usage is not None:
            prompt, completion = self.usage
            data["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return json.dumps(data, ensure_ascii=False).encode()

    def _message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning_content is not None:
            message["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            message["tool_calls"] = [self._call(i, name, args) for i, (name, args) in enumerate(self.tool_calls)]
        return message

    def _call(self, index: int, name: str, arguments: Arguments) -> dict[str, Any]:
        if not isinstance(arguments, str) and not self.object_arguments:
            arguments = json.dumps(arguments, ensure_ascii=False)
        return {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}

    def _finish(self) -> str:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"
