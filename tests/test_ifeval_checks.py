"""IFEval's instructions in tsuka: the check types that state them, the converter, the suite, and its scorecard.

Each expectation below is IFEval's verdict on that answer, as its verifier's
code decides it (``instructions.py`` of IFEval); ``test_ifeval_agreement``
measures the same against the verifiers themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tsuka_core
from tsuka_checks_builtin import ifeval
from tsuka_checks_builtin.ifeval import convert
from tsuka_checks_builtin.ifeval.convert import instruction_check
from tsuka_checks_builtin.ifeval.scorecard import IfevalScorecard, loose_variants
from tsuka_checks_builtin.wording import word_tokens
from tsuka_core import Answer, JudgedCheck, JudgedTest, SuiteError, build_check
from tsuka_core.testing import run_check

SAMPLE = Path(__file__).parent / "data" / "ifeval_sample.jsonl"
"""Eight entries in IFEval's format, prompts written for these tests."""


def passes(check: str, params: dict[str, Any], text: str, unstripped: str | None = None) -> bool:
    """Whether one check passes ``text`` (with ``unstripped``, the answer as written)."""
    outcome = run_check(check, params, Answer(text, unstripped=unstripped))
    assert outcome.status != "errored", outcome.detail
    return outcome.passed


@pytest.mark.parametrize(
    ("params", "text", "expected"),
    [
        ({"pattern": r"\[.*?\]", "min": 2}, "[a] and [b]", True),
        ({"pattern": r"\[.*?\]", "min": 2}, "[a] and [b\n]", False),  # . does not cross a line
        ({"pattern": r"\[.*?\]", "min": 2}, "[][]", True),  # empty placeholders count, as in IFEval
        ({"pattern": [r"^\s*\*[^\*].*$", r"^\s*-.*$"], "flags": "m", "value": 3}, "* a\n- b\n  * c", True),
        ({"pattern": [r"^\s*\*[^\*].*$", r"^\s*-.*$"], "flags": "m", "value": 3}, "* a\n** b\n- c", False),
        ({"pattern": [r"\*[^\n\*]*\*", r"\*\*[^\n\*]*\*\*"], "trim": "*", "min": 2}, "*a* and * *", False),
        ({"pattern": [r"\*[^\n\*]*\*", r"\*\*[^\n\*]*\*\*"], "trim": "*", "value": 1}, "**bold**", True),
        ({"pattern": "data", "flags": "i", "max": 1}, "Data and DATA", False),
        ({"pattern": "data", "flags": "i", "max": 1}, "metadata", True),
    ],
)
def test_regex_count_adds_up_every_patterns_matches(params: dict[str, Any], text: str, expected: bool) -> None:
    assert passes("regex_count", params, text) is expected


def test_letter_count_counts_the_letter_in_either_case() -> None:
    assert passes("letter_count", {"letter": "a", "value": 3}, "A banana") is False  # four
    assert passes("letter_count", {"letter": "a", "min": 4}, "A banana") is True
    assert passes("letter_count", {"letter": "z", "max": 0}, "Zoo") is False


def test_capital_words_are_nltks_tokens_in_capitals() -> None:
    assert passes("capital_word_count", {"value": 2}, "DON'T") is True  # DO and N'T
    assert passes("capital_word_count", {"value": 1}, "I went") is True
    assert passes("capital_word_count", {"value": 1}, "Nasa 42 A1") is True  # A1: its only cased letter is upper
    assert passes("capital_word_count", {"max": 0}, "ÉTÉ") is False


def test_a_token_punkt_never_saw_is_counted_not_crashed_on() -> None:
    """Punkt's orthographic table is a default dict: an unseen token (a lone dash) is unknown, not a KeyError."""
    assert word_tokens("- DATA -\n- x") == ["-", "DATA", "-", "-", "x"]
    assert passes("sentence_count", {"splitter": "punkt", "value": 2}, "- a. - b.")


def test_sentences_as_punkt_splits_them() -> None:
    text = "Dr. Smith came at 3.5 p.m. today. Was it rain? Stop!"
    assert passes("sentence_count", {"splitter": "punkt", "value": 3}, text)
    assert not passes("sentence_count", {"splitter": "punkt", "value": 4}, text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("one *** two *** three", True),
        ("*** one *** two *** three ***", True),  # empty first and last pieces are not paragraphs
        ("one *** *** two *** three", False),  # an empty paragraph between two dividers fails
        ("one **** two *** three", True),  # four stars hold the divider
        ("one\n\ntwo\n\nthree", False),
    ],
)
def test_paragraphs_divided_by_three_stars(text: str, expected: bool) -> None:
    assert passes("paragraph_count", {"value": 3, "divider": "***"}, text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Part one.\n\nWhy not.\n\nEnd.", True),
        ('Part one.\n\n"Why, not.\n\nEnd.', True),  # quotes before and punctuation after are not the word
        ("Part one.\n\nwhy not.\n\nEnd.", True),  # case aside
        ("Part one.\n\nWhyever not.\n\nEnd.", False),
        ("Part one.\n\n\n\nWhy not.\n\nEnd.", False),  # the blank paragraph is not counted but keeps its place
        ("Part one.\n\nWhy not.", False),
    ],
)
def test_paragraph_first_word(text: str, expected: bool) -> None:
    assert passes("paragraph_first_word", {"paragraphs": 3, "index": 2, "value": "why"}, text) is expected


def test_responses_must_differ_and_none_be_empty() -> None:
    assert passes("response_count", {"value": 2}, "One.\n******\nTwo.")
    assert not passes("response_count", {"value": 2}, "Same.\n******\nSame.")
    assert not passes("response_count", {"value": 2}, "One.\n******\n\n******\nTwo.")
    assert passes("response_count", {"value": 2}, "******\nOne.\n******\nTwo.")


def test_a_title_has_something_inside_its_brackets_on_one_line() -> None:
    assert passes("title", {}, "<<A Poem>>\ntext")
    assert not passes("title", {}, "<< >>\ntext")
    assert not passes("title", {}, "<<a\nb>>")
    assert passes("title", {}, "<<<a>>>")


def test_edges_compare_without_case_and_white_space() -> None:
    assert passes("starts_with", {"value": "Write a poem"}, "WRITE A POEM about it")
    assert not passes("starts_with", {"value": "Write a poem"}, "Sure. Write a poem")
    assert passes("ends_with", {"value": "Peace out.", "trim": '"'}, '"All done. peace out."')
    assert not passes("ends_with", {"value": "Peace out."}, "Peace out. Bye")
    assert passes("wrapped_in", {"value": '"'}, '"quoted"')
    assert not passes("wrapped_in", {"value": '"'}, '"')


def test_language_is_langdetects_and_a_text_without_letters_passes() -> None:
    french = "Le temps est très agréable aujourd'hui et nous allons au parc avec nos amis."
    assert passes("language", {"value": "fr"}, french)
    assert not passes("language", {"value": "en"}, french)
    assert passes("language", {"value": "en"}, "12345 !!!")


def test_letter_case_counts_every_cased_letter() -> None:
    english = "the weather is lovely today and we are going to the park with our friends."
    assert passes("letter_case", {"case": "lower", "language": "en"}, english)
    assert not passes("letter_case", {"case": "lower"}, english + " É")
    assert not passes("letter_case", {"case": "lower"}, "12345")  # no letter at all
    assert passes("letter_case", {"case": "upper", "language": "en"}, english.upper())
    assert not passes("letter_case", {"case": "upper", "language": "en"}, english.upper().replace("THE", "Le"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', True),
        ('```json\n{"a": 1}\n```', True),
        ('```JSON\n{"a": 1}\n```', True),
        ('{"a": 1}```', True),  # IFEval takes a closing fence off whether or not one opened
        ("NaN", True),  # Python's json reads NaN
        ('```python\n{"a": 1}\n```', False),  # "python" is left before the JSON
        ('Here: {"a": 1}', False),
        ("1" * 5000, False),  # more digits than Python reads
    ],
)
def test_json_read_as_ifeval_reads_it(text: str, expected: bool) -> None:
    assert passes("json_valid", {"ifeval": True}, text) is expected


def test_an_instruction_judges_the_answer_as_written_and_never_a_blank_one() -> None:
    spec = {"id": "length_constraints:nth_paragraph_first_word",
            "checks": [{"type": "paragraph_first_word", "paragraphs": 1, "index": 1, "value": "rain"}]}  # fmt: skip
    assert passes("instruction", spec, "rain falls.")
    # IFEval counts the empty paragraph a leading blank line makes: paragraph 1 is empty
    assert not passes("instruction", spec, "rain falls.", unstripped="\n\nrain falls.")
    blank = run_check("instruction", {"checks": [{"type": "not_contains", "value": ","}]}, Answer("", unstripped=" \n"))
    assert not blank.passed
    assert "blank answer" in blank.detail


def test_an_instruction_refuses_bad_checks_naming_them() -> None:
    with pytest.raises(SuiteError, match=r"checks\[1\]"):
        run_check("instruction", {"checks": [{"type": "not_empty"}, {"type": "word_count"}]}, "x")
    with pytest.raises(SuiteError, match="cannot hold another"):
        run_check("instruction", {"checks": [{"type": "instruction", "checks": [{"type": "not_empty"}]}]}, "x")


def test_the_language_models_load_once_when_many_threads_judge_at_once() -> None:
    """Checks judge in parallel: the first use from 16 threads gives every thread the same, right answers."""
    script = """
import threading
from tsuka_checks_builtin.wording import detected_language, word_tokens
found = []
def judge():
    found.append((detected_language("the weather is lovely today and we are going to the park"),
                  len(word_tokens("DON'T STOP. We met Mr. Lee in the U.S. yesterday."))))
threads = [threading.Thread(target=judge) for _ in range(16)]
[t.start() for t in threads]
[t.join() for t in threads]
print(sorted(set(found)))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[('en', 13)]", done.stdout + done.stderr


# --- the converter -------------------------------------------------------------------------------------------------


def test_every_instruction_of_the_sample_becomes_one_instruction_check() -> None:
    entries = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    test = convert.test_of(entries[2])
    assert test["name"] == "ifeval_3"
    assert [c["id"] for c in test["checks"]] == ["detectable_format:number_bullet_lists", "startend:end_checker"]
    assert all(c["type"] == "instruction" for c in test["checks"])
    for entry in entries:
        for check in convert.test_of(entry)["checks"]:
            build_check(check)  # every converted check is valid


def test_ifevals_comparisons_become_counts() -> None:
    less = instruction_check("length_constraints:number_words", {"num_words": 40, "relation": "less than"})
    assert less["checks"] == [{"type": "word_count", "words": "alphanumeric", "max": 39}]
    most = instruction_check("keywords:frequency", {"keyword": "rain", "frequency": 2, "relation": "at least"})
    assert most["checks"][0] | {} == {"type": "regex_count", "pattern": "rain", "flags": "i", "min": 2}
    with pytest.raises(ValueError, match="can never hold"):
        instruction_check("length_constraints:number_words", {"num_words": 0, "relation": "less than"})
    # IFEval's dataset writes every argument of every instruction, most of them null
    nulls = instruction_check("punctuation:no_comma", {"num_words": None, "keyword": None})
    assert nulls["checks"] == [{"type": "not_contains", "value": ",", "flags": ""}]


@pytest.fixture
def sample_named(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The sample named as IFEval's data, and the registry loaded again with it (and again without it after)."""
    monkeypatch.setenv(ifeval.DATA_ENV, str(SAMPLE))
    tsuka_core.load_registry(fresh=True)
    yield
    monkeypatch.delenv(ifeval.DATA_ENV)
    tsuka_core.load_registry(fresh=True)


def test_the_suite_is_registered_from_the_named_file(tmp_path: Path, sample_named: None) -> None:
    from tsuka_core.suite.loading import load_suite

    folder = ifeval.ifeval_suite(tmp_path)
    assert folder is not None
    suite = load_suite(folder)
    assert len(suite.tests) == 8
    assert "ifeval" in tsuka_core.load_registry().suites
    again = ifeval.ifeval_suite(tmp_path)
    assert again == folder  # converted once


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"key": 1, "prompt": "x", "instruction_id_list": ["keywords:rhymes"], "kwargs": [{}]}\n', "keywords:rhymes"),
        ('{"key": 1, "prompt": "x"\n', "line 1"),
        ('{"key": 1, "prompt": "x", "instruction_id_list": ["punctuation:no_comma"], "kwargs": []}\n', "kwargs"),
    ],
)
def test_a_file_that_cannot_be_converted_leaves_the_suite_out_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, said: str
) -> None:
    data = tmp_path / "input_data.jsonl"
    data.write_text(content, encoding="utf-8")
    monkeypatch.setenv(ifeval.DATA_ENV, str(data))
    with pytest.warns(UserWarning, match=rf"ifeval suite is left out: {ifeval.DATA_ENV}={data}") as said_:
        assert ifeval.ifeval_suite(tmp_path / "cache") is None
    assert said in str(said_[0].message)
    monkeypatch.setenv(ifeval.DATA_ENV, str(tmp_path / "absent.jsonl"))
    with pytest.warns(UserWarning, match="absent.jsonl"):
        assert ifeval.ifeval_suite(tmp_path / "cache") is None


# --- the scorecard -------------------------------------------------------------------------------------------------


def _judged(name: str, text: str, *checks: dict[str, Any]) -> JudgedTest:
    answer = Answer(text.strip(), unstripped=text)
    built = [build_check(c) for c in checks]
    return JudgedTest(name, "instruction", 0.0, False,
                      ((answer, tuple(JudgedCheck(b, 1.0, b.evaluate(answer)) for b in built)),))  # fmt: skip


def test_the_four_accuracies_strict_and_loose() -> None:
    comma = instruction_check("punctuation:no_comma", {})
    title = instruction_check("detectable_format:title", {})
    tests = [
        _judged("a", "Sure, here:\n<<Rain>>\nno commas here", comma, title),  # comma only in the first line
        _judged("b", "<<Sun>> and, yes, commas", comma, title),
        _judged("c", "<<Snow>>", comma, title),
    ]
    figures = IfevalScorecard().figures("ifeval", tests)
    assert figures["prompt strict"].value == pytest.approx(1 / 3)
    assert figures["instruction strict"].value == pytest.approx(4 / 6)
    assert figures["prompt loose"].value == pytest.approx(2 / 3)
    assert figures["instruction loose"].value == pytest.approx(5 / 6)
    assert figures["prompt strict"].count == 3
    assert figures["instruction loose"].count == 6


def test_loose_variants_are_ifevals_eight() -> None:
    variants = loose_variants("*a*\nb\n*c*")
    assert variants == ["*a*\nb\n*c*", "b\n*c*", "*a*\nb", "b", "a\nb\nc", "b\nc", "a\nb", "b"]


def _sample_answer(body: dict[str, Any], n: int) -> Any:
    from replies import Reply

    del n
    prompt = body["messages"][-1]["content"]
    answers = {
        "rainy afternoon": "Sure, here it is:\nA quiet street shines under grey rain",
        "haiku about tea": "the kettle sings and the tea is warm and we drink it slowly in the garden together",
        "learn to swim": "* Safety in water\n* Good exercise\n* Fun with friends\nAny other questions?",
        "lighthouse keeper": "<<The Keeper>>\nHe lit the lamp every night.",
        "photosynthesis": "Plants use sunlight to make food in every leaf.",
        "bicycles": "Bicycles are quiet.\n***\nThey need no fuel.",
        "JSON only": 'Here is the JSON:\n{"colour": "blue"}',
        "neighbour": "Dear neighbour, thank you for the lovely flowers you left at my door.\nP.S. The cat says hello.",
    }
    return Reply.text(next(text for key, text in answers.items() if key in prompt))


def test_a_run_of_the_ifeval_suite_prints_ifevals_four_accuracies(tmp_path: Path, sample_named: None) -> None:
    from history_helpers import invoke
    from loopback import LoopbackServer

    store = tmp_path / "p.json"
    env = {ifeval.DATA_ENV: str(SAMPLE)}
    with LoopbackServer(_sample_answer) as server:
        done = invoke("run", "m1", "--suite", "ifeval", "--base-url", server.base_url, "-e", "none",
                      "--profiles", store, "--history-db", tmp_path / "h.sqlite", env=env)  # fmt: skip
    assert done.exit_code == 0, done.stderr
    # strict: 5 of 8 prompts (no comma, JSON and quotation fail), 10 of 13 instructions;
    # loose: the comma and the JSON pass without their first line: 7 of 8, 12 of 13
    expected = {"Prompt strict": "62.50%", "Instruction strict": "76.92%", "Prompt loose": "87.50%",
                "Instruction loose": "92.31%"}  # fmt: skip
    for label, share in expected.items():
        line = next(line for line in done.stdout.splitlines() if label in line)
        assert share in line, done.stdout
    shown = invoke("scorecard", "m1", "-e", "none", "--profiles", store, env=env)
    assert shown.exit_code == 0, shown.stderr
    assert "76.92%" in shown.stdout
