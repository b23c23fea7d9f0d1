"""Check types that count things in the answer as IFEval counts them: pattern matches, letters, sentences, capitals.

Each takes the count as ``value`` (exactly) or ``min`` and/or ``max``, as
``word_count`` does: IFEval's "less than N" is ``max`` N-1, "at least N" is
``min`` N.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, PrivateAttr, model_validator

from tsuka_checks_builtin.text import CountParams
from tsuka_checks_builtin.wording import word_tokens
from tsuka_core import Answer, CheckType, Outcome, Pattern

__all__ = ["CapitalWordCount", "LetterCount", "RegexCount"]


class RegexCountParams(CountParams):
    """One or more patterns, and how many matches they must find in all."""

    pattern: Annotated[list[str], Field(min_length=1, max_length=16)] | str
    """The regular expression, or several: their matches are added up."""
    flags: str = ""
    """Any of i (ignore case), m (multi-line: ^ and $ at each line), s (dot matches newline)."""
    trim: str | None = None
    """Count only the matches that keep a character other than white space once these characters are taken off
    both ends (IFEval's highlighted sections: "*"); unset: every match counts."""

    _patterns: list[Pattern] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _compile(self) -> RegexCountParams:
        sources = [self.pattern] if isinstance(self.pattern, str) else self.pattern
        self._patterns = [Pattern.compile(source, self.flags) for source in sources]
        return self

    @property
    def patterns(self) -> list[Pattern]:
        """Every pattern, compiled with the flags."""
        return self._patterns


class RegexCount(CheckType[RegexCountParams]):
    """Pass when `pattern` matches `value` times, or from `min` to `max` (non-overlapping, as Python's findall).

    With several patterns, their matches are added up; with `trim`, a match counts only when something other than
    white space is left once those characters are taken off its ends. Each search stops after 1 s (errored).
    """

    name = "regex_count"
    params_model = RegexCountParams
    example: ClassVar[Mapping[str, Any]] = {"pattern": r"\[.*?\]", "min": 4}

    def evaluate(self, answer: Answer) -> Outcome:
        trim = self.params.trim
        found = sum(
            1
            for pattern in self.params.patterns
            for match in pattern.findall(answer.text)
            if trim is None or match.strip(trim).strip()
        )
        return self.params.judged(found, "matches")


class LetterCountParams(CountParams):
    """A character, and how many times it must appear."""

    letter: Annotated[str, Field(min_length=1, max_length=1)]
    """The character counted (a letter is counted in either case)."""


class LetterCount(CheckType[LetterCountParams]):
    """Pass when `letter` appears `value` times, or from `min` to `max`, in the lower-cased answer (IFEval's count)."""

    name = "letter_count"
    params_model = LetterCountParams
    example: ClassVar[Mapping[str, Any]] = {"letter": "o", "min": 6}

    def evaluate(self, answer: Answer) -> Outcome:
        found = Counter(answer.text.lower())[self.params.letter]
        return self.params.judged(found, f"{self.params.letter!r}")


class CapitalWordCount(CheckType[CountParams]):
    """Pass when the answer has `value` words in capitals, or from `min` to `max` (IFEval's count).

    A word is a token of NLTK's word tokenizer ("DON'T" is "DO" and "N'T"); it is in capitals when it has a cased
    letter and every cased letter is upper case.
    """

    name = "capital_word_count"
    params_model = CountParams
    example: ClassVar[Mapping[str, Any]] = {"max": 9}

    def evaluate(self, answer: Answer) -> Outcome:
        found = sum(1 for token in word_tokens(answer.text) if token.isupper())
        return self.params.judged(found, "words in capitals")
