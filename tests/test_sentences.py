"""sentence_count: sentences counted in the spirit of IFEval, without a model of sentences."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tsuka_checks_builtin.sentences import count_sentences
from tsuka_core import Outcome
from tsuka_core.testing import run_check


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("", 0),
        ("...", 0),
        ("Hello", 1),
        ("Hello world. How are you? Fine!", 3),
        ("Dr. Smith arrived at 9.30 today. He sat down.", 2),
        ("The value is 3.14 exactly. Yes", 2),
        ("Wait... what?!", 2),
        ('"Go home." She left.', 2),
        ("(Really.) Yes.", 2),
        ("我很好。你呢？", 2),
        ("A list:\n- one\n- two", 1),
        ("e.g. this counts once. And this.", 2),
    ],
)
def test_count_sentences(text: str, sentences: int) -> None:
    assert count_sentences(text) == sentences


def test_sentence_count_exact_and_range() -> None:
    text = "One. Two. Three."
    assert run_check("sentence_count", {"value": 3}, text) == Outcome.ok("expected 3 sentences, got 3")
    assert run_check("sentence_count", {"min": 4}, text) == Outcome.fail("expected at least 4 sentences, got 3")
    assert run_check("sentence_count", {"min": 1, "max": 3}, text).passed


@given(st.text(max_size=400))
def test_counting_sentences_never_crashes(text: str) -> None:
    count = count_sentences(text)
    assert 0 <= count <= sum(1 for char in text if char.isalnum())
