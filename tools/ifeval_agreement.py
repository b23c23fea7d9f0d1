"""How often tsuka's instruction checks give IFEval's verdict: crafted answers judged by both, per instruction.

Needs IFEval's verifiers: ``pip install --no-deps if-verifiable`` and
``pip install langdetect immutabledict nltk`` (the verifiers' own imports; the
package's top module, which loads datasets, is not imported). For each IFEval
instruction that tsuka's check vocabulary can state, and several settings of
it, the checks a careful author writes are listed below, and crafted answers
(right, at each boundary of a count, just past it, in other case, with the
phrase moved, with white space around, with look-alike characters) are judged
by those checks and by IFEval's own ``check_following``, with random answers
pieced together from words and every feature some instruction looks for; the agreement is
printed per instruction, then every disagreement. IFEval's instructions that
need NLTK's sentence model (sentences, capital words) or a language detector
(all lowercase, all capitals) are not measured here: neither is offline.

    python tools/ifeval_agreement.py [--show K]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import regex

from tsuka_core import Answer
from tsuka_core.testing import run_check

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "rain",
    "falls",
    "on",
    "well-known",
    "don't",
    "stop",
]
PIECES = [*WORDS, "data", "Database", "DATA", "sunny", "Day", "days", "[name]", "[ ]", "<<Title>>", "<< >>",
          "P.S.", "p. s.", ",", "，", '"', "“", "```json", "```", '{"a": 1}', "[1, 2]", "\n", "\n\n", "42.5", "x-y",
          "É", "é"]  # fmt: skip
"""What the random answers are made of: words, and every feature some instruction looks for."""
RANDOM_ANSWERS = 120
"""Random answers judged for every case, besides its crafted ones (seeded: the same each run)."""


@dataclass(frozen=True)
class Case:
    """One IFEval instruction with its settings, the tsuka checks that state it, and the answers to judge."""

    instruction: str
    """IFEval's class in ``if_verifiable.ifeval.instructions``."""
    kwargs: dict[str, Any]
    checks: list[dict[str, Any]]
    texts: list[str]


def _verifiers() -> Any:
    """IFEval's ``instructions`` module, imported without the package's top module (which loads datasets)."""
    spec = importlib.util.find_spec("if_verifiable")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("if-verifiable is not installed: pip install --no-deps if-verifiable langdetect ...")
    package = types.ModuleType("if_verifiable")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules.setdefault("if_verifiable", package)
    from if_verifiable.ifeval import instructions  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return instructions


def _words(n: int, start: int = 0) -> str:
    return " ".join(WORDS[(start + i) % len(WORDS)] for i in range(n))


def word_cases() -> Iterator[Case]:
    for n in (5, 12, 30):
        texts = [_words(k, s) for k in (n - 1, n, n + 1) for s in (0, 13, 15)]
        texts += [_words(n - 1) + "-end", _words(n - 1) + " 42.", "  " + _words(n) + "\n\n"]
        yield Case("NumberOfWords", {"num_words": n, "relation": "at least"},
                   [{"type": "word_count", "min": n, "words": "alphanumeric"}], texts)  # fmt: skip
        yield Case("NumberOfWords", {"num_words": n, "relation": "less than"},
                   [{"type": "word_count", "max": n - 1, "words": "alphanumeric"}], texts)  # fmt: skip


def placeholder_cases() -> Iterator[Case]:
    texts = ["Dear [name], see you at [place] on [date].", "Dear [name],\nsee [a\nb] soon.", "No placeholder here.",
             "[x][y]", "Use [ ] and [] here.", "Only [one].", "Brackets ] then [ open"]  # fmt: skip
    for n in (1, 2, 3):
        pattern = r"(?:\[.*?\][\s\S]*?){" + str(n) + "}"
        yield Case(
            "PlaceholderChecker", {"num_placeholders": n}, [{"type": "regex", "value": pattern, "flags": ""}], texts
        )


def end_cases() -> Iterator[Case]:
    for phrase in ("Is there anything else I can help with?", "Peace out."):
        texts = [f"Sure, done. {phrase}", f"Sure. {phrase}   \n", f"Sure. {phrase.upper()}", f"{phrase} Then more.",
                 f"Sure. {phrase[:-1]}", f"Sure. {phrase}!", phrase, f"  {phrase.lower()}"]  # fmt: skip
        pattern = regex.escape(phrase.strip()) + r"\s*\Z"
        yield Case("EndChecker", {"end_phrase": phrase}, [{"type": "regex", "value": pattern, "flags": "i"}], texts)


def title_cases() -> Iterator[Case]:
    texts = ["<<My Title>>\nText.", "<< >>\nText.", "<<a\nb>>", "No title.", "<<<>>>", "Intro <<Poem of joy>> end",
             "<<>>", "<<x>>", "< <y> >"]  # fmt: skip
    yield Case("TitleChecker", {}, [{"type": "regex", "value": r"<<[^\n]*[^\s<>][^\n]*>>", "flags": ""}], texts)


def comma_cases() -> Iterator[Case]:
    texts = ["No commas here.", "One, comma.", "Fullwidth，comma.", "Arabic ، comma", "", "a,b"]
    yield Case("CommaChecker", {}, [{"type": "not_contains", "value": ",", "flags": ""}], texts)


def frequency_cases() -> Iterator[Case]:
    base = ["data", "Data and DATA", "database of data", "no such word", "dat a", "data data data", "metadata data"]
    for relation, n in (("at least", 2), ("less than", 2), ("at least", 3)):
        pattern = r"(?:data[\s\S]*?){" + str(n) + "}"
        kind = "regex" if relation == "at least" else "not_regex"
        yield Case("KeywordFrequencyChecker", {"keyword": "data", "frequency": n, "relation": relation},
                   [{"type": kind, "value": pattern, "flags": "i"}], base)  # fmt: skip


def forbidden_cases() -> Iterator[Case]:
    texts = ["A sunny day.", "Sunnyside days", "It is SUNNY.", "Monday!", "clear sky", "day-to-day", "daylight"]
    yield Case("ForbiddenWords", {"forbidden_words": ["sunny", "day"]},
               [{"type": "not_regex", "value": r"\b(?:sunny|day)\b", "flags": "i"}], texts)  # fmt: skip


def json_cases() -> Iterator[Case]:
    texts = ['{"a": 1}', '```json\n{"a": 1}\n```', '```\n[1, 2]\n```', 'Here: {"a": 1}', '{"a": 1', "plain",
             '  {"a": [1, 2]}  ', '```JSON\n{"a": 1}\n```', "```json\n{'a': 1}\n```", '"text"', "42"]  # fmt: skip
    yield Case("JsonFormat", {}, [{"type": "json_valid", "whole": True}], texts)


def postscript_cases() -> Iterator[Case]:
    texts = ["Bye.\nP.S. see you", "Bye.\np.s. see you", "Bye. P. S. later", "Bye.\nPS later", "Bye.\nP.P.S. x",
             "top.s. trick", "no postscript"]  # fmt: skip
    yield Case("PostscriptChecker", {"postscript_marker": "P.S."},
               [{"type": "regex", "value": r"p\.\s?s\.", "flags": "i"}], texts)  # fmt: skip


def quotation_cases() -> Iterator[Case]:
    texts = ['"All of it."', '  "Spaced"  \n', '"Open only', 'Close only"', '"', '""', "'single'", "“curly”"]
    yield Case("QuotationChecker", {}, [{"type": "regex", "value": r'\A\s*"[\s\S]*"\s*\Z', "flags": ""}], texts)


CASES: list[Callable[[], Iterator[Case]]] = [
    word_cases,
    placeholder_cases,
    end_cases,
    title_cases,
    comma_cases,
    frequency_cases,
    forbidden_cases,
    json_cases,
    postscript_cases,
    quotation_cases,
]


def random_answers(count: int, seed: int = 7) -> list[str]:
    """``count`` answers pieced together from :data:`PIECES`, separated by a space, a newline or nothing."""
    import random

    chance = random.Random(seed)
    found = []
    for _ in range(count):
        pieces = chance.choices(PIECES, k=chance.randint(0, 40))
        found.append("".join(p + chance.choice([" ", " ", " ", "\n", ""]) for p in pieces))
    return found


def ifeval_verdict(verifiers: Any, case: Case, text: str) -> bool:
    instruction = getattr(verifiers, case.instruction)("id")
    instruction.build_description(**case.kwargs)
    return bool(instruction.check_following(text))


def tsuka_verdict(case: Case, text: str) -> tuple[bool, str]:
    for check in case.checks:
        outcome = run_check(check["type"], {k: v for k, v in check.items() if k != "type"}, Answer(text.strip()))
        if not outcome.passed:
            return False, outcome.detail
    return True, "passed"


def main(argv: list[str]) -> int:
    """Judge every crafted answer both ways and print the agreement per instruction."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--show", type=int, default=20, help="disagreements to print (all are counted)")
    args = parser.parse_args(argv)
    verifiers = _verifiers()
    agree, total = Counter[str](), Counter[str]()
    disagreements: list[str] = []
    shared = random_answers(RANDOM_ANSWERS)
    for make in CASES:
        for case in make():
            for text in [*case.texts, *shared]:
                ours, theirs = tsuka_verdict(case, text), ifeval_verdict(verifiers, case, text)
                total[case.instruction] += 1
                if ours[0] == theirs:
                    agree[case.instruction] += 1
                else:
                    disagreements.append(
                        f"{case.instruction} {json.dumps(case.kwargs)} {text!r}: tsuka "
                        f"{'passes' if ours[0] else 'fails'} ({ours[1]}); IFEval {'passes' if theirs else 'fails'}"
                    )
    print(f"{'IFEval instruction':<26} {'answers':>8} {'agree':>6} {'agreement':>10}")
    for name in total:
        print(f"{name:<26} {total[name]:>8} {agree[name]:>6} {agree[name] / total[name]:>10.2%}")
    overall = sum(agree.values()) / max(1, sum(total.values()))
    print(f"{'all':<26} {sum(total.values()):>8} {sum(agree.values()):>6} {overall:>10.2%}")
    print(f"\n{len(disagreements)} disagreement(s):")
    for line in disagreements[: args.show]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
