"""IFEval's prompts as tsuka tests: each instruction one ``instruction`` check, stated as IFEval's verifier reads it.

An IFEval entry is ``{"key", "prompt", "instruction_id_list", "kwargs"}``
(google-research's ``instruction_following_eval/data/input_data.jsonl``). It
becomes a test named ``ifeval_<key>`` asking the prompt, with one check per
instruction: an ``instruction`` (a blank answer follows none) holding the
built-in checks that state it. IFEval's "less than N" is ``max`` N-1, "at
least N" ``min`` N.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["INSTRUCTIONS", "instruction_check", "test_of"]

Kwargs = Mapping[str, Any]


def _count(relation: str, number: int) -> dict[str, int]:
    """IFEval's comparison as a count: "less than N" -> max N-1, "at least N" -> min N."""
    if relation == "less than":
        if number < 1:
            raise ValueError(f"'less than {number}' can never hold")
        return {"max": number - 1}
    return {"min": number}


def _postscript(marker: str) -> str:
    if marker == "P.P.S":
        return r"\s*p\.\s?p\.\s?s.*$"
    if marker == "P.S.":
        return r"\s*p\.\s?s\..*$"
    return r"\s*" + marker.lower() + r".*$"


_CONSTRAINED = ("My answer is yes.", "My answer is no.", "My answer is maybe.")

INSTRUCTIONS: Mapping[str, Callable[[Kwargs], list[dict[str, Any]]]] = {
    "keywords:existence": lambda k: [{"type": "regex", "value": w, "flags": "i"} for w in k["keywords"]],
    "keywords:frequency": lambda k: [
        {"type": "regex_count", "pattern": k["keyword"], "flags": "i", **_count(k["relation"], k["frequency"])}
    ],
    "keywords:forbidden_words": lambda k: [
        {"type": "not_regex", "value": rf"\b{w}\b", "flags": "i"} for w in k["forbidden_words"]
    ],
    "keywords:letter_frequency": lambda k: [
        {"type": "letter_count", "letter": k["letter"], **_count(k["let_relation"], k["let_frequency"])}
    ],
    "language:response_language": lambda k: [{"type": "language", "value": k["language"]}],
    "length_constraints:number_sentences": lambda k: [
        {"type": "sentence_count", "splitter": "punkt", **_count(k["relation"], k["num_sentences"])}
    ],
    "length_constraints:number_paragraphs": lambda k: [
        {"type": "paragraph_count", "divider": "***", "value": k["num_paragraphs"]}
    ],
    "length_constraints:number_words": lambda k: [
        {"type": "word_count", "words": "alphanumeric", **_count(k["relation"], k["num_words"])}
    ],
    "length_constraints:nth_paragraph_first_word": lambda k: [
        {
            "type": "paragraph_first_word",
            "paragraphs": k["num_paragraphs"],
            "index": k["nth_paragraph"],
            "value": k["first_word"],
        }
    ],
    "detectable_content:number_placeholders": lambda k: [
        {"type": "regex_count", "pattern": r"\[.*?\]", "min": k["num_placeholders"]}
    ],
    "detectable_content:postscript": lambda k: [
        {"type": "regex", "value": _postscript(k["postscript_marker"]), "flags": "im"}
    ],
    "detectable_format:number_bullet_lists": lambda k: [
        {"type": "regex_count", "pattern": [r"^\s*\*[^\*].*$", r"^\s*-.*$"], "flags": "m", "value": k["num_bullets"]}
    ],
    "detectable_format:constrained_response": lambda k: [
        {"type": "regex", "value": "|".join(re.escape(option) for option in _CONSTRAINED), "flags": ""}
    ],
    "detectable_format:number_highlighted_sections": lambda k: [
        {
            "type": "regex_count",
            "pattern": [r"\*[^\n\*]*\*", r"\*\*[^\n\*]*\*\*"],
            "trim": "*",
            "min": k["num_highlights"],
        }
    ],
    "detectable_format:multiple_sections": lambda k: [
        {"type": "regex_count", "pattern": r"\s?" + k["section_spliter"] + r"\s?\d+\s?", "min": k["num_sections"]}
    ],
    "detectable_format:json_format": lambda k: [{"type": "json_valid", "ifeval": True}],
    "detectable_format:title": lambda k: [{"type": "title"}],
    "combination:two_responses": lambda k: [{"type": "response_count", "value": 2, "separator": "******"}],
    "combination:repeat_prompt": lambda k: [{"type": "starts_with", "value": k["prompt_to_repeat"]}],
    "startend:end_checker": lambda k: [{"type": "ends_with", "value": k["end_phrase"], "trim": '"'}],
    "change_case:capital_word_frequency": lambda k: [
        {"type": "capital_word_count", **_count(k["capital_relation"], k["capital_frequency"])}
    ],
    "change_case:english_capital": lambda k: [{"type": "letter_case", "case": "upper", "language": "en"}],
    "change_case:english_lowercase": lambda k: [{"type": "letter_case", "case": "lower", "language": "en"}],
    "punctuation:no_comma": lambda k: [{"type": "not_contains", "value": ",", "flags": ""}],
    "startend:quotation": lambda k: [{"type": "wrapped_in", "value": '"'}],
}
"""Each of IFEval's 25 instructions, and the built-in checks that state it for its arguments."""


def instruction_check(instruction_id: str, kwargs: Kwargs) -> dict[str, Any]:
    """One IFEval instruction as an ``instruction`` check; ValueError naming what is wrong with it."""
    state = INSTRUCTIONS.get(instruction_id)
    if state is None:
        raise ValueError(f"{instruction_id!r} is not one of IFEval's 25 instructions")
    arguments = {k: v for k, v in kwargs.items() if v is not None}
    try:
        checks = state(arguments)
    except KeyError as exc:
        raise ValueError(f"{instruction_id}: argument {exc} is missing") from None
    return {"type": "instruction", "id": instruction_id, "checks": checks}


def test_of(entry: Mapping[str, Any]) -> dict[str, Any]:
    """One IFEval entry as a tsuka test file; ValueError naming the field at fault."""
    ids, settings = entry["instruction_id_list"], entry["kwargs"]
    if not isinstance(ids, list) or not isinstance(settings, list) or len(ids) != len(settings):
        raise ValueError("instruction_id_list and kwargs must be lists of the same length")
    checks = []
    for index, (instruction_id, kwargs) in enumerate(zip(ids, settings, strict=True)):
        if not isinstance(kwargs, dict):
            raise ValueError(f"kwargs[{index}] is not an object")
        checks.append(instruction_check(instruction_id, kwargs))
    return {
        "name": f"ifeval_{entry['key']}",
        "description": f"IFEval {entry['key']}: {', '.join(entry['instruction_id_list'])}",
        "category": "instruction",
        "prompt": entry["prompt"],
        "checks": checks,
    }
