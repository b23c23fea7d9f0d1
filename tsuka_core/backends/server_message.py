"""What a server said when it refused a request: its error message, on one shortened line."""

from __future__ import annotations

import json
import re
from typing import Any

from tsuka_core.textsafe import scrub

__all__ = ["MESSAGE_CHARS", "one_line", "server_message"]

MESSAGE_CHARS = 300
"""The longest server message shown; a longer one is cut with an ellipsis."""

_TAG = re.compile(r"<[^>]*>")


def server_message(raw: bytes, fallback: str = "") -> str:
    """The error message in a response body, on one shortened line; ``fallback`` when the body says nothing.

    Reads OpenAI-style ``{"error": {"message": ...}}``, ``{"error": "..."}``,
    ``{"message": ...}`` and FastAPI ``{"detail": ...}`` bodies; anything else is
    taken as text (HTML tags removed).
    """
    text = raw.decode("utf-8-sig", errors="replace")
    try:
        message = _json_message(scrub(json.loads(text)))
    except (ValueError, RecursionError):
        message = None
    if message is None:
        message = _TAG.sub(" ", text) if text.lstrip().startswith("<") else text
    return one_line(message) or fallback


def _json_message(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    for value in (error, data.get("message"), data.get("detail")):
        if isinstance(value, str):
            return value
    detail = data.get("detail")
    if isinstance(detail, list):
        return "; ".join(_detail_item(item) for item in detail)
    return None


def _detail_item(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    loc = item.get("loc")
    where = ".".join(str(part) for part in loc) if isinstance(loc, list) else ""
    msg = str(item.get("msg", ""))
    return f"{where}: {msg}" if where else msg


def one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    """``text`` on one line, white space collapsed, cut to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
