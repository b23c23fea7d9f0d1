"""The one place every CLI line passes on its way out: control characters in it are shown escaped, never obeyed.

Model names, tool names, answers, server messages and test names come from
outside; a ``\\x1b]0;...`` in one of them would retitle the terminal, a
``\\x1b[2J`` clear it, a ``\\x1b]8;;`` fake a link. While a command runs,
``sys.stdout`` and ``sys.stderr`` are :class:`EscapingStream` wrappers, so every
``click.echo`` line is escaped by :func:`~tsuka_core.textsafe.terminal_text`.
Rich consoles write their styled output to the stream underneath (rich's own
``rich_proxied_file`` convention) and escape their text themselves
(:class:`~tsuka_core.cli.safe_console.SafeConsole`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from tsuka_core.textsafe import terminal_text

__all__ = ["EscapingStream", "escaped_output"]


class EscapingStream:
    """A text stream that writes to ``inner`` with control characters escaped; all else is ``inner``'s."""

    def __init__(self, inner: TextIO) -> None:
        self.rich_proxied_file = inner
        """The stream underneath, where rich writes its already escaped, styled output."""

    def write(self, text: str) -> int:
        """Write ``text`` escaped; returns the length of ``text`` as given."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.rich_proxied_file.write(terminal_text(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each line escaped."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich_proxied_file, name)


@contextmanager
def escaped_output() -> Iterator[None]:
    """While inside, ``sys.stdout`` and ``sys.stderr`` escape control characters (see the module docstring)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (_wrapped(s) for s in saved)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _wrapped(stream: TextIO | None) -> TextIO | EscapingStream | None:
    if stream is None or isinstance(stream, EscapingStream):
        return stream
    return EscapingStream(stream)
