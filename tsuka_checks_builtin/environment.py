"""Check types for a turn of a multi-turn test: the state its calls left, and the results they obtained.

Both compare the model's environment with the reference one the turn's
``reference`` calls ran in, as BFCL's multi-turn checker does after each turn:
``state_matches`` is its state check, ``results_include`` its response check.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

from tsuka_core import Answer, CheckType, NoParams, Outcome

__all__ = ["ResultsInclude", "StateMatches"]

_SHOWN = 300


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


_NO_REFERENCE = "no reference to compare with: the test states no reference calls for this turn"


class StateMatches(CheckType[NoParams]):
    """Pass when, after this turn, the model's tool environment is in the same state as the reference one.

    For a turn of a multi-turn test whose turns state `reference` calls: the
    model's calls and the reference calls each ran in an environment of their
    own, built from the same configuration, and every attribute of the two
    states must be equal (BFCL's state check).
    """

    name = "state_matches"
    params_model = NoParams
    example: ClassVar[Mapping[str, Any]] = {}

    def evaluate(self, answer: Answer) -> Outcome:
        turn = answer.environment
        if turn is None or not turn.has_reference:
            return Outcome.fail(_NO_REFERENCE)
        if not turn.differences:
            return Outcome.ok("the same state as the reference")
        keys = ", ".join(sorted(turn.differences))
        return Outcome.fail(f"the state differs from the reference in {keys}: {_short(turn.differences)}")


class ResultsInclude(CheckType[NoParams]):
    """Pass when every result of this turn's reference calls is among the results the model's calls obtained.

    The model's results count over every turn so far, each at most once, in any
    order: a model that already looked something up in an earlier turn need
    not look again (BFCL's response check).
    """

    name = "results_include"
    params_model = NoParams
    example: ClassVar[Mapping[str, Any]] = {}

    def evaluate(self, answer: Answer) -> Outcome:
        turn = answer.environment
        if turn is None or not turn.has_reference:
            return Outcome.fail(_NO_REFERENCE)
        left = Counter(turn.results)
        missing = []
        for result in turn.reference_results:
            if left[result] > 0:
                left[result] -= 1
            else:
                missing.append(result)
        if not missing:
            return Outcome.ok(f"all {len(turn.reference_results)} reference results obtained")
        return Outcome.fail(f"{len(missing)} of the reference results not obtained: {_short(missing)}")
