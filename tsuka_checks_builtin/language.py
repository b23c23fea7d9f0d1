"""Check types that judge the language and the letter case of an answer, as IFEval does (langdetect, seeded)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from tsuka_checks_builtin.wording import detected_language
from tsuka_core import Answer, CheckParams, CheckType, Outcome

__all__ = ["Language", "LetterCase"]

Code = Annotated[str, Field(pattern=r"^[a-z]{2,3}(-[a-zA-Z]{2,4})?$")]


class LanguageParams(CheckParams):
    """A language, by its code."""

    value: Code
    """The language's ISO 639-1 code as langdetect gives it (``en``, ``kn``, ``zh-cn``...)."""


class Language(CheckType[LanguageParams]):
    """Pass when the answer is in language `value`, as langdetect finds it (IFEval's response_language).

    langdetect is seeded, so a text always gets the same answer. A text it finds no language in (no letters)
    passes, as in IFEval.
    """

    name = "language"
    params_model = LanguageParams
    example: ClassVar[Mapping[str, Any]] = {"value": "en"}

    def evaluate(self, answer: Answer) -> Outcome:
        found = detected_language(answer.text)
        if found is None:
            return Outcome.ok("no language found (no letters): passes, as in IFEval")
        return Outcome.check(found == self.params.value, f"language {found}, expected {self.params.value}")


class LetterCaseParams(CheckParams):
    """A letter case, and optionally the language the answer must be in."""

    case: Literal["upper", "lower"]
    """``upper``: every letter a capital (and at least one letter); ``lower``: no capital (and at least one letter)."""
    language: Code | None = None
    """Also the language (``en``: IFEval's "in English, all capital / lowercase letters")."""


class LetterCase(CheckType[LetterCaseParams]):
    """Pass when every cased letter of the answer is in `case` (at least one is), and it is in `language` if given.

    "No capital letters" this way agrees with IFEval where `not_regex [A-Z]` does not: É and ß count, and an
    answer with no letter at all fails. A text langdetect finds no language in passes the language part, as in
    IFEval.
    """

    name = "letter_case"
    params_model = LetterCaseParams
    example: ClassVar[Mapping[str, Any]] = {"case": "lower", "language": "en"}

    def evaluate(self, answer: Answer) -> Outcome:
        text = answer.text
        cased = text.isupper() if self.params.case == "upper" else text.islower()
        if not cased:
            return Outcome.fail(f"not all {self.params.case} case (or no letter)")
        if self.params.language is None:
            return Outcome.ok(f"all {self.params.case} case")
        found = detected_language(text)
        ok = found is None or found == self.params.language
        return Outcome.check(ok, f"all {self.params.case} case; language {found or 'not found'}")
