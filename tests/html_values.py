"""A page's elements and every value it shows, to tell markup from text in hostile-input tests."""

from __future__ import annotations

from html.parser import HTMLParser


class Values(HTMLParser):
    """Each element with its attributes' names, and every piece of text and attribute value."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, tuple[str, ...]]] = []
        self.values: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, tuple(name for name, _ in attrs)))
        self.values.extend(value for _, value in attrs if value)

    def handle_data(self, data: str) -> None:
        self.values.append(data)

    def handle_comment(self, data: str) -> None:
        self.elements.append(("<!--", ()))
