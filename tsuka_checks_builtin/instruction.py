"""A check type that judges one instruction as IFEval does: the checks stating it, and a blank answer follows none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Annotated, Any, ClassVar

from pydantic import Field, PrivateAttr, ValidationInfo, model_validator

from tsuka_core import Answer, CheckParams, CheckType, Outcome, Registry, build_check

__all__ = ["Instruction", "InstructionParams"]


class InstructionParams(CheckParams):
    """The checks that state one instruction (all must pass), and its name."""

    checks: Annotated[list[dict[str, Any]], Field(min_length=1, max_length=16)]
    """Checks as a test writes them (``{"type": "not_contains", "value": ","}``), each judged on the answer; their
    weights are not read."""
    id: str = ""
    """The instruction's name (IFEval's ``punctuation:no_comma``), shown in the detail."""

    _built: list[CheckType[Any]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _build(self, info: ValidationInfo) -> InstructionParams:
        registry = info.context if isinstance(info.context, Registry) else None
        for index, spec in enumerate(self.checks):
            if spec.get("type") == Instruction.name:
                raise ValueError(f"checks[{index}]: an instruction cannot hold another")
            try:
                self._built.append(build_check(spec, registry))
            except ValueError as exc:
                raise ValueError(f"checks[{index}]: {exc}") from None
        return self

    @property
    def built(self) -> Sequence[CheckType[Any]]:
        """The checks, ready to judge."""
        return self._built


class Instruction(CheckType[InstructionParams]):
    """Pass when the answer is not blank and every check in `checks` passes: one instruction as IFEval judges it.

    The checks judge the answer as written, its white space kept (other checks see it stripped): IFEval counts
    a paragraph left empty by a leading blank line. IFEval follows no instruction in a blank answer, where a check
    such as `not_contains` alone would pass it.
    Wrap each instruction's checks in one `instruction` to count it as IFEval counts it (its instruction-level
    accuracy counts instructions, not checks).
    """

    name = "instruction"
    params_model = InstructionParams
    example: ClassVar[Mapping[str, Any]] = {
        "id": "punctuation:no_comma",
        "checks": [{"type": "not_contains", "value": ","}],
    }

    def evaluate(self, answer: Answer) -> Outcome:
        said = f"{self.params.id}: " if self.params.id else ""
        written = answer.as_written
        if not written.strip():
            return Outcome.fail(f"{said}a blank answer follows no instruction")
        exact = replace(answer, text=written, unstripped=None)
        for check in self.params.built:
            outcome = check.evaluate(exact)
            if not outcome.passed:
                return Outcome(outcome.status, f"{said}{outcome.detail}")
        return Outcome.ok(f"{said}followed")
