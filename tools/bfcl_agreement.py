"""How often tsuka's verdict on a tool call is BFCL's: crafted answers judged by both, agreement per category.

Needs BFCL's data and checker: ``pip install --no-deps bfcl-eval`` (the checker's
module imports every model SDK through BFCL's model table; this script gives it a
one-entry table instead, so nothing else is needed). For each entry of BFCL's
non-live categories it crafts answers (correct, an alternative accepted value,
optional arguments omitted, an extra argument, a wrong type, a wrong value, a
required argument missing, a string in other case and punctuation, a number
written as text, integer items as floats and whole float items as integers, a
whole float as an integer, parallel calls reordered, the call written in the
text, a call whose arguments do not parse, a cut answer, no call at all), judges
each with the tsuka test converted from that entry (``tsuka_checks_builtin.bfcl``)
and with BFCL's AST checker as its function-calling mode runs it, and prints the
agreement per category and per kind of answer, then every disagreement with both
reasons. A disagreement docs/measurement.md documents (BFCL counting a call in
the text, one it cannot parse or a cut one as an abstention on irrelevance; its
greedy pairing of parallel calls; whole numbers in an array of floats) is
counted apart, by reason, and left out of the agreement. With ``--history``, the answers a model
gave in a recorded run of a ``bfcl-*`` suite are judged too (kind ``model``).

    python tools/bfcl_agreement.py [--limit N] [--show K] [--history FILE [--run REF]]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import sys
import types
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsuka_checks_builtin.bfcl import CATEGORIES, bfcl_data, test_of, tool_name
from tsuka_core import Answer, normalise_tool_call
from tsuka_core.testing import run_check

MODEL = "tsuka-agreement"
DOCUMENTED = {("irrelevance", "call_in_text"), ("irrelevance", "broken_call"), ("irrelevance", "cut")}
"""(category, kind) pairs where tsuka differs from BFCL on purpose (docs/measurement.md)."""
GREEDY = "greedy"
"""BFCL failing parallel calls it passes in another order: its matching is greedy, tsuka's finds a pairing."""
WHOLE_IN_FLOATS = "whole numbers in an array of floats"
"""BFCL failing ``[12, 15]`` for an array of floats, which it passes as ``[12.0, 15.0]``: it takes an integer for
a float at the top level only; tsuka takes one for a number at every depth, as JSON Schema does."""


@dataclass(frozen=True)
class Crafted:
    """One crafted answer: its calls (name, arguments as written), text, and whether it was cut."""

    kind: str
    calls: tuple[tuple[str, str], ...]
    text: str = ""
    cut: bool = False


def _bfcl_checker() -> Any:
    """BFCL's ``ast_checker``, imported with a one-model table in place of the one that imports every SDK."""
    table = types.ModuleType("bfcl_eval.constants.model_config")
    table.MODEL_CONFIG_MAPPING = {MODEL: types.SimpleNamespace(underscore_to_dot=True)}  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = table
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return ast_checker


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        yield from (json.loads(line) for line in lines if line.strip())


def _first(values: list[Any]) -> Any:
    return next(v for v in values if v != "")


def _last(values: list[Any]) -> Any:
    return [v for v in values if v != ""][-1]


def _concrete(value: Any) -> Any:
    """A possible value made a value a model could send (a possible dict's first choice per key)."""
    if isinstance(value, dict):
        return {k: _concrete(_first(v) if isinstance(v, list) else v) for k, v in value.items()
                if not (isinstance(v, list) and all(x == "" for x in v))}  # fmt: skip
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_concrete(v) for v in value]
    return value


def _arguments(params: Mapping[str, list[Any]], pick: Any, omit_optional: bool) -> dict[str, Any]:
    chosen: dict[str, Any] = {}
    for name, values in params.items():
        real = [v for v in values if v != ""]
        if not real or (omit_optional and "" in values):
            continue
        chosen[name] = _concrete(pick(values))
    return chosen


Calls = list[tuple[str, dict[str, Any]]]


def _calls(truth: list[dict[str, Any]], pick: Any = _first, omit_optional: bool = False) -> Calls:
    return [(tool_name(n), _arguments(params, pick, omit_optional)) for call in truth for n, params in call.items()]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


SPOILERS: dict[str, Any] = {
    "wrong_type": lambda v: float(v) if type(v) is int else 7 if isinstance(v, str) else None,
    "wrong_value": lambda v: v + " zzz" if isinstance(v, str) else v + 1000 if _number(v) else None,
    "case_variant": lambda v: v.upper().replace(" ", "-") if isinstance(v, str) and v.strip() else None,
    "number_as_text": lambda v: str(v) if _number(v) else None,
    "float_items": lambda v: [float(x) for x in v] if _all(v, lambda x: type(x) is int) else None,
    "whole_items": lambda v: [int(x) for x in v] if _all(v, lambda x: type(x) is float and x.is_integer()) else None,
    "int_for_float": lambda v: int(v) if type(v) is float and v.is_integer() else None,
}
"""Each way of spoiling one argument: the spoilt value, or None when it does not apply to that value."""


def _all(value: Any, test: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(test(x) for x in value)


def _spoilt(calls: Calls, how: str) -> Calls | None:
    """The calls with their first argument that ``how`` applies to spoilt (or, ``missing_required``, left out)."""
    spoilt = copy.deepcopy(calls)
    for _name, args in spoilt:
        if how == "missing_required" and args:
            del args[next(iter(args))]
            return spoilt
        for key, value in args.items():
            changed = SPOILERS[how](value) if how in SPOILERS else None
            if changed is not None:
                args[key] = changed
                return spoilt
    return None


def _as_written(calls: list[tuple[str, dict[str, Any]]]) -> tuple[tuple[str, str], ...]:
    return tuple((name, json.dumps(args, ensure_ascii=False)) for name, args in calls)


def _in_text(call: tuple[str, str]) -> str:
    """The call as a model writes it into its text when the server does not turn it into tool_calls."""
    return f'<tool_call>{{"name": "{call[0]}", "arguments": {call[1]}}}</tool_call>'


def crafted(question: Mapping[str, Any], answer: Mapping[str, Any] | None) -> Iterator[Crafted]:
    """Every crafted answer for one entry."""
    if answer is None:
        function = question["function"][0]
        props = function.get("parameters", {}).get("properties", {})
        guess = _as_written([(tool_name(function["name"]), dict.fromkeys(list(props)[:1], "x"))])
        yield Crafted("no_call", (), "I cannot help with that using these tools.")
        yield Crafted("a_call", guess)
        yield Crafted("call_in_text", (), _in_text(guess[0]))
        yield Crafted("broken_call", ((guess[0][0], guess[0][1][:-1]),))
        yield Crafted("cut", ((guess[0][0], guess[0][1][:-1]),), cut=True)
        return
    truth = answer["ground_truth"]
    right = _calls(truth)
    yield Crafted("correct", _as_written(right))
    alternative = _calls(truth, _last)
    if alternative != right:
        yield Crafted("alternative", _as_written(alternative))
    omitted = _calls(truth, omit_optional=True)
    if omitted != right:
        yield Crafted("optional_omitted", _as_written(omitted))
    extra = copy.deepcopy(right)
    extra[0][1]["extra_argument"] = 1
    yield Crafted("extra_argument", _as_written(extra))
    for how in ("missing_required", *SPOILERS):
        spoilt = _spoilt(right, how)
        if spoilt is not None:
            yield Crafted(how, _as_written(spoilt))
    if len(right) > 1:
        yield Crafted("reordered", _as_written(right[::-1]))
    first = _as_written(right[:1])[0]
    yield Crafted("call_in_text", (), _in_text(first))
    yield Crafted("broken_call", ((first[0], first[1][:-1]), *_as_written(right[1:])))
    yield Crafted("cut", ((first[0], first[1][:-1]),), cut=True)
    yield Crafted("no_call", (), "Sure, here is the answer.")


def _recorded(history: Path, ref: str) -> dict[str, list[Crafted]]:
    """The answers a recorded run got, by BFCL entry id (the test's name): each kind ``model``."""
    from tsuka_core.storage.history_query import load_run

    found: dict[str, list[Crafted]] = {}
    for level in load_run(history, ref).levels:
        for test in level.tests:
            for step in test.steps:
                reply = step.response
                if reply is None:
                    continue
                calls = tuple((c.name, c.raw_arguments or json.dumps(c.arguments)) for c in reply.tool_calls)
                found.setdefault(test.name, []).append(Crafted("model", calls, reply.text, reply.cut_at_limit))
    return found


def tsuka_verdict(test: Mapping[str, Any], answer: Crafted) -> tuple[bool, str]:
    """tsuka's verdict: every check of the converted test passes."""
    calls = []
    for index, (name, arguments) in enumerate(answer.calls):
        raw = {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
        made = normalise_tool_call(raw, index)
        if made is not None:
            calls.append(made)
    judged = Answer(answer.text, tuple(calls), test["tools"], answer.cut)
    for check in test["checks"]:
        params = {k: v for k, v in check.items() if k != "type"}
        outcome = run_check(check["type"], params, judged)
        if not outcome.passed:
            return False, outcome.detail
    return True, "passed"


def bfcl_verdict(
    checker: Any, category: str, question: Mapping[str, Any], truth: Any, answer: Crafted
) -> tuple[bool, str]:
    """BFCL's verdict as its function-calling mode gives it: the calls decoded from tool_calls, then the checker."""
    try:
        decoded = [{name: json.loads(arguments)} for name, arguments in answer.calls]
    except ValueError as exc:
        decoded, failure = [], f"cannot decode: {exc}"
    else:
        failure = "" if decoded else "no function call"
    if category == "irrelevance":
        return (not decoded, failure or "a function call was decoded")
    if not decoded:
        return False, failure
    result = checker(question["function"], decoded, truth, _python(), category, MODEL)
    if not result["valid"] and str(result.get("error_type", "")).endswith("cannot_find_match"):
        orders = itertools.islice(itertools.permutations(decoded), 1, 5040)
        if any(checker(question["function"], list(o), truth, _python(), category, MODEL)["valid"] for o in orders):
            return False, GREEDY  # the same calls pass BFCL in another order
    said = "; ".join(str(e) for e in result.get("error", []))[:300] or "valid"
    if not result["valid"] and "Nested type checking failed" in said and "<class 'float'>" in said:
        floated = [{n: {k: _floats(v) for k, v in a.items()}} for call in decoded for n, a in call.items()]
        if checker(question["function"], floated, truth, _python(), category, MODEL)["valid"]:
            return False, WHOLE_IN_FLOATS
    return bool(result["valid"]), said


def _floats(value: Any) -> Any:
    """``value`` with every integer inside a list made a float."""
    if isinstance(value, list):
        return [float(v) if type(v) is int else _floats(v) for v in value]
    return value


def _python() -> Any:
    from bfcl_eval.constants.enums import Language  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return Language.PYTHON


def main(argv: list[str]) -> int:
    """Judge every crafted answer both ways and print the agreement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="entries per category (0: all)")
    parser.add_argument("--show", type=int, default=20, help="disagreements to print (all are counted)")
    parser.add_argument(
        "--history", type=Path, help="also judge the answers a run of a bfcl-* suite recorded in this history"
    )
    parser.add_argument("--run", default="last", help="the run of --history to read (default: last)")
    args = parser.parse_args(argv)
    data = bfcl_data()
    if data is None:
        print("bfcl-eval is not installed: pip install --no-deps bfcl-eval", file=sys.stderr)
        return 2
    checker = _bfcl_checker()
    recorded = _recorded(args.history, args.run) if args.history else {}
    agree, total, documented, reasons = Counter[str](), Counter[str](), Counter[str](), Counter[str]()
    kinds: Counter[tuple[str, str]] = Counter()
    kinds_agree: Counter[tuple[str, str]] = Counter()
    disagreements: list[str] = []
    for category in CATEGORIES.values():
        name = f"BFCL_v4_{category}.json"
        answers = {} if category == "irrelevance" else {r["id"]: r for r in _rows(data / "possible_answer" / name)}
        for count, question in enumerate(_rows(data / name)):
            if args.limit and count >= args.limit:
                break
            truth = answers.get(question["id"])
            test = test_of(question, truth)
            for answer in [*crafted(question, truth), *recorded.get(question["id"], [])]:
                ours = tsuka_verdict(test, answer)
                theirs = bfcl_verdict(checker, category, question, truth["ground_truth"] if truth else None, answer)
                documented_kind = (category, answer.kind) in DOCUMENTED or theirs[1] in (GREEDY, WHOLE_IN_FLOATS)
                if ours[0] != theirs[0] and documented_kind:
                    documented[category] += 1
                    reasons[theirs[1] if theirs[1] in (GREEDY, WHOLE_IN_FLOATS) else f"{category} {answer.kind}"] += 1
                    continue
                total[category] += 1
                kinds[(category, answer.kind)] += 1
                if ours[0] == theirs[0]:
                    agree[category] += 1
                    kinds_agree[(category, answer.kind)] += 1
                else:
                    disagreements.append(
                        f"{question['id']} {answer.kind}: tsuka {'passes' if ours[0] else 'fails'} ({ours[1]}); "
                        f"BFCL {'passes' if theirs[0] else 'fails'} ({theirs[1]})"
                    )
    print(f"{'category':<20} {'answers':>8} {'agree':>8} {'agreement':>10} {'documented':>11}")
    for category in CATEGORIES.values():
        share = agree[category] / total[category] if total[category] else 1.0
        print(f"{category:<20} {total[category]:>8} {agree[category]:>8} {share:>10.2%} {documented[category]:>11}")
    overall = sum(agree.values()) / max(1, sum(total.values()))
    counts = f"{sum(total.values()):>8} {sum(agree.values()):>8}"
    print(f"{'all':<20} {counts} {overall:>10.2%} {sum(documented.values()):>11}")
    print("\ndocumented differences: " + (", ".join(f"{why} {n}" for why, n in sorted(reasons.items())) or "none"))
    print("\nby kind of answer (disagreements only):")
    for key, n in sorted(kinds.items()):
        if kinds_agree[key] != n:
            print(f"  {key[0]:<20} {key[1]:<18} {kinds_agree[key]}/{n}")
    first = f", the first {args.show}" if len(disagreements) > args.show else ""
    print(f"\n{len(disagreements)} disagreement(s){first}:")
    for line in disagreements[: args.show]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
