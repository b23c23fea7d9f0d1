"""A check type that counts the sentences of an answer, in the spirit of IFEval's verifiable instructions.

A sentence ends at a run of ``.``, ``!``, ``?`` or ``…``, optionally followed by
closing quotes or brackets, that is followed by white space or the end of the
text (``3.14`` and ``example.com`` end none); ``。``, ``！`` and ``？`` end one
wherever they stand; a full stop after a common abbreviation (``Dr``, ``e.g``...)
ends none; a piece counts only if it holds a letter or a digit, and text after the
last end that holds one is a sentence too; a line break ends none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from tsuka_checks_builtin.text import CountParams
from tsuka_checks_builtin.wording import punkt_sentences
from tsuka_core import Answer, CheckType, Outcome

__all__ = ["ABBREVIATIONS", "SentenceCount", "SentenceCountParams", "count_sentences"]

ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "e.g", "i.e", "cf", "fig"})
"""Words whose full stop does not end a sentence (compared without case)."""

_CLOSERS = "\"'”’)]}»"
_CLOSE = f"[{re.escape(_CLOSERS)}]*"
_END = re.compile(rf"[.!?…]+{_CLOSE}(?=\s|$)|[。！？]+{_CLOSE}")


def _has_word(text: str) -> bool:
    return any(char.isalnum() for char in text)


_WORD_BEFORE = 16
"""How far back an end's last word is looked for: every abbreviation is shorter."""


def count_sentences(text: str) -> int:
    """The number of sentences in ``text``, counted as this module's docstring says (in linear time)."""
    count, seen, worded = 0, 0, False
    for end in _END.finditer(text):
        worded = worded or _has_word(text[seen : end.end()])
        seen = end.end()
        if end.group().startswith(".") and end.group().rstrip(_CLOSERS) == ".":
            last_word = text[max(0, end.start() - _WORD_BEFORE) : end.start()].split()[-1:] or [""]
            if last_word[0].lower() in ABBREVIATIONS:
                continue
        if worded:
            count, worded = count + 1, False
    return count + (1 if worded or _has_word(text[seen:]) else 0)


class SentenceCountParams(CountParams):
    """A count of sentences, and how a sentence is found."""

    splitter: Literal["simple", "punkt"] = "simple"
    """``simple``: the ends listed above; ``punkt``: NLTK's English Punkt model, as IFEval counts sentences."""


class SentenceCount(CheckType[SentenceCountParams]):
    """Pass when the answer has `value` sentences, or from `min` to `max` (ends: . ! ? … and 。！？).

    A full stop after Mr, Mrs, Ms, Dr, Prof, Sr, Jr, St, vs, e.g, i.e, cf or fig ends no sentence; 3.14 has no
    end inside it; a line break ends none (a list without full stops is one sentence); text after the last end
    that holds a letter or digit is one more. So "Wait... what?!" is two sentences, "Dr. Smith sat. He slept."
    two, and "我很好。你呢？" two. With `splitter` "punkt", sentences are NLTK's English Punkt model's (IFEval's).
    """

    name = "sentence_count"
    params_model = SentenceCountParams
    example: ClassVar[Mapping[str, Any]] = {"max": 3}

    def evaluate(self, answer: Answer) -> Outcome:
        text = answer.text
        found = count_sentences(text) if self.params.splitter == "simple" else len(punkt_sentences(text))
        return self.params.judged(found, "sentences")
