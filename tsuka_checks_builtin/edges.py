"""Check types that judge how an answer starts and ends, as IFEval reads them (white space around it aside)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field

from tsuka_core import Answer, CheckParams, CheckType, Outcome

__all__ = ["EndsWith", "StartsWith", "WrappedIn"]


class EdgeParams(CheckParams):
    """A phrase, compared without case."""

    value: Annotated[str, Field(min_length=1)]
    """The phrase (white space around it is not part of it)."""


class EndsWithParams(EdgeParams):
    """A phrase, and characters taken off the answer's end before comparing."""

    trim: str = ""
    """Characters taken off both ends of the answer first (IFEval's end phrase: '"', a final quote)."""


def _clip(text: str) -> str:
    return repr(text if len(text) <= 40 else "…" + text[-39:])


class StartsWith(CheckType[EdgeParams]):
    """Pass when the answer starts with `value`, case aside (IFEval's repeat_prompt)."""

    name = "starts_with"
    params_model = EdgeParams
    example: ClassVar[Mapping[str, Any]] = {"value": "Write an email to my boss"}

    def evaluate(self, answer: Answer) -> Outcome:
        ok = answer.text.strip().lower().startswith(self.params.value.strip().lower())
        return Outcome.check(ok, f"starts {answer.text.strip()[:40]!r}")


class EndsWith(CheckType[EndsWithParams]):
    """Pass when the answer ends with `value`, case aside, once `trim` is taken off its ends (IFEval's end_checker)."""

    name = "ends_with"
    params_model = EndsWithParams
    example: ClassVar[Mapping[str, Any]] = {"value": "Is there anything else I can help with?", "trim": '"'}

    def evaluate(self, answer: Answer) -> Outcome:
        text = answer.text.strip().strip(self.params.trim).lower()
        return Outcome.check(text.endswith(self.params.value.strip().lower()), f"ends {_clip(text)}")


class WrappedIn(CheckType[EdgeParams]):
    """Pass when the whole answer is wrapped in `value`: it starts and ends with it (IFEval's quotation: '"')."""

    name = "wrapped_in"
    params_model = EdgeParams
    example: ClassVar[Mapping[str, Any]] = {"value": '"'}

    def evaluate(self, answer: Answer) -> Outcome:
        text, mark = answer.text.strip(), self.params.value
        ok = len(text) >= 2 * len(mark) and text.startswith(mark) and text.endswith(mark)
        return Outcome.check(ok, f"starts {text[:10]!r}, ends {_clip(text[-10:])}")
