"""The built-in extended suite: its size, answers that pass and answers that fail, and gaming that scores small."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from answerers import Answerer
from loopback import LoopbackServer, Reply

from tsuka_core import Answer, Registry
from tsuka_core.backends.base import BackendConfig
from tsuka_core.engine import results
from tsuka_core.judge.answer import ToolCall, normalise_tool_call
from tsuka_core.judge.checks import run_check
from tsuka_core.judge.jsontools import json_type_name
from tsuka_core.run.session import RunOptions, RunReport, run_benchmark
from tsuka_core.suite import model
from tsuka_core.suite.loading import load_suite
from tsuka_core.suite.model import Suite
from tsuka_core.terms import Effort

ROOT = Path(__file__).resolve().parents[1]
EXTENDED = ROOT / "tsuka_checks_builtin" / "suites" / "extended"
ANSWERS: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "extended_answers.json").read_text(encoding="utf-8")
)
"""Per test name, the ``reference`` answers (one per step) and the ``wrong`` ones (one per check).

A step's answer is ``{"text": ...}``, ``{"calls": [[name, arguments], ...]}`` or both. ``wrong`` maps each check's
location (``checks[2]``, ``steps[1].checks[0]``) to an answer of that check's step that fails it and passes the
test's other checks; the conversation it is judged in is the reference one with that step's answer replaced.
"""

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture(scope="module")
def extended(registry: Registry) -> Suite:
    return load_suite(EXTENDED, registry)


def as_answer(step: dict[str, Any], tools: Sequence[Mapping[str, Any]] = ()) -> Answer:
    """The Answer the checks would see for one scripted step (``tools`` offered); arguments given as a string are
    read as a server's."""
    made = tuple(scripted_call(i, n, a) for i, (n, a) in enumerate(step.get("calls", [])))
    return Answer(step.get("text", ""), made, tools)


def scripted_call(index: int, name: str, arguments: Any) -> ToolCall:
    """A call whose ``arguments`` are a JSON value, or a string as the model wrote it (malformed, then repaired)."""
    if not isinstance(arguments, str):
        return ToolCall(id=f"call_{index}", name=name, arguments=arguments)
    raw = {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
    call = normalise_tool_call(raw, index)
    assert call is not None
    return call


def outcomes(test: model.Test, steps: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """Each check of ``test`` (located) and whether the scripted answers pass it."""
    assert len(steps) == len(test.steps), test.name
    return [
        (check.location, run_check(check.impl, as_answer(answer, test.tools)).passed)
        for step, answer in zip(test.steps, steps, strict=True)
        for check in step.checks
    ]


def checks(test: model.Test) -> dict[str, tuple[int, model.Check]]:
    """Each check of ``test`` by location, with the index of its step."""
    return {check.location: (n, check) for n, step in enumerate(test.steps) for check in step.checks}


def wrong_conversation(test: model.Test, location: str) -> list[dict[str, Any]]:
    """The reference answers with the step of the check at ``location`` answered by that check's wrong answer."""
    steps = list(ANSWERS[test.name]["reference"])
    steps[checks(test)[location][0]] = ANSWERS[test.name]["wrong"][location]
    return steps


def test_the_suite_has_45_tests_and_15_of_each_category(extended: Suite) -> None:
    per_category = Counter(t.category for t in extended.tests)
    assert len(extended.tests) >= 45
    assert set(per_category) == {"instruction", "json", "toolCalling"}
    assert min(per_category.values()) >= 15, per_category


def test_every_test_has_scripted_answers(extended: Suite) -> None:
    assert sorted(ANSWERS) == sorted(t.name for t in extended.tests)


def test_every_check_has_a_wrong_answer(extended: Suite) -> None:
    unmatched = {t.name: sorted(set(checks(t)) ^ set(ANSWERS[t.name]["wrong"])) for t in extended.tests}
    assert {name: where for name, where in unmatched.items() if where} == {}


def test_reference_answers_pass_every_check(extended: Suite) -> None:
    reference = {t.name: outcomes(t, ANSWERS[t.name]["reference"]) for t in extended.tests}
    failed = [(name, where) for name, seen in reference.items() for where, ok in seen if not ok]
    assert failed == []


# --- one wrong answer per check --------------------------------------------------------------------------------------


def no_json(exempt: model.Check, other: model.Check) -> bool:
    """An answer without JSON fails every JSON path check, so ``json_valid`` never fails alone beside one."""
    return exempt.type == "json_valid" and other.type.startswith("json_path_")


def same_path_value(exempt: model.Check, other: model.Check) -> bool:
    """A ``json_path_equals`` whose value has the type or length a check of the same path wants implies that check."""
    params, want = exempt.params, getattr(other.params, "value", None)
    if other.type != "json_path_equals" or getattr(params, "path", None) != getattr(other.params, "path", None):
        return False
    if exempt.type == "json_path_type":
        kind, wanted = json_type_name(want), getattr(params, "value", None)
        return wanted == kind or (wanted == "number" and kind == "integer")
    return exempt.type == "json_path_length" and isinstance(want, list) and len(want) == getattr(params, "value", None)


def inside_object(exempt: model.Check, other: model.Check) -> bool:
    """A value found at ``P.key`` lies in an object at ``P``, so a check there implies ``P`` is an object."""
    path = getattr(exempt.params, "path", None)
    other_path = getattr(other.params, "path", "")
    wants_object = exempt.type == "json_path_type" and getattr(exempt.params, "value", None) == "object"
    return wants_object and other_path.startswith(f"{path}.")


def second_call(exempt: model.Check, other: model.Check) -> bool:
    """Beside a required first call of another tool, calling the banned one makes a second call: not "exactly one"."""
    return (
        exempt.type == "tool_not_called"
        and other.type == "tool_calls_count"
        and getattr(other.params, "mode", None) == "exactly"
        and getattr(other.params, "value", None) == 1
    )


JSON_TESTS = (
    "json_nested_config",
    "json_filter_by_age",
    "json_order_total",
    "json_sort_by_population",
    "json_escaped_quotes",
    "json_non_ascii_text",
    "json_value_types",
    "json_exact_keys",
    "json_top_level_array",
    "json_count_by_status",
    "json_statistics",
    "json_rows_from_text",
    "json_number_facts",
    "json_transpose_matrix",
    "json_missing_as_null",
)
"""The json tests: each has a ``json_valid`` check first, beside JSON path checks."""


def schema_too(exempt: model.Check, other: model.Check) -> bool:
    """A call of a tool not offered, or an argument of another type than declared, also breaks the tool's schema."""
    del exempt
    return other.type == "tool_args_conform"


IMPLIED: dict[tuple[str, str], Callable[[model.Check, model.Check], bool]] = {
    **{(name, "checks[0]"): no_json for name in JSON_TESTS},
    ("json_nested_config", "checks[3]"): same_path_value,
    ("json_filter_by_age", "checks[2]"): same_path_value,
    ("json_order_total", "checks[3]"): same_path_value,
    ("json_top_level_array", "checks[1]"): same_path_value,
    ("json_transpose_matrix", "checks[2]"): same_path_value,
    ("json_count_by_status", "checks[4]"): inside_object,
    ("distractor_file_tools", "checks[2]"): second_call,
    **dict.fromkeys(
        (
            ("integer_argument", "checks[0]"),
            ("integer_argument", "checks[1]"),
            ("enum_and_decimal_arguments", "checks[0]"),
            ("enum_and_decimal_arguments", "checks[1]"),
            ("nested_object_and_array", "checks[0]"),
            ("nested_object_and_array", "checks[3]"),
            ("array_and_boolean_arguments", "checks[0]"),
            ("array_and_boolean_arguments", "checks[2]"),
            ("simple_weather_call", "checks[0]"),
            ("choose_hotel_search", "checks[0]"),
        ),
        schema_too,
    ),
}
"""The checks no answer can fail alone, and the rule naming the other checks every answer failing them also fails.

Their wrong answer fails them and only checks the rule names. Each of these checks still scores on its own: an answer
can pass it and fail the checks that imply it (valid JSON with wrong values, an array of the wrong numbers).
"""


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_each_wrong_answer_fails_exactly_its_check(extended: Suite, name: str) -> None:
    (test,) = (t for t in extended.tests if t.name == name)
    located = checks(test)
    for location in ANSWERS[name]["wrong"]:
        failed = {where for where, ok in outcomes(test, wrong_conversation(test, location)) if not ok}
        assert location in failed, f"{name}: the wrong answer for {location} passes it"
        rule = IMPLIED.get((name, location))
        others = failed - {location}
        if rule is None:
            assert others == set(), f"{name}: the wrong answer for {location} also fails {sorted(others)}"
            continue
        exempt = located[location][1]
        unexplained = sorted(where for where in others if not rule(exempt, located[where][1]))
        assert others, f"{name}: {location} fails alone; drop it from IMPLIED"
        assert unexplained == [], f"{name}: the wrong answer for {location} also fails {unexplained}"


# --- through the engine ----------------------------------------------------------------------------------------------


@dataclass
class Quiet:
    """A sweep observer that keeps nothing but notes."""

    notes: list[str] = field(default_factory=list)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        del model, effort, applied, total

    def test_done(self, model: str, effort: Effort, result: results.TestResult) -> None:
        del model, effort, result

    def note(self, message: str) -> None:
        self.notes.append(message)


def run(suite: Suite, registry: Registry, answerer: Answerer, tmp_path: Path) -> RunReport:
    """The extended suite run through the whole engine against a loopback server answering with ``answerer``."""
    with LoopbackServer(answerer, models=["m1"]) as server:
        options = RunOptions(
            models=["m1"],
            config=BackendConfig(base_url=server.base_url, retries=1, timeout=10),
            efforts=("none",),
            store_path=tmp_path / "profiles.json",
        )
        return asyncio.run(run_benchmark(options, suite, registry, Quiet()))


def reference_steps(suite: Suite) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
    """The reference answer to a conversation's next step, finding the test by the conversation's first prompt."""
    by_prompt = {t.steps[0].prompt: t.name for t in suite.tests}

    def step(messages: list[dict[str, Any]]) -> dict[str, Any]:
        first = next(m["content"] for m in messages if m["role"] == "user")
        answered = sum(1 for m in messages if m["role"] == "assistant")
        reference: dict[str, Any] = ANSWERS[by_prompt[first]]["reference"][answered]
        return reference

    return step


def scripted(suite: Suite) -> Answerer:
    """Answer every request with the reference answers."""
    next_step = reference_steps(suite)

    def answer(body: dict[str, Any], n: int) -> Reply:
        del n
        step = next_step(body["messages"])
        return Reply(content=step.get("text"), tool_calls=tuple((name, args) for name, args in step.get("calls", [])))

    return answer


def never_calls(body: dict[str, Any], n: int) -> Reply:
    del body, n
    return Reply.text("I can answer that without any tool: the answer is yes.")


def first_tool_empty(body: dict[str, Any], n: int) -> Reply:
    del n
    tools = body.get("tools") or []
    return Reply.tool_call(tools[0]["function"]["name"], {}) if tools else Reply.text("ok")


def echo(body: dict[str, Any], n: int) -> Reply:
    del n
    return Reply.text(str(body["messages"][-1].get("content") or ""))


def empty_object(body: dict[str, Any], n: int) -> Reply:
    del body, n
    return Reply.text("{}")


def level(report: RunReport) -> results.LevelResult:
    (sweep,) = report.sweeps
    (only,) = sweep.levels
    return only


def test_reference_answers_score_large_through_the_engine(extended: Suite, registry: Registry, tmp_path: Path) -> None:
    result = level(run(extended, registry, scripted(extended), tmp_path))
    assert dict(result.scores) == {"instruction": 1.0, "json": 1.0, "toolCalling": 1.0}
    assert result.tier == "large"


GAMING = {"never_calls": never_calls, "first_tool_empty": first_tool_empty, "echo": echo, "empty_object": empty_object}


@pytest.mark.parametrize("answerer", GAMING.values(), ids=GAMING.keys())
def test_gaming_answerers_score_small(extended: Suite, registry: Registry, tmp_path: Path, answerer: Answerer) -> None:
    result = level(run(extended, registry, answerer, tmp_path))
    assert result.tier == "small", dict(result.scores)
    assert max(result.scores.values()) < 0.5, dict(result.scores)
