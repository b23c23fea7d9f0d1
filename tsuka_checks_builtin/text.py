"""Check types that judge the answer's text: counts, words, substrings, patterns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import regex
from pydantic import ConfigDict

from tsuka_core import Answer, CheckParams, CheckType, Count, NoParams, Outcome, RegexParams

__all__ = [
    "Contains",
    "FirstWord",
    "LastWord",
    "LineCount",
    "NotContains",
    "NotEmpty",
    "NotRegex",
    "Regex",
    "WordCount",
]

_ALNUM = regex.compile(r"[\p{L}\p{N}]")
_ALNUM_LAST = regex.compile(r"[\p{L}\p{N}]", regex.REVERSE)


def clip(text: str, limit: int = 60) -> str:
    """``text`` on one line, shortened to ``limit`` characters, quoted."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


class CountParams(CheckParams):
    """A count: exactly `value`, or from `min` to `max` (either may be left out)."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["value"]}, {"required": ["min"]}, {"required": ["max"]}]}
    )

    value: Count | None = None
    """The exact number expected."""
    min: Count | None = None
    """The fewest allowed ("at least 300 words": min 300)."""
    max: Count | None = None
    """The most allowed ("fewer than 3 bullets": max 2)."""

    def model_post_init(self, context: Any, /) -> None:
        """Refuse a count that says nothing, or both an exact value and a range, or a min above the max."""
        if self.value is None and self.min is None and self.max is None:
            raise ValueError("give value (an exact count), or min and/or max")
        if self.value is not None and (self.min is not None or self.max is not None):
            raise ValueError("give value or a range (min, max), not both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")

    def judged(self, found: int, what: str) -> Outcome:
        """Whether ``found`` (a count of ``what``) is the count asked for, said in one line."""
        if self.value is not None:
            return Outcome.check(found == self.value, f"expected {self.value} {what}, got {found}")
        low, high = self.min, self.max
        ok = (low is None or found >= low) and (high is None or found <= high)
        wanted = (
            f"{low} to {high}"
            if low is not None and high is not None
            else (f"at least {low}" if low is not None else f"at most {high}")
        )
        return Outcome.check(ok, f"expected {wanted} {what}, got {found}")


class WordCountParams(CountParams):
    """A count of words, and what a word is."""

    words: Literal["whitespace", "alphanumeric"] = "whitespace"
    """"whitespace" (the default): what white space separates ("don't," is one word); "alphanumeric": each run of
    letters, digits and underscores ("don't" is two, as IFEval counts)."""


class WordParams(CheckParams):
    """A word to compare with."""

    value: str
    """The expected word (case-sensitive unless flags is "i")."""
    flags: Literal["", "i"] = ""
    """"i" to ignore case."""


class SubstringParams(CheckParams):
    """A substring, case-insensitive unless flags is ""."""

    value: str
    """The text to look for."""
    flags: Literal["", "i"] = "i"
    """"i" (the default) ignores case; "" makes the comparison case-sensitive."""


_WORD = regex.compile(r"\w+")


class WordCount(CheckType[WordCountParams]):
    """Pass when the answer has `value` words, or from `min` to `max`; `words` says what a word is."""

    name = "word_count"
    params_model = WordCountParams
    example: ClassVar[Mapping[str, Any]] = {"min": 300, "words": "alphanumeric"}

    def evaluate(self, answer: Answer) -> Outcome:
        text = answer.text
        words = len(text.split()) if self.params.words == "whitespace" else len(_WORD.findall(text))
        return self.params.judged(words, "words")


class LineCount(CheckType[CountParams]):
    """Pass when the answer has `value` lines (or from `min` to `max`) that are non-empty after stripping."""

    name = "line_count"
    params_model = CountParams
    example: ClassVar[Mapping[str, Any]] = {"value": 3}

    def evaluate(self, answer: Answer) -> Outcome:
        lines = sum(1 for line in answer.text.splitlines() if line.strip())
        return self.params.judged(lines, "lines")


def _trim(token: str) -> str:
    """``token`` from its first to its last letter or number (linear: a regex anchored at both ends is quadratic)."""
    first = _ALNUM.search(token)
    last = _ALNUM_LAST.search(token)
    return token[first.start() : last.end()] if first and last else ""


def _word_at(text: str, position: int) -> str | None:
    """The first (``position`` 0) or last (-1) word, trimmed; only the tokens up to it are looked at."""
    tokens = text.split()
    ordered = tokens if position == 0 else reversed(tokens)
    return next((word for word in map(_trim, ordered) if word), None)


class _WordAt(CheckType[WordParams]):
    params_model = WordParams
    position: int
    label: str

    def evaluate(self, answer: Answer) -> Outcome:
        word = _word_at(answer.text, self.position)
        if word is None:
            return Outcome.fail(f"no {self.label} word: the answer has no words")
        want = self.params.value
        same = word.casefold() == want.casefold() if "i" in self.params.flags else word == want
        return Outcome.check(same, f"{self.label} word {clip(word)}, expected {want!r}")


class FirstWord(_WordAt):
    """Pass when the first word, stripped of non-letter/number edges, equals `value`."""

    name = "first_word"
    example: ClassVar[Mapping[str, Any]] = {"value": "Every"}
    position = 0
    label = "first"


class LastWord(_WordAt):
    """Pass when the last word, stripped of non-letter/number edges, equals `value`."""

    name = "last_word"
    example: ClassVar[Mapping[str, Any]] = {"value": "river", "flags": "i"}
    position = -1
    label = "last"


def _found(params: SubstringParams, text: str) -> bool:
    if "i" in params.flags:
        return params.value.casefold() in text.casefold()
    return params.value in text


class Contains(CheckType[SubstringParams]):
    """Pass when `value` is a substring of the answer (case-insensitive by default)."""

    name = "contains"
    params_model = SubstringParams
    example: ClassVar[Mapping[str, Any]] = {"value": "deploy.log"}

    def evaluate(self, answer: Answer) -> Outcome:
        found = _found(self.params, answer.text)
        return Outcome.check(found, f"{self.params.value!r} {'found' if found else 'not found'}")


class NotContains(CheckType[SubstringParams]):
    """Pass when `value` is not a substring of the answer (case-insensitive by default)."""

    name = "not_contains"
    params_model = SubstringParams
    example: ClassVar[Mapping[str, Any]] = {"value": "gold", "weight": 2}

    def evaluate(self, answer: Answer) -> Outcome:
        found = _found(self.params, answer.text)
        return Outcome.check(not found, f"{self.params.value!r} {'found' if found else 'not found'}")


class Regex(CheckType[RegexParams]):
    """Pass when the pattern `value` is found in the answer (flags i, m, s; time-limited)."""

    name = "regex"
    params_model = RegexParams
    example: ClassVar[Mapping[str, Any]] = {"value": r"\b\d{4}-\d{2}-\d{2}\b"}

    def evaluate(self, answer: Answer) -> Outcome:
        found = self.params.pattern.search(answer.text)
        return Outcome.check(found, f"/{self.params.value}/ {'matched' if found else 'not matched'}")


class NotRegex(CheckType[RegexParams]):
    """Pass when the pattern `value` is not found in the answer (flags i, m, s; time-limited)."""

    name = "not_regex"
    params_model = RegexParams
    example: ClassVar[Mapping[str, Any]] = {"value": r"^\s*[-*•]", "flags": "m"}

    def evaluate(self, answer: Answer) -> Outcome:
        found = self.params.pattern.search(answer.text)
        return Outcome.check(not found, f"/{self.params.value}/ {'matched' if found else 'not matched'}")


class NotEmpty(CheckType[NoParams]):
    """Pass when the answer text (reasoning removed) is not empty."""

    name = "not_empty"
    params_model = NoParams
    example: ClassVar[Mapping[str, Any]] = {}

    def evaluate(self, answer: Answer) -> Outcome:
        if answer.text:
            return Outcome.ok(f"{len(answer.text)} characters: {clip(answer.text, 40)}")
        return Outcome.fail("empty answer" + (" (it made a tool call)" if answer.tool_calls else ""))
