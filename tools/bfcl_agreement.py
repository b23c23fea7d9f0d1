"""How often tsuka's verdict on a tool call is BFCL's: crafted answers served to `tsuka run`, judged by both.

Needs BFCL's data and checker: ``pip install --no-deps bfcl-eval`` (the checker's
module imports every model SDK through BFCL's model table; this script gives it
a one-entry table instead). For every registered ``bfcl-*`` single-turn suite it
crafts answers to each entry (``crafted``: right, another accepted value,
optional arguments left out, ``""`` for an optional string, a value for an
argument BFCL wants absent, an extra argument, a required one missing, wrong
types and values, strings in other case and punctuation, numbers as text,
integer and float items swapped, a nested dict changed, a list reordered,
Unicode, Java and JavaScript source text written right and wrong, parallel
calls reordered, the call in the text, arguments that do not parse, a cut answer,
no call, and seeded random changes), serves them from a loopback server (one
model per kind of answer) to a real ``tsuka run`` of the suite, streamed and not,
reads tsuka's verdicts from the run's history, and judges the same answers with
BFCL's AST checker as its function-calling mode does (the calls decoded from
``tool_calls``, their arguments parsed as JSON). It prints, per category, the
agreement over all answers and outside each documented difference
(docs/measurement.md), then every disagreement with both reasons. ``--in-process``
judges with the checks directly instead of through ``tsuka run`` (fast, for
development). With ``--history``, a recorded run's own answers are judged too.

    python tools/bfcl_agreement.py [--limit N] [--category NAME] [--stream both|on|off] [--in-process]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import json
import random
import subprocess
import sys
import tempfile
import types
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agreement_report import print_disagreeing_kinds, print_disagreements
from answer_server import AnswerServer, Crafted

from tsuka_checks_builtin.bfcl import SINGLE_TURN, Category, bfcl_data, rows, test_of, tool_name
from tsuka_core import Answer, normalise_tool_call
from tsuka_core.testing import run_check

MODEL = "tsuka-agreement"
CUT = "an answer cut at the token limit"
"""tsuka fails a cut answer whatever it holds; BFCL never sees the finish reason (docs/measurement.md)."""
NOT_RUNNABLE = "a call BFCL cannot decode, counted as no call on irrelevance"
"""On irrelevance BFCL passes a call in the text, or one whose arguments do not parse, as an abstention."""
GREEDY = "BFCL's greedy pairing of parallel calls"
"""BFCL failing parallel calls it passes in another order: its matching is greedy, tsuka's finds a pairing."""
DIFFERENCES = (CUT, NOT_RUNNABLE, GREEDY)


@dataclass
class Tally:
    """One category's verdicts: all answers, and those outside each documented difference."""

    answers: int = 0
    agree: int = 0
    documented: Counter[str] = field(default_factory=Counter)
    kinds: Counter[tuple[str, bool]] = field(default_factory=Counter)
    disagreements: list[str] = field(default_factory=list)

    def add(self, kind: str, same: bool, difference: str | None, line: str) -> None:
        """One answer's two verdicts: agreeing or not, and the documented difference it falls in."""
        self.answers += 1
        self.agree += same
        self.kinds[(kind, same)] += 1
        if not same and difference is not None:
            self.documented[difference] += 1
        elif not same:
            self.disagreements.append(line)

    @property
    def outside(self) -> tuple[int, int]:
        """Answers and agreements outside the documented differences."""
        left = self.answers - sum(self.documented.values())
        return left, self.agree


# --- crafting answers ----------------------------------------------------------------------------------------------


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


Calls = list[tuple[str, dict[str, Any]]]


def _calls(truth: list[dict[str, Any]], pick: Any = _first, omit_optional: bool = False) -> Calls:
    found: Calls = []
    for call in truth:
        for name, params in call.items():
            chosen = {}
            for key, values in params.items():
                real = [v for v in values if v != ""]
                if real and not (omit_optional and "" in values):
                    chosen[key] = _concrete(pick(values))
            found.append((tool_name(name), chosen))
    return found


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _all(value: Any, test: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(test(x) for x in value)


SPOILERS: dict[str, Any] = {
    "wrong_type": lambda v: float(v) if type(v) is int else 7 if isinstance(v, str) else None,
    "wrong_value": lambda v: v + " zzz" if isinstance(v, str) else v + 1000 if _number(v) else None,
    "case_variant": lambda v: v.upper().replace(" ", "-") if isinstance(v, str) and v.strip() else None,
    "number_as_text": lambda v: str(v) if _number(v) else None,
    "float_items": lambda v: [float(x) for x in v] if _all(v, lambda x: type(x) is int) else None,
    "whole_items": lambda v: [int(x) for x in v] if _all(v, lambda x: type(x) is float and x.is_integer()) else None,
    "int_for_float": lambda v: int(v) if type(v) is float and v.is_integer() else None,
    "list_reordered": lambda v: v[::-1] if isinstance(v, list) and len(v) > 1 and v != v[::-1] else None,
    "unicode": lambda v: v + " é" if isinstance(v, str) else None,
    "fullwidth": lambda v: (
        v.translate({ord(c): ord(c) + 0xFEE0 for c in "abcdefghijklmnopqrstuvwxyz"})
        if isinstance(v, str) and any("a" <= c <= "z" for c in v)
        else None
    ),
    "nested_dict": lambda v: _nested_change(v),  # noqa: PLW0108  (defined below)
    "dict_key_case": lambda v: {k.upper(): x for k, x in v.items()} if isinstance(v, dict) and v else None,
}
"""Each way of spoiling one argument: the spoilt value, or None when it does not apply to that value."""


def _nested_change(value: Any) -> Any:
    """A dict (or array of dicts) with its first string value in other case, or its first value dropped."""
    target = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else value
    if not isinstance(target, dict) or not target:
        return None
    changed = copy.deepcopy(value)
    inner = changed[0] if isinstance(changed, list) else changed
    key = next((k for k, v in inner.items() if isinstance(v, str)), None)
    if key is not None:
        inner[key] = inner[key].swapcase() + "."
    else:
        inner.pop(next(iter(inner)))
    return changed


def _spoilt(calls: Calls, how: str) -> Calls | None:
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


def _marker_answers(truth: list[dict[str, Any]], functions: Mapping[str, Any]) -> Iterator[tuple[str, Calls]]:
    """Answers at BFCL's absent marker: ``""`` for an optional string, a value where only absence is right."""
    right = _calls(truth)
    for (name, args), call in zip(right, truth, strict=True):
        params = next(iter(call.values()))
        declared = functions.get(next(iter(call)), {}).get("parameters", {}).get("properties", {})
        for key, values in params.items():
            kind = declared.get(key, {}).get("type")
            if "" in values and kind in ("string", "any", "String"):
                changed = copy.deepcopy(right)
                changed[right.index((name, args))][1][key] = ""
                yield "empty_optional_string", changed
            if values == [""]:
                changed = copy.deepcopy(right)
                changed[right.index((name, args))][1][key] = "x" if kind in ("string", "any") else 1
                yield "absent_only_given", changed


def _source(value: Any, language: str, kind: str, items: str | None, variant: int = 0) -> str:
    """A value written as the Java or JavaScript source text a model sends for it."""
    if isinstance(value, str):
        return f'"{value}"' if language == "javascript" and variant else value
    if isinstance(value, bool):
        return "true" if value else "false"
    if language == "java":
        return _java_source(value, kind, items, variant)
    if isinstance(value, list):
        return "[" + ", ".join(_js_item(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"'{k}': {_js_item(v)}" for k, v in value.items()) + "}"
    return str(value)


def _java_source(value: Any, kind: str, items: str | None, variant: int) -> str:
    if kind == "long":
        return f"{value}L"
    if kind == "float":
        return f"{value}f"
    if isinstance(value, list):
        if kind == "ArrayList":
            parts = [f'"{v}"' if isinstance(v, str) else _java_item(v) for v in value]
            if variant:
                return "new ArrayList<>() {{ " + " ".join(f"add({p});" for p in parts) + " }}"
            return f"new ArrayList<>(Arrays.asList({', '.join(parts)}))"
        return f"new {items or 'Object'}[]{{{', '.join(_java_item(v) for v in value)}}}"
    if isinstance(value, dict):
        puts = " ".join(f'put("{k}", {_java_item(v)});' for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


def _java_item(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _js_item(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _sourced(calls: Calls, functions: Mapping[str, Any], language: str, variant: int = 0) -> Calls:
    """Every argument of ``calls`` written as source text, as BFCL's Java and JavaScript entries want."""
    written: Calls = []
    for name, args in calls:
        function = next((f for n, f in functions.items() if tool_name(n) == name), {})
        declared = function.get("parameters", {}).get("properties", {})
        out = {}
        for key, value in args.items():
            schema = declared.get(key, {})
            items = schema.get("items", {}).get("type") if isinstance(schema.get("items"), dict) else None
            out[key] = _source(value, language, str(schema.get("type")), items, variant)
        written.append((name, out))
    return written


def _as_written(calls: Calls) -> tuple[tuple[str, str], ...]:
    return tuple((name, json.dumps(args, ensure_ascii=False)) for name, args in calls)


def _in_text(call: tuple[str, str]) -> str:
    return f'<tool_call>{{"name": "{call[0]}", "arguments": {call[1]}}}</tool_call>'


def _no_call_answers(functions: Sequence[Mapping[str, Any]]) -> Iterator[Crafted]:
    function = functions[0] if functions else {"name": "lookup"}
    props = function.get("parameters", {}).get("properties", {})
    guess = _as_written([(tool_name(function["name"]), dict.fromkeys(list(props)[:1], "x"))])
    yield Crafted("no_call", (), "I cannot help with that using these tools.")
    yield Crafted("empty_answer", (), "")
    yield Crafted("a_call", guess)
    yield Crafted("call_in_text", (), _in_text(guess[0]))
    yield Crafted("broken_call", ((guess[0][0], guess[0][1][:-1]),))
    yield Crafted("arguments_not_an_object", ((guess[0][0], "[1]"),))
    yield Crafted("cut", guess, cut=True)


def crafted(category: Category, question: Mapping[str, Any], answer: Mapping[str, Any] | None) -> Iterator[Crafted]:
    """Every crafted answer for one entry."""
    if category.judged != "ast" or answer is None:
        yield from _no_call_answers(question["function"])
        return
    truth = answer["ground_truth"]
    functions = {str(f["name"]): f for f in question["function"]}
    java_or_js = category.language != "python"

    def written(calls: Calls, variant: int = 0) -> tuple[tuple[str, str], ...]:
        return _as_written(_sourced(calls, functions, category.language, variant) if java_or_js else calls)

    right = _calls(truth)
    yield Crafted("correct", written(right))
    alternative = _calls(truth, _last)
    if alternative != right:
        yield Crafted("alternative", written(alternative))
    omitted = _calls(truth, omit_optional=True)
    if omitted != right:
        yield Crafted("optional_omitted", written(omitted))
    numbered: Counter[str] = Counter()
    for kind, calls in _marker_answers(truth, functions):
        numbered[kind] += 1  # a kind answered once per model: several of one entry are numbered
        yield Crafted(kind if numbered[kind] == 1 else f"{kind}_{numbered[kind]}", written(calls))
    extra = copy.deepcopy(right)
    extra[0][1]["extra_argument"] = "1" if java_or_js else 1
    yield Crafted("extra_argument", written(extra))
    for how in ("missing_required", *SPOILERS):
        spoilt = _spoilt(right, how)
        if spoilt is not None:
            yield Crafted(how, written(spoilt))
    if java_or_js:
        yield Crafted("source_variant", written(right, variant=1))
        yield Crafted("json_not_source", _as_written(right))
        yield Crafted("source_boolean_case", _as_written(_case_booleans(_sourced(right, functions, category.language))))
    if len(right) > 1:
        yield Crafted("reordered", written(right[::-1]))
    first = written(right[:1])[0]
    yield Crafted("call_in_text", (), _in_text(first))
    yield Crafted("broken_call", ((first[0], first[1][:-1]), *written(right[1:])))
    yield Crafted("cut", written(right), cut=True)
    yield Crafted("no_call", (), "Sure, here is the answer.")
    for seed in range(2):
        yield Crafted(f"random_{seed}", written(_random(right, question["id"], seed)))


def _case_booleans(calls: Calls) -> Calls:
    return [(n, {k: v.title() if v in ("true", "false") else v for k, v in a.items()}) for n, a in calls]


def _random(calls: Calls, entry: str, seed: int) -> Calls:
    """``calls`` with one argument changed at random (seeded by the entry, so the same each run)."""
    rng = random.Random(f"{entry}:{seed}")
    changed = copy.deepcopy(calls)
    _name, args = rng.choice(changed)
    if not args:
        return changed
    key = rng.choice(sorted(args))
    how = rng.choice(sorted(SPOILERS))
    spoilt = SPOILERS[how](args[key])
    if spoilt is not None:
        args[key] = spoilt
    elif rng.random() < 0.5:
        del args[key]
    return changed


# --- the two verdicts ----------------------------------------------------------------------------------------------


def _bfcl_checker() -> Any:
    """BFCL's ``ast_checker``, imported with a one-model table in place of the one that imports every SDK."""
    table = types.ModuleType("bfcl_eval.constants.model_config")
    table.MODEL_CONFIG_MAPPING = {MODEL: types.SimpleNamespace(underscore_to_dot=True)}  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = table
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return ast_checker


def _language(category: Category) -> Any:
    from bfcl_eval.constants.enums import Language  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return {"python": Language.PYTHON, "java": Language.JAVA, "javascript": Language.JAVASCRIPT}[category.language]


def _decoded(answer: Crafted) -> list[dict[str, Any]]:
    """The answer as BFCL's function-calling handler decodes it; raises what its decoder raises."""
    if not answer.calls:
        result: Any = answer.text if answer.text else ""
        return [{next(iter(item.keys())): item} for item in result]  # a text: no .keys(), as in BFCL
    return [{name: json.loads(arguments)} for name, arguments in answer.calls]


def _function_format(decoded: list[dict[str, Any]]) -> bool:
    return all(isinstance(i, dict) and len(i) == 1 and isinstance(next(iter(i.values())), dict) for i in decoded)


def bfcl_verdict(
    checker: Any, category: Category, question: Mapping[str, Any], truth: Any, answer: Crafted
) -> tuple[bool, str]:
    """BFCL's verdict as its evaluation of a function-calling model gives it."""
    try:
        decoded = _decoded(answer)
    except Exception as exc:
        decoded, failure = None, f"cannot decode: {type(exc).__name__}"
    else:
        failure = ""
    if category.judged in ("irrelevance", "relevance"):
        called = decoded is not None and _function_format(decoded) and bool(decoded) and decoded != [{}]
        passed = not called if category.judged == "irrelevance" else called
        return passed, failure or ("a call was decoded" if called else "no call was decoded")
    if decoded is None:
        return False, failure
    if not _function_format(decoded):
        return False, "not in function-calling format"
    result = checker(question["function"], decoded, truth, _language(category), category.name, MODEL)
    if not result["valid"] and str(result.get("error_type", "")).endswith("cannot_find_match"):
        orders = itertools.islice(itertools.permutations(decoded), 1, 5040)
        if any(checker(question["function"], list(o), truth, _language(category), category.name, MODEL)["valid"]
               for o in orders):  # fmt: skip
            return False, GREEDY
    return bool(result["valid"]), "; ".join(str(e) for e in result.get("error", []))[:300] or "valid"


def in_process_verdict(test: Mapping[str, Any], answer: Crafted) -> tuple[bool, str]:
    """tsuka's verdict judged directly: every check of the converted test passes."""
    calls = [c for i, (n, a) in enumerate(answer.calls) if (c := _call(i, n, a)) is not None]
    judged = Answer(answer.text, tuple(calls), test["tools"], answer.cut)
    for check in test["checks"]:
        outcome = run_check(check["type"], {k: v for k, v in check.items() if k != "type"}, judged)
        if not outcome.passed:
            return False, outcome.detail
    return True, "passed"


def _call(index: int, name: str, arguments: str) -> Any:
    raw = {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
    return normalise_tool_call(raw, index)


def _difference(category: Category, answer: Crafted, ours: bool, theirs: tuple[bool, str]) -> str | None:
    """The documented difference a disagreement falls in, or None."""
    if theirs[1] == GREEDY:
        return GREEDY
    if answer.cut and not ours and theirs[0]:
        return CUT
    if category.judged == "irrelevance" and not ours and theirs[0]:
        return NOT_RUNNABLE
    return None


# --- through tsuka run ---------------------------------------------------------------------------------------------


def _request_key(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> str:
    text = json.dumps([messages, [t["function"]["name"] for t in tools]], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _test_messages(test: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = [{"role": "system", "content": test["system"]}] if "system" in test else []
    return [*messages, *test.get("messages", []), {"role": "user", "content": test["prompt"]}]


def through_run(
    category: Category, entries: list[tuple[dict[str, Any], dict[str, Any], list[Crafted]]], stream: bool
) -> dict[tuple[str, str], tuple[tuple[bool, str], Crafted]]:
    """tsuka's verdict on every (entry, kind), each kind a model of one ``tsuka run`` of the category's suite, with
    the answer as tsuka recorded it (BFCL then judges that very answer: two entries asking the same request get the
    same answer from the server)."""
    kinds = sorted({a.kind for _, _, answers in entries for a in answers})
    by_request = {
        _request_key(_test_messages(t), t["tools"]): {a.kind: a for a in answers} for _, t, answers in entries
    }

    def choose(model: str, body: dict[str, Any]) -> Crafted:
        answers = by_request[_request_key(body["messages"], body.get("tools", []))]
        return answers.get(model.removeprefix("k-")) or Crafted("unused", (), "unused")

    with tempfile.TemporaryDirectory() as folder, AnswerServer(choose, [f"k-{k}" for k in kinds]) as server:
        history = Path(folder) / "h.sqlite"
        command = [sys.executable, "-m", "tsuka_core", "run", *[f"k-{k}" for k in kinds], "--suite", category.suite,
                   "--base-url", server.base_url, "-e", "none", "-j", "16", "--retries", "2", "--no-resume",
                   "--profiles", str(Path(folder) / "p.json"), "--history-db", str(history)]  # fmt: skip
        if not stream:
            command += ["--option", "stream=off"]
        if len(entries) < _suite_size(category):
            command += [arg for q, _, _ in entries for arg in ("--test", q["id"])]
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=_clean_env())
        if done.returncode not in (0, 1) or server.errors:
            raise RuntimeError(f"tsuka run of {category.suite} failed ({done.returncode}): {done.stderr[-2000:]}"
                               f"{server.errors[:3]}")  # fmt: skip
        return _verdicts(history)


def _suite_size(category: Category) -> int:
    data = bfcl_data()
    assert data is not None
    return sum(1 for _ in rows(data / f"BFCL_v4_{category.name}.json"))


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_PROFILES", "TSUKA_HISTORY"))}


def _verdicts(history: Path) -> dict[tuple[str, str], tuple[tuple[bool, str], Crafted]]:
    """Each test's verdict in the run, and the answer it was given as the history recorded it."""
    from tsuka_core.storage.history_query import load_run

    found: dict[tuple[str, str], tuple[tuple[bool, str], Crafted]] = {}
    for level in load_run(history, "last").levels:
        kind = level.model.removeprefix("k-")
        for test in level.tests:
            failed = [c.detail for s in test.steps for c in s.checks if c.status != "passed"]
            verdict = (test.status == "ok" and not failed, "; ".join(failed)[:300] or "passed")
            reply = test.steps[0].response if test.steps else None
            got = Crafted(kind) if reply is None else Crafted(
                kind,
                tuple((c.name, c.raw_arguments if c.raw_arguments is not None else json.dumps(c.arguments))
                      for c in reply.tool_calls),
                reply.content if reply.content is not None else reply.text,
                reply.cut_at_limit,
            )  # fmt: skip
            found[(test.name, kind)] = (verdict, got)
    return found


# --- the table -----------------------------------------------------------------------------------------------------


def _entries(data: Path, category: Category, limit: int) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    name = f"BFCL_v4_{category.name}.json"
    answer_file = data / "possible_answer" / name
    answers = {r["id"]: r for r in rows(answer_file)} if answer_file.is_file() else {}
    found = [(q, answers.get(q["id"])) for q in rows(data / name)]
    return found[:limit] if limit else found


def main(argv: list[str]) -> int:
    """Judge every crafted answer both ways and print the agreement, per category."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="entries per category (0: all)")
    parser.add_argument("--category", action="append", help="a suite name (bfcl-live-simple...); default: every one")
    parser.add_argument("--stream", choices=["both", "on", "off"], default="both", help="how tsuka asks the server")
    parser.add_argument("--in-process", action="store_true", help="judge with the checks directly, not tsuka run")
    parser.add_argument("--show", type=int, default=20, help="disagreements to print (all are counted)")
    args = parser.parse_args(argv)
    data = bfcl_data()
    if data is None:
        print("bfcl-eval is not installed: pip install --no-deps bfcl-eval", file=sys.stderr)
        return 2
    checker = _bfcl_checker()
    wanted = [c for c in SINGLE_TURN if not args.category or c.suite in args.category]
    modes = [None] if args.in_process else {"both": [True, False], "on": [True], "off": [False]}[args.stream]
    tallies: dict[str, Tally] = {}
    for category in wanted:
        tally = tallies.setdefault(category.suite, Tally())
        entries = [(q, test_of(category, q, a), list(crafted(category, q, a)), a)
                   for q, a in _entries(data, category, args.limit)]  # fmt: skip
        for stream in modes:
            served = None if stream is None else through_run(category, [(q, t, c) for q, t, c, _ in entries], stream)
            for question, test, answers, truth in entries:
                for crafted_answer in answers:
                    if served is None:
                        answer, ours = crafted_answer, in_process_verdict(test, crafted_answer)
                    else:
                        ours, answer = served[(question["id"], crafted_answer.kind)]
                    theirs = bfcl_verdict(checker, category, question, truth["ground_truth"] if truth else None, answer)
                    mode = "" if stream is None else " streamed" if stream else " not streamed"
                    line = (f"{question['id']} {answer.kind}{mode}: tsuka {'passes' if ours[0] else 'fails'} "
                            f"({ours[1]}); BFCL {'passes' if theirs[0] else 'fails'} ({theirs[1]})")  # fmt: skip
                    tally.add(answer.kind, ours[0] == theirs[0], _difference(category, answer, ours[0], theirs), line)
        print(f"{category.suite}: {tally.answers} answers judged", file=sys.stderr)
    _print(tallies, args.show)
    return 0


def _print(tallies: Mapping[str, Tally], show: int) -> None:
    head = f"{'category':<30} {'answers':>8} {'agreement':>10} {'outside':>8} {'agreement':>10}  documented"
    print(head)
    for suite, tally in tallies.items():
        left, agree = tally.outside
        documented = ", ".join(f"{why}: {n}" for why, n in tally.documented.items()) or "-"
        all_share = tally.agree / tally.answers if tally.answers else 1.0
        print(f"{suite:<30} {tally.answers:>8} {all_share:>10.2%} {left:>8} {agree / left if left else 1.0:>10.2%}"
              f"  {documented}")  # fmt: skip
    print_disagreeing_kinds(tallies, 30, "answer")
    lines = [line for tally in tallies.values() for line in tally.disagreements]
    print_disagreements(lines, show, " outside the documented differences")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
