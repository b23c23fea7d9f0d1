"""Check types that judge how an answer is laid out, as IFEval reads it: paragraphs, responses, a title."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from tsuka_checks_builtin.text import CountParams
from tsuka_core import Answer, CheckParams, CheckType, NoParams, Outcome

__all__ = ["ParagraphCount", "ParagraphFirstWord", "ResponseCount", "Title"]

_DIVIDER = re.compile(r"\s?\*\*\*\s?")
_BLANK_LINE = re.compile(r"\n\n")
_TITLE = re.compile(r"<<[^\n]+>>")
_WORD_END = frozenset(".,?!'\"")


class ParagraphCountParams(CountParams):
    """A number of paragraphs, and what separates them."""

    divider: Literal["***", "blank line"] = "***"
    """``***``: the markdown divider (IFEval's number_paragraphs: an empty paragraph between two dividers fails);
    ``blank line``: two line breaks, blank paragraphs not counted."""


def _paragraphs(text: str, divider: str) -> list[str] | None:
    """The answer's paragraphs by ``divider`` (blank ones left out); None when a blank one stands between two."""
    if divider == "blank line":
        return [p for p in _BLANK_LINE.split(text) if p.strip()]
    pieces = _DIVIDER.split(text)
    for index, piece in enumerate(pieces):
        if not piece.strip() and 0 < index < len(pieces) - 1:
            return None
    return [p for p in pieces if p.strip()]


class ParagraphCount(CheckType[ParagraphCountParams]):
    """Pass when the answer has `value` paragraphs, or from `min` to `max`, separated by `divider`."""

    name = "paragraph_count"
    params_model = ParagraphCountParams
    example: ClassVar[Mapping[str, Any]] = {"value": 3, "divider": "***"}

    def evaluate(self, answer: Answer) -> Outcome:
        found = _paragraphs(answer.text, self.params.divider)
        if found is None:
            return Outcome.fail(f"an empty paragraph stands between two {self.params.divider} dividers")
        return self.params.judged(len(found), "paragraphs")


class ParagraphFirstWordParams(CheckParams):
    """How many paragraphs (split at blank lines), which one, and the word it starts with."""

    paragraphs: Annotated[int, Field(ge=1, le=1000)]
    """The exact number of paragraphs the answer must have."""
    index: Annotated[int, Field(ge=1, le=1000)]
    """Which paragraph (1 is the first) must start with `value`."""
    value: Annotated[str, Field(min_length=1)]
    """The word (compared in lower case; quotes before it and punctuation after it are not part of it)."""


class ParagraphFirstWord(CheckType[ParagraphFirstWordParams]):
    """Pass when the answer has `paragraphs` paragraphs (split at blank lines) and paragraph `index` starts with
    `value` (IFEval's nth_paragraph_first_word)."""

    name = "paragraph_first_word"
    params_model = ParagraphFirstWordParams
    example: ClassVar[Mapping[str, Any]] = {"paragraphs": 3, "index": 2, "value": "However"}

    def evaluate(self, answer: Answer) -> Outcome:
        pieces = _BLANK_LINE.split(answer.text)
        count = sum(1 for p in pieces if p.strip())
        index = self.params.index
        if index > count or not pieces[index - 1].strip():
            return Outcome.fail(f"no paragraph {index}: {count} paragraph(s) before a blank one")
        word = pieces[index - 1].strip().split()[0].lstrip("'").lstrip('"')
        first = "".join(_until_punctuation(word)).lower()
        wanted = self.params.value.lower()
        ok = count == self.params.paragraphs and first == wanted
        return Outcome.check(ok, f"{count} paragraphs (expected {self.params.paragraphs}); paragraph {index} "
                                 f"starts with {first!r} (expected {wanted!r})")  # fmt: skip


def _until_punctuation(word: str) -> list[str]:
    letters: list[str] = []
    for letter in word:
        if letter in _WORD_END:
            break
        letters.append(letter)
    return letters


class ResponseCountParams(CheckParams):
    """How many responses, and what separates them."""

    value: Annotated[int, Field(ge=1, le=100)] = 2
    """The exact number of responses."""
    separator: Annotated[str, Field(min_length=1)] = "******"
    """What separates two responses."""


class ResponseCount(CheckType[ResponseCountParams]):
    """Pass when the answer holds exactly `value` different, non-empty responses separated by `separator`.

    As IFEval's two_responses: an empty response between two separators fails; the responses are compared
    without the white space around them.
    """

    name = "response_count"
    params_model = ResponseCountParams
    example: ClassVar[Mapping[str, Any]] = {"value": 2, "separator": "******"}

    def evaluate(self, answer: Answer) -> Outcome:
        pieces = answer.text.split(self.params.separator)
        if any(not p.strip() for p in pieces[1:-1]):
            return Outcome.fail(f"an empty response stands between two {self.params.separator!r}")
        responses = [p.strip() for p in pieces if p.strip()]
        if len(set(responses)) != len(responses):
            return Outcome.fail("two of the responses are the same")
        return Outcome.check(
            len(responses) == self.params.value, f"expected {self.params.value} responses, got {len(responses)}"
        )


class Title(CheckType[NoParams]):
    """Pass when the answer has a title in double angular brackets, <<like this>>, on one line (IFEval's title)."""

    name = "title"
    params_model = NoParams
    example: ClassVar[Mapping[str, Any]] = {}

    def evaluate(self, answer: Answer) -> Outcome:
        titles = [t for t in _TITLE.findall(answer.text) if t.lstrip("<").rstrip(">").strip()]
        return Outcome.check(bool(titles), f"title {titles[0]!r}" if titles else "no <<title>>")
