"""A rich console that prints control characters in its text escaped, keeping its own styles and cursor moves."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from tsuka_core.textsafe import terminal_text

__all__ = ["SafeConsole"]


class SafeConsole(Console):
    """A :class:`rich.console.Console` whose rendered text is escaped (:func:`~tsuka_core.textsafe.terminal_text`).

    Strings are escaped before they are laid out (a table cell is as wide as
    its escaped text); every rendered segment is escaped too, which catches
    ``Text`` objects. Styles and rich's own control segments (the live
    progress moving the cursor) are kept.
    """

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """Rich's ``Text`` for ``text``, escaped first."""
        return super().render_str(terminal_text(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """Rich's segments for ``renderable``, with each text segment escaped."""
        for segment in super().render(renderable, options):
            if segment.control:
                yield segment
            else:
                yield Segment(terminal_text(segment.text), segment.style)
